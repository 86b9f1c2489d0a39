package command

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/src/script"
)

// pauseState is CLIENT PAUSE, and FAILOVER's write pause (Redis's two pause purposes): until a
// deadline, or while the failover holds it, commands of the paused kind wait in the route stage
// (no token is held there, so the shards keep serving everyone else). CLIENT UNPAUSE ends only
// CLIENT PAUSE's.
type pauseState struct {
	active   atomic.Bool // fast path: false when not paused
	mu       sync.Mutex
	until    int64 // unix ns; 0 = no CLIENT PAUSE
	all      bool  // ALL, else WRITE
	failover bool  // FAILOVER pauses writes until it ends (SetFailoverPause)
	wake     chan struct{}
}

// set pauses until the deadline; a later call can only extend or change the mode, as in Redis.
func (p *pauseState) set(until int64, all bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until > p.until || (all && !p.all) {
		p.until = max(p.until, until)
		p.all = p.all || all
	}
	if p.wake == nil {
		p.wake = make(chan struct{})
	}
	p.active.Store(true)
}

// clear ends CLIENT PAUSE (CLIENT UNPAUSE, or its deadline) and wakes the waiters.
func (p *pauseState) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.until, p.all = 0, false
	p.kickLocked()
}

// kickLocked wakes the waiters to look again; the pause stays active while FAILOVER holds it.
func (p *pauseState) kickLocked() {
	if p.wake != nil {
		close(p.wake)
		p.wake = nil
	}
	on := p.until != 0 || p.failover
	if on {
		p.wake = make(chan struct{})
	}
	p.active.Store(on)
}

// SetFailoverPause starts or ends FAILOVER's write pause (Redis's PAUSE_DURING_FAILOVER).
func (e *Engine) SetFailoverPause(on bool) {
	p := &e.pause
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failover = on
	p.kickLocked()
}

// datasetPaused reports whether a pause is in effect: CLIENT PAUSE of either kind before its
// deadline, or FAILOVER's (a cluster manual failover's too). Then, as in Redis 7.0, the dataset
// stays as it is: the active expiry does not run and a key past its time reads as missing yet is
// not deleted, so no DEL reaches the replicas and the replication offset holds still until the
// pause ends (replicaKeeps, ActiveExpire). One atomic load when nothing is paused.
func (e *Engine) datasetPaused() bool {
	p := &e.pause
	if !p.active.Load() {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failover {
		return true
	}
	if p.until != 0 && p.until <= time.Now().UnixNano() {
		// Past its deadline with nobody waiting to notice: end it here, as Redis's
		// checkClientPauseTimeoutAndReturnIfPaused does, so later reads pay one load again.
		p.until, p.all = 0, false
		p.kickLocked()
	}
	return p.until != 0
}

// pauseWait blocks while the command spec with args is paused (the route stage calls it; one
// atomic load when nothing is paused).
func (e *Engine) pauseWait(cl *Client, spec *Spec, args [][]byte) {
	if e.pause.active.Load() {
		e.pause.wait(func() bool { return e.pausedAsWrite(spec, args) || execWrites(cl, spec) })
	}
}

// execWrites reports whether spec is an EXEC of cl's whose queue holds a write or may-replicate
// command: CLIENT PAUSE WRITE holds it back, as Redis 7.0 looks at the transaction's flags (by
// the queued commands' static flags: a queued no-writes script counts as its command).
func execWrites(cl *Client, spec *Spec) bool {
	if spec.Name != "exec" || cl == nil || !cl.tx.on {
		return false
	}
	for _, q := range cl.tx.cmds {
		if q.spec.Flags&(Write|MayReplicate) != 0 {
			return true
		}
	}
	return false
}

// pausedAsWrite reports whether CLIENT PAUSE WRITE holds the command back, as Redis 7.0's
// processCommand decides: write and may-replicate commands; a script that declares its flags
// (a shebang, or any function) goes by them instead: paused unless no-writes.
func (e *Engine) pausedAsWrite(spec *Spec, args [][]byte) bool {
	if runsScript(spec) {
		if f, declared := e.scriptFlags(spec, args); declared {
			return f&script.FlagNoWrites == 0
		}
	}
	return spec.Flags&(Write|MayReplicate) != 0
}

// scriptFlags returns the flags the script an EVAL*, EVALSHA* or FCALL* in args would run
// declares; declared is false for a script without a shebang (or an unknown SHA or function,
// or too few arguments), which Redis treats by the command's flags.
func (e *Engine) scriptFlags(spec *Spec, args [][]byte) (f script.Flags, declared bool) {
	if len(args) < 2 {
		return 0, false
	}
	switch spec.Name {
	case "eval", "eval_ro":
		return script.ShebangFlags(args[1])
	case "evalsha", "evalsha_ro":
		if s, ok := e.Scripts().Lookup(args[1]); ok && s.Flags&script.FlagShebang != 0 {
			return s.Flags, true
		}
		return 0, false
	}
	if fn, ok := e.Scripts().LookupFunction(args[1]); ok {
		return fn.Flags, true
	}
	return 0, false
}

// wait blocks while paused: for every command under PAUSE ALL, and for those write() says
// write under PAUSE WRITE or FAILOVER's pause.
func (p *pauseState) wait(write func() bool) {
	for p.active.Load() {
		p.mu.Lock()
		until, all, fo, wake := p.until, p.all, p.failover, p.wake
		p.mu.Unlock()
		d := time.Duration(until - time.Now().UnixNano())
		if until != 0 && d <= 0 {
			p.clear()
			continue
		}
		isWrite := (!all || fo) && write()
		if !(until != 0 && (all || isWrite)) && !(fo && isWrite) {
			return
		}
		var deadline <-chan time.Time
		if until != 0 {
			deadline = time.After(d)
		}
		select {
		case <-wake:
		case <-deadline:
		}
	}
}
