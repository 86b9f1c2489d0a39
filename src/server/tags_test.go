package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tagReads are the reads whose replies a restarted server must repeat: every key's tags, and
// TAG.COUNT and TAG.MEMBERS (sorted by the test) of each tag.
var tagReads = []string{"TAG.GET a", "TAG.GET b", "TAG.GET c", "TAG.GET renamed", "TAG.COUNT red",
	"TAG.COUNT blue", "TAG.COUNT late", "SELECT 3", "TAG.GET d", "TAG.COUNT red", "SELECT 0"}

func fillTags(t *testing.T, c *testClient) {
	t.Helper()
	for _, w := range []string{"SET a 1", "SET b 2", "SET c 3", "SET x 4", "TAG.SET a red blue",
		"TAG.SET b blue", "TAG.SET c red", "TAG.SET x red", "RENAME x renamed", "SET gone 1",
		"TAG.SET gone red", "DEL gone", "SELECT 3", "SET d 1", "TAG.SET d red", "SELECT 0"} {
		if r := c.query(w); strings.HasPrefix(r, "-") {
			t.Fatalf("%s: %q", w, r)
		}
	}
}

// restartModes are the ways a server restarts with its data: from the RDB (SAVE), from the AOF
// alone, and from an AOF rewritten (rewrite) with a command-form base or an RDB preamble.
var restartModes = []struct {
	name    string
	args    []string
	rewrite bool
}{
	{"rdb", nil, false},
	{"aof", []string{"--appendonly", "yes", "--appendfsync", "always"}, false},
	{"rewrite-preamble-no", []string{"--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", "no"}, true},
	{"rewrite-preamble-yes", []string{"--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", "yes"}, true},
}

// restartSurvives runs each restart mode: fill writes the data, late writes more after the
// rewrite where there is one, and read's replies must be the same after the restart. In the
// command-form base, baseCmd (a RESP bulk, e.g. "$7\r\nRESTORE\r\n") must appear. check sees
// the replies before the restart, to prove there was something to keep.
func restartSurvives(t *testing.T, fill, late func(*testing.T, *testClient), read func(*testing.T, *testClient) []string,
	baseCmd string, check func(*testing.T, []string)) {
	for _, tc := range restartModes {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newPersistServer(t, dir, nil, tc.args...)
			c := dialTestServer(t, s)
			fill(t, c)
			if tc.rewrite {
				c.query("BGREWRITEAOF")
				waitFor(t, func() bool { return infoField(t, c, "aof_rewrites") == "1" }, "the rewrite")
				late(t, c)
			}
			if tc.args == nil && c.query("SAVE") != "+OK\r\n" {
				t.Fatal("SAVE failed")
			}
			want := read(t, c)
			if tc.name == "rewrite-preamble-no" {
				base, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.1.base.aof"))
				if !strings.Contains(string(base), baseCmd) {
					t.Fatalf("the command-form base has no %q:\n%q", baseCmd, base)
				}
			}
			s.Stop()
			got := read(t, dialTestServer(t, newPersistServer(t, dir, nil, tc.args...)))
			sameLines(t, "after restart", want, got)
			check(t, want)
		})
	}
}

// Tags survive a restart from the RDB (SAVE), from the AOF alone, and from a rewritten AOF
// whose base is in command form or an RDB preamble, with tags written after the rewrite too.
func TestTagsRestart(t *testing.T) {
	restartSurvives(t, fillTags, func(t *testing.T, c *testClient) {
		c.query("SET late 1")
		c.query("TAG.SET late late")
		c.query("TAG.DEL a blue")
	}, readTags, "$7\r\nTAG.SET\r\n", func(t *testing.T, want []string) {
		if !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, "red") }) {
			t.Fatal("nothing tagged before the restart")
		}
	})
}

func readTags(t *testing.T, c *testClient) []string {
	t.Helper()
	var out []string
	for _, r := range tagReads {
		out = append(out, r+" -> "+c.query(r))
	}
	m := strings.Split(c.query("TAG.MEMBERS red"), "\r\n")
	slices.Sort(m)
	return append(out, fmt.Sprint("TAG.MEMBERS red -> ", m))
}

