package testfuzz

import (
	"strings"
	"testing"
	"time"
)

// bothServers returns HotKV's address and, when redis-server is installed, Redis's, both started
// with the same options: each check below runs unchanged against both.
func bothServers(t *testing.T, args ...string) []string {
	hotkv, _ := startHotKV(t, args...)
	addrs := []string{hotkv}
	if redis := maybeRedis(t, args...); redis != "" {
		addrs = append(addrs, redis)
	}
	return addrs
}

func TestMaxClients(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		for _, addr := range bothServers(t, "--maxclients", "2") {
			a, b := dial(t, addr), dial(t, addr)
			for _, c := range []*rawConn{a, b} {
				if got := c.do("PING"); got != "+PONG\r\n" {
					t.Fatalf("%s: PING within maxclients = %s", addr, quote(got))
				}
			}
			refused := dial(t, addr)
			go refused.tryWrite([]byte("PING\r\n"))
			expectClose(t, refused, 10*time.Second, "client over maxclients", "-ERR max number of clients reached\r\n")
			// A freed slot is usable again; the server notices the close asynchronously.
			a.c.Close()
			if !eventually(5*time.Second, func() bool {
				c := dial(t, addr)
				defer c.c.Close()
				r, err := c.doErr("PING")
				return err == nil && r == "+PONG\r\n"
			}) {
				t.Errorf("%s: no client accepted after one of the two left", addr)
			}
		}
	})
}

func TestIdleTimeout(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		for _, addr := range bothServers(t, "--timeout", "1") {
			idle, busy := dial(t, addr), dial(t, addr)
			idle.do("PING")
			start := time.Now()
			busyErr := make(chan error, 1)
			go func() {
				// A client that keeps talking is never idle.
				for time.Since(start) < 3*time.Second {
					if r, err := busy.doErr("PING"); err != nil || r != "+PONG\r\n" {
						busyErr <- err
						return
					}
					time.Sleep(200 * time.Millisecond)
				}
				busyErr <- nil
			}()
			expectClose(t, idle, 6*time.Second, "idle client", "")
			if d := time.Since(start); d < time.Second {
				t.Errorf("%s: idle client closed after %v, before the 1s timeout", addr, d)
			}
			if err := <-busyErr; err != nil {
				t.Errorf("%s: active client was disconnected: %v", addr, err)
			}
		}
	})
}

// doErr is do for goroutines and probes: errors are returned, not fatal.
func (rc *rawConn) doErr(args ...string) (string, error) {
	if err := rc.tryWrite(appendCommand(nil, args...)); err != nil {
		return "", err
	}
	r, err := rc.tryReply()
	return string(r), err
}

func eventually(d time.Duration, f func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return false
}

func TestRequirePass(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		const (
			noauth    = "-NOAUTH Authentication required.\r\n"
			wrongpass = "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
		)
		steps := []struct {
			args []string
			want string
		}{
			{[]string{"GET", "k"}, noauth},
			{[]string{"SET", "k", "v"}, noauth},
			{[]string{"PING"}, noauth},
			{[]string{"NOSUCH"}, "-ERR unknown command 'NOSUCH', with args beginning with: \r\n"},
			{[]string{"AUTH", "wrong"}, wrongpass},
			{[]string{"AUTH", "default", "wrong"}, wrongpass},
			{[]string{"AUTH", "nobody", "secret"}, wrongpass},
			{[]string{"AUTH", "a", "b", "c"}, "-ERR syntax error\r\n"},
			{[]string{"AUTH"}, "-ERR wrong number of arguments for 'auth' command\r\n"},
			{[]string{"GET", "k"}, noauth},
			{[]string{"AUTH", "secret"}, "+OK\r\n"},
			{[]string{"SET", "k", "v"}, "+OK\r\n"},
			{[]string{"GET", "k"}, "$1\r\nv\r\n"},
			{[]string{"AUTH", "wrong"}, wrongpass},
			{[]string{"GET", "k"}, "$1\r\nv\r\n"}, // a failed AUTH keeps the earlier login
			{[]string{"AUTH", "default", "secret"}, "+OK\r\n"},
		}
		for _, addr := range bothServers(t, "--requirepass", "secret") {
			c := dial(t, addr)
			for _, s := range steps {
				if got := c.do(s.args...); got != s.want {
					t.Errorf("%s: %s = %s, want %s", addr, quoteArgs(s.args), quote(got), quote(s.want))
				}
			}
			checkUnauthLimits(t, addr)
		}
	})
}

// checkUnauthLimits checks Redis's smaller protocol limits for clients that must still AUTH.
func checkUnauthLimits(t *testing.T, addr string) {
	cases := []struct{ name, in, want string }{
		{"too many args", "*11\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n"},
		{"too long bulk", "*2\r\n$4\r\nAUTH\r\n$16385\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n"},
	}
	for _, tc := range cases {
		c := dial(t, addr)
		go c.tryWrite([]byte(tc.in))
		expectClose(t, c, 10*time.Second, "unauthenticated "+tc.name, tc.want)
	}
	// Once authenticated, the normal limits apply.
	c := dial(t, addr)
	big := strings.Repeat("v", 20000)
	c.write([]byte("AUTH secret\r\n"))
	if got := string(c.reply()); got != "+OK\r\n" {
		t.Fatalf("%s: AUTH = %s", addr, quote(got))
	}
	if got := c.do("ECHO", big); got != "$20000\r\n"+big+"\r\n" {
		t.Errorf("%s: authenticated 20000-byte ECHO = %s", addr, quote(got))
	}
}

func TestNoPasswordAuth(t *testing.T) {
	want := "-ERR AUTH <password> called without any password configured for the default user. " +
		"Are you sure your configuration is correct?\r\n"
	for _, addr := range bothServers(t) {
		if got := dial(t, addr).do("AUTH", "x"); got != want {
			t.Errorf("%s: AUTH without requirepass = %s, want %s", addr, quote(got), quote(want))
		}
	}
}
