package transport

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// stdEngine serves each connection on its own goroutine with the net package, over TLS when tls
// is set (tls.go).
type stdEngine struct {
	s   *Server
	lns []net.Listener
	tls *TLSOptions
	hs  atomic.Int64   // TLS handshakes in progress
	wg  sync.WaitGroup // accept loops
}

func (e *stdEngine) start() error {
	for _, ln := range e.lns {
		e.wg.Add(1)
		go e.accept(ln)
	}
	return nil
}

func (e *stdEngine) stop() {
	closeAll(e.lns)
	e.wg.Wait()
}

func (e *stdEngine) accept(ln net.Listener) {
	defer e.wg.Done()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// EMFILE and friends: back off like net/http instead of spinning on a full fd table.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		delay = 0
		go e.serve(nc.(*net.TCPConn))
	}
}

// stdConn is a connection of the std engine.
type stdConn struct {
	core
	nc    *net.TCPConn
	rw    io.ReadWriter // nc, or the TLS session over it
	woken atomic.Bool   // Wake was called and no Serve started since
}

func (e *stdEngine) serve(nc *net.TCPConn) {
	s := e.s
	c := &stdConn{nc: nc, rw: nc}
	c.srv, c.self, c.local, c.remote = s, c, nc.LocalAddr(), nc.RemoteAddr()
	if !s.reg.add(&c.core) {
		nc.Close()
		return
	}
	c.touch()
	if c.configure() != nil || (e.tls != nil && !e.handshake(c)) {
		c.Close()
		c.end(false)
		return
	}
	ok := c.open()
	for ok && c.await() == nil {
		ok = c.serve()
	}
	c.Close()
	c.end(true)
}

// configure applies keepalive and records the socket's fd.
func (c *stdConn) configure() error {
	rc, err := c.nc.SyscallConn()
	if err != nil {
		return err
	}
	var kerr error
	err = rc.Control(func(fd uintptr) {
		c.fd = int(fd)
		kerr = setKeepAlive(int(fd), c.srv.opts.KeepAlive)
	})
	return errors.Join(err, kerr)
}

// await waits between two Serves for a Wake or for at least one byte more than the last Serve left
// unconsumed: a partial request is never re-served until the rest of it starts arriving.
func (c *stdConn) await() error {
	for {
		if c.woken.Load() && c.woken.Swap(false) {
			return nil
		}
		err := c.fill(c.in.Len() + 1)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		// A Wake's deadline. Clearing it loses no Wake: each stores woken before it sets one.
		c.nc.SetReadDeadline(time.Time{})
	}
}

// Wake interrupts the conn's read with a deadline in the past; await then returns for a Serve, and a
// Peek inside a Serve reads on. A deadline that outlives its Wake costs one read that times out.
func (c *stdConn) Wake() {
	if c.woken.Swap(true) || c.closed.Load() {
		return // an earlier Wake's Serve has not started yet: it serves this one too
	}
	c.nc.SetReadDeadline(time.Unix(1, 0))
}

// fill reads until n bytes are buffered. Each read takes whatever the socket holds, up to the free space.
func (c *stdConn) fill(n int) error {
	for c.in.Len() < n {
		m, err := c.rw.Read(c.in.space(1))
		c.in.commit(m)
		if m > 0 {
			c.touch()
		}
		if err != nil {
			return c.ioErr(err)
		}
	}
	return nil
}

func (c *stdConn) ioErr(err error) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	return err
}

// Inline is false: a std conn has a goroutine of its own, which may block.
func (c *stdConn) Inline() bool { return false }

// Fill adds nothing: a std conn reads into all of its free space whenever it reads.
func (c *stdConn) Fill() bool { return false }

func (c *stdConn) Peek(n int) ([]byte, error) {
	if n < 0 {
		return nil, errNegative
	}
	for {
		err := c.fill(n)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, err
		}
		// A Wake during this Serve: woken stays set, so the next Serve follows this one.
		c.nc.SetReadDeadline(time.Time{})
	}
	return c.in.peek(n), nil
}

func (c *stdConn) Write(p []byte) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if err := c.writeBlocking(c.rw, p, 0); err != nil {
		return c.ioErr(err)
	}
	return nil
}

// Close wakes a Peek or Write blocked in another goroutine; the serving goroutine then calls Closed.
func (c *stdConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	return c.nc.Close()
}
