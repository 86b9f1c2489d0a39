package transport

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/cloudwego/netpoll"
	"golang.org/x/sys/unix"
)

// netpollEngine reads every connection with netpoll pollers. Per connection:
//   - OnPrepare (on the accepting poller, before the fd is polled) registers the npConn and calls
//     Handler.Open. Open must not wait on anything slow.
//   - OnRequest (on the poller goroutine itself, whenever netpoll's buffer is non-empty) moves the bytes
//     into the conn's own buffer and calls Handler.Serve there, inline (see offload.go): no goroutine
//     hand-off per readable event. A Serve that would block returns ErrOffload and the conn moves to a
//     worker goroutine until it has caught up.
//   - the close callback (after the last OnRequest returned) calls Handler.Closed, or leaves that to
//     the worker when one is serving the conn.
//
// Open runs in OnPrepare rather than OnConnect because netpoll drops a conn whose peer sends and closes
// before OnConnect started: its close callback then runs and OnConnect never does.
//
// netpoll loops on OnRequest for as long as its own buffer holds bytes. Moving them out first means
// netpoll sees an empty buffer whatever Serve leaves unconsumed, so it never re-runs Serve without new
// input, and a conn holding half a request holds no goroutine.
type netpollEngine struct {
	s      *Server
	loops  []netpoll.EventLoop
	exited []chan struct{} // closed when loops[i].Serve returned
}

type connKey struct{}

func newNetpollEngine(s *Server) (*netpollEngine, error) {
	if err := configureNetpoll(s.opts.Loops); err != nil {
		return nil, err
	}
	e := &netpollEngine{s: s}
	for range s.lns {
		evl, err := netpoll.NewEventLoop(e.onRequest, netpoll.WithOnPrepare(e.onPrepare))
		if err != nil {
			return nil, err
		}
		e.loops = append(e.loops, evl)
		e.exited = append(e.exited, make(chan struct{}))
	}
	return e, nil
}

func (e *netpollEngine) start() error {
	for i, evl := range e.loops {
		go func() {
			defer close(e.exited[i])
			if err := evl.Serve(e.s.lns[i]); err != nil {
				e.s.fail(err)
			}
		}()
	}
	return nil
}

// stop shuts every event loop down. netpoll's Shutdown does nothing if it runs before the loop's Serve
// registered the listener, so it is retried until that Serve returns. Server.Close calls stop after
// every conn ended, so Shutdown finds no busy conn to wait for.
func (e *netpollEngine) stop() {
	for i, evl := range e.loops {
		for done := false; !done; {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			evl.Shutdown(ctx)
			cancel()
			select {
			case <-e.exited[i]:
				done = true
			case <-time.After(time.Millisecond):
			}
		}
	}
}

// npConn is a connection of the netpoll engine. Input comes from netpoll's buffer. Output goes to
// netpoll's fd (core.fd) without blocking while Serve runs on the poller, and otherwise through w, a
// dup of the socket in Go's own poller, so that a worker's Write can block on a full socket without
// parking a netpoll poller, and still works while netpoll already counts a half-closed peer as gone
// (Redis answers what such a peer sent before its FIN).
//
// The dup is made at a worker's first write, not in OnPrepare, so that a conn that is never served
// off the poller (every idle one) holds one descriptor, not two. netpoll closes its fd only after
// its close callbacks ran (its finalizer is the first callback registered, and they run last
// first), and onClosed sets gone under wmu: so core.fd is netpoll's open socket, never a number
// already reused by another conn, whenever wmu is held with gone unset. Close's shutdown relies on
// that too.
type npConn struct {
	core
	nc     netpoll.Connection
	wmu    sync.Mutex
	w      *os.File // the dup, once a worker wrote; under wmu
	gone   bool     // netpoll's close callback ran (its fd is closed next); under wmu
	opened bool     // Open was called; set in OnPrepare, before netpoll polls the fd

	off offload // inline serving and the worker that takes over (offload.go)
}

func (e *netpollEngine) onPrepare(nc netpoll.Connection) context.Context {
	fd := nc.(netpoll.Conn).Fd()
	c := &npConn{nc: nc}
	c.off.more = make(chan struct{}, 1)
	c.srv, c.self, c.fd, c.local, c.remote = e.s, c, fd, nc.LocalAddr(), nc.RemoteAddr()
	ctx := context.WithValue(context.Background(), connKey{}, c)
	if err := c.configure(fd); err != nil {
		refuse(fd)
		return ctx
	}
	if !e.s.reg.add(&c.core) {
		refuse(fd)
		return ctx
	}
	nc.AddCloseCallback(c.onClosed)
	c.touch()
	c.opened = true
	c.open()
	c.opening()
	return ctx
}

