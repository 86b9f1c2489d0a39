package server

import (
	"bufio"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// MONITOR over real sockets: another client's commands reach the monitoring connection as
// Redis's lines promptly (the push outbox wakes the idle monitor), SLOWLOG and CONFIG SET of its
// directives reach the engine through the server's settings, and a closed monitor is dropped.
func TestMonitorOverSockets(t *testing.T) {
	s := startTestServer(t)
	addr := s.Addrs()[0].String()
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		return c, bufio.NewReader(c)
	}
	send := func(c net.Conn, r *bufio.Reader, line string) string {
		t.Helper()
		if _, err := c.Write([]byte(line + "\r\n")); err != nil {
			t.Fatal(err)
		}
		reply, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return reply
	}
	mon, mr := dial()
	if got := send(mon, mr, "MONITOR"); got != "+OK\r\n" {
		t.Fatalf("MONITOR: %q", got)
	}
	cl, cr := dial()
	if got := send(cl, cr, "CONFIG SET slowlog-log-slower-than 0"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	send(cl, cr, "SET k v")
	line, err := mr.ReadString('\n')
	if err != nil {
		t.Fatalf("no MONITOR line: %v", err)
	}
	want := regexp.MustCompile(`^\+\d{10}\.\d{6} \[0 ` + regexp.QuoteMeta(cl.LocalAddr().String()) + `\] "SET" "k" "v"\r\n$`)
	if !want.MatchString(line) {
		t.Fatalf("MONITOR line %q", line)
	}
	if got := send(cl, cr, "SLOWLOG LEN"); !strings.HasPrefix(got, ":") || got == ":0\r\n" {
		t.Fatalf("SLOWLOG LEN after slowlog-log-slower-than 0: %q", got)
	}
	mon.Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.Engine.ClientCount() > 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := send(cl, cr, "PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after the monitor left: %q", got)
	}
}
