package transport

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
)

// Inline serving (netpoll engine). Handler.Serve runs on the poller goroutine that found the conn
// readable, like an event loop: no goroutine hand-off, no wake-up of another thread, per readable
// event. Measured with the server pinned to one core and pipelined GET: a fresh goroutine per event
// cost 1.9 CPU-s per million requests against 1.6 inline, and with GOMAXPROCS=2 the hand-offs
// (runtime wake-ups, sysmon retaking Ps from pollers in epoll_wait) doubled it, where inline
// serving on two pollers stayed within a few percent of one.
//
// A poller must never block, or every conn it polls stalls. So while a conn is served inline:
//   - Peek of more than the buffered bytes returns ErrOffload instead of waiting;
//   - Write writes without blocking; what the socket does not take is kept, and the next Peek or
//     Write returns ErrOffload, so Serve stops after the batch it is in;
//   - the Handler returns ErrOffload itself before anything that may wait (a blocking command).
//
// The conn then moves to a worker goroutine, where blocking is allowed: the worker writes the kept
// replies, then calls Serve again, and keeps serving until no input is left; then the conn returns
// to inline serving. Meanwhile the poller still empties netpoll's buffer (or netpoll would call it
// in a loop) into a stash that the worker takes from, waiting on it when Serve Peeks for more.
// Stashed input is bounded like Redis's query buffer: a conn that sends more than maxStash while
// its worker is busy (blocked in BLPOP, or its peer not reading replies) is closed.
//
// Conn.Wake on a conn that nobody serves starts such a worker too (a goroutine outside netpoll
// cannot make a poller serve the conn); on a conn being served it leaves a flag that the poller or
// the worker checks before letting the conn go.

// ErrOffload is returned by Conn methods, and may be returned by Handler.Serve, when serving inline
// would have to wait: Serve is called again on a goroutine that may block.
var ErrOffload = errors.New("transport: would block the poller")

// maxStash bounds the input stashed for a conn whose worker is busy unless Options.MaxStash says
// otherwise (Redis's default client-query-buffer-limit).
const maxStash = 1 << 30

// stashLimit is Options.MaxStash, or maxStash.
func (s *Server) stashLimit() int {
	if s.opts.MaxStash != nil {
		return s.opts.MaxStash()
	}
	return maxStash
}

// offload is a netpoll conn's inline-serving state. mustOff and kept belong to the conn's own
// goroutine (the poller serving it inline, then the worker it hands the conn to).
type offload struct {
	inline  atomic.Bool   // the poller serves the conn: nothing may block. Set under mu, cleared by the poller
	woken   atomic.Bool   // Wake was called since the last Serve started
	ready   atomic.Bool   // Open returned: a Wake may start a worker
	mustOff bool          // an inline Write kept bytes: leave the poller
	kept    []byte        // replies an inline Write could not finish; the worker writes them first
	more    chan struct{} // signals the worker that input was stashed or the conn closed

	mu      sync.Mutex
	worker  bool   // a worker goroutine serves the conn; the poller only stashes input
	stashed []byte // input that arrived while the worker was busy
	endDue  bool   // netpoll closed the conn while the worker was busy: the worker ends it
}

// wake tells a worker waiting for input to look again (more input, or the conn closed).
func (o *offload) wake() {
	select {
	case o.more <- struct{}{}:
	default:
	}
}

// Inline reports whether Serve is running on the poller (see Conn).
func (c *npConn) Inline() bool { return c.off.inline.Load() }

// stash moves netpoll's buffered input aside when a worker serves the conn, and reports whether it
// did. Called by the poller in OnRequest. Otherwise the poller is to serve the conn inline, and stash
// marks it so under the same lock, so that a Wake does not start a worker beside it.
func (c *npConn) stash() bool {
	c.off.mu.Lock()
	defer c.off.mu.Unlock()
	if !c.off.worker {
		c.off.inline.Store(true)
		return false
	}
	r := c.nc.Reader()
	n := r.Len()
	if len(c.off.stashed)+n > c.srv.stashLimit() {
		c.discard()
		c.Close()
		return true
	}
	b, err := r.Next(n)
	if err == nil {
		c.off.stashed = append(c.off.stashed, b...)
		c.stashed.Store(int64(len(c.off.stashed)))
	}
	r.Release()
	c.off.wake()
	return true
}

// awaitStash moves stashed input into the conn's buffer, waiting for some if there is none. Only
// the worker calls it (Peek off the poller).
func (c *npConn) awaitStash() error {
	for !c.takeStash() {
		if c.closed.Load() {
			return ErrClosed
		}
		<-c.off.more
	}
	return nil
}

// takeStash moves stashed input into the conn's buffer and reports whether there was any. Only the
// worker calls it.
func (c *npConn) takeStash() bool {
	c.off.mu.Lock()
	defer c.off.mu.Unlock()
	n := len(c.off.stashed)
	if n == 0 {
		return false
	}
	c.in.commit(copy(c.in.space(n), c.off.stashed))
	c.off.stashed = c.off.stashed[:0]
	c.stashed.Store(0)
	if cap(c.off.stashed) > maxIdleBuf {
		c.off.stashed = nil
	}
	c.touch()
	return true
}

// minFill is the free space Fill reads into: a batch's missing part, without growing the buffer
// for the common case.
const minFill = 4 << 10

