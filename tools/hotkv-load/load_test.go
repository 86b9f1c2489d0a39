package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Ports of these tests' own servers: 27151-27189 (the IP-set helper's range), the first free one.
var nextPort atomic.Int32

func freePort(t *testing.T) int {
	t.Helper()
	for range 39 {
		p := 27151 + int(nextPort.Add(1)-1)%39
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			l.Close()
			return p
		}
	}
	t.Fatal("no free port in 27151-27189")
	return 0
}

// startRedis starts this test's own redis-server and returns its port; skipped without one.
func startRedis(t *testing.T) int {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	port := freePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 200 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return port
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return 0
}

// ask sends one command and returns its reply: an integer or bulk as text, an error as "-msg",
// an array's elements joined by spaces.
func ask(t *testing.T, port int, args ...string) string {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	if _, err := c.Write(appendCommand(nil, bs)); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(c)
	var read func() string
	read = func() string {
		ln, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		ln = strings.TrimSuffix(ln, "\r\n")
		switch ln[0] {
		case '$':
			n, _ := strconv.Atoi(ln[1:])
			if n < 0 {
				return "(nil)"
			}
			b := make([]byte, n+2)
			if _, err := io_ReadFull(rd, b); err != nil {
				t.Fatal(err)
			}
			return string(b[:n])
		case '*':
			n, _ := strconv.Atoi(ln[1:])
			var parts []string
			for range n {
				parts = append(parts, read())
			}
			return strings.Join(parts, " ")
		case '-':
			return ln
		}
		return ln[1:]
	}
	return read()
}

func io_ReadFull(rd *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := rd.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runLoad runs hotkv-load with args and returns its exit status and stderr.
func runLoad(t *testing.T, d *dialer, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cfg, err := parseFlags(append([]string{"-q"}, args...), &out)
	if err != nil {
		return 2, err.Error()
	}
	if d == nil {
		d = &dialer{}
	}
	d.backoff = 20 * time.Millisecond
	status := load(cfg, nil, &syncWriter{w: &out}, d)
	return status, out.String()
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func hostLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "10.%d.%d.%d\n", i>>16&255, i>>8&255, i&255)
	}
	return b.String()
}

func TestLoadFormatsIntoRedis(t *testing.T) {
	port := startRedis(t)
	p := strconv.Itoa(port)
	// RESP and inline, as redis-cli --pipe reads them.
	var resp bytes.Buffer
	for i := range 5000 {
		resp.Write(appendCommand(nil, [][]byte{[]byte("SADD"), []byte("s"), []byte(strconv.Itoa(i))}))
	}
	resp.WriteString("SET \"a key\" 'a value'\n")
	if st, out := runLoad(t, nil, "-p", p, "-c", "3", writeFile(t, "cmds.resp", resp.String())); st != 0 {
		t.Fatalf("exit %d: %s", st, out)
	}
	if got := ask(t, port, "SCARD", "s"); got != "5000" {
		t.Fatalf("SCARD %s", got)
	}
	if got := ask(t, port, "GET", "a key"); got != "a value" {
		t.Fatalf("GET %s", got)
	}
	// An IP list, gzipped, into a SET, and Tor-style ranges into a ZSET.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("# hosts\n" + hostLines(20000)))
	zw.Close()
	if st, out := runLoad(t, nil, "-p", p, "-c", "4", "--format", "ip", "--cmd", "SADD hosts {entry}", writeFile(t, "hosts.gz", gz.String())); st != 0 {
		t.Fatalf("exit %d: %s", st, out)
	}
	if got := ask(t, port, "SCARD", "hosts"); got != "20000" {
		t.Fatalf("SCARD %s", got)
	}
	geo := writeFile(t, "geoip", "16777216,16777471,AU\n16777472,16778239,CN\n")
	if st, out := runLoad(t, nil, "-p", p, "--format", "ip", "--cmd", "ZADD geo {hi_int} {lo}-{hi},{label}", geo); st != 0 {
		t.Fatalf("exit %d: %s", st, out)
	}
	if got := ask(t, port, "ZRANGEBYSCORE", "geo", "16777500", "+inf", "LIMIT", "0", "1"); got != "1.0.1.0-1.0.3.255,CN" {
		t.Fatalf("ZRANGEBYSCORE %s", got)
	}
	// CSV with a header, and NDJSON.
	csvFile := writeFile(t, "u.csv", "id,name\n1,Ann\n2,\"B, C\"\n")
	if st, out := runLoad(t, nil, "-p", p, "--header", "--cmd", "HSET u:{1} name {2}", csvFile); st != 0 {
		t.Fatalf("exit %d: %s", st, out)
	}
	if got := ask(t, port, "HGET", "u:2", "name"); got != "B, C" {
		t.Fatalf("HGET %s", got)
	}
	nd := writeFile(t, "d.ndjson", "{\"id\":1,\"doc\":{\"a\":1}}\n{\"id\":2,\"doc\":\"x\"}\n")
	if st, out := runLoad(t, nil, "-p", p, "--cmd", "SET d:{id} {doc}", nd); st != 0 {
		t.Fatalf("exit %d: %s", st, out)
	}
	if got := ask(t, port, "GET", "d:1"); got != `{"a":1}` {
		t.Fatalf("GET %s", got)
	}
}

