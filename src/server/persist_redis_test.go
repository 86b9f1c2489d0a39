package server

import (
	"bufio"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// startRedisIn runs redis-server 7.0.15 on a free loopback port with its files in dir, and
// returns a client and a stop func (SIGTERM and wait: Redis writes and fsyncs its AOF then).
// It skips the test when redis-server is not installed.
func startRedisIn(t *testing.T, dir string, args ...string) (*testClient, func()) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--daemonize", "no", "--dir", dir, "--logfile", ""}, args...)
	cmd := exec.Command("redis-server", all...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	t.Cleanup(stop)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			continue
		}
		t.Cleanup(func() { conn.Close() })
		c := &testClient{t: t, conn: conn, r: bufio.NewReader(conn)}
		// -LOADING while it reads its files; bounded so a load that never ends fails here.
		const loadWait = 2 * time.Minute
		for loadEnd := time.Now().Add(loadWait); ; time.Sleep(20 * time.Millisecond) {
			r := c.do("PING")
			if r == "+PONG\r\n" {
				break
			}
			if time.Now().After(loadEnd) {
				t.Fatalf("redis-server still answers PING with %q after %v", r, loadWait)
			}
		}
		return c, stop
	}
	t.Fatal("redis-server did not start")
	return nil, nil
}

// An AOF directory written by redis-server 7.0.15 (base in AOF form, then its INCR file) loads
// into HotKV, which then answers the read-back commands as Redis did.
func TestLoadRedisAOF(t *testing.T) {
	dir := t.TempDir()
	rc, stop := startRedisIn(t, dir, "--appendonly", "yes", "--aof-use-rdb-preamble", "no",
		"--appendfsync", "always")
	reads := fillTypes(t, rc)
	want := readBack(t, rc, reads)
	stop()
	s := newPersistServer(t, dir, nil, "--appendonly", "yes")
	got := readBack(t, dialTestServer(t, s), reads)
	sameLines(t, "HotKV on Redis's AOF", want, got)
}
