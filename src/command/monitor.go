package command

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/pipeline"
)

// MONITOR, as Redis 7.0's replicationFeedMonitors: every command call is shown to each
// monitoring client as a status line
//
//	+1700000000.123456 [0 127.0.0.1:5555] "SET" "k" "v"
//
// after it ran (so that its sensitive arguments show redacted and a SELECT shows its new
// database), with the arguments quoted as sdscatrepr quotes them, "lua" for the commands a
// script calls and "unix:<socket>" for unix-socket clients. Commands flagged admin or
// skip_monitor are not shown, except that a script's EVAL/FCALL is shown before the commands it
// calls (skip_monitor tells Redis's call() to leave it to the script). Refused commands (unknown,
// wrong arity, …) never reach call and are not shown; queued ones show when EXEC runs them.
//
// A monitoring client may still run commands that touch no key (PING, INFO, CLIENT …); the
// others answer Redis's replica error. RESET ends monitoring, as does closing the connection.
//
// With nobody monitoring, a call pays one atomic load (monitorSet.n) for all of this.

var monitorCommands = []*Spec{
	{Name: "monitor", Arity: 1, Flags: Admin | NoScript | Loading | Stale, Scope: ScopeConn, Run: monitorCmd},
}

// monitorSet is the monitoring clients: a copy-on-write list, changed under mu, read without it.
type monitorSet struct {
	mu   sync.Mutex
	list atomic.Pointer[[]*Client]
	n    atomic.Int32 // len(*list): the one load a call pays
}

func (m *monitorSet) clients() []*Client {
	if p := m.list.Load(); p != nil {
		return *p
	}
	return nil
}

func (m *monitorSet) has(cl *Client) bool {
	for _, x := range m.clients() {
		if x == cl {
			return true
		}
	}
	return false
}

func (m *monitorSet) add(cl *Client) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.has(cl) {
		return false
	}
	next := append(append([]*Client(nil), m.clients()...), cl)
	m.list.Store(&next)
	m.n.Store(int32(len(next)))
	return true
}

func (m *monitorSet) remove(cl *Client) {
	if m.n.Load() == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var next []*Client
	for _, x := range m.clients() {
		if x != cl {
			next = append(next, x)
		}
	}
	m.list.Store(&next)
	m.n.Store(int32(len(next)))
}

// stopMonitor ends cl's monitoring (RESET, a closed connection).
func (e *Engine) stopMonitor(cl *Client) { e.lat.monitors.remove(cl) }

// MONITOR
func monitorCmd(c *Ctx) {
	if c.tx != nil || c.noBlock {
		c.Err(ErrMonitorDenyBlocking)
		return
	}
	if c.E.lat.monitors.add(c.Client) {
		c.OK()
	}
	// Already monitoring: Redis answers nothing.
}

// monitorRefused reports whether a monitoring client's command must be refused: one that
// reads, writes or may replicate (Redis's "Replica can't interact with the keyspace").
func (e *Engine) monitorRefused(c *Ctx, spec *Spec) bool {
	touches := spec.Flags&(ReadOnly|Write|MayReplicate) != 0
	return touches && e.lat.monitors.has(c.Client)
}

// feedsMonitorBefore reports whether spec is shown before it runs (a script's EVAL/FCALL).
func feedsMonitorBefore(spec *Spec) bool {
	return spec.Flags&SkipMonitor != 0 && spec.Flags&Admin == 0
}

// feedMonitors shows the call c of spec to every monitoring client.
func (e *Engine) feedMonitors(c *Ctx, s *pipeline.Slot, spec *Spec, before bool) {
	if c.Serving != nil || c.Client == nil { // a blocked command served again, not a new call
		return
	}
	if !before && spec.Flags&(SkipMonitor|Admin) != 0 {
		return
	}
	db := c.DB
	if spec.Name == "select" && len(c.Out) > 0 && c.Out[0] == '+' {
		db = c.Client.DB
	}
	if c.tx != nil && c.tx.ofRun && inScript(c) {
		c.tx.mon = appendMonitorLine(c.tx.mon, time.Now(), db, "lua", spec, c.Args)
		return
	}
	line := appendMonitorLine(nil, time.Now(), db, monitorSource(c), spec, c.Args)
	for _, m := range e.lat.monitors.clients() {
		m.queueMonitorLine(line)
	}
}

// flushRunMonitor shows the MONITOR lines a script run kept (txState.mon) and empties them.
func (e *Engine) flushRunMonitor(tx *txState) {
	if len(tx.mon) == 0 {
		return
	}
	for _, m := range e.lat.monitors.clients() {
		m.queueMonitorLine(tx.mon)
	}
	tx.mon = tx.mon[:0]
}

// monitorSource is the line's client part: "lua", "unix:<socket>" or the peer address.
func monitorSource(c *Ctx) string {
	cl := c.Client
	switch {
	case inScript(c):
		return "lua"
	case strings.HasPrefix(cl.LAddr, "/"):
		return "unix:" + cl.LAddr
	}
	return cl.Addr
}

// appendMonitorLine appends one MONITOR line, "\r\n" included.
func appendMonitorLine(dst []byte, now time.Time, db int, source string, spec *Spec, args [][]byte) []byte {
	us := now.UnixMicro()
	dst = append(dst, '+')
	dst = strconv.AppendInt(dst, us/1e6, 10)
	dst = append(dst, '.')
	frac := strconv.AppendInt(nil, us%1e6, 10)
	dst = append(dst, "000000"[len(frac):]...)
	dst = append(dst, frac...)
	dst = append(dst, " ["...)
	dst = strconv.AppendInt(dst, int64(db), 10)
	dst = append(append(append(dst, ' '), source...), "] "...)
	redact := redactedArgs(spec, args)
	for j, a := range args {
		if j > 0 {
			dst = append(dst, ' ')
		}
		if redact.has(j) {
			a = []byte(redactedArg)
		}
		dst = strs.AppendRepr(dst, a)
	}
	return append(dst, "\r\n"...)
}

// queueMonitorLine queues a line in a monitoring client's outbox, under its output limit.
func (cl *Client) queueMonitorLine(line []byte) {
	b := &cl.push
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	wake := len(b.buf) == 0
	b.buf = append(b.buf, line...)
	b.size.Store(int64(len(b.buf)))
	over := cl.overLimitLocked(b)
	b.mu.Unlock()
	if over {
		cl.closeForOutput()
		return
	}
	if wake && cl.Wake != nil {
		cl.Wake()
	}
}

// monitorGate runs before a call while someone monitors: it shows a script's call ahead of
// its commands, and refuses a monitoring client's keyspace commands (reporting true: the
// handler is not run).
func (e *Engine) monitorGate(c *Ctx, s *pipeline.Slot, spec *Spec) bool {
	if e.monitorRefused(c, spec) {
		c.Err(ErrMonitorKeyspace)
		return true
	}
	if feedsMonitorBefore(spec) {
		e.feedMonitors(c, s, spec, true)
	}
	return false
}
