package transport

import (
	"crypto/tls"
	"net"
	"time"
)

// TLSOptions configure the TLS listeners (Options.TLSAddrs). A TLS connection is a std-engine
// connection whose reads and writes go through crypto/tls: one goroutine per connection, the
// same Conn semantics, and the pipeline cannot tell the two apart. netpoll has no TLS.
//
// The handshake runs on the connection's goroutine after accept and before Handler.Open, so the
// Handler sees only connections that completed it. Two bounds keep strangers from exhausting the
// server with handshakes: each must finish within HandshakeTimeout of the accept (a client that
// connects and sends nothing, or stops half way, is closed then), and at most MaxHandshakes run
// at once (a connection accepted beyond that is closed at once, before a byte is read).
type TLSOptions struct {
	// Config returns the configuration for one handshake. It is called once per accepted
	// connection, so a configuration replaced meanwhile (CONFIG SET of a certificate) applies
	// from the next connection on while open ones keep theirs. nil refuses the connection.
	Config func() *tls.Config
	// HandshakeTimeout bounds a handshake from accept to its end; 0 = DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// MaxHandshakes bounds the handshakes in progress; 0 = DefaultMaxHandshakes.
	MaxHandshakes int
	// OnError, when set, hears of each failed handshake (Redis logs "Error accepting a client
	// connection"). It runs on the connection's goroutine and must not block.
	OnError func(remote net.Addr, err error)
}

// Defaults of TLSOptions. Redis itself bounds neither (a half-open TLS connection holds a client
// slot until timeout, if one is configured).
const (
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultMaxHandshakes    = 1024
)

// errHandshakes is OnError's report of a connection refused because MaxHandshakes were running.
var errHandshakes = tlsError("too many TLS handshakes in progress")

type tlsError string

func (e tlsError) Error() string { return "transport: " + string(e) }

func (o *TLSOptions) normalize() {
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.MaxHandshakes <= 0 {
		o.MaxHandshakes = DefaultMaxHandshakes
	}
}

// handshake runs the server side of the TLS handshake on c and makes c read and write through
// the session; false means c must be closed. Server.Close interrupts it by closing c.
func (e *stdEngine) handshake(c *stdConn) bool {
	o := e.tls
	if e.hs.Add(1) > int64(o.MaxHandshakes) {
		e.hs.Add(-1)
		e.tlsFailed(c, errHandshakes)
		return false
	}
	defer e.hs.Add(-1)
	var cfg *tls.Config
	if o.Config != nil {
		cfg = o.Config()
	}
	if cfg == nil {
		e.tlsFailed(c, tlsError("no TLS configuration"))
		return false
	}
	tc := tls.Server(c.nc, cfg)
	c.nc.SetDeadline(time.Now().Add(o.HandshakeTimeout))
	err := tc.Handshake()
	c.nc.SetDeadline(time.Time{})
	if err != nil {
		e.tlsFailed(c, err)
		return false
	}
	c.rw = tc
	c.touch()
	return true
}

func (e *stdEngine) tlsFailed(c *stdConn, err error) {
	if e.tls.OnError != nil && !c.closed.Load() {
		e.tls.OnError(c.remote, err)
	}
}

// Handshakes returns the TLS handshakes in progress on the current TLS listeners, for tests.
func (s *Server) Handshakes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.teng == nil {
		return 0
	}
	return int(s.teng.hs.Load())
}

// SetTLSAddrs replaces the TLS listeners (CONFIG SET tls-port): the new addresses are bound
// first, so an error leaves the old ones serving; then the old listeners are closed. Connections
// already accepted stay open. No address stops TLS.
func (s *Server) SetTLSAddrs(addrs []string) error {
	lns, err := listenAll(addrs, s.opts.Backlog)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == 2 {
		closeAll(lns)
		return ErrServerClosed
	}
	old := s.teng
	s.tlns, s.teng = lns, nil
	if len(lns) > 0 {
		s.teng = &stdEngine{s: s, lns: lns, tls: &s.opts.TLS}
		if s.state == 1 {
			s.teng.start()
		}
	}
	if old != nil {
		if s.state == 1 {
			old.stop() // its accept loops end; handshakes in progress finish on their own
		} else {
			closeAll(old.lns)
		}
	}
	return nil
}
