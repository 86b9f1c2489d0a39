// Package transport accepts TCP connections and hands readable connections to a Handler. It knows nothing
// of RESP or commands, and it is the only package that imports cloudwego/netpoll.
//
// Two engines serve the same Conn semantics (and pass the same tests):
//   - "netpoll" (default): netpoll pollers read every socket and run Handler.Serve inline, on the poller
//     goroutine, like an event loop; a Serve that would block moves the conn to a worker goroutine until
//     it caught up (offload.go). Idle connections hold no goroutine. Blocking writes go through a dup of
//     the socket in Go's own poller (see npConn), made at a worker's first write, so a conn that was
//     never served off the poller uses one fd and one that was two. Input that arrives while a
//     worker serves a conn is stashed, up to a bound, so this engine has no input backpressure.
//   - "std": the net package, one goroutine per connection. Used by BenchmarkPing as the baseline, and
//     the base for TLS.
//
// Guarantees to the Handler, for every connection:
//  1. Open returns before the first Serve; Serve calls never overlap; Closed runs exactly once, after the
//     connection is closed and after the last Serve returned.
//  2. Serve is called only when bytes arrived that no earlier Serve saw, after Conn.Wake, or again after
//     it returned ErrOffload (or an inline Write kept bytes). Serve may block in Peek for the rest of a
//     request (off the poller: on the poller Peek returns ErrOffload instead, which Serve returns), or
//     return leaving a partial request buffered; either way nothing busy-loops.
//  3. Input is copied into the connection's own buffer once: from the socket (std, and netpoll's Fill) or
//     from netpoll's buffer (netpoll; input that arrives while a worker serves the conn goes through a
//     stash, one copy more). Peeked slices stay valid until Release, whatever Peek, Skip or reads happen
//     in between.
//     (netpoll's own Peek does not promise that: a later Peek may reuse or free an earlier one's copy.)
//  4. Memory follows bytes that arrived: Peek(n) for a large n reserves nothing until bytes come, and the
//     buffer grows to at most about twice the unread bytes. A drained buffer over 64KB is dropped.
//  5. Write returns once p is handed to the kernel, or kept for a worker to write in order (p may be
//     reused). Off the poller it blocks while the socket is full; with std that also stops reading the
//     conn (backpressure). Which goroutines may write is said once, on Conn.
//  6. Close is idempotent; a Peek or Write blocked in another goroutine returns ErrClosed. A peer's FIN
//     does not cut replies short: what it sent before is served.
package transport

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"
)

// Conn is one client connection as the pipeline sees it.
//
// Which goroutine may call what. The conn's own goroutine is whichever is inside Handler.Open or
// Handler.Serve for it (a netpoll poller, a netpoll worker, the std conn's goroutine); Serve calls
// never overlap, so there is one at a time.
//   - Only the conn's own goroutine: Len, Peek, Skip, Release, Fill, Inline and Write. Bytes reach the
//     socket from one goroutine at a time, each Write's bytes together, in the order of the Writes.
//   - Any goroutine: Wake, Close, IsActive, Fd, RemoteAddr, LocalAddr and SetIdleTimeout.
//   - SetState and State are plain field accesses: set the state in Open and it is visible in every
//     later Serve and in Closed.
//
// A goroutine that has bytes for a conn it does not serve (a published message, an invalidation)
// never Writes them: it leaves them where the conn's Handler looks (an outbox of its own, under its
// own lock) and calls Wake; the conn's own goroutine then writes them from the Serve that follows,
// between two batches' replies.
type Conn interface {
	Len() int                   // bytes received and not yet skipped
	Peek(n int) ([]byte, error) // blocks until n bytes are buffered or the conn closes; valid until Release
	Skip(n int) error           // consume n buffered bytes
	Release() error             // free skipped bytes; earlier slices become invalid
	Write(p []byte) error       // write p and flush; p may be reused on return
	Inline() bool               // Serve runs on a poller: nothing may block (ErrOffload, offload.go)
	Fill() bool                 // read, without waiting, what the peer already sent; true if bytes were added
	// Wake makes the conn's own goroutine start a Handler.Serve after the call, even if no byte
	// arrived: once the running Serve returns, or at once if none is running (netpoll: on a worker).
	// Several Wakes may share one Serve. Wake never blocks and does no I/O; on a closed conn it does
	// nothing.
	Wake()
	Close() error // idempotent
	IsActive() bool
	Fd() int // the socket's file descriptor, for CLIENT LIST; the number, not a dup to use
	RemoteAddr() net.Addr
	LocalAddr() net.Addr
	SetIdleTimeout(d time.Duration) error // close after d without input or output; 0 = none
	SetState(v any)
	State() any // handler's per-connection state
}

// Handler serves connections. See the package doc for the ordering guarantees.
type Handler interface {
	// Open is called once on accept, before any Serve. An error closes the conn; a reply Open wrote
	// (e.g. "max number of clients reached") is sent first. The netpoll engine calls Open on the
	// accepting poller goroutine, so Open must not block.
	Open(c Conn) error
	// Serve is called when unseen bytes are buffered. It should consume complete requests; for a partial
	// one it may block in Peek or return. A non-nil error closes the conn.
	Serve(c Conn) error
	// Closed is called once after the conn is closed, whoever closed it.
	Closed(c Conn)
}

