package testfuzz

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// dialFrom connects to addr from the local address src (port chosen by the kernel). 127.0.0.2 is a
// loopback address every Linux host answers on, and it is not local to Redis 7.0, which compares
// the peer's address string with "127.0.0.1" and "::1" (islocalClient): it stands in for a remote
// client without binding anything but loopback.
func dialFrom(t testing.TB, src, addr string) *rawConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, addr: addr, c: c, r: bufio.NewReaderSize(c, 64<<10)}
}

// Protected mode, enable-debug-command local and enable-protected-configs local decide who is
// local exactly as redis-server 7.0.15 does: a client from 127.0.0.2 is refused with the same
// DENIED bytes, while one from 127.0.0.1 is served; a password, or protected-mode no (also set
// at run time), lets it in; "local" refuses DEBUG and protected configs to it.
func TestProtectedModeAgainstRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several servers")
	}
	type server struct{ name, addr string }
	start := func(args ...string) []server {
		hotkv, _ := startHotKV(t, args...)
		out := []server{{"HotKV", hotkv}}
		if r := maybeRedis(t, args...); r != "" {
			out = append(out, server{"redis-server", r})
		}
		return out
	}
	const remote = "127.0.0.2"
	var denied string
	for _, s := range start() {
		c := dialFrom(t, remote, s.addr)
		c.write([]byte("PING\r\n"))
		got, err := c.readUntilClosed(10 * time.Second)
		if err != nil {
			t.Fatalf("%s: client from %s: %v", s.name, remote, err)
		}
		if denied == "" {
			denied = got
		} else if got != denied {
			t.Errorf("%s sent %s to a client from %s, HotKV sent %s", s.name, quote(got), remote, quote(denied))
		}
		if got := dialFrom(t, "127.0.0.1", s.addr).do("PING"); got != "+PONG\r\n" {
			t.Errorf("%s: PING from 127.0.0.1 = %s", s.name, quote(got))
		}
		// CONFIG SET protected-mode no from the loopback lets the next remote client in.
		if got := dial(t, s.addr).do("CONFIG", "SET", "protected-mode", "no"); got != "+OK\r\n" {
			t.Fatalf("%s: CONFIG SET protected-mode no = %s", s.name, quote(got))
		}
		if got := dialFrom(t, remote, s.addr).do("PING"); got != "+PONG\r\n" {
			t.Errorf("%s: PING from %s after protected-mode no = %s", s.name, remote, quote(got))
		}
	}
	const wantDenied = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user."
	if len(denied) < len(wantDenied) || denied[:len(wantDenied)] != wantDenied {
		t.Errorf("refusal = %s", quote(denied))
	}

	for _, s := range start("--requirepass", "pw") {
		if got := dialFrom(t, remote, s.addr).do("PING"); got != "-NOAUTH Authentication required.\r\n" {
			t.Errorf("%s with requirepass: PING from %s = %s", s.name, remote, quote(got))
		}
	}

	for _, s := range start("--protected-mode", "no", "--enable-debug-command", "local",
		"--enable-protected-configs", "local") {
		far, near := dialFrom(t, remote, s.addr), dialFrom(t, "127.0.0.1", s.addr)
		checks := []struct {
			c        *rawConn
			cmd      []string
			want     string
			wantPref bool
		}{
			{far, []string{"DEBUG", "SLEEP", "0"}, "-ERR DEBUG command not allowed.", true},
			{near, []string{"DEBUG", "SLEEP", "0"}, "+OK\r\n", false},
			{far, []string{"CONFIG", "SET", "dbfilename", "x.rdb"},
				"-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config\r\n", false},
			{near, []string{"CONFIG", "SET", "dbfilename", "x.rdb"}, "+OK\r\n", false},
		}
		for _, ch := range checks {
			got := ch.c.do(ch.cmd...)
			if ch.wantPref && len(got) >= len(ch.want) {
				got = got[:len(ch.want)]
			}
			if got != ch.want {
				t.Errorf("%s: %q from %s = %s, want %s", s.name, ch.cmd, ch.c.c.LocalAddr(), quote(got), quote(ch.want))
			}
		}
	}
}

// The directives CONFIG SET refuses as protected (enable-protected-configs no) are Redis's: every
// directive redis-server 7.0.15 lists in CONFIG GET * is set to its current value on both servers,
// and the names answered "can't set protected config" must be the same.
func TestProtectedConfigsAgainstRedis(t *testing.T) {
	redis := startRedis(t)
	hotkv, _ := startHotKV(t)
	rc := dial(t, redis)
	raw := rc.do("CONFIG", "GET", "*")
	lines := strings.Split(raw, "\r\n")
	var names []string
	for i := 2; i < len(lines); i += 4 { // *N, then $len name $len value per pair
		names = append(names, lines[i])
	}
	if len(names) < 150 {
		t.Fatalf("CONFIG GET * listed %d directives", len(names))
	}
	protected := func(addr string) []string {
		c := dial(t, addr)
		var out []string
		for _, n := range names {
			get := strings.Split(c.do("CONFIG", "GET", n), "\r\n")
			if len(get) < 5 {
				continue // not a directive HotKV knows: other tests cover CONFIG GET
			}
			if strings.HasSuffix(c.do("CONFIG", "SET", n, get[4]), "can't set protected config\r\n") {
				out = append(out, n)
			}
		}
		return out
	}
	want, got := protected(redis), protected(hotkv)
	t.Logf("%d directives; protected on both: %q", len(names), want)
	if strings.Join(got, " ") != strings.Join(want, " ") || len(want) == 0 {
		t.Errorf("protected directives: HotKV %q, redis-server %q", got, want)
	}
}