// Fill reads the socket directly, without blocking, while the conn is served inline.
//
// netpoll reads into the free tail of its current buffer node, however short, so a pipelined batch
// often arrives in two reads (measured: 2.0 reads and 2.0 writes per 30-command batch of 256-byte
// SETs, 1.15 of each for GETs, where Redis does 1.0). Serve calls Fill when its buffer ends in a
// partial command: the rest is usually already in the socket, and reading it here runs the batch
// whole, one write of replies and no second pass through the poller. If the peer really did stop
// mid-command, Fill costs one read that returns EAGAIN.
//
// Reading behind netpoll's back keeps the byte order: inline Serve runs on the conn's poller inside
// its event handling, after OnRequest moved every byte netpoll held into c.in, and netpoll reads
// this fd nowhere else. End of stream and errors are left to netpoll, which sees them as hang-ups.
func (c *npConn) Fill() bool {
	if !c.off.inline.Load() || c.off.mustOff || c.closed.Load() || c.nc.Reader().Len() > 0 {
		return false
	}
	for {
		n, err := syscall.Read(c.fd, c.in.space(minFill))
		if n > 0 {
			c.in.commit(n)
			c.touch()
			return true
		}
		if err != syscall.EINTR {
			return false
		}
	}
}

// serveInline moves netpoll's input into the conn's buffer and calls Handler.Serve on the poller
// (stash marked the conn inline). It hands the conn to a worker if Serve could not finish without
// blocking, or if a Wake came too late for this Serve.
func (c *npConn) serveInline() {
	if err := c.pull(); err != nil {
		c.Close()
		c.off.inline.Store(false)
		return
	}
	if c.off.woken.Load() {
		c.off.woken.Store(false) // this Serve serves every Wake so far
	}
	err := c.serveErr()
	if (errors.Is(err, ErrOffload) || c.off.mustOff) && !c.closed.Load() {
		c.off.mu.Lock()
		c.off.worker = true
		c.off.inline.Store(false) // together with worker: a Wake sees one of them set
		c.off.mu.Unlock()
		runTask(nil, c.work)
		return
	}
	// A Wake stores woken before it looks at inline, and the poller clears inline before it looks at
	// woken (both sequentially consistent), so at least one of them sees the other and kicks.
	c.off.inline.Store(false)
	if c.off.woken.Load() {
		c.kick()
	}
}

// Wake starts a Serve on a worker, or leaves it to whoever serves the conn (see Conn).
func (c *npConn) Wake() {
	if c.off.woken.Swap(true) {
		return // an earlier Wake's Serve has not started yet: it serves this one too
	}
	if c.off.ready.Load() {
		c.kick()
	}
}

// opening is called once Open returned: from now on a Wake may start a worker, and one that came
// during Open does now.
func (c *npConn) opening() {
	c.off.ready.Store(true)
	if c.off.woken.Load() {
		c.kick()
	}
}

// kick starts a worker for a Wake unless the poller or a worker serves the conn already; they check
// woken before letting the conn go.
func (c *npConn) kick() {
	c.off.mu.Lock()
	start := !c.off.worker && !c.off.inline.Load() && !c.closed.Load()
	if start {
		c.off.worker = true
	}
	c.off.mu.Unlock()
	if start {
		runTask(nil, c.work)
	}
}

// work serves the conn on a worker goroutine until it has caught up with its input and its Wakes,
// then hands it back to inline serving.
func (c *npConn) work() {
	for c.flushKept() {
		c.off.woken.Store(false) // this Serve serves every Wake so far
		if !c.serve() {
			break
		}
		if c.release() {
			return // the poller may already be serving the conn again
		}
		c.takeStash() // input or a Wake came meanwhile
	}
	c.release() // closed: stashed input no longer matters
}

// release hands the conn back to inline serving unless input was stashed or a Wake came meanwhile
// (checked under the lock that stash and kick take, so neither is left behind); true means it did.
// If netpoll closed the conn while the worker served it, release calls end.
func (c *npConn) release() bool {
	c.off.mu.Lock()
	if (len(c.off.stashed) > 0 || c.off.woken.Load()) && !c.closed.Load() {
		c.off.mu.Unlock()
		return false
	}
	c.off.worker = false
	end := c.off.endDue
	c.off.endDue = false
	c.off.mu.Unlock()
	if end {
		c.end(c.opened)
	}
	return true
}

// flushKept writes, blocking, what an inline Write could not; false means the conn is closed.
func (c *npConn) flushKept() bool {
	c.off.mustOff = false
	if len(c.off.kept) == 0 {
		return true
	}
	w, err := c.writer()
	if err == nil {
		err = c.writeBlocking(w, c.off.kept, 0)
	}
	c.off.kept = c.off.kept[:0]
	if cap(c.off.kept) > maxIdleBuf {
		c.off.kept = nil
	}
	if err != nil {
		c.Close()
		return false
	}
	return true
}

// endLater is called by netpoll's close callback: it reports whether a worker is serving the conn,
// in which case the worker calls end once its Serve returned.
func (c *npConn) endLater() bool {
	c.off.mu.Lock()
	defer c.off.mu.Unlock()
	if c.off.worker {
		c.off.endDue = true
	}
	return c.off.worker
}

// writeInline writes p without blocking. What the socket does not take is kept for the worker (and
// so is everything written after it, to keep the order).
//
// A Write while bytes are kept writes nothing and returns ErrOffload: the Handler returns it and
// writes again from the worker. (The pipeline writes once per batch and then Peeks, which stops it
// first; this bounds a handler that writes in a loop.)
func (c *npConn) writeInline(p []byte) error {
	if c.off.mustOff {
		return ErrOffload
	}
	for len(p) > 0 && !c.off.mustOff {
		n, err := syscall.Write(c.fd, p)
		if n > 0 {
			p = p[n:]
			continue
		}
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			c.off.mustOff = true
		case nil:
			return ErrClosed // a zero-byte write of a non-empty buffer
		default:
			return c.ioErr(err)
		}
	}
	if len(p) > 0 {
		c.off.kept = append(c.off.kept, p...)
		c.unsent.Store(int64(len(c.off.kept)))
	}
	c.touch()
	return nil
}
