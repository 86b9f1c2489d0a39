package rdb

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests' own view of a live redis-server: a process on a loopback port in
// 7100-7119 and a minimal RESP2 client, independent of the project's RESP code.

type redisServer struct {
	cmd  *exec.Cmd
	port int
	dir  string
}

// startRedis starts redis-server 7.0.15 with dir as its working directory and
// extra arguments; it skips the test when the binary is absent.
func startRedis(t testing.TB, dir string, args ...string) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	for port := 7100; port < 7120; port++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--daemonize", "no"}, args...)
		cmd := exec.Command(bin, all...)
		log, err := os.Create(filepath.Join(dir, fmt.Sprintf("redis-%d.log", port)))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s := &redisServer{cmd: cmd, port: port, dir: dir}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			log.Close()
		})
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if c, err := s.dial(); err == nil {
				r, err := c.do("PING")
				c.close()
				if err == nil && r == "PONG" {
					return s
				}
			}
			if cmd.ProcessState != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		b, _ := os.ReadFile(log.Name())
		t.Fatalf("redis-server on %d did not start:\n%s", port, b)
	}
	t.Skip("no free port in 7100-7119")
	return nil
}

// startRedisOrFail is startRedis for a server that is expected to refuse to
// start (a file it cannot load): it returns the log once the process exits.
func redisLoadFails(t testing.TB, dir, file string) (string, bool) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	cmd := exec.Command(bin, "--port", "0", "--dir", dir, "--dbfilename", file, "--save", "", "--appendonly", "no")
	done := make(chan struct{})
	var out []byte
	go func() { out, _ = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
		return string(out), true
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
		return string(out), false
	}
}

type respConn struct {
	c net.Conn
	r *bufio.Reader
}

type respError string

func (e respError) Error() string { return string(e) }

func (s *redisServer) dial() (*respConn, error) {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second)
	if err != nil {
		return nil, err
	}
	return &respConn{c: c, r: bufio.NewReader(c)}, nil
}

func (s *redisServer) client(t testing.TB) *respConn {
	t.Helper()
	c, err := s.dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

func (c *respConn) close() { c.c.Close() }

// do sends one command and returns its reply: string (status), []byte (bulk),
// int64, []any, nil, or a respError.
func (c *respConn) do(args ...any) (any, error) {
	c.c.SetDeadline(time.Now().Add(30 * time.Second))
	var b []byte
	b = fmt.Appendf(b, "*%d\r\n", len(args))
	for _, a := range args {
		var s string
		switch a := a.(type) {
		case string:
			s = a
		case []byte:
			s = string(a)
		default:
			s = fmt.Sprint(a)
		}
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(s), s)
	}
	if _, err := c.c.Write(b); err != nil {
		return nil, err
	}
	return c.read()
}

func (c *respConn) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, fmt.Errorf("empty reply line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return respError(line[1:]), nil
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return nil, err
		}
		return b[:n], nil
	case '*':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = c.read(); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	return nil, fmt.Errorf("unknown reply %q", line)
}

// must runs a command and fails the test on an error reply.
func (c *respConn) must(t testing.TB, args ...any) any {
	t.Helper()
	r, err := c.do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if e, ok := r.(respError); ok {
		t.Fatalf("%v: %s", args, e)
	}
	return r
}
