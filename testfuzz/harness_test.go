package testfuzz

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/src/config"
	"github.com/hotkv/hotkv/src/server"
)

// ioTimeout bounds every read and write of a test connection, so a server that stops answering
// fails the test instead of hanging it. Generous because -race slows the server several times.
const ioTimeout = 20 * time.Second

// startHotKV runs an in-process HotKV on a kernel-chosen loopback port with the given extra
// configuration (redis-server command-line syntax) and stops it when the test ends.
func startHotKV(t testing.TB, args ...string) (string, *server.Server) {
	t.Helper()
	// No save rules: the server's files would go to the package directory (its dir), and the
	// next test's server would load them.
	all := append([]string{"--port", "0", "--bind", "127.0.0.1", "--loglevel", "warning", "--save", ""}, args...)
	cfg, err := config.Load(all)
	if err != nil {
		t.Fatalf("config.Load(%q): %v", all, err)
	}
	s, err := server.New(cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := s.Listen(); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	s.Start()
	t.Cleanup(s.Stop)
	addrs := s.Addrs()
	if len(addrs) == 0 {
		t.Fatal("HotKV bound no address")
	}
	return addrs[0].String(), s
}

// engines are HotKV's transport engines (net/transport, chosen by HOTKV_TRANSPORT at Listen);
// they differ in how connections are read and written, so connection-level tests run on each.
var engines = []string{"netpoll", "std"}

// forEachEngine runs f as one subtest per transport engine.
func forEachEngine(t *testing.T, f func(t *testing.T)) {
	for _, e := range engines {
		t.Run(e, func(t *testing.T) {
			t.Setenv("HOTKV_TRANSPORT", e)
			f(t)
		})
	}
}

// haveRedis reports whether redis-server is installed; tests that need it skip otherwise.
func haveRedis() bool {
	_, err := exec.LookPath("redis-server")
	return err == nil
}

// startRedis runs redis-server on a free loopback port with persistence off and the given extra
// options, kills it (by its PID) when the test ends, and returns its address. It skips the test
// when redis-server is not installed.
func startRedis(t testing.TB, args ...string) string {
	t.Helper()
	if !haveRedis() {
		t.Skip("redis-server not on PATH: install redis-server 7.0.15 to run the comparison against Redis")
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		addr, err := tryStartRedis(t, args)
		if err == nil {
			return addr
		}
		lastErr = err // most likely another process took the port between probe and bind
	}
	t.Fatalf("cannot start redis-server: %v", lastErr)
	return ""
}

// maybeRedis is startRedis for tests that also run without Redis: it returns "" when redis-server
// is not installed.
func maybeRedis(t testing.TB, args ...string) string {
	if !haveRedis() {
		t.Log("redis-server not on PATH: checking HotKV against the expected bytes only")
		return ""
	}
	return startRedis(t, args...)
}

func tryStartRedis(t testing.TB, args []string) (string, error) {
	port, err := freePort()
	if err != nil {
		return "", err
	}
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--daemonize", "no", "--dir", t.TempDir(), "--logfile", ""}, args...)
	cmd := exec.Command("redis-server", all...)
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err
			return "", fmt.Errorf("redis-server exited at start: %v", err)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			ok := pingOK(c)
			c.Close()
			if ok {
				t.Cleanup(stop)
				return addr, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	return "", errors.New("redis-server did not answer PING within 10s")
}

func pingOK(c net.Conn) bool {
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	// With requirepass set, NOAUTH is as good a sign of life as PONG.
	return err == nil && (line == "+PONG\r\n" || strings.HasPrefix(line, "-NOAUTH"))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// rawConn is a test client that speaks raw RESP and hands back each reply's exact bytes.
type rawConn struct {
	t    testing.TB
	addr string
	c    net.Conn
	r    *bufio.Reader
}

func dial(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, addr: addr, c: c, r: bufio.NewReaderSize(c, 64<<10)}
}

// write sends p whole or fails the test.
func (rc *rawConn) write(p []byte) {
	rc.t.Helper()
	if err := rc.tryWrite(p); err != nil {
		rc.t.Fatalf("write to %s: %v", rc.addr, err)
	}
}

func (rc *rawConn) tryWrite(p []byte) error {
	rc.c.SetWriteDeadline(time.Now().Add(ioTimeout))
	_, err := rc.c.Write(p)
	return err
}

// reply reads one reply's raw bytes or fails the test.
func (rc *rawConn) reply() []byte {
	rc.t.Helper()
	b, err := rc.tryReply()
	if err != nil {
		rc.t.Fatalf("read reply from %s: %v", rc.addr, err)
	}
	return b
}

func (rc *rawConn) tryReply() ([]byte, error) {
	rc.c.SetReadDeadline(time.Now().Add(ioTimeout))
	return resptest.ReadRaw(rc.r)
}

// do sends one command and returns its reply's raw bytes.
func (rc *rawConn) do(args ...string) string {
	rc.t.Helper()
	rc.write(appendCommand(nil, args...))
	return string(rc.reply())
}

// readUntilClosed returns every byte the server sends until it closes the connection, or an error
// when the connection is still open after wait.
func (rc *rawConn) readUntilClosed(wait time.Duration) (string, error) {
	rc.c.SetReadDeadline(time.Now().Add(wait))
	b, err := io.ReadAll(rc.r)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		return string(b), fmt.Errorf("connection not closed within %v (%v); got %s", wait, err, quote(b))
	}
	return string(b), nil
}

// expectClose checks that the server sends exactly want and then closes the connection.
func expectClose(t testing.TB, c *rawConn, wait time.Duration, what, want string) {
	t.Helper()
	got, err := c.readUntilClosed(wait)
	if err != nil {
		t.Errorf("%s on %s: %v", what, c.addr, err)
	} else if got != want {
		t.Errorf("%s on %s: got %s, want %s and a close", what, c.addr, quote(got), quote(want))
	}
}

// appendCommand appends args as a RESP multibulk request.
func appendCommand(dst []byte, args ...string) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// quote renders bytes for a failure message, shortened so a 1MB reply does not flood the log.
func quote[T ~string | ~[]byte](b T) string {
	const max = 400
	s := string(b)
	if len(s) > max {
		return strconv.Quote(s[:max]) + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return strconv.Quote(s)
}
