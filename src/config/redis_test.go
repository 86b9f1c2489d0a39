package config

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Helpers to compare with a real Redis: tests start Debian's redis-server
// 7.0.15 on a free loopback port when it is on PATH and skip otherwise.

type redisConn struct {
	c net.Conn
	r *bufio.Reader
}

// startRedis runs redis-server with args (then its own --port, --dir and
// quiet persistence) and returns a connection to it.
func startRedis(t *testing.T, args ...string) *redisConn {
	t.Helper()
	dir := t.TempDir()
	full := append([]string{}, args...)
	full = append(full, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--logfile", "")
	return launchRedis(t, dir, "", full, freePort(t))
}

// launchRedis runs redis-server in dir with args followed by --port port,
// feeds it stdin, and returns a connection to it; it is killed at cleanup.
func launchRedis(t *testing.T, dir, stdin string, args []string, port int) *redisConn {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	cmd := exec.Command(bin, append(append([]string{}, args...), "--port", strconv.Itoa(port))...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			rc := &redisConn{c: c, r: bufio.NewReader(c)}
			t.Cleanup(func() { _ = c.Close() })
			return rc
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server %q did not start: %v\n%s", args, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// do sends one command and returns the reply: a string for simple and bulk
// strings, "ERR..."-style text prefixed with "-" for errors, an int64, nil,
// or a []any.
func (rc *redisConn) do(t *testing.T, args ...string) any {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := rc.c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	v, err := rc.read()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (rc *redisConn) read() (any, error) {
	line, err := rc.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, fmt.Errorf("empty reply line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return "-" + body, nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(rc.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, _ := strconv.Atoi(body)
		out := make([]any, 0, max(n, 0))
		for i := 0; i < n; i++ {
			v, err := rc.read()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", line)
}

func ioReadFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// configGet returns CONFIG GET pattern as a map.
func (rc *redisConn) configGet(t *testing.T, pattern string) map[string]string {
	t.Helper()
	out := map[string]string{}
	arr, ok := rc.do(t, "CONFIG", "GET", pattern).([]any)
	if !ok {
		t.Fatalf("CONFIG GET %s: not an array", pattern)
	}
	for i := 0; i+1 < len(arr); i += 2 {
		out[arr[i].(string)] = arr[i+1].(string)
	}
	return out
}

// runRedisServer runs redis-server with args expecting it to refuse its
// configuration, and returns its stderr and exit status. A server that
// starts anyway is killed after a few seconds.
func runRedisServer(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return stderr.String(), code
}

// withoutLogLines drops redis-server's timestamped log lines ("123:C 01 Jan
// ... # text") and keeps their text, so outputs can be compared.
func withoutLogLines(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if i := strings.Index(l, " # "); i > 0 && strings.Contains(l[:i], ":C ") {
			l = l[i+3:]
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}