// refuse shuts a conn down from OnPrepare. Closing it there would make netpoll detach an fd it never
// polled and log an error; a shut-down socket instead reports a hang-up as soon as it is polled, and
// netpoll closes it.
func refuse(fd int) { syscall.Shutdown(fd, syscall.SHUT_RDWR) }

// configure applies keepalive.
func (c *npConn) configure(fd int) error {
	return setKeepAlive(fd, c.srv.opts.KeepAlive)
}

// writer returns the dup blocking writes go through, making it on first use; ErrClosed once
// netpoll's close callback ran.
func (c *npConn) writer() (*os.File, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.w != nil {
		return c.w, nil
	}
	if c.gone {
		return nil, ErrClosed
	}
	wfd, err := dupCloexec(c.fd)
	if err != nil {
		return nil, err
	}
	c.w = os.NewFile(uintptr(wfd), "conn") // non-blocking, so Go's poller drives it
	return c.w, nil
}

// dupCloexec duplicates fd with close-on-exec set atomically (fcntl F_DUPFD_CLOEXEC).
func dupCloexec(fd int) (int, error) {
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("fcntl", err)
	}
	return nfd, nil
}

func (e *netpollEngine) onRequest(ctx context.Context, _ netpoll.Connection) error {
	c := ctx.Value(connKey{}).(*npConn)
	if !c.opened || c.closed.Load() {
		c.discard() // netpoll calls again until its buffer is empty, even after Close
		return nil
	}
	if c.stash() {
		return nil // a worker serves the conn; it takes the stashed bytes when it is done
	}
	c.serveInline()
	return nil
}

// pull moves every byte netpoll holds into the conn's buffer without blocking.
func (c *npConn) pull() error {
	n := c.nc.Reader().Len()
	if n == 0 {
		return nil
	}
	return c.read(n)
}

func (c *npConn) discard() {
	r := c.nc.Reader()
	r.Skip(r.Len())
	r.Release()
}

// read copies up to the free space (at least min bytes of it) from netpoll's buffer, blocking until at
// least one byte is there.
func (c *npConn) read(min int) error {
	m, err := c.nc.Read(c.in.space(min))
	c.in.commit(m)
	if m > 0 {
		c.touch()
	}
	if err != nil {
		return c.ioErr(err)
	}
	return nil
}

func (c *npConn) ioErr(err error) error {
	if c.closed.Load() || errors.Is(err, netpoll.ErrConnClosed) {
		return ErrClosed
	}
	if errors.Is(err, netpoll.ErrEOF) || errors.Is(err, io.EOF) {
		return io.EOF
	}
	return err
}

func (c *npConn) Peek(n int) ([]byte, error) {
	if n < 0 {
		return nil, errNegative
	}
	if c.off.inline.Load() && (c.in.Len() < n || c.off.mustOff) {
		return nil, ErrOffload // waiting would stall the poller, or replies wait to be written
	}
	for c.in.Len() < n {
		if err := c.awaitStash(); err != nil {
			return nil, err
		}
	}
	return c.in.peek(n), nil
}

func (c *npConn) Write(p []byte) error {
	if c.closed.Load() {
		return ErrClosed // (a refused conn is never registered nor served: nobody writes to it)
	}
	if c.off.inline.Load() {
		return c.writeInline(p)
	}
	w, err := c.writer()
	if err != nil {
		return c.ioErr(err)
	}
	if err := c.writeBlocking(w, p, 0); err != nil {
		return c.ioErr(err)
	}
	return nil
}

// Close wakes a Peek or Write blocked in another goroutine. Shutting the socket down sends the FIN now;
// netpoll closes its own fd once the running Serve, if any, returns.
func (c *npConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.off.wake()
	c.wmu.Lock()
	if !c.gone {
		refuse(c.fd) // netpoll's fd, still open: its close waits for onClosed, which takes wmu
	}
	if c.w != nil {
		c.w.Close()
	}
	c.wmu.Unlock()
	// The shut-down socket hangs up; netpoll sees that in its poller and closes the conn from a
	// goroutine of its own. Closing netpoll's conn here instead would make netpoll run the close
	// callbacks on the poller whenever a Serve was running there (inline, or just finishing), and
	// they wait for the poller to let go of the fd: a poller waiting for itself (offload.go).
	return nil
}

// onClosed is netpoll's close callback: it runs once, after the last OnRequest returned.
func (c *npConn) onClosed(netpoll.Connection) error {
	c.closed.Store(true)
	c.off.wake()
	c.wmu.Lock()
	c.gone = true
	if c.w != nil {
		c.w.Close()
	}
	c.wmu.Unlock()
	if c.endLater() {
		return nil // the worker serving the conn calls end when its Serve returns
	}
	c.end(c.opened)
	return nil
}
