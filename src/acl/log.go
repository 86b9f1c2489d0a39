package acl

import (
	"sync"
	"sync/atomic"
)

// Log is the ACL LOG: the latest refusals, newest first, similar ones grouped (Redis's
// addACLLogEntry). Safe for concurrent use.
type Log struct {
	max     atomic.Int64
	mu      sync.Mutex
	entries []LogEntry // newest first
}

// LogEntry is one ACL LOG entry.
type LogEntry struct {
	Count      int64
	Reason     string // "auth", "command", "key", "channel"
	Context    string // "toplevel", "multi", "lua", "module"
	Object     string
	Username   string
	CTime      int64 // unix ms of the latest occurrence
	ClientInfo string
}

// groupWindow is Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA (ms): refusals alike within it share
// an entry.
const groupWindow = 60000

// groupScan is how many of the newest entries a refusal may join (Redis scans 10).
const groupScan = 10

// SetMax sets acllog-max-len. As in Redis, a longer log is cut to it at the next refusal, not
// now.
func (l *Log) SetMax(n int64) { l.max.Store(n) }

// Add records a refusal at time now (unix ms).
func (l *Log) Add(e LogEntry, now int64) {
	e.Count, e.CTime = 1, now
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, o := range l.entries[:min(len(l.entries), groupScan)] {
		if o.Reason == e.Reason && o.Context == e.Context && o.Object == e.Object &&
			o.Username == e.Username && now-o.CTime <= groupWindow && o.CTime-now <= groupWindow {
			e.Count = o.Count + 1
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = e
			return
		}
	}
	l.entries = append(l.entries, LogEntry{})
	copy(l.entries[1:], l.entries)
	l.entries[0] = e
	l.trimLocked()
}

func (l *Log) trimLocked() {
	if m := l.max.Load(); int64(len(l.entries)) > m {
		l.entries = l.entries[:max(m, 0)]
	}
}

// Entries returns up to n entries, newest first (n < 0: all).
func (l *Log) Entries(n int) []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n < 0 || n > len(l.entries) {
		n = len(l.entries)
	}
	return append([]LogEntry(nil), l.entries[:n]...)
}

// Reset empties the log.
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}
