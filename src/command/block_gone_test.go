package command

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Blocked clients whose connection goes away, and how a blocked client shows in CLIENT LIST and
// INFO.

// goneConn is a test connection whose liveness the test controls, as the transport reports it
// through Client.Alive.
func goneConn(t *testing.T, e *Engine) (*testConn, *atomic.Bool) {
	tc := newTestConn(t, e)
	var alive atomic.Bool
	alive.Store(true)
	tc.client.Alive = alive.Load
	return tc, &alive
}

// A push right after the blocked client's connection closed, before the waiter polled its
// liveness, leaves the element in the list; the waiter then leaves the key's queue, so later
// pushes stay too and the next waiter in line is served.
func TestBlockGoneClientTakesNothing(t *testing.T) {
	e := newTestEngine()
	tc, alive := goneConn(t, e)
	other := newTestConn(t, e)
	ctl := newTestConn(t, e)
	ch := blockedDo(t, tc, "BLPOP", "dk", "0")
	next := blockedDo(t, other, "BRPOP", "dk", "0")
	alive.Store(false)
	// At once: the waiter has not polled yet, serving must notice the dead client itself.
	if got := ctl.do("LPUSH", "dk", "a", "b"); got != ":2\r\n" {
		t.Fatalf("LPUSH: %q", got)
	}
	if got := recv(t, next); got != "*2\r\n$2\r\ndk\r\n$1\r\na\r\n" {
		t.Errorf("next waiter: %q", got)
	}
	recv(t, ch) // the dead client's wait ends (its reply goes nowhere)
	if got := ctl.do("LRANGE", "dk", "0", "-1"); got != "*1\r\n$1\r\nb\r\n" {
		t.Errorf("list after the push: %q", got)
	}
	if n := len(e.blockStateOf([]byte("dk")).waiters); n != 0 {
		t.Errorf("%d keys still have waiters", n)
	}
}

// A blocked client whose connection closes with no push to come still ends its wait and leaves
// the key's waiters within the liveness poll.
func TestBlockGoneClientUnregisters(t *testing.T) {
	e := newTestEngine()
	tc, alive := goneConn(t, e)
	ch := blockedDo(t, tc, "BZMPOP", "0", "2", "z1", "z2", "MIN")
	alive.Store(false)
	select {
	case <-ch:
	case <-time.After(2 * time.Second):
		t.Fatal("the wait of a closed client did not end")
	}
	for _, k := range []string{"z1", "z2"} {
		if w := e.blockStateOf([]byte(k)).waiters; len(w) != 0 {
			t.Errorf("%s: waiters left %v", k, w)
		}
	}
	ctl := newTestConn(t, e)
	ctl.do("ZADD", "z1", "1", "m")
	if got := ctl.do("ZCARD", "z1"); got != ":1\r\n" {
		t.Errorf("ZCARD after the closed client left: %q", got)
	}
}

// A client blocked on several keys and served by one leaves the others' queues at once, so a
// worker that always blocks on the same keys does not pile up waiters on the quiet ones.
func TestBlockServedLeavesOtherKeys(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 2)
	busy, quiet := keyPair(e, "lv", false)
	for range 5 {
		ch := blockedDo(t, cs[0], "BRPOP", quiet, busy, "0")
		cs[1].do("LPUSH", busy, "x")
		recv(t, ch)
	}
	if w := e.blockStateOf([]byte(quiet)).waiters; len(w) != 0 {
		t.Errorf("the quiet key keeps %d queues: %v", len(w), w)
	}
}

// CLIENT LIST shows a blocked client with flag b and the argv-mem of its command, as Redis
// keeps the command's arguments while it waits; INFO counts it in blocked_clients, and in
// clients_in_timeout_table when it has a timeout. All of it goes back once the wait ends.
func TestBlockShownInClientListAndInfo(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 3)
	ctl := cs[2]
	infoLine := func(name string) string {
		for _, l := range strings.Split(ctl.do("INFO", "clients"), "\r\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				return v
			}
		}
		return "missing"
	}
	listFields := func(tc *testConn) string {
		line := ctl.do("CLIENT", "LIST", "ID", strconv.FormatUint(tc.client.ID, 10))
		var out []string
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "flags=") || strings.HasPrefix(f, "argv-mem=") || strings.HasPrefix(f, "cmd=") {
				out = append(out, f)
			}
		}
		return strings.Join(out, " ")
	}
	if b, tt := infoLine("blocked_clients"), infoLine("clients_in_timeout_table"); b != "0" || tt != "0" {
		t.Errorf("idle: blocked_clients %s, clients_in_timeout_table %s", b, tt)
	}
	ch1 := blockedDo(t, cs[0], "BLPOP", "l", "5")
	ch2 := blockedDo(t, cs[1], "BZMPOP", "0", "2", "a", "b", "MIN", "COUNT", "3")
	if got := listFields(cs[0]); got != "flags=b argv-mem=7 cmd=blpop" {
		t.Errorf("BLPOP client: %q", got)
	}
	if got := listFields(cs[1]); got != "flags=b argv-mem=19 cmd=bzmpop" {
		t.Errorf("BZMPOP client: %q", got)
	}
	if b, tt := infoLine("blocked_clients"), infoLine("clients_in_timeout_table"); b != "2" || tt != "1" {
		t.Errorf("two blocked: blocked_clients %s, clients_in_timeout_table %s", b, tt)
	}
	ctl.do("RPUSH", "l", "x")
	recv(t, ch1)
	ctl.do("CLIENT", "UNBLOCK", strconv.FormatUint(cs[1].client.ID, 10))
	recv(t, ch2)
	if got := listFields(cs[0]); got != "flags=N argv-mem=0 cmd=blpop" {
		t.Errorf("served client: %q", got)
	}
	if b, tt := infoLine("blocked_clients"), infoLine("clients_in_timeout_table"); b != "0" || tt != "0" {
		t.Errorf("after: blocked_clients %s, clients_in_timeout_table %s", b, tt)
	}
}
