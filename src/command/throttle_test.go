package command

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// clockBase is the fake clock's start: a whole second, so that the scripted offsets are exact.
const clockBase = int64(1_800_000_000) * 1e9

// fcCall runs one command on e at now (unix ns) in protocol proto, without sockets: the fake
// clock's way in (a handler reads only Ctx.Now). Single-goroutine tests only: no shard tokens.
func fcCall(e *Engine, proto int, now int64, args [][]byte) string {
	spec, msg := lookupArgs(args)
	if msg != "" {
		return "-" + msg + "\r\n"
	}
	if a := spec.Arity; a > 0 && len(args) != a || a < 0 && len(args) < -a {
		return "-" + fmt.Sprintf(ErrArity, spec.Name) + "\r\n"
	}
	c := &Ctx{Args: args, Proto: proto, DB: 0, Now: now, E: e, Spec: spec}
	spec.Run(c)
	return string(c.Out)
}

// clockTranscript replays testdata/hotkv/<name>.txt (and its RESP3 twin) on a fake clock: a
// comment line "## at 1.5s" sets the clock to clockBase plus that offset for the steps after it.
// These commands are HotKV's own (or a module's), so the files were recorded from HotKV
// (-update-hotkv) and checked by hand against the documented behaviour.
func clockTranscript(t *testing.T, name string) {
	for _, proto := range []int{2, 3} {
		path := "testdata/hotkv/" + name + ".txt"
		if proto == 3 {
			path = "testdata/hotkv/" + name + ".resp3.txt"
		}
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			src, err := os.ReadFile("testdata/hotkv/" + name + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			steps := parseTranscript(t, src)
			if !*updateHotKV {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("missing transcript (run with -update-hotkv): %v", err)
				}
				steps = parseTranscript(t, data)
			}
			e := newTestEngine()
			seedBudgetIDs(e, 1000)
			now := clockBase
			var out strings.Builder
			for i, s := range steps {
				for _, line := range strings.Split(s.comment, "\n") {
					if at, ok := strings.CutPrefix(line, "## at "); ok {
						d, err := time.ParseDuration(at)
						if err != nil {
							t.Fatalf("step %d: bad clock line %q", i+1, line)
						}
						now = clockBase + int64(d)
					}
				}
				got := fcCall(e, proto, now, s.args)
				if *updateHotKV {
					fmt.Fprintf(&out, "%s%s\n%s", s.comment, s.header(), strings.ReplaceAll(got, "\r\n", "\n"))
				} else if got != s.want {
					t.Errorf("step %d: %s\n got: %q\nwant: %q", i+1, s.header(), got, s.want)
				}
			}
			if *updateHotKV {
				if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestThrottleTranscript(t *testing.T) { clockTranscript(t, "throttle") }

// redis-cell's own scripted timeline (redis-cell-impl's it_rate_limits: limit 5, one per
// second), on the exact durations the limiter computes, before the command rounds them.
func TestThrottleRedisCellTimeline(t *testing.T) {
	ms := int64(time.Millisecond)
	sec := int64(time.Second)
	cases := []struct {
		at, qty, remaining, reset, retry int64
		limited                          bool
	}{
		{0, 6, 5, 0, -sec, true}, // never larger than the maximum
		{0, 1, 4, 1 * sec, -sec, false},
		{0, 1, 3, 2 * sec, -sec, false},
		{0, 1, 2, 3 * sec, -sec, false},
		{0, 1, 1, 4 * sec, -sec, false},
		{0, 1, 0, 5 * sec, -sec, false},
		{0, 1, 0, 5 * sec, 1 * sec, true},
		{3000 * ms, 1, 2, 3000 * ms, -sec, false},
		{3100 * ms, 1, 1, 3900 * ms, -sec, false},
		{4000 * ms, 1, 1, 4000 * ms, -sec, false},
		{8000 * ms, 1, 4, 1000 * ms, -sec, false},
		{9500 * ms, 1, 4, 1000 * ms, -sec, false},
		{9500 * ms, 0, 4, 1 * sec, -sec, false}, // zero quantity peeks
		{9500 * ms, 2, 2, 3 * sec, -sec, false},
		{9500 * ms, 5, 2, 3 * sec, 3 * sec, true}, // large requests cannot exceed limits
	}
	var tat int64
	has := false
	for i, c := range cases {
		r, ok := gcraRateLimit(tat, has && tat > clockBase+c.at, clockBase+c.at, 4, 1, 1, c.qty)
		if !ok {
			t.Fatalf("case %d: zero rate", i)
		}
		if r.limited != c.limited || r.limit != 5 || r.remaining != c.remaining || r.resetAfter != c.reset || r.retryAfter != c.retry {
			t.Errorf("case %d: got limited=%v limit=%d remaining=%d reset=%d retry=%d, want %v 5 %d %d %d",
				i, r.limited, r.limit, r.remaining, r.resetAfter, r.retryAfter, c.limited, c.remaining, c.reset, c.retry)
		}
		if r.write {
			tat, has = r.tat, true
		}
	}
}

// The same timeline through the command on the fake clock, with redis-cell's rounding of the
// two durations up to whole seconds, the key's stored form (a string of the TAT in ns) and its
// expiry at the TAT.
func TestThrottleCommandTimeline(t *testing.T) {
	e := newTestEngine()
	at := func(off time.Duration, want string, args ...string) {
		t.Helper()
		b := make([][]byte, len(args))
		for i, a := range args {
			b[i] = []byte(a)
		}
		if got := fcCall(e, 2, clockBase+int64(off), b); got != want {
			t.Errorf("at %v %v = %q, want %q", off, args, got, want)
		}
	}
	five := func(l, lim, rem, retry, reset int) string {
		return fmt.Sprintf("*5\r\n:%d\r\n:%d\r\n:%d\r\n:%d\r\n:%d\r\n", l, lim, rem, retry, reset)
	}
	// The README's example: 15 burst, 30 per 60 s.
	at(0, five(0, 16, 15, -1, 2), "CL.THROTTLE", "user123", "15", "30", "60", "1")
	at(0, five(0, 16, 14, -1, 4), "CL.THROTTLE", "user123", "15", "30", "60")
	at(0, "+string\r\n", "TYPE", "user123")
	at(0, fmt.Sprintf("$19\r\n%d\r\n", clockBase+4e9), "GET", "user123")
	at(0, ":4000\r\n", "PTTL", "user123")
	at(4*time.Second, ":-2\r\n", "PTTL", "user123") // expired with its TAT
	at(4*time.Second, five(0, 16, 15, -1, 2), "CL.THROTTLE", "user123", "15", "30", "60")
	// redis-cell's timeline: limit 5, 1 per second; 3.9 s rounds up to 4.
	for _, c := range []struct {
		off  time.Duration
		qty  string
		want string
	}{
		{0, "6", five(1, 5, 5, -1, 0)},
		{0, "1", five(0, 5, 4, -1, 1)},
		{0, "1", five(0, 5, 3, -1, 2)},
		{0, "1", five(0, 5, 2, -1, 3)},
		{0, "1", five(0, 5, 1, -1, 4)},
		{0, "1", five(0, 5, 0, -1, 5)},
		{0, "1", five(1, 5, 0, 1, 5)},
		{3000 * time.Millisecond, "1", five(0, 5, 2, -1, 3)},
		{3100 * time.Millisecond, "1", five(0, 5, 1, -1, 4)},
		{4000 * time.Millisecond, "1", five(0, 5, 1, -1, 4)},
		{8000 * time.Millisecond, "1", five(0, 5, 4, -1, 1)},
		{9500 * time.Millisecond, "1", five(0, 5, 4, -1, 1)},
		{9500 * time.Millisecond, "0", five(0, 5, 4, -1, 1)},
		{9500 * time.Millisecond, "2", five(0, 5, 2, -1, 3)},
		{9500 * time.Millisecond, "5", five(1, 5, 2, 3, 3)},
	} {
		at(100*time.Second+c.off, c.want, "CL.THROTTLE", "cell", "4", "1", "1", c.qty)
	}
}

// gcraRef is an independent model of the same limiter, written as a leaky bucket: level is how
// far (ns) the bucket is filled, draining one ns per ns; a request of q adds q*T and fits when
// the level stays within the tolerance (burst+1)*T.
type gcraRef struct {
	level, last int64
}

func (g *gcraRef) take(now, T, burst, q int64) (limited bool, remaining, retry, reset int64) {
	g.level = max(0, g.level-(now-g.last))
	g.last = now
	tol := T * (burst + 1)
	retry = -1e9
	if g.level+q*T > tol {
		if q*T <= tol {
			retry = g.level + q*T - tol
		}
		limited = true
	} else {
		g.level += q * T
	}
	if free := tol - g.level; free > -T {
		remaining = free / T
	}
	return limited, remaining, retry, g.level
}

func TestThrottleAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 200; trial++ {
		burst := r.Int64N(20)
		count := int64(1 + r.IntN(50))
		period := int64(1 + r.IntN(60))
		// Keep T whole milliseconds so that the reference's integer division and redis-cell's
		// microsecond float division agree exactly.
		for (period*1e9/count)%1e6 != 0 {
			count = int64(1 + r.IntN(50))
		}
		T := period * 1e9 / count
		var ref gcraRef
		var tat int64
		has := false
		now := clockBase
		ref.last = now
		for step := 0; step < 100; step++ {
			now += r.Int64N(3*T) / 1000 * 1000
			q := r.Int64N(4)
			r1, _ := gcraRateLimit(tat, has && tat > now, now, burst, count, period, q)
			if r1.write {
				tat, has = r1.tat, true
			}
			l, rem, retry, reset := ref.take(now, T, burst, q)
			if r1.limited != l || r1.remaining != rem || r1.retryAfter != retry || r1.resetAfter != reset {
				t.Fatalf("trial %d step %d (burst %d, %d per %d s, q %d): got %v %d %d %d, reference %v %d %d %d",
					trial, step, burst, count, period, q, r1.limited, r1.remaining, r1.retryAfter, r1.resetAfter, l, rem, retry, reset)
			}
		}
	}
}
