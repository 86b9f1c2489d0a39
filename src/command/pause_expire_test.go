package command

import (
	"testing"
	"time"
)

// A paused server keeps its dataset: FAILOVER's pause (and a cluster manual failover's, which
// is the same) and CLIENT PAUSE WRITE stop the active expiry and the reclaim on read, as Redis
// 7.0 does; the keys go once the pause ends, a CLIENT PAUSE's at its deadline.
func TestPauseHoldsExpiry(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	expired := func() int64 { return e.stats.expiredKeys.Load() }
	check := func(what, cmd, want string, args ...string) {
		t.Helper()
		if got := tc.do(append([]string{cmd}, args...)...); got != want {
			t.Fatalf("%s: %s %v = %q, want %q", what, cmd, args, got, want)
		}
	}
	pauses := []struct {
		name     string
		on, off  func()
		deadline bool
	}{
		{"failover", func() { e.SetFailoverPause(true) }, func() { e.SetFailoverPause(false) }, false},
		{"client pause write", func() { tc.do("CLIENT", "PAUSE", "100000", "WRITE") }, func() { tc.do("CLIENT", "UNPAUSE") }, false},
		{"client pause deadline", func() { tc.do("CLIENT", "PAUSE", "150", "WRITE") }, func() { time.Sleep(200 * time.Millisecond) }, true},
	}
	for _, p := range pauses {
		check(p.name, "SET", "+OK\r\n", "k", "v", "PX", "20")
		before := expired()
		p.on()
		time.Sleep(40 * time.Millisecond)
		for range 3 {
			e.ActiveExpire(10 * time.Millisecond)
		}
		check(p.name, "GET", "$-1\r\n", "k")
		check(p.name, "EXISTS", ":0\r\n", "k")
		check(p.name, "DBSIZE", ":1\r\n")
		if n := expired() - before; n != 0 {
			t.Fatalf("%s: %d keys expired while paused", p.name, n)
		}
		p.off()
		if p.deadline && e.datasetPaused() {
			t.Fatalf("%s: still paused after the deadline", p.name)
		}
		if e.pause.active.Load() {
			t.Fatalf("%s: pause left active", p.name)
		}
		for range 3 { // a cycle that starts mid-table stops at its end; the next one begins again
			e.ActiveExpire(10 * time.Millisecond)
		}
		check(p.name, "DBSIZE", ":0\r\n")
		if n := expired() - before; n != 1 {
			t.Fatalf("%s: %d keys expired after the pause, want 1", p.name, n)
		}
	}
}
