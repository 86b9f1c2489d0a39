package transport

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/transport/tlstest"
)

// startTLS serves h on one plain and one TLS loopback listener with opts.TLS's bounds.
func startTLS(t *testing.T, certs *tlstest.Certs, auth tls.ClientAuthType, opts Options, h Handler) *Server {
	t.Helper()
	cfg := certs.ServerConfig(t, auth)
	opts.TLSAddrs = []string{"127.0.0.1:0"}
	opts.TLS.Config = func() *tls.Config { return cfg }
	return startServer(t, opts, h)
}

func dialTLS(t *testing.T, s *Server, cfg *tls.Config) (*tls.Conn, error) {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", s.TLSAddrs()[0].String(), cfg)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// Over TLS the handler sees the same Conn: pipelined lines, a partial line completed later (the
// Peek that waits), a 1 MB reply, Wake from another goroutine, and one Closed per conn; the plain
// listener beside it keeps serving.
func TestTLSServe(t *testing.T) {
	certs := tlstest.New(t, "transport test CA")
	var woken atomic.Int64
	h := &lineHandler{block: true, onLine: func(c Conn, line []byte) error {
		if string(line) == "WAKE" {
			go func() { woken.Add(1); c.Wake() }()
		}
		if string(line) == "BIG" {
			return c.Write(bytes.Repeat([]byte("x"), 1<<20))
		}
		return nil
	}}
	s := startTLS(t, certs, tls.NoClientCert, Options{Engine: "netpoll"}, h)
	c, err := dialTLS(t, s, certs.ClientConfig(t, false))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("PING\r\nA\r\nB"))
	if got := string(readN(t, c, len("+PONG\r\n+A\r\n"))); got != "+PONG\r\n+A\r\n" {
		t.Fatalf("pipelined replies %q", got)
	}
	time.Sleep(20 * time.Millisecond)
	c.Write([]byte("C\r\n"))
	if got := string(readN(t, c, len("+BC\r\n"))); got != "+BC\r\n" {
		t.Fatalf("completed line %q", got)
	}
	c.Write([]byte("BIG\r\n")) // onLine writes the 1 MB before the line's own reply
	if got := readN(t, c, 1<<20); bytes.Count(got, []byte("x")) != 1<<20 {
		t.Fatal("1 MB reply corrupted")
	}
	if got := string(readN(t, c, len("+BIG\r\n"))); got != "+BIG\r\n" {
		t.Fatalf("after the big reply %q", got)
	}
	before := h.serves.Load()
	c.Write([]byte("WAKE\r\n"))
	readN(t, c, len("+WAKE\r\n"))
	eventually(t, "a Serve after Wake", func() bool { return woken.Load() == 1 && h.serves.Load() >= before+2 })
	plain := dial(t, s)
	plain.Write([]byte("PING\r\n"))
	if got := string(readN(t, plain, 7)); got != "+PONG\r\n" {
		t.Fatalf("plain listener %q", got)
	}
	c.Close()
	plain.Close()
	eventually(t, "both Closed", func() bool { return h.closes.Load() == 2 })
	if once, more := h.closedCounts(); once != 2 || more != 0 {
		t.Errorf("Closed once for %d conns, more for %d", once, more)
	}
}