// TAG.INVALIDATE of 100,000 keys, while another client GETs one key at a time: the other
// client's p99 stays under 10 ms, since the shards are held a slice at a time. The machine is
// shared (load averages of 20 on 2 cores were seen): the measurement is repeated up to three
// times and passes on the first round under the bound; every round is logged.
func TestTagInvalidateLatency(t *testing.T) {
	if testing.Short() || raceBuild {
		t.Skip("fills 100,000 keys; timings under -race say nothing")
	}
	s := startTestServer(t)
	c := dialTestServer(t, s)
	other := dialTestServer(t, s)
	other.do("SET probe 1")
	for round := 1; ; round++ {
		p99 := invalidateRound(t, c, other, round)
		if p99 < 10*time.Millisecond {
			return
		}
		if round == 3 {
			t.Fatalf("p99 %v during TAG.INVALIDATE in each of 3 rounds, want under 10 ms", p99)
		}
	}
}

// invalidateRound tags 100,000 keys, invalidates them while other GETs, and returns other's p99.
func invalidateRound(t *testing.T, c, other *testClient, round int) time.Duration {
	const n = 100_000
	for i := 0; i < n; i += 1000 {
		var cmds []string
		for j := i; j < i+1000; j++ {
			cmds = append(cmds, fmt.Sprintf("SET key:%d v", j), fmt.Sprintf("TAG.SET key:%d big", j))
		}
		c.send(cmds...)
		for range cmds {
			if r := c.line(); r[0] == '-' {
				t.Fatal(r)
			}
		}
	}
	// The same probe with nothing else running first: on this shared machine (load averages of
	// 10 on 2 cores) the kernel preempts a thread for several ms at a time, whichever it holds.
	base := probeGETs(other, 100*time.Millisecond, nil)
	var took time.Duration
	var got string
	ds := probeGETs(other, 0, func() {
		t0 := time.Now()
		c.conn.SetDeadline(time.Now().Add(time.Minute))
		c.conn.Write([]byte("TAG.INVALIDATE big\r\n"))
		got = c.line()
		took = time.Since(t0)
	})
	if got != fmt.Sprintf(":%d\r\n", n) {
		t.Fatalf("TAG.INVALIDATE = %q", got)
	}
	if r := c.do("DBSIZE"); r != ":1\r\n" {
		t.Fatalf("DBSIZE after: %q", r)
	}
	if len(ds) < 20 {
		t.Fatalf("only %d GETs answered during the invalidation", len(ds))
	}
	p := func(ds []time.Duration, q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	t.Logf("round %d: TAG.INVALIDATE of %d keys took %v; the other client's %d GETs meanwhile: p50 %v, p99 %v, max %v; "+
		"before it, %d GETs alone: p99 %v, max %v",
		round, n, took.Round(time.Millisecond), len(ds), p(ds, 0.5), p(ds, 0.99), ds[len(ds)-1],
		len(base), p(base, 0.99), base[len(base)-1])
	return p(ds, 0.99)
}

// probeGETs times other's GETs, one at a time, for d or, with during set, while during runs and
// 20 ms after (it starts 50 ms after the probe does); the times come back sorted.
//
// The probing goroutine never calls t.Fatal (that would end only it, and the receive below would
// wait forever): each GET has 5 s for its write and reply, and a failure comes back as an error
// that fails the test here, on the test's goroutine.
func probeGETs(other *testClient, d time.Duration, during func()) []time.Duration {
	type probe struct {
		ds  []time.Duration
		err error
	}
	stop := make(chan struct{})
	lat := make(chan probe, 1) // buffered: a probe that outlives a failed test does not block
	go func() {
		var ds []time.Duration
		for {
			select {
			case <-stop:
				lat <- probe{ds, nil}
				return
			default:
			}
			t0 := time.Now()
			other.conn.SetDeadline(t0.Add(5 * time.Second))
			if _, err := other.conn.Write([]byte("GET probe\r\n")); err != nil {
				lat <- probe{ds, fmt.Errorf("GET probe %d: write: %v", len(ds)+1, err)}
				return
			}
			for range 2 {
				if line, err := other.r.ReadString('\n'); err != nil {
					lat <- probe{ds, fmt.Errorf("GET probe %d: reading a reply: %v (have %q)", len(ds)+1, err, line)}
					return
				}
			}
			ds = append(ds, time.Since(t0))
		}
	}()
	if during == nil {
		time.Sleep(d)
	} else {
		time.Sleep(50 * time.Millisecond)
		during()
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	p := <-lat // bounded: each GET's deadline ends its wait
	if p.err != nil {
		other.t.Fatal(p.err)
	}
	slices.Sort(p.ds)
	return p.ds
}
