package transport

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestListenAddressInUse(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		s := startServer(t, Options{Engine: engine}, &lineHandler{})
		_, err := Listen(Options{Addrs: []string{s.Addrs()[0].String()}, Engine: engine}, &lineHandler{})
		if err == nil || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("second Listen on the same port: %v", err)
		}
	})
}

func TestListenBadOptions(t *testing.T) {
	for _, o := range []Options{
		{},
		{Addrs: []string{"127.0.0.1:0"}, Engine: "epoll"},
		{Addrs: []string{"127.0.0.1:notaport"}},
		{Addrs: []string{"127.0.0.1:0", "256.0.0.1:0"}},
	} {
		if s, err := Listen(o, &lineHandler{}); err == nil {
			s.Close()
			t.Errorf("Listen(%+v) succeeded", o)
		}
	}
}

func hasIPv6() bool {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// TestListenManyAddrs serves IPv4 and, where the machine has it, IPv6 loopback from one Server. The
// wildcard pair shows IPV6_V6ONLY: "0.0.0.0:p" and "[::]:p" bind side by side, as with Redis's
// "bind * -::*".
func TestListenManyAddrs(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		addrs := []string{"127.0.0.1:0", "127.0.0.1:0"}
		if hasIPv6() {
			addrs = append(addrs, "[::1]:0")
		}
		s := startServer(t, Options{Engine: engine, Addrs: addrs}, &lineHandler{})
		for i, a := range s.Addrs() {
			if err := pingConn(a.String(), i); err != nil {
				t.Fatalf("%s: %v", a, err)
			}
		}
		if !hasIPv6() {
			return
		}
		port := s.Addrs()[0].(*net.TCPAddr).Port
		s.Close()
		wild := []string{fmt.Sprintf("0.0.0.0:%d", port), fmt.Sprintf("[::]:%d", port)}
		s2, err := Listen(Options{Engine: engine, Addrs: wild}, &lineHandler{})
		if err != nil {
			t.Fatalf("IPv4 and IPv6 wildcards on one port: %v", err)
		}
		s2.Close()
	})
}

// TestKeepAlive checks the socket options Redis's tcp-keepalive sets, and that 0 leaves keepalive off.
func TestKeepAlive(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		for _, ka := range []time.Duration{0, 60 * time.Second} {
			h := &funcHandler{conns: make(chan Conn, 1), serve: func(Conn) error { return nil }}
			s := startServer(t, Options{Engine: engine, KeepAlive: ka}, h)
			dial(t, s)
			got := sockopts(t, <-h.conns)
			want := [4]int{0, 0, 0, 0}
			if ka > 0 {
				want = [4]int{1, 60, 20, 3}
			}
			if got[0] != want[0] || (ka > 0 && got != want) {
				t.Fatalf("keepalive %v: got on/idle/intvl/cnt %v, want %v", ka, got, want)
			}
		}
	})
}

// sockopts reads SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL and TCP_KEEPCNT of a server-side conn.
func sockopts(t *testing.T, c Conn) (v [4]int) {
	t.Helper()
	read := func(fd int) {
		opts := [4][2]int{
			{syscall.SOL_SOCKET, syscall.SO_KEEPALIVE},
			{syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE},
			{syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL},
			{syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT},
		}
		for i, o := range opts {
			n, err := syscall.GetsockoptInt(fd, o[0], o[1])
			if err != nil {
				t.Fatal(err)
			}
			v[i] = n
		}
	}
	read(c.Fd()) // the number only: the conn stays open for the test
	return v
}
