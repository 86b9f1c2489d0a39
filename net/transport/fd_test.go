package transport

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFd: Conn.Fd is a socket of this process whose peer is the client of that conn.
func TestFd(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		h := &funcHandler{conns: make(chan Conn, 2), serve: func(Conn) error { return nil }}
		s := startServer(t, Options{Engine: engine}, h)
		for range 2 {
			c := dial(t, s)
			checkSocketFd(t, (<-h.conns).Fd(), c.LocalAddr().(*net.TCPAddr))
		}
	})
}

// checkSocketFd fails unless fd is a socket of this process connected to peer.
func checkSocketFd(t *testing.T, fd int, peer *net.TCPAddr) {
	t.Helper()
	if fd < 0 {
		t.Fatalf("fd %d", fd)
	}
	link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !strings.HasPrefix(link, "socket:[") {
		t.Fatalf("fd %d links to %q (%v), want a socket", fd, link, err)
	}
	sa, err := unix.Getpeername(fd)
	if err != nil {
		t.Fatalf("getpeername(%d): %v", fd, err)
	}
	in4, ok := sa.(*unix.SockaddrInet4)
	if !ok || in4.Port != peer.Port || !net.IP(in4.Addr[:]).Equal(peer.IP) {
		t.Fatalf("fd %d is connected to %+v, want %v", fd, sa, peer)
	}
}
