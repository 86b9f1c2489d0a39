package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The differential helpers: when redis-server is on PATH, tests start their own (one plain, one with a
// password) on free loopback ports and send it the same raw bytes they give Parse. Without it those
// checks are skipped with a message; the expectations written in the tests still run against Parse.

const testPassword = "resp-test-password"

// liveServer is one redis-server started by this test binary.
type liveServer struct {
	once sync.Once
	addr string
	cmd  *exec.Cmd
	err  error
}

var livePlain, liveAuth liveServer

func TestMain(m *testing.M) {
	code := m.Run()
	livePlain.stop()
	liveAuth.stop()
	os.Exit(code)
}

// redisAddr returns the address of the test's redis-server (with requirepass when auth), starting it on
// first use, or skips the calling test when redis-server is not installed.
func redisAddr(t testing.TB, auth bool) string {
	t.Helper()
	s := &livePlain
	if auth {
		s = &liveAuth
	}
	s.once.Do(func() { s.err = s.start(auth) })
	if s.err != nil {
		t.Skipf("skipping comparison with the real server: %v", s.err)
	}
	return s.addr
}

func (s *liveServer) start(auth bool) error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("redis-server not on PATH")
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "resp-redis-")
	if err != nil {
		return err
	}
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--enable-debug-command", "yes", "--loglevel", "warning"}
	if auth {
		args = append(args, "--requirepass", testPassword)
	}
	s.cmd = exec.Command(bin, args...)
	configureChild(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if c, err := net.Dial("tcp", s.addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop()
	return fmt.Errorf("redis-server did not start on %s", s.addr)
}

// stop kills the server this binary started (by its own PID, nothing else).
func (s *liveServer) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// idleWait is how long exchange waits for more reply bytes before deciding the server is waiting for
// more input (an incomplete command) rather than closing.
const idleWait = 300 * time.Millisecond

// exchange sends input on a new connection and returns every byte the server answers, and whether the
// server closed the connection (as it does after a protocol error) rather than going quiet.
func exchange(addr string, input []byte) (out string, closed bool, err error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "", false, err
	}
	defer c.Close()
	// Write concurrently: the server may stop reading (and answer) before all of a large input is sent.
	go c.Write(input)
	var got []byte
	buf := make([]byte, 64*1024)
	for {
		c.SetReadDeadline(time.Now().Add(idleWait))
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		var ne net.Error
		switch {
		case err == nil:
			continue
		case errors.As(err, &ne) && ne.Timeout():
			return string(got), false, nil
		case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF):
			return string(got), true, nil
		default:
			return string(got), false, err
		}
	}
}

// serve runs input through Parse the way a server loop does, all bytes at once, and returns what that
// server would write: answer(args) for each non-empty command, then, on a protocol error, the error
// reply after which the connection is closed.
func serve(input []byte, lim Limits, answer func(args [][]byte) string) (out string, closed bool) {
	buf := bytes.Clone(input)
	var args [][]byte
	for len(buf) > 0 {
		var n int
		var err error
		args, n, _, err = Parse(args[:0], buf, &lim)
		if err != nil {
			return out + string(err.(*ProtocolError).Append(nil)), true
		}
		if n == 0 {
			break
		}
		if len(args) > 0 {
			out += answer(args)
		}
		buf = buf[n:]
	}
	return out, false
}

// pingEcho answers PING and ECHO as Redis does; test inputs use no other command.
func pingEcho(args [][]byte) string {
	name := strings.ToLower(string(args[0]))
	switch {
	case name == "ping" && len(args) == 1:
		return "+PONG\r\n"
	case name == "ping" && len(args) == 2, name == "echo" && len(args) == 2:
		return string(AppendBulk(nil, args[1]))
	case name == "ping" || name == "echo":
		return "-ERR wrong number of arguments for '" + name + "' command\r\n"
	}
	return fmt.Sprintf("<test input used unsupported command %q>", args[0])
}

// noAuth answers every command as Redis does before AUTH when a password is set.
func noAuth([][]byte) string { return "-NOAUTH Authentication required.\r\n" }

// roundTrip sends commands (already encoded) to the real server and returns its replies, split with
// ReadReply. It fails the test if the server does not answer every command.
func roundTrip(t testing.TB, addr string, cmds []byte, replies int) [][]byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(cmds); err != nil {
		t.Fatalf("write: %v", err)
	}
	r := bufio.NewReader(c)
	out := make([][]byte, replies)
	for i := range out {
		if out[i], err = ReadReply(r); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
	}
	return out
}

// command encodes args as a multibulk request.
func command(args ...string) []byte {
	b := AppendArrayLen(nil, len(args))
	for _, a := range args {
		b = AppendBulkString(b, a)
	}
	return b
}
