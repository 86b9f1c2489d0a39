package aof

import (
	"bufio"
	"bytes"
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

	"github.com/hotkv/hotkv/pipeline/feed"
)

// The AOF this package writes (INCR file, a rewrite with an AOF-format base, more writes, three
// databases) is one redis-server 7.0.15 accepts: redis-check-aof calls it valid, and a server
// started on it answers every key with our values.
func TestRedisLoadsOurAOF(t *testing.T) {
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	check, err := exec.LookPath("redis-check-aof")
	if err != nil {
		t.Skip("redis-check-aof not installed")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "appendonlydir")
	f := feed.New(2, 1<<20)
	rd := f.Attach()
	defer rd.Close()
	w, err := Open(Config{FS: OSFS{}, Dir: dir, Filename: testFn, Fsync: Everysec}, rd)
	if err != nil {
		t.Fatal(err)
	}
	set := func(i int) uint64 {
		s := f.Append(i%2, i%3, enc("SET", "k"+strconv.Itoa(i), "v "+strconv.Itoa(i)))
		w.Notify()
		return s
	}
	for i := 1; i <= 20; i++ {
		set(i)
	}
	if err := w.Rewrite(20, func(bw io.Writer) error {
		db := -1
		for i := 1; i <= 20; i++ {
			if i%3 != db {
				db = i % 3
				bw.Write(enc("SELECT", strconv.Itoa(db)))
			}
			bw.Write(enc("SET", "k"+strconv.Itoa(i), "v "+strconv.Itoa(i)))
		}
		return nil
	}, false); err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := 21; i <= 40; i++ {
		last = set(i)
	}
	if err := w.WaitDurable(last, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(check, filepath.Join(dir, ManifestName(testFn))).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "is valid") {
		t.Fatalf("redis-check-aof: %v\n%s", err, out)
	}
	t.Logf("redis-check-aof: %s", out)
	port := freePort(t)
	cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", root,
		"--appendonly", "yes", "--save", "", "--daemonize", "no")
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c := dialRedis(t, port)
	defer c.Close()
	for i := 1; i <= 40; i++ {
		if got := c.do(t, "SELECT", strconv.Itoa(i%3)); got != "+OK" {
			t.Fatalf("SELECT: %q\n%s", got, log.String())
		}
		if got, want := c.do(t, "GET", "k"+strconv.Itoa(i)), "v "+strconv.Itoa(i); got != want {
			t.Fatalf("GET k%d: %q, want %q\n%s", i, got, want, log.String())
		}
	}
}

// freePort returns a free loopback port in this package's range (7120-7139).
func freePort(t *testing.T) int {
	for p := 7124; p <= 7139; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err == nil {
			l.Close()
			return p
		}
	}
	t.Skip("no free port in 7124-7139")
	return 0
}

type redisConn struct {
	net.Conn
	br *bufio.Reader
}

func dialRedis(t *testing.T, port int) *redisConn {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			rc := &redisConn{Conn: c, br: bufio.NewReader(c)}
			// Wait for the load to finish: PING answers -LOADING until then.
			for time.Now().Before(deadline) {
				if rc.do(t, "PING") == "+PONG" {
					return rc
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Fatal("redis-server stays loading")
		}
		if time.Now().After(deadline) {
			t.Fatalf("cannot reach redis-server: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// do sends a command and returns a simple reply line, or a bulk string's contents.
func (c *redisConn) do(t *testing.T, args ...string) string {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(enc(args...)); err != nil {
		t.Fatal(err)
	}
	line, err := c.br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line[0] != '$' {
		return line
	}
	n, _ := strconv.Atoi(line[1:])
	if n < 0 {
		return "(nil)"
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(c.br, b); err != nil {
		t.Fatal(err)
	}
	return string(b[:n])
}

// A torn tail cut at several bytes of the last command, and a MULTI block without its EXEC
// (which Redis reverts to before the MULTI): redis-server 7.0.15 with
// aof-load-truncated yes cuts the file to the same length as Load, and with no refuses to start
// as Load refuses to load.
func TestRedisTruncatesLikeUs(t *testing.T) {
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	raw, _ := os.ReadFile("testdata/redis-incr/appendonly.aof.1.incr.aof")
	last := bytes.LastIndex(raw, []byte("*3\r\n$3\r\nset"))
	execAt := bytes.Index(raw, []byte("*1\r\n$4\r\nEXEC")) // a MULTI block without its EXEC
	for _, cut := range []int{last + 1, last + 9, len(raw) - 1, execAt} {
		for _, truncated := range []bool{true, false} {
			// Ours.
			fsys := NewCrashFS()
			copyDir(t, "testdata/redis-incr", fsys, "/r/d")
			fsys.WriteFile("/r/d/appendonly.aof.1.incr.aof", raw[:cut])
			_, _, _, ourErr := loadCollect(fsys, "/r/d", truncated)
			ours, _ := fsys.ReadFile("/r/d/appendonly.aof.1.incr.aof")
			// Redis's.
			root := t.TempDir()
			dir := filepath.Join(root, "appendonlydir")
			os.MkdirAll(dir, 0o755)
			for _, n := range []string{"appendonly.aof.manifest", "appendonly.aof.1.base.aof"} {
				b, _ := os.ReadFile("testdata/redis-incr/" + n)
				os.WriteFile(filepath.Join(dir, n), b, 0o644)
			}
			incr := filepath.Join(dir, "appendonly.aof.1.incr.aof")
			os.WriteFile(incr, raw[:cut], 0o644)
			yn := map[bool]string{true: "yes", false: "no"}[truncated]
			port := freePort(t)
			cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", root,
				"--appendonly", "yes", "--aof-load-truncated", yn, "--save", "", "--daemonize", "no")
			var log strings.Builder
			cmd.Stdout, cmd.Stderr = &log, &log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			if !truncated {
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					<-exited
					t.Fatalf("cut %d: redis-server started on a torn AOF with aof-load-truncated no", cut)
				}
				if ourErr == nil {
					t.Fatalf("cut %d: Redis refused the file, Load did not", cut)
				}
				continue
			}
			c := dialRedis(t, port)
			c.Close()
			cmd.Process.Kill()
			<-exited
			// The offset from Redis's log: the file itself may have grown since (keys of the
			// fixture that have expired by now are deleted, and the DELs appended).
			var theirs int
			marker := "Truncating the AOF appendonly.aof.1.incr.aof at offset "
			if i := strings.Index(log.String(), marker); i >= 0 {
				fmt.Sscan(log.String()[i+len(marker):], &theirs)
			}
			if ourErr != nil || len(ours) != theirs {
				t.Fatalf("cut %d: Redis truncated at %d, Load at %d (%v)\n%s", cut, theirs, len(ours), ourErr, log.String())
			}
			t.Logf("cut %d: both truncated at %d", cut, theirs)
		}
	}
}
