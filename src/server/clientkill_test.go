package server

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// killWorld is one server's clients for the CLIENT KILL differential: ctl runs the commands,
// the others are named after their role.
type killWorld struct {
	addr    string // the server's address (laddr)
	ctl     *testClient
	clients map[string]*testClient
	ids     map[string]string
}

func newKillWorld(t *testing.T, addr string) *killWorld {
	w := &killWorld{addr: addr, clients: map[string]*testClient{}, ids: map[string]string{}}
	dialNamed := func(name string) *testClient {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		c := &testClient{t: t, conn: conn, r: bufio.NewReader(conn)}
		if l := c.do("CLIENT SETNAME " + name); l != "+OK\r\n" {
			t.Fatalf("SETNAME: %q", l)
		}
		w.ids[name] = strings.TrimSpace(strings.TrimPrefix(c.do("CLIENT ID"), ":"))
		return c
	}
	w.ctl = dialNamed("ctl")
	for _, n := range []string{"a", "b", "c", "d", "sub"} {
		w.clients[n] = dialNamed(n)
	}
	sub := w.clients["sub"]
	sub.send("SUBSCRIBE ch")
	for range 3 {
		sub.line()
	}
	return w
}

// expand replaces <name> with that client's address as the server sees it, <id:name> with its
// id and <laddr> with the server's address.
func (w *killWorld) expand(cmd string) string {
	cmd = strings.ReplaceAll(cmd, "<laddr>", w.addr)
	for n, c := range w.clients {
		cmd = strings.ReplaceAll(cmd, "<"+n+">", c.conn.LocalAddr().String())
		cmd = strings.ReplaceAll(cmd, "<id:"+n+">", w.ids[n])
	}
	return cmd
}

// names returns the names of the connected clients, sorted.
func (w *killWorld) names(t *testing.T) []string {
	w.ctl.send("CLIENT LIST")
	var size int
	fmt.Sscanf(w.ctl.line(), "$%d", &size)
	buf := make([]byte, size+2)
	if _, err := ioReadFull(w.ctl.r, buf); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(buf)), "\n") {
		for _, f := range strings.Fields(line) {
			if n, ok := strings.CutPrefix(f, "name="); ok && n != "" {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// CLIENT KILL with each filter and with several ANDed, in both forms, against redis-server
// 7.0.15: the same replies, and the same clients killed (compared by name after each step).
func TestClientKillAgainstRedis(t *testing.T) {
	rc, _ := startRedisIn(t, t.TempDir())
	redisAddr := rc.conn.RemoteAddr().String()
	rc.conn.Close() // only the world's clients are counted
	s := startTestServer(t)
	hk := newKillWorld(t, s.Addrs()[0].String())
	rd := newKillWorld(t, redisAddr)
	steps := []string{
		"CLIENT KILL TYPE foo",
		"CLIENT KILL ID 0",
		"CLIENT KILL ID abc",
		"CLIENT KILL USER nosuch",
		"CLIENT KILL SKIPME maybe",
		"CLIENT KILL ID 5 TYPE",
		"CLIENT KILL MADEUP 1",
		"CLIENT KILL 1.2.3.4:5",
		"CLIENT KILL ADDR 1.2.3.4:5",
		"CLIENT KILL TYPE master",
		"CLIENT KILL TYPE replica",
		"CLIENT KILL TYPE slave",
		"CLIENT KILL ADDR <a> TYPE pubsub",
		"CLIENT KILL TYPE pubsub",
		"CLIENT KILL ID <id:a> ADDR <b>",
		"CLIENT KILL ID <id:a>",
		"CLIENT KILL ID <id:a>",
		"CLIENT KILL <b>",
		"CLIENT KILL ADDR <c> USER default LADDR <laddr> TYPE normal",
		"CLIENT KILL LADDR 1.2.3.4:5",
		"CLIENT KILL USER default",
	}
	for _, step := range steps {
		want := rd.ctl.do(rd.expand(step))
		got := hk.ctl.do(hk.expand(step))
		if got != want {
			t.Errorf("%s: HotKV %q, Redis %q", step, got, want)
		}
		wantNames := rd.names(t)
		var gotNames []string
		waitUntil(2*time.Second, func() bool {
			gotNames = hk.names(t)
			return slices.Equal(gotNames, wantNames)
		})
		if !slices.Equal(gotNames, wantNames) {
			t.Errorf("after %s: HotKV has clients %v, Redis %v", step, gotNames, wantNames)
		}
	}
	// SKIPME no kills the caller too, after its reply.
	for _, w := range []*killWorld{rd, hk} {
		if l := w.ctl.do("CLIENT KILL LADDR " + w.addr + " SKIPME no"); l != ":1\r\n" {
			t.Errorf("%s: CLIENT KILL LADDR SKIPME no = %q, want :1", w.addr, l)
		}
		w.ctl.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := w.ctl.r.ReadByte(); err == nil {
			t.Errorf("%s: the caller is still connected after killing itself", w.addr)
		}
	}
}

// CLIENT KILL MAXAGE (Redis 7.4, which 7.0.15 answers with a syntax error) kills clients at
// least that many seconds old, ANDed with the other filters.
func TestClientKillMaxAge(t *testing.T) {
	s := startTestServer(t)
	ctl := dialTestServer(t, s)
	old := dialTestServer(t, s)
	old.do("PING")
	time.Sleep(2100 * time.Millisecond)
	young := dialTestServer(t, s)
	young.do("PING")
	if l := ctl.do("CLIENT KILL MAXAGE x"); l != "-ERR maxage is not an integer or out of range\r\n" {
		t.Errorf("MAXAGE x: %q", l)
	}
	if l := ctl.do("CLIENT KILL MAXAGE 2 TYPE pubsub"); l != ":0\r\n" {
		t.Errorf("MAXAGE 2 TYPE pubsub: %q", l)
	}
	if l := ctl.do("CLIENT KILL MAXAGE 2"); l != ":1\r\n" { // old only: ctl is skipped
		t.Errorf("MAXAGE 2: %q", l)
	}
	if l := young.do("PING"); l != "+PONG\r\n" {
		t.Errorf("the young client: %q", l)
	}
	old.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := old.r.ReadByte(); err == nil {
		t.Error("the old client is still connected")
	}
}
