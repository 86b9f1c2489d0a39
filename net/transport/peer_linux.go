package transport

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// IsActive also notices a peer that went away while nothing reads the socket. The std engine
// reads only on the conn's goroutine, and a Serve that waits in a blocking command (BLPOP) does
// not read, so neither the peer's FIN nor its reset would be seen until the wait ends; a blocked
// client polls IsActive instead. Redis frees such a client as soon as its read sees the end, even
// with requests still unread, so the kernel's TCP state is asked: anything but ESTABLISHED means
// the peer closed (CLOSE_WAIT) or reset (CLOSE), and the conn is closed then, as a netpoll conn is
// once its poller saw the hang-up, so that what the peer left unread is not served.
func (c *stdConn) IsActive() bool {
	if c.closed.Load() {
		return false
	}
	if peerGone(c.nc) {
		c.Close()
		return false
	}
	return true
}

// tcpEstablished is Linux's TCP_ESTABLISHED state (include/net/tcp_states.h).
const tcpEstablished = 1

// peerGone reports whether the kernel knows the peer of nc closed or reset the connection. An
// error asking counts as alive: the next read or write finds out.
func peerGone(nc interface {
	SyscallConn() (syscall.RawConn, error)
}) bool {
	rc, err := nc.SyscallConn()
	if err != nil {
		return false
	}
	var info *unix.TCPInfo
	var ierr error
	err = rc.Control(func(fd uintptr) {
		info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	})
	if err != nil || ierr != nil {
		return false
	}
	return info.State != tcpEstablished
}
