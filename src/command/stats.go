package command

import (
	"bytes"
	"strings"
	"sync/atomic"
	"time"

	"github.com/puzpuzpuz/xsync/v3"
)

// maxErrorKinds bounds errorstats like Redis (ERRORSTATS_LIMIT): past it, new kinds are not tracked.
const maxErrorKinds = 128

type serverStats struct {
	connections   atomic.Int64
	rejectedConns atomic.Int64
	errorReplies  atomic.Int64
	expiredKeys   atomic.Int64
	dirty         atomic.Int64 // changes by connection and barrier commands (effects.go)
	// outputLimitDisconnects counts clients closed for their output buffer (push.go).
	outputLimitDisconnects atomic.Int64
	hits, misses           atomic.Int64
	errorKinds             *xsync.MapOf[string, *atomic.Int64]
	errorKindsOff          atomic.Bool
}

func (st *serverStats) kinds() *xsync.MapOf[string, *atomic.Int64] {
	return st.errorKinds
}

// countError counts an error reply by its code (the first word: ERR, WRONGTYPE, NOAUTH, …).
func (st *serverStats) countError(msg string) {
	st.errorReplies.Add(1)
	code := msg
	if i := strings.IndexByte(msg, ' '); i >= 0 {
		code = msg[:i]
	}
	if st.errorKinds == nil {
		return
	}
	if n, ok := st.errorKinds.Load(code); ok {
		n.Add(1)
		return
	}
	if st.errorKinds.Size() >= maxErrorKinds {
		st.errorKindsOff.Store(true)
		return
	}
	n, _ := st.errorKinds.LoadOrStore(code, new(atomic.Int64))
	n.Add(1)
}

// countErrorReply counts an encoded error reply ("-CODE message\r\n").
func (st *serverStats) countErrorReply(out []byte) {
	end := bytes.IndexAny(out, " \r")
	if end < 1 {
		return
	}
	st.countError(string(out[1:end]))
}

// resetStats clears what CONFIG RESETSTAT clears; held says the caller holds every shard
// already (inside EXEC).
func (e *Engine) resetStats(held bool) {
	e.stats.errorReplies.Store(0)
	e.stats.expiredKeys.Store(0)
	e.stats.hits.Store(0)
	e.stats.misses.Store(0)
	e.stats.rejectedConns.Store(0)
	e.stats.errorKinds.Clear()
	e.mem.evicted.Store(0) // evicted_keys, total_eviction_exceeded_time (evict.go)
	e.mem.overTotal.Store(0)
	if e.mem.overSince.Load() != 0 { // a spell over the budget counts again from now
		e.mem.overSince.Store(time.Now().UnixNano())
	}
	if !held {
		e.Group.LockAll()
		defer e.Group.UnlockAll()
	}
	e.resetShardStatsLocked()
	e.resetLatencyLocked()
	e.stats.errorKindsOff.Store(false)
	for _, s := range table {
		s.resetStats()
		for _, sub := range s.Subs {
			sub.resetStats()
		}
	}
}

func (s *Spec) resetStats() {
	s.stats.calls.Store(0)
	s.stats.nsec.Store(0)
	s.stats.rejected.Store(0)
	s.stats.failed.Store(0)
}
