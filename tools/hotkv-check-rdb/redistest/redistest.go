// Package redistest starts redis-server 7.0.15 for the checkers' tests, on a
// free loopback port in 7240-7249, and talks to it with a minimal RESP2
// client of its own (independent of the project's RESP code). It also runs
// redis-check-rdb and redis-check-aof and parses their verdicts.
package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	Port int
	Dir  string
	cmd  *exec.Cmd
	conn net.Conn
	rd   *bufio.Reader
}

// Start starts redis-server in dir with extra arguments; it skips the test
// when the binary is absent. The server is killed when the test ends.
func Start(t testing.TB, dir string, args ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	for port := 7240; port < 7250; port++ {
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
		s := &Server{Port: port, Dir: dir, cmd: cmd}
		t.Cleanup(func() { s.Stop(); log.Close() })
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if s.dial() == nil {
				if _, err := s.Do("PING"); err == nil {
					return s
				}
			}
		}
		t.Fatalf("redis-server on port %d did not answer", port)
	}
	t.Fatal("no free port in 7240-7249")
	return nil
}

// Stop kills the server (idempotent).
func (s *Server) Stop() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	if s.cmd != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

func (s *Server) dial() error {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), time.Second)
	if err != nil {
		return err
	}
	s.conn, s.rd = c, bufio.NewReader(c)
	return nil
}

// Do sends one command and returns its reply: a string, an int64, nil, a
// []any, or an error for a -ERR reply.
func (s *Server) Do(args ...string) (any, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	s.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := s.conn.Write(b.Bytes()); err != nil {
		return nil, err
	}
	return s.reply()
}

// MustDo is Do that fails the test on any error.
func (s *Server) MustDo(t testing.TB, args ...string) any {
	t.Helper()
	v, err := s.Do(args...)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return v
}

func (s *Server) reply() (any, error) {
	line, err := s.rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, ReplyError(line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(s.rd, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			v, err := s.reply()
			var re ReplyError
			if errors.As(err, &re) {
				v, err = re, nil
			}
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("bad reply %q", line)
}

// ReplyError is an error reply (-ERR ...).
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// WaitPersistence waits until INFO persistence shows no rewrite or save in progress.
func (s *Server) WaitPersistence(t testing.TB) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		v := s.MustDo(t, "INFO", "persistence").(string)
		if strings.Contains(v, "aof_rewrite_in_progress:0") && strings.Contains(v, "rdb_bgsave_in_progress:0") &&
			!strings.Contains(v, "aof_rewrite_scheduled:1") {
			return
		}
	}
	t.Fatal("persistence still busy after 20s")
}

// Verdict is what redis-check-rdb or redis-check-aof said.
type Verdict struct {
	OK     bool
	Offset int64 // redis-check-rdb: the error's offset; redis-check-aof: ok_up_to of the bad file (-1 unknown)
	Output string
}

var (
	rdbErrRE = regexp.MustCompile(`--- RDB ERROR DETECTED ---\n\[offset (\d+)\]`)
	okUpToRE = regexp.MustCompile(`ok_up_to=(\d+), ok_up_to_line=\d+, diff=([1-9]\d*)`)
)

// CheckRDB runs redis-check-rdb on file; it skips the test when the tool is absent.
func CheckRDB(t testing.TB, file string) Verdict {
	t.Helper()
	out, code := runTool(t, "redis-check-rdb", "", file)
	v := Verdict{OK: code == 0, Offset: -1, Output: out}
	if m := rdbErrRE.FindStringSubmatch(out); m != nil {
		v.Offset, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return v
}

// CheckAOF runs redis-check-aof with args (the file last) and stdin.
func CheckAOF(t testing.TB, stdin string, args ...string) Verdict {
	t.Helper()
	out, code := runTool(t, "redis-check-aof", stdin, args...)
	v := Verdict{OK: code == 0, Offset: -1, Output: out}
	if m := okUpToRE.FindStringSubmatch(out); m != nil {
		v.Offset, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return v
}

func runTool(t testing.TB, tool, stdin string, args ...string) (string, int) {
	t.Helper()
	bin, err := exec.LookPath(tool)
	if err != nil {
		t.Skip(tool + " not installed")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return string(out), 0
}

// FillAll writes keys of every type in small and large encodings, with
// expiries, in databases 0, 3 and 9, and a function library.
func FillAll(t testing.TB, s *Server) {
	t.Helper()
	do := func(args ...string) { s.MustDo(t, args...) }
	do("FLUSHALL")
	do("SET", "str", "hello")
	do("SET", "int", "12345")
	do("SET", "neg", "-77")
	do("SET", "lzf", strings.Repeat("abcd", 100))
	do("SET", "big", strings.Repeat("x", 70000))
	do("SET", "ttl", "v", "PX", "100000000")
	do("RPUSH", "list", "a", "b", "1", "2")
	do("SADD", "intset", "1", "2", "3", "-5")
	do("SADD", "strset", "a", "b", "c")
	do("ZADD", "zsmall", "1", "a", "2.5", "b", "-inf", "c")
	do("HSET", "hsmall", "f", "v", "f2", "v2")
	do("XADD", "stream", "1-1", "a", "1")
	do("XADD", "stream", "2-1", "b", "2")
	do("XGROUP", "CREATE", "stream", "g1", "0")
	do("XREADGROUP", "GROUP", "g1", "c1", "COUNT", "1", "STREAMS", "stream", ">")
	do("EVAL", `for i=1,700 do
		redis.call('rpush','biglist',string.rep('x',100)..i)
		redis.call('sadd','bigintset',i)
		redis.call('sadd','bigset','m'..i)
		redis.call('zadd','bigzset',i,'m'..i)
		redis.call('hset','bighash','f'..i,'v'..i)
		redis.call('xadd','bigstream','*','f',i)
	end`, "0")
	do("HSET", "longhash", "f", strings.Repeat("v", 100))
	do("EXPIRE", "bighash", "100000")
	do("SELECT", "3")
	do("SET", "db3", "val", "EX", "100000")
	do("LPUSH", "db3list", "x")
	do("SELECT", "9")
	do("SET", "db9", "val")
	do("SELECT", "0")
	do("FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('f1', function() return 1 end)")
}
