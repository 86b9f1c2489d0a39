package transport

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

// TestIdleConnOneFd: an idle conn holds one descriptor of the server's (the netpoll engine makes
// its dup for blocking writes only when a worker writes), and a conn moved to a worker (a partial
// line it waits for, then a reply written off the poller) still answers and is closed cleanly.
func TestIdleConnOneFd(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		h := &lineHandler{block: true}
		s := startServer(t, Options{Engine: engine}, h)
		const n = 64
		before := openFds(t)
		conns := make([]*net.TCPConn, n)
		for i := range conns {
			conns[i] = dial(t, s)
		}
		for end := time.Now().Add(10 * time.Second); h.opens.Load() < n && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
		if h.opens.Load() != n {
			t.Fatalf("%d of %d conns opened", h.opens.Load(), n)
		}
		// Each conn is two descriptors of this process: the client's and the server's.
		if got := openFds(t) - before; got > 2*n+8 {
			t.Fatalf("%d idle conns hold %d descriptors, want about %d (one each on either side)", n, got, 2*n)
		}
		c := conns[0]
		c.Write([]byte("PI")) // half a line: Serve waits in Peek, off the poller
		time.Sleep(20 * time.Millisecond)
		c.Write([]byte("NG\r\n"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 7)
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "+PONG\r\n" {
			t.Fatalf("reply after a partial line: %q, %v", buf, err)
		}
		for _, c := range conns {
			c.Close()
		}
		for end := time.Now().Add(10 * time.Second); h.closes.Load() < n && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
		if h.closes.Load() != n {
			t.Fatalf("%d of %d conns closed", h.closes.Load(), n)
		}
	})
}

// openFds counts this process's open descriptors.
func openFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("read /proc/self/fd: %v", err)
	}
	return len(ents)
}