// Ten bad lines among good ones: ten errors, each with its line number, and exit status 1.
func TestLoadBadLines(t *testing.T) {
	port := startRedis(t)
	var b strings.Builder
	var badLines []string
	for i := 1; i <= 1000; i++ {
		if i%97 == 0 && len(badLines) < 10 {
			fmt.Fprintf(&b, "ZADD z notafloat m%d\n", i)
			badLines = append(badLines, strconv.Itoa(i))
			continue
		}
		fmt.Fprintf(&b, "ZADD z %d m%d\n", i, i)
	}
	st, out := runLoad(t, nil, "-p", strconv.Itoa(port), "-c", "2", writeFile(t, "z.txt", b.String()))
	if st != 1 {
		t.Fatalf("exit %d: %s", st, out)
	}
	want := fmt.Sprintf("10× ERR value is not a valid float at line %s\n", strings.Join(badLines, ", "))
	if !strings.Contains(out, "10 errors") || !strings.Contains(out, want) {
		t.Fatalf("report:\n%s\nwant %q", out, want)
	}
	if got := ask(t, port, "ZCARD", "z"); got != "990" {
		t.Fatalf("ZCARD %s", got)
	}
	// Bad input the loader itself cannot read counts the same way.
	st, out = runLoad(t, nil, "-p", strconv.Itoa(port), "--format", "ip", "--cmd", "SADD s {hi_int}", writeFile(t, "l", "1.2.3.4\n1.2.3.999\nx,y,z\n"))
	if st != 1 || !strings.Contains(out, "ERR invalid IP set entry '*' (first: ERR invalid IP set entry '1.2.3.999') at line 2") ||
		!strings.Contains(out, "at line 3") {
		t.Fatalf("exit %d:\n%s", st, out)
	}
}

func TestLoadCannotRun(t *testing.T) {
	port := freePort(t) // nobody listens
	if st, out := runLoad(t, nil, "-p", strconv.Itoa(port), "--retries", "1", writeFile(t, "x", "PING\n")); st != 2 {
		t.Fatalf("exit %d: %s", st, out)
	}
	if st, _ := runLoad(t, nil, "--format", "csv", "x.csv"); st != 2 {
		t.Fatalf("csv without --cmd: exit %d", st)
	}
	if st, _ := runLoad(t, nil, "-p", "1", filepath.Join(t.TempDir(), "missing")); st != 2 {
		t.Fatalf("missing input: exit %d", st)
	}
	// A RESP stream that breaks off is bad input: 2, after loading what came before it.
	redis := startRedis(t)
	if st, out := runLoad(t, nil, "-p", strconv.Itoa(redis), writeFile(t, "x", "SET a 1\n*2\r\n$3\r\nGET\r\n")); st != 2 || !strings.Contains(out, "unexpected EOF") {
		t.Fatalf("exit %d: %s", st, out)
	}
	if got := ask(t, redis, "GET", "a"); got != "1" {
		t.Fatalf("GET a %s", got)
	}
}

// killer kills every connection of the load (CLIENT KILL by address) once it has seen some replies,
// up to times times.
func killer(t *testing.T, port int, times int) (*dialer, *atomic.Int32) {
	var mu sync.Mutex
	var addrs []string
	var kills atomic.Int32
	d := &dialer{dialHook: func(c net.Conn) {
		mu.Lock()
		addrs = append(addrs, c.LocalAddr().String())
		mu.Unlock()
	}}
	go func() {
		for range 2000 {
			time.Sleep(5 * time.Millisecond)
			if int(kills.Load()) >= times {
				return
			}
			mu.Lock()
			list := append([]string(nil), addrs...)
			addrs = addrs[:0]
			mu.Unlock()
			for _, a := range list {
				c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
				if err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond) // let the load get going on it
				c.Write(appendCommand(nil, [][]byte{[]byte("CLIENT"), []byte("KILL"), []byte("ADDR"), []byte(a)}))
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 64)
				k, _ := c.Read(buf)
				c.Close()
				if r := string(buf[:k]); strings.HasPrefix(r, ":") && r != ":0\r\n" { // CLIENT KILL ADDR's count: 0 once the load had ended
					kills.Add(1)
				}
			}
		}
	}()
	return d, &kills
}

