package server

import (
	"bufio"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/transport"
	"github.com/hotkv/hotkv/src/config"
)

// fakeConn is a transport.Conn with a chosen remote address that records what is written.
type fakeConn struct {
	remote  net.Addr
	written strings.Builder
	state   any
}

func (f *fakeConn) Len() int                           { return 0 }
func (f *fakeConn) Peek(int) ([]byte, error)           { return nil, nil }
func (f *fakeConn) Skip(int) error                     { return nil }
func (f *fakeConn) Release() error                     { return nil }
func (*fakeConn) Inline() bool                         { return false }
func (*fakeConn) Fill() bool                           { return false }
func (f *fakeConn) Write(p []byte) error               { f.written.Write(p); return nil }
func (f *fakeConn) Close() error                       { return nil }
func (*fakeConn) Wake()                                {}
func (f *fakeConn) IsActive() bool                     { return true }
func (*fakeConn) Fd() int                              { return 42 }
func (f *fakeConn) RemoteAddr() net.Addr               { return f.remote }
func (f *fakeConn) LocalAddr() net.Addr                { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6379} }
func (f *fakeConn) SetIdleTimeout(time.Duration) error { return nil }
func (f *fakeConn) SetState(v any)                     { f.state = v }
func (f *fakeConn) State() any                         { return f.state }

var _ transport.Conn = (*fakeConn)(nil)

func newTestServer(t *testing.T, args ...string) *Server {
	t.Helper()
	cfg, err := config.Load(append([]string{"--port", "0", "--save", ""}, args...))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startTestServer is newTestServer listening and serving until the test ends.
func startTestServer(t *testing.T, args ...string) *Server {
	t.Helper()
	return serveTestServer(t, newTestServer(t, args...))
}

// serveTestServer listens and serves s, which the test may have changed first, until the test ends.
func serveTestServer(t *testing.T, s *Server) *Server {
	t.Helper()
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// captureLog sends s's log to a buffer the test can read while the server runs.
func captureLog(s *Server) *syncBuffer {
	b := &syncBuffer{}
	s.log = slog.New(slog.NewTextHandler(b, nil))
	return b
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testClient speaks inline commands to a test server and reads its replies a line at a time.
type testClient struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

// dialTestServer connects to s until the test ends.
func dialTestServer(t *testing.T, s *Server) *testClient {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &testClient{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// send writes cmds in one write, pipelined, and gives their replies 5 seconds.
func (c *testClient) send(cmds ...string) {
	c.t.Helper()
	c.conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.conn.Write([]byte(strings.Join(cmds, "\r\n") + "\r\n")); err != nil {
		c.t.Fatal(err)
	}
}

// line reads one line of a reply, CRLF included.
func (c *testClient) line() string {
	c.t.Helper()
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("reading a reply: %v (have %q)", err, line)
	}
	return line
}

// do sends cmd and reads the first line of its reply.
func (c *testClient) do(cmd string) string {
	c.t.Helper()
	c.send(cmd)
	return c.line()
}

// Protected mode: without a password a non-loopback client gets Redis's DENIED error; with a
// password, or from loopback, it is accepted.
func TestProtectedMode(t *testing.T) {
	remote := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 40000}
	h := &handler{s: newTestServer(t)}
	fc := &fakeConn{remote: remote}
	if err := h.Open(fc); err == nil || !strings.HasPrefix(fc.written.String(), "-DENIED Redis is running in protected mode") {
		t.Fatalf("non-loopback client without password: err %v, reply %q", err, fc.written.String())
	}
	local := &fakeConn{remote: &net.TCPAddr{IP: net.IPv6loopback, Port: 40000}}
	if err := h.Open(local); err != nil {
		t.Fatalf("loopback client refused: %v", err)
	}
	h = &handler{s: newTestServer(t, "--requirepass", "secret")}
	fc = &fakeConn{remote: remote}
	if err := h.Open(fc); err != nil {
		t.Fatalf("client refused although a password is set: %v (%q)", err, fc.written.String())
	}
	h = &handler{s: newTestServer(t, "--protected-mode", "no")}
	if err := h.Open(&fakeConn{remote: remote}); err != nil {
		t.Fatalf("client refused with protected-mode no: %v", err)
	}
}

// The server starts on a free port, answers, applies CONFIG SET to its hot-path settings, and
// stops.
func TestServeAndConfigSet(t *testing.T) {
	s := startTestServer(t)
	c := dialTestServer(t, s)
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING: %q", got)
	}
	if got := c.do("CONFIG SET requirepass secret"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	if s.Engine.Settings().RequirePass != "secret" {
		t.Fatal("CONFIG SET requirepass did not reach the engine's settings")
	}
}

// CONFIG SET timeout applies to clients already connected, as Redis's client cron does.
func TestConfigSetTimeoutAppliesToConnectedClients(t *testing.T) {
	s := startTestServer(t)
	idle, err := net.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if line := dialTestServer(t, s).do("CONFIG SET timeout 1"); line != "+OK\r\n" {
		t.Fatalf("CONFIG SET timeout: %q", line)
	}
	idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Fatal("idle client got data instead of being closed")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("idle client was not closed after CONFIG SET timeout 1")
	}
}