// Options configure a Server.
type Options struct {
	Addrs     []string      // "127.0.0.1:6379", "[::1]:6379"; Redis's optional "-addr" is the caller's
	Backlog   int           // listen backlog (Redis tcp-backlog); 0 = 511
	KeepAlive time.Duration // TCP keepalive period (Redis tcp-keepalive); 0 = off
	Engine    string        // "netpoll" (default) or "std"
	Loops     int           // netpoll pollers; 0 = GOMAXPROCS. Process-wide: the last Listen wins
	// MaxStash, when set, returns how much input a netpoll conn may hold beside its busy worker
	// before it is closed (Redis's client-query-buffer-limit); unset: 1 GB (offload.go).
	MaxStash func() int
	// TLSAddrs are served with TLS by the std engine's code, whatever Engine says (tls.go). Either
	// Addrs or TLSAddrs may be empty, not both.
	TLSAddrs []string
	TLS      TLSOptions
}

// Errors returned by Conn methods and Server.
var (
	ErrClosed       = errors.New("transport: connection closed")
	ErrServerClosed = errors.New("transport: server closed")
	errSkip         = errors.New("transport: skip beyond buffered bytes")
	errNegative     = errors.New("transport: negative peek length")
)

// engine is what differs between netpoll and std: how accepted connections are read.
type engine interface {
	start() error // begin accepting on s.lns; failures after start go to Server.fail
	stop()        // stop accepting; returns when no new conn can reach the registry
}

// Server accepts connections on its listeners and serves them with one Handler.
type Server struct {
	opts  Options
	h     Handler
	lns   []net.Listener
	eng   engine
	reg   registry
	errc  chan error // first fatal accept error, for Serve
	done  chan struct{}
	mu    sync.Mutex     // guards state, tlns and teng
	state int            // 0 bound, 1 serving, 2 closed
	tlns  []net.Listener // TLSAddrs' listeners, served by teng (replaced by SetTLSAddrs)
	teng  *stdEngine
}

// Listen binds every address now, so errors such as "address already in use" surface at start-up, and
// returns a Server that accepts once Serve is called.
func Listen(opts Options, h Handler) (*Server, error) {
	if err := normalize(&opts); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, h: h, errc: make(chan error, 1), done: make(chan struct{})}
	var err error
	if s.lns, err = listenAll(opts.Addrs, opts.Backlog); err != nil {
		return nil, err
	}
	if s.tlns, err = listenAll(opts.TLSAddrs, opts.Backlog); err != nil {
		closeAll(s.lns)
		return nil, err
	}
	if len(s.tlns) > 0 {
		s.teng = &stdEngine{s: s, lns: s.tlns, tls: &s.opts.TLS}
	}
	switch {
	case opts.Engine == "std" || len(s.lns) == 0:
		s.eng = &stdEngine{s: s, lns: s.lns}
	default:
		eng, err := newNetpollEngine(s)
		if err != nil {
			closeAll(s.lns)
			closeAll(s.tlns)
			return nil, err
		}
		s.eng = eng
	}
	s.reg.init()
	return s, nil
}

// listenAll binds every address, or none.
func listenAll(addrs []string, backlog int) ([]net.Listener, error) {
	var lns []net.Listener
	for _, addr := range addrs {
		ln, err := listenTCP(addr, backlog)
		if err != nil {
			closeAll(lns)
			return nil, err
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

func normalize(o *Options) error {
	if len(o.Addrs) == 0 && len(o.TLSAddrs) == 0 {
		return errors.New("transport: no address to listen on")
	}
	o.TLS.normalize()
	if o.Backlog <= 0 {
		o.Backlog = 511
	}
	if o.KeepAlive < 0 {
		o.KeepAlive = 0
	}
	if o.Loops <= 0 {
		o.Loops = runtime.GOMAXPROCS(0)
	}
	switch o.Engine {
	case "":
		o.Engine = "netpoll"
	case "netpoll", "std":
	default:
		return fmt.Errorf("transport: unknown engine %q", o.Engine)
	}
	return nil
}

// Serve accepts and serves connections until Close. It returns nil after Close, or the first error that
// stopped accepting (the caller still calls Close).
func (s *Server) Serve() error {
	s.mu.Lock()
	if s.state != 0 {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.state = 1
	err := s.eng.start()
	if err == nil && s.teng != nil {
		err = s.teng.start()
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	go s.reg.reap(s.done)
	select {
	case <-s.done:
		return nil
	case err := <-s.errc:
		return err
	}
}

// fail reports an error that stopped accepting; only the first one reaches Serve.
func (s *Server) fail(err error) {
	select {
	case s.errc <- err:
	default:
	}
}

// Addrs returns the bound addresses, in Options.Addrs order (useful with port 0).
func (s *Server) Addrs() []net.Addr {
	out := make([]net.Addr, len(s.lns))
	for i, ln := range s.lns {
		out[i] = ln.Addr()
	}
	return out
}

// TLSAddrs returns the bound TLS addresses, in Options.TLSAddrs order.
func (s *Server) TLSAddrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]net.Addr, len(s.tlns))
	for i, ln := range s.tlns {
		out[i] = ln.Addr()
	}
	return out
}

// Close stops accepting, closes every connection and returns once every Handler.Closed call has run.
func (s *Server) Close() error {
	s.mu.Lock()
	prev := s.state
	s.state = 2
	teng, tlns := s.teng, s.tlns
	s.mu.Unlock()
	if prev == 2 {
		return nil
	}
	// Shut the registry first: a conn accepted from here on is closed before Open. Stopping the engine
	// comes last because netpoll's shutdown polls for busy conns every 50ms unless none is left.
	s.reg.shut()
	s.reg.closeAll()
	s.reg.wait()
	if prev == 1 {
		s.eng.stop()
		if teng != nil {
			teng.stop()
		}
	} else {
		closeAll(s.lns)
		closeAll(tlns)
	}
	close(s.done)
	return nil
}

func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}