// A CLIENT KILL mid-load: the idempotent SADDs are sent again and every entry is there once.
func TestLoadSurvivesClientKill(t *testing.T) {
	port := startRedis(t)
	const n = 300_000
	file := writeFile(t, "hosts", hostLines(n))
	d, kills := killer(t, port, 3)
	st, out := runLoad(t, d, "-p", strconv.Itoa(port), "-c", "2", "--format", "ip", "--cmd", "SADD hosts {entry}", file)
	if st != 0 {
		t.Fatalf("exit %d: %s", st, out)
	}
	if kills.Load() == 0 {
		t.Fatalf("no connection was killed: %s", out)
	}
	if got := ask(t, port, "SCARD", "hosts"); got != strconv.Itoa(n) {
		t.Fatalf("SCARD %s after %d kills: %s", got, kills.Load(), out)
	}
	t.Logf("%d kills: %s", kills.Load(), out)
	// A non-idempotent verb is not sent again: what was lost is reported instead.
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "RPUSH l %d\n", i)
	}
	d, kills = killer(t, port, 1)
	st, out = runLoad(t, d, "-p", strconv.Itoa(port), writeFile(t, "l", b.String()))
	if kills.Load() == 0 {
		t.Skipf("the load ended before the kill: %s", out)
	}
	llen, _ := strconv.Atoi(ask(t, port, "LLEN", "l"))
	if st != 1 || !strings.Contains(out, "not sent again (not idempotent)") || llen > n {
		t.Fatalf("exit %d LLEN %d: %s", st, llen, out)
	}
	m := regexp.MustCompile(`(\d+) errors`).FindStringSubmatch(out)
	lost, _ := strconv.Atoi(m[1])
	if llen+lost < n { // a lost RPUSH may or may not have run; every other one did
		t.Fatalf("LLEN %d + %d errors < %d: %s", llen, lost, n, out)
	}
	t.Logf("LLEN %d: %s", llen, out)
}

// --replace loads into a staging key and RENAMEs it over the key; with errors it leaves the key.
func TestLoadReplace(t *testing.T) {
	port := startRedis(t)
	p := strconv.Itoa(port)
	ask(t, port, "SADD", "list", "old1", "old2")
	st, out := runLoad(t, nil, "-p", p, "--replace", "list", "--format", "ip", "--cmd", "SADD {key} {entry}", writeFile(t, "l", "1.1.1.1\n2.2.2.2\n3.3.3.3\n"))
	if st != 0 || !regexp.MustCompile(`RENAMEd \S+ over list in [0-9]+\.[0-9]{3} ms`).MatchString(out) {
		t.Fatalf("exit %d: %s", st, out)
	}
	if got := ask(t, port, "SMEMBERS", "list"); got != "1.1.1.1 2.2.2.2 3.3.3.3" && ask(t, port, "SCARD", "list") != "3" {
		t.Fatalf("SMEMBERS %s", got)
	}
	if got := ask(t, port, "DBSIZE"); got != "1" {
		t.Fatalf("DBSIZE %s (staging key left?)", got)
	}
	// RESP input: a first argument equal to the key goes to the staging key.
	st, out = runLoad(t, nil, "-p", p, "--replace", "list", writeFile(t, "c", "SADD list a\nSADD list b\nSADD other x\n"))
	if st != 0 || ask(t, port, "SCARD", "list") != "2" || ask(t, port, "SISMEMBER", "list", "a") != "1" {
		t.Fatalf("exit %d: %s", st, out)
	}
	// An error: the key keeps its members and the staging key is gone.
	st, out = runLoad(t, nil, "-p", p, "--replace", "list", writeFile(t, "c", "SADD list z\nHSET list\n"))
	if st != 1 || !strings.Contains(out, "left unchanged") || ask(t, port, "SCARD", "list") != "2" || ask(t, port, "DBSIZE") != "2" {
		t.Fatalf("exit %d: %s", st, out)
	}
	// Nothing loaded: the key is deleted (an empty set is no key).
	st, out = runLoad(t, nil, "-p", p, "--replace", "list", "--format", "ip", "--cmd", "SADD {key} {entry}", writeFile(t, "c", "# nothing\n"))
	if st != 0 || ask(t, port, "EXISTS", "list") != "0" {
		t.Fatalf("exit %d: %s", st, out)
	}
}
