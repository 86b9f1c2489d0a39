package command

import (
	"sync"
	"sync/atomic"
	"time"
)

// pauseState is CLIENT PAUSE: until a deadline, commands of the paused kind wait in the route
// stage (no token is held there, so the shards keep serving everyone else).
type pauseState struct {
	active atomic.Bool // fast path: false when not paused
	mu     sync.Mutex
	until  int64 // unix ns; 0 = not paused
	all    bool  // ALL, else WRITE
	wake   chan struct{}
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

// clear ends the pause (CLIENT UNPAUSE) and wakes the waiters.
func (p *pauseState) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.until, p.all = 0, false
	p.active.Store(false)
	if p.wake != nil {
		close(p.wake)
		p.wake = nil
	}
}

// wait blocks while spec is paused.
func (p *pauseState) wait(spec *Spec) {
	for p.active.Load() {
		p.mu.Lock()
		until, all, wake := p.until, p.all, p.wake
		p.mu.Unlock()
		if until == 0 || (!all && spec.Flags&(Write|MayReplicate) == 0) {
			return
		}
		d := time.Duration(until - time.Now().UnixNano())
		if d <= 0 {
			p.clear()
			return
		}
		select {
		case <-wake:
		case <-time.After(d):
		}
	}
}
