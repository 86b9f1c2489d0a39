package transport

import (
	"sync"
	"sync/atomic"
	"time"
)

// reapEvery is the idle-timeout granularity: a conn idle for d is closed between d and d+3*reapEvery.
// Redis checks timeouts from its 10 Hz cron, so this matches its precision.
const reapEvery = 100 * time.Millisecond

// registry tracks live connections so that Server.Close can close them and wait for their Closed calls,
// and so that the reaper can enforce idle timeouts.
type registry struct {
	mu    sync.Mutex
	conns map[*core]struct{}
	shutd bool
	wg    sync.WaitGroup
	now   atomic.Int64 // coarse clock in ns, advanced by reap
}

func (r *registry) init() {
	r.conns = make(map[*core]struct{})
	r.now.Store(time.Now().UnixNano())
}

// add registers c; false means the server is shutting down and c must be closed unopened.
func (r *registry) add(c *core) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shutd {
		return false
	}
	r.conns[c] = struct{}{}
	r.wg.Add(1)
	return true
}

func (r *registry) remove(c *core) {
	r.mu.Lock()
	_, ok := r.conns[c]
	delete(r.conns, c)
	r.mu.Unlock()
	if ok {
		r.wg.Done()
	}
}

func (r *registry) shut() {
	r.mu.Lock()
	r.shutd = true
	r.mu.Unlock()
}

// closeAll closes every registered conn; their Closed calls follow asynchronously (see wait).
func (r *registry) closeAll() {
	for _, c := range r.snapshot() {
		c.self.Close()
	}
}

func (r *registry) wait() { r.wg.Wait() }

func (r *registry) snapshot() []*core {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*core, 0, len(r.conns))
	for c := range r.conns {
		out = append(out, c)
	}
	return out
}

// reap advances the coarse clock and closes conns idle past their timeout, until done is closed.
func (r *registry) reap(done <-chan struct{}) {
	t := time.NewTicker(reapEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			r.now.Store(now.UnixNano())
			r.closeIdle(now.UnixNano())
		}
	}
}

func (r *registry) closeIdle(now int64) {
	r.mu.Lock()
	var expired []*core
	for c := range r.conns {
		// last may trail the true last activity by up to one tick of the coarse clock.
		if d := c.idle.Load(); d > 0 && now-c.last.Load() > d+int64(reapEvery) {
			expired = append(expired, c)
		}
	}
	r.mu.Unlock()
	for _, c := range expired {
		if k, ok := c.srv.h.(IdleKeeper); ok && k.KeepIdle(c.self) {
			continue
		}
		c.self.Close()
	}
}

// IdleKeeper may be implemented by a Handler some of whose conns must outlive their idle timeout
// for now: Redis does not time out pub/sub subscribers or clients blocked in a command. KeepIdle is
// called from the reaper's goroutine, beside the conn's own.
type IdleKeeper interface {
	KeepIdle(c Conn) bool
}
