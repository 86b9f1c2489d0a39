package transport

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// listenTCP binds addr with an explicit backlog, which net.Listen cannot take (it always uses somaxconn).
// Like Redis it sets SO_REUSEADDR, and IPV6_V6ONLY on IPv6 sockets so that "0.0.0.0" and "::" can be
// bound side by side. An empty host means IPv4 any.
func listenTCP(addr string, backlog int) (net.Listener, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	fd, err := bindSocket(ta, backlog)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	f := os.NewFile(uintptr(fd), "listener "+addr)
	defer f.Close() // FileListener holds its own dup
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	return ln, nil
}

// bindSocket returns a listening, non-blocking, close-on-exec socket.
func bindSocket(ta *net.TCPAddr, backlog int) (int, error) {
	family, sa := sockaddr(ta)
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	if err := setupListener(fd, family, sa, backlog); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

func setupListener(fd, family int, sa syscall.Sockaddr, backlog int) error {
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	if family == syscall.AF_INET6 {
		if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 1); err != nil {
			return os.NewSyscallError("setsockopt", err)
		}
	}
	if err := syscall.Bind(fd, sa); err != nil {
		return os.NewSyscallError("bind", err)
	}
	if err := syscall.Listen(fd, backlog); err != nil {
		return os.NewSyscallError("listen", err)
	}
	return nil
}

func sockaddr(ta *net.TCPAddr) (int, syscall.Sockaddr) {
	if ip4 := ta.IP.To4(); ip4 != nil || ta.IP == nil {
		sa := &syscall.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		return syscall.AF_INET, sa
	}
	sa := &syscall.SockaddrInet6{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To16())
	if ta.Zone != "" {
		if ifi, err := net.InterfaceByName(ta.Zone); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		}
	}
	return syscall.AF_INET6, sa
}

// setKeepAlive applies Redis's tcp-keepalive to a socket: probes start after d idle, repeat every d/3,
// and three unanswered probes drop the peer. d == 0 turns keepalive off (Go's accept enables 15s by
// default, which Redis does not).
func setKeepAlive(fd int, d time.Duration) error {
	if d <= 0 {
		return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 0)
	}
	secs := max(int(d/time.Second), 1)
	opts := [...]struct{ level, name, v int }{
		{syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, secs},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, max(secs/3, 1)},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, 3},
	}
	for _, o := range opts {
		if err := syscall.SetsockoptInt(fd, o.level, o.name, o.v); err != nil {
			return os.NewSyscallError("setsockopt", err)
		}
	}
	return nil
}
