package transport

import (
	"errors"
	"log"
	"net"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// core is the engine-independent half of a connection: buffered input, handler state, idle bookkeeping
// and the exactly-once close protocol. Engines embed it.
type core struct {
	srv    *Server
	self   Conn // the engine conn that embeds this core, for Handler callbacks and the reaper
	in     inbuf
	state  any
	fd     int // the socket (for netpoll, netpoll's fd), set before Open
	local  net.Addr
	remote net.Addr
	closed atomic.Bool  // Close was called or the peer went away; read and write fail from now on
	ended  atomic.Bool  // Handler.Closed ran (or was skipped for a conn never opened)
	idle   atomic.Int64 // idle timeout in ns, 0 = none
	last   atomic.Int64 // registry clock at the last input or output
	// unsent is the output given to Write that the kernel has not taken yet: bytes an inline
	// Write kept for the worker, or the rest of a blocking Write in progress (updated a chunk at a
	// time). stashed is netpoll input held beside a busy worker. Both for Pending.
	unsent  atomic.Int64
	stashed atomic.Int64
}

// writeChunk is how much of a blocking Write goes to the socket at once, so that Pending follows
// a peer that reads slowly instead of showing the whole Write until its last byte left.
const writeChunk = 64 << 10

// Pending returns the input the transport holds beyond the conn's buffer (netpoll's stash beside a
// busy worker) and the output the kernel has not taken yet. Safe from any goroutine: the command
// layer's client cron reads it for CLIENT LIST's omem, client-output-buffer-limit and
// maxmemory-clients.
func (c *core) Pending() (in, out int64) { return c.stashed.Load(), c.unsent.Load() }

// writeBlocking writes p to w a chunk at a time, keeping unsent at what is left (plus what an
// inline Write kept before, base).
func (c *core) writeBlocking(w interface{ Write([]byte) (int, error) }, p []byte, base int64) error {
	for len(p) > 0 {
		n := min(len(p), writeChunk)
		c.unsent.Store(base + int64(len(p)-n))
		if _, err := w.Write(p[:n]); err != nil {
			c.unsent.Store(0)
			return err
		}
		p = p[n:]
		c.touch()
	}
	c.unsent.Store(base)
	return nil
}

func (c *core) IsActive() bool       { return !c.closed.Load() }
func (c *core) RemoteAddr() net.Addr { return c.remote }
func (c *core) LocalAddr() net.Addr  { return c.local }
func (c *core) SetState(v any)       { c.state = v }
func (c *core) State() any           { return c.state }
func (c *core) Len() int             { return c.in.Len() }
func (c *core) Fd() int              { return c.fd }

func (c *core) SetIdleTimeout(d time.Duration) error {
	c.idle.Store(int64(max(d, 0)))
	c.touch()
	return nil
}

// touch records activity for the idle timeout. It reads the registry's coarse clock: a store per read or
// write, no clock call.
func (c *core) touch() { c.last.Store(c.srv.reg.now.Load()) }

func (c *core) Skip(n int) error {
	if !c.in.skip(n) {
		return errSkip
	}
	return nil
}

func (c *core) Release() error {
	c.in.release()
	return nil
}

// end runs Handler.Closed once and lets Server.Close stop waiting for this conn. Engines call it after the
// connection is closed and the last Serve returned.
func (c *core) end(opened bool) {
	if c.ended.Swap(true) {
		return
	}
	if opened {
		c.srv.h.Closed(c.self)
	}
	c.srv.reg.remove(c)
}

// open calls Handler.Open; false means Open failed and the conn is closed (after any reply Open wrote).
func (c *core) open() (ok bool) {
	defer c.recoverPanic(&ok)
	ok = c.srv.h.Open(c.self) == nil
	if !ok {
		c.self.Close()
	}
	return ok
}

// serve calls Handler.Serve; false means Serve failed and the conn is closed.
func (c *core) serve() (ok bool) { return c.serveErr() == nil }

// serveErr is serve that returns Serve's error. ErrOffload (see offload.go) leaves the conn open.
func (c *core) serveErr() (err error) {
	ok := true
	defer func() {
		if !ok {
			err = ErrClosed
		}
	}()
	defer c.recoverPanic(&ok) // runs first; deferred directly so that its recover works
	err = c.srv.h.Serve(c.self)
	if err != nil && !errors.Is(err, ErrOffload) {
		c.self.Close()
	}
	return err
}

// recoverPanic, deferred by open and serve, turns a handler panic into the loss of this connection
// instead of the process, and logs it with its stack. The pipeline is expected to recover per command
// and reply with an error; this is the last line of defence.
func (c *core) recoverPanic(ok *bool) {
	if p := recover(); p != nil {
		log.Printf("transport: handler panic, closing %v: %v\n%s", c.remote, p, debug.Stack())
		*ok = false
		c.self.Close()
	}
}
