package command

// The persistence gates of route (issue 17 items 1 and 3), as Redis 7.0.15's processCommand
// applies them: -MISCONF while a disk error stops writes (writeCommandsDeniedByDiskError), and
// -LOADING while a dataset loads. Route pays one atomic load (persistState.gate) while neither is
// set.

import (
	"sync"
	"sync/atomic"
)

// WriteErrKind is the kind of disk error behind -MISCONF.
type WriteErrKind int

const (
	// WriteErrRDB: the last background save failed, with stop-writes-on-bgsave-error yes and
	// save rules configured (the server decides; the engine only gates).
	WriteErrRDB WriteErrKind = iota
	// WriteErrAOF: a write or fsync of the AOF failed.
	WriteErrAOF
)

const (
	gateLoading uint32 = 1 << iota
	gateRDB
	gateAOF
)

// persistState is the gates' state: gate holds the bits above; the rest is read only when a
// bit is set.
type persistState struct {
	gate   atomic.Uint32
	mu     sync.Mutex
	aofMsg atomic.Pointer[string] // the AOF's MISCONF text
	exempt atomic.Uint64          // a client the LOADING gate lets through (the AOF loader's)
}

// SetLoading turns the -LOADING gate on or off: while on, commands without the Loading flag
// are refused (LoadRDB itself, and a client marked by ExemptFromLoading, are not gated).
func (e *Engine) SetLoading(on bool) { e.persist.set(gateLoading, on) }

// Loading reports whether the -LOADING gate is on.
func (e *Engine) Loading() bool { return e.persist.gate.Load()&gateLoading != 0 }

// ExemptFromLoading lets cl's commands through the -LOADING gate (the AOF loader's client); nil
// removes the exemption.
func (e *Engine) ExemptFromLoading(cl *Client) {
	if cl == nil {
		e.persist.exempt.Store(0)
		return
	}
	e.persist.exempt.Store(cl.ID)
}

// SetWriteError sets (cause not empty) or clears (cause empty) the -MISCONF gate of one kind.
// For WriteErrAOF, cause is the error's text (strerror: "No space left on device"); for
// WriteErrRDB the reply is Redis's fixed text and cause only says why.
func (e *Engine) SetWriteError(kind WriteErrKind, cause string) {
	switch kind {
	case WriteErrRDB:
		e.persist.set(gateRDB, cause != "")
	case WriteErrAOF:
		if cause != "" {
			msg := ErrMisconfAOF + cause
			e.persist.aofMsg.Store(&msg)
		}
		e.persist.set(gateAOF, cause != "")
	}
}

func (p *persistState) set(bit uint32, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.gate.Load()
	if on {
		g |= bit
	} else {
		g &^= bit
	}
	p.gate.Store(g)
}

// persistRefusal is the gates' reply for spec, or "": MISCONF (the RDB's before the AOF's) for a
// write command, PING, or EXEC of a transaction holding a write; then LOADING for a command
// without the Loading flag.
func (e *Engine) persistRefusal(cl *Client, spec *Spec, g uint32) string {
	if g&(gateRDB|gateAOF) != 0 && (spec.Flags&Write != 0 || spec.Name == "ping" || spec.Name == "exec" && txWrites(cl)) {
		if g&gateRDB != 0 {
			return ErrMisconfRDB
		}
		if m := e.persist.aofMsg.Load(); m != nil {
			return *m
		}
	}
	if msg := e.replRefusal(cl, spec, g); msg != "" { // READONLY, MASTERDOWN, NOREPLICAS (repl.go)
		return msg
	}
	if g&gateLoading != 0 && spec.Flags&Loading == 0 && cl.ID != e.persist.exempt.Load() {
		return ErrLoading
	}
	return ""
}

// txWrites reports whether cl's queued transaction holds a write command.
func txWrites(cl *Client) bool {
	for i := range cl.tx.cmds {
		if cl.tx.cmds[i].spec.Flags&Write != 0 {
			return true
		}
	}
	return false
}
