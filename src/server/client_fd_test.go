package server

import (
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// CLIENT INFO and CLIENT LIST show each connection's own socket as fd=, on both transports: a
// socket of this process whose peer is that client. A killed client keeps its number while it is
// still listed.
func TestClientFd(t *testing.T) {
	for _, engine := range []string{"netpoll", "std"} {
		t.Run(engine, func(t *testing.T) {
			t.Setenv("HOTKV_TRANSPORT", engine)
			s := startTestServer(t)
			a, b := dialTestServer(t, s), dialTestServer(t, s)
			infoA, infoB := clientFields(a.bulk("CLIENT INFO")), clientFields(b.bulk("CLIENT INFO"))
			fdA, fdB := checkClientFd(t, infoA, a.conn), checkClientFd(t, infoB, b.conn)
			if fdA == fdB {
				t.Fatalf("both clients show fd=%d", fdA)
			}
			list := a.bulk("CLIENT LIST")
			for _, line := range strings.Split(strings.TrimSuffix(list, "\n"), "\n") {
				f := clientFields(line)
				switch f["id"] {
				case infoA["id"]:
					checkClientFd(t, f, a.conn)
				case infoB["id"]:
					checkClientFd(t, f, b.conn)
				default:
					t.Fatalf("CLIENT LIST shows an unknown client: %q", line)
				}
			}
			if got := a.do("CLIENT KILL ID " + infoB["id"]); got != ":1\r\n" {
				t.Fatalf("CLIENT KILL: %q", got)
			}
			b.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadAll(b.conn); err != nil {
				t.Fatalf("killed client: %v", err)
			}
			for _, line := range strings.Split(strings.TrimSuffix(a.bulk("CLIENT LIST"), "\n"), "\n") {
				if f := clientFields(line); f["id"] == infoB["id"] && f["fd"] != infoB["fd"] {
					t.Fatalf("killed client, still listed, shows fd=%s, had %s", f["fd"], infoB["fd"])
				}
			}
			if f := clientFields(a.bulk("CLIENT INFO")); f["fd"] != infoA["fd"] {
				t.Fatalf("fd=%s after CLIENT KILL of another client, had %s", f["fd"], infoA["fd"])
			}
		})
	}
}

// bulk sends cmd and reads its bulk string reply.
func (c *testClient) bulk(cmd string) string {
	c.t.Helper()
	head := c.do(cmd)
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(head, "$"), "\r\n"))
	if !strings.HasPrefix(head, "$") || err != nil {
		c.t.Fatalf("%s: %q, want a bulk string", cmd, head)
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, buf); err != nil {
		c.t.Fatalf("%s: %v", cmd, err)
	}
	return string(buf[:n])
}

// clientFields splits one CLIENT LIST line into its fields.
func clientFields(line string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Fields(line) {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// checkClientFd checks that line's fd is a socket of this process connected to conn, the client
// the line is about, and returns it.
func checkClientFd(t *testing.T, line map[string]string, conn net.Conn) int {
	t.Helper()
	fd, err := strconv.Atoi(line["fd"])
	if err != nil || fd < 0 {
		t.Fatalf("fd=%q, want a file descriptor", line["fd"])
	}
	if want := conn.LocalAddr().String(); line["addr"] != want {
		t.Fatalf("addr=%s, want %s", line["addr"], want)
	}
	link, err := os.Readlink("/proc/self/fd/" + line["fd"])
	if err != nil || !strings.HasPrefix(link, "socket:[") {
		t.Fatalf("fd=%d links to %q (%v), want a socket", fd, link, err)
	}
	sa, err := unix.Getpeername(fd)
	if err != nil {
		t.Fatalf("getpeername(%d): %v", fd, err)
	}
	peer := conn.LocalAddr().(*net.TCPAddr)
	if in4, ok := sa.(*unix.SockaddrInet4); !ok || in4.Port != peer.Port || !net.IP(in4.Addr[:]).Equal(peer.IP) {
		t.Fatalf("fd=%d is connected to %+v, not to its client %v", fd, sa, peer)
	}
	return fd
}