// A plain-text client on the TLS port is closed without a reply and never reaches the handler; a
// TLS client without a certificate is refused where one is required and served where it is
// optional; a client certificate from another CA is refused.
func TestTLSRefusals(t *testing.T) {
	certs := tlstest.New(t, "transport test CA")
	var mu sync.Mutex
	var errs []string
	opts := Options{TLS: TLSOptions{OnError: func(_ net.Addr, err error) {
		mu.Lock()
		errs = append(errs, err.Error())
		mu.Unlock()
	}}}
	h := &lineHandler{}
	s := startTLS(t, certs, tls.RequireAndVerifyClientCert, opts, h)
	raw, err := net.Dial("tcp", s.TLSAddrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.Write([]byte("PING\r\n"))
	raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(raw)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("plain client on the TLS port: %v (got %q)", err, got)
	}
	if bytes.Contains(got, []byte("PONG")) {
		t.Errorf("plain client on the TLS port was answered: %q", got)
	}
	if c, err := dialTLS(t, s, certs.ClientConfig(t, false)); err == nil {
		// TLS 1.3: the client learns of the refusal at its first read.
		c.Write([]byte("PING\r\n"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Read(make([]byte, 10)); err == nil {
			t.Errorf("client without a certificate was served (%d bytes)", n)
		}
	}
	other := tlstest.New(t, "another CA")
	cfg := certs.ClientConfig(t, false)
	ocfg := other.ClientConfig(t, true)
	cfg.Certificates = ocfg.Certificates
	if c, err := dialTLS(t, s, cfg); err == nil {
		c.Write([]byte("PING\r\n"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Read(make([]byte, 10)); err == nil {
			t.Errorf("client with a certificate of another CA was served (%d bytes)", n)
		}
	}
	c, err := dialTLS(t, s, certs.ClientConfig(t, true))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("PING\r\n"))
	if got := string(readN(t, c, 7)); got != "+PONG\r\n" {
		t.Fatalf("client with a certificate: %q", got)
	}
	if n := h.opens.Load(); n != 1 {
		t.Errorf("handler opened %d conns, want only the one that completed its handshake", n)
	}
	eventually(t, "three failed handshakes reported", func() bool { mu.Lock(); defer mu.Unlock(); return len(errs) >= 3 })

	opt := startTLS(t, certs, tls.VerifyClientCertIfGiven, Options{}, &lineHandler{})
	c, err = dialTLS(t, opt, certs.ClientConfig(t, false))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("PING\r\n"))
	if got := string(readN(t, c, 7)); got != "+PONG\r\n" {
		t.Fatalf("optional client certificate, none given: %q", got)
	}
}

// Strangers cannot exhaust the server with handshakes: connections that send nothing are closed
// after HandshakeTimeout, those accepted beyond MaxHandshakes at once, and once they are gone a
// real client is served.
func TestTLSHandshakeBounds(t *testing.T) {
	certs := tlstest.New(t, "transport test CA")
	const limit, timeout = 8, 500 * time.Millisecond
	h := &lineHandler{}
	s := startTLS(t, certs, tls.NoClientCert, Options{TLS: TLSOptions{HandshakeTimeout: timeout, MaxHandshakes: limit}}, h)
	const flood = 40
	conns := make([]net.Conn, 0, flood)
	for range flood {
		c, err := net.Dial("tcp", s.TLSAddrs()[0].String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	eventually(t, "the handshake limit reached", func() bool { return s.Handshakes() == limit })
	// closed reports whether the server closed c (false: still open after wait).
	closed := func(c net.Conn, wait time.Duration) bool {
		c.SetReadDeadline(time.Now().Add(wait))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return false
		}
		if err == nil {
			t.Fatal("a half-open connection got bytes")
		}
		return true
	}
	start := time.Now()
	var early int
	for _, c := range conns {
		if closed(c, 5*time.Millisecond) {
			early++
		}
	}
	if took := time.Since(start); took < timeout/2 && early != flood-limit {
		t.Errorf("%d connections closed at once, want the %d beyond the limit", early, flood-limit)
	}
	for i, c := range conns {
		if !closed(c, 10*timeout) {
			t.Fatalf("half-open connection %d still open %v after the flood (timeout %v)", i, time.Since(start), timeout)
		}
	}
	eventually(t, "no handshake in progress", func() bool { return s.Handshakes() == 0 })
	c, err := dialTLS(t, s, certs.ClientConfig(t, false))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("PING\r\n"))
	if got := string(readN(t, c, 7)); got != "+PONG\r\n" {
		t.Fatalf("after the flood: %q", got)
	}
	if n := h.opens.Load(); n != 1 {
		t.Errorf("handler opened %d conns, want 1", n)
	}
}

// Server.Close ends handshakes in progress and returns.
func TestTLSCloseDuringHandshake(t *testing.T) {
	certs := tlstest.New(t, "transport test CA")
	cfg := certs.ServerConfig(t, tls.NoClientCert)
	s, err := Listen(Options{Addrs: nil, TLSAddrs: []string{"127.0.0.1:0"},
		TLS: TLSOptions{Config: func() *tls.Config { return cfg }, HandshakeTimeout: time.Minute}}, &lineHandler{})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	c, err := net.Dial("tcp", s.TLSAddrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eventually(t, "a handshake in progress", func() bool { return s.Handshakes() == 1 })
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for a handshake")
	}
	eventually(t, "the handshake ended", func() bool { return s.Handshakes() == 0 })
}

// SetTLSAddrs moves the TLS listener: the old address stops accepting, the new one serves, an
// open connection stays served, and an address that cannot be bound leaves the listener as it was.
func TestTLSSetAddrs(t *testing.T) {
	certs := tlstest.New(t, "transport test CA")
	s := startTLS(t, certs, tls.NoClientCert, Options{}, &lineHandler{})
	old := s.TLSAddrs()[0].String()
	open, err := dialTLS(t, s, certs.ClientConfig(t, false))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetTLSAddrs([]string{s.Addrs()[0].String()}); err == nil { // the plain port is taken
		t.Fatal("SetTLSAddrs bound an address in use")
	}
	if got := s.TLSAddrs()[0].String(); got != old {
		t.Fatalf("a failed SetTLSAddrs moved the listener to %s", got)
	}
	if err := s.SetTLSAddrs([]string{"127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tls.Dial("tcp", old, certs.ClientConfig(t, false)); err == nil {
		t.Error("the old TLS address still accepts")
	}
	c, err := dialTLS(t, s, certs.ClientConfig(t, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, conn := range []*tls.Conn{c, open} {
		conn.Write([]byte("PING\r\n"))
		if got := string(readN(t, conn, 7)); got != "+PONG\r\n" {
			t.Fatalf("after the move: %q", got)
		}
	}
	if err := s.SetTLSAddrs(nil); err != nil || len(s.TLSAddrs()) != 0 {
		t.Fatalf("SetTLSAddrs(nil): %v, %d addresses", err, len(s.TLSAddrs()))
	}
}
