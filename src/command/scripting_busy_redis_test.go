package command

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// What other clients get while a script is busy, against redis-server 7.0.15. Each case starts a
// script that spins for about a second (busy-reply-threshold 100 ms) and has other clients send
// commands, each on its own connection: early ones 40 ms after the script started (Redis reads
// them only once the script is busy, and answers BUSY), late ones 300 ms after (both servers see
// the script busy). Every reply must be Redis's, and so must the script's own and what is left
// after it. HotKV's keyed commands on other shards than the script's are served (its
// parallelism, issue 16): the cases touch only the script's key and commands that need every
// shard. Not compared (scripting_busy.go): connection commands (PING, SELECT) sent while the
// script is not yet busy, which HotKV answers at once.

const (
	busyThresholdMS = 100
	busySpin        = time.Second // how long the scripts spin
	busyEarly       = 40 * time.Millisecond
	busyLate        = 300 * time.Millisecond
)

// busyPlan is one other client: commands sent before the script starts, at a time after it
// started, and after it ended; every reply is compared.
type busyPlan struct {
	pre  [][]string
	at   time.Duration
	cmds [][]string
	post [][]string
}

type busyCase struct {
	name  string
	setup [][]string
	// script returns the runner's command; calibrate, when set, runs the script first with a
	// small count to learn how many Lua loop iterations last busySpin.
	script    func(iters int) []string
	calibrate bool
	plans     []busyPlan
	after     [][]string
}

// spinTime is Lua that spins for ARGV[1] microseconds of the server's clock.
const spinTime = `local t=redis.call('time') while true do local n=redis.call('time') ` +
	`if (n[1]-t[1])*1000000+(n[2]-t[2]) >= tonumber(ARGV[1]) then break end end `

// spinLoop counts to ARGV[1] in Lua, without calling any command (TIME would make HotKV's run
// leave its shard's work).
const spinLoop = `local n=tonumber(ARGV[1]) local i=0 while i<n do i=i+1 end `

func one(args ...string) [][]string { return [][]string{args} }

// busyCases sends k (the script's key) and o (a key of another HotKV shard).
func busyCases(k, o string) []busyCase {
	micros := strconv.Itoa(int(busySpin / time.Microsecond))
	barriers := func(at time.Duration) []busyPlan {
		return []busyPlan{
			{at: at, cmds: one("GET", k)},
			{at: at, cmds: one("KEYS", "*")},
			{at: at, cmds: one("MSET", k, "m", o, "m")},
			{at: at, cmds: one("DBSIZE")},
			{at: at, cmds: one("SCAN", "0")},
			{at: at, cmds: one("EVAL", "return redis.call('get', KEYS[1])", "1", k)},
			{at: at, cmds: one("FLUSHALL")},
			{pre: [][]string{{"MULTI"}, {"GET", k}}, at: at, cmds: one("EXEC")},
			{pre: [][]string{{"MULTI"}, {"SET", k, "t"}, {"SET", o, "t"}}, at: at, cmds: one("EXEC")},
		}
	}
	late := []busyPlan{
		{at: busyLate, cmds: [][]string{{"MULTI"}, {"GET", k}, {"EXEC"}}},
		{pre: one("MULTI"), at: busyLate, cmds: one("GET", k), post: one("EXEC")},
		{at: busyLate, cmds: [][]string{{"PING"}, {"DISCARD"}, {"EXEC"}, {"FUNCTION", "STATS"}}},
		// A WATCH of the script's key is answered at once, registered beside the shard's watches
		// (watch.go watchBusy); the "watch" case checks that the script's later write dirties it.
		{at: busyLate, cmds: [][]string{{"WATCH", k}, {"UNWATCH"}}},
	}
	// Sent before the script is busy: Redis reads them once it is. MULTI, DISCARD and WATCH are
	// allow-busy (+OK); a command queued then is BUSY (and EXEC aborts), an EXEC is EXECABORT
	// with the BUSY text, a script without keys BUSY (redis-server 7.0.15, recorded by hand too).
	txEarly := []busyPlan{
		{pre: one("MULTI"), at: busyEarly, cmds: one("GET", k), post: one("EXEC")},
		{at: busyEarly, cmds: [][]string{{"MULTI"}, {"GET", k}, {"EXEC"}}},
		{at: busyEarly, cmds: [][]string{{"MULTI"}, {"EXEC"}}},
		{pre: [][]string{{"MULTI"}, {"GET", k}}, at: busyEarly, cmds: one("DISCARD")},
		{at: busyEarly, cmds: one("MULTI"), post: [][]string{{"GET", k}, {"EXEC"}}},
		{pre: one("MULTI"), at: busyEarly, cmds: one("EVAL", "return 1", "0"), post: one("EXEC")},
		{pre: one("MULTI"), at: busyEarly, cmds: one("PING"), post: one("EXEC")},
		{at: busyEarly, cmds: one("EXEC")},
		{at: busyEarly, cmds: one("DISCARD")},
		{at: busyEarly, cmds: one("WATCH", k), post: [][]string{{"MULTI"}, {"GET", k}, {"EXEC"}}},
		{pre: one("WATCH", k), at: busyEarly, cmds: [][]string{{"MULTI"}, {"GET", k}, {"EXEC"}}},
		{at: busyEarly, cmds: one("EVAL", "return 1", "0")},
		{at: busyEarly, cmds: one("EVAL_RO", "return 1", "0")},
		{at: busyEarly, cmds: one("EVAL", "return redis.call('get', '"+o+"')", "0")},
		{at: busyEarly, cmds: one("FCALL", "nosuch", "0")},
		{at: busyLate, cmds: one("EVAL", "return 1", "0")},
	}
	var cases []busyCase
	cases = append(cases, busyCase{
		name:  "eval writes then spins: transactions and keyless scripts",
		setup: [][]string{{"SET", k, "v"}, {"SET", o, "w"}},
		script: func(int) []string {
			return []string{"EVAL", "redis.call('set', KEYS[1], 'x') " + spinTime + "return 'done'", "1", k, micros}
		},
		plans: txEarly,
		after: [][]string{{"GET", k}, {"GET", o}},
	})
	// Redis registers a WATCH at once while the script is busy, so the script's write after it
	// makes the EXEC fail.
	cases = append(cases, busyCase{
		name:  "eval spins then writes: watch",
		setup: [][]string{{"SET", k, "v"}},
		script: func(int) []string {
			return []string{"EVAL", spinTime + "redis.call('set', KEYS[1], 'x') return 'done'", "1", k, micros}
		},
		plans: []busyPlan{
			{at: busyEarly, cmds: one("WATCH", k), post: [][]string{{"MULTI"}, {"GET", k}, {"EXEC"}}},
			{at: busyLate, cmds: one("WATCH", k), post: [][]string{{"MULTI"}, {"GET", k}, {"EXEC"}}},
			{pre: one("WATCH", k), at: busyLate, cmds: one("UNWATCH"), post: [][]string{{"MULTI"}, {"GET", k}, {"EXEC"}}},
		},
		after: [][]string{{"GET", k}},
	})
	// A WATCH made while the script is busy notes that its key, present, was past its time
	// (Redis's watchedKey.expired, with active expiry off so the key stays): the EXEC after the
	// script does not abort for it, as it would for a key alive at the WATCH.
	cases = append(cases, busyCase{
		name: "eval spins: watch of an expired key",
		setup: [][]string{{"DEBUG", "SET-ACTIVE-EXPIRE", "0"}, {"SET", k, "v", "PX", "1"}, {"SET", o, "w", "PX", "100000"},
			{"DEBUG", "SLEEP", "0.02"}},
		script: func(int) []string { return []string{"EVAL", spinTime + "return 'done'", "1", k, micros} },
		plans: []busyPlan{
			{at: busyLate, cmds: one("WATCH", k), post: [][]string{{"MULTI"}, {"GET", k}, {"EXEC"}}},
			{at: busyLate, cmds: one("WATCH", k), post: [][]string{{"MULTI"}, {"SET", k, "x"}, {"EXEC"}}},
		},
		after: [][]string{{"GET", k}, {"DEBUG", "SET-ACTIVE-EXPIRE", "1"}},
	})
	cases = append(cases, busyCase{
		name:  "eval writes then spins",
		setup: [][]string{{"SET", k, "v"}, {"SET", o, "w"}},
		script: func(int) []string {
			return []string{"EVAL", "redis.call('set', KEYS[1], 'x') " + spinTime + "return 'done'", "1", k, micros}
		},
		plans: append(append(append(barriers(busyEarly), barriers(busyLate)...), late...),
			busyPlan{at: busyLate, cmds: [][]string{{"SCRIPT", "KILL"}, {"FUNCTION", "KILL"}}}),
		after: [][]string{{"GET", k}, {"GET", o}, {"DBSIZE"}},
	})
	cases = append(cases, busyCase{
		name:  "eval reads, spins, is killed",
		setup: [][]string{{"SET", k, "v"}},
		script: func(int) []string {
			return []string{"EVAL", "local v = redis.call('get', KEYS[1]) " + spinTime + "return v", "1", k, micros}
		},
		plans: []busyPlan{
			{at: busyEarly, cmds: one("GET", k)},
			{at: busyEarly, cmds: one("KEYS", "*")},
			{pre: [][]string{{"MULTI"}, {"INCR", k}}, at: busyEarly, cmds: one("EXEC")},
			{at: busyLate, cmds: one("SET", k, "late")},
			{at: busyLate + 150*time.Millisecond, cmds: [][]string{{"FUNCTION", "KILL"}, {"SCRIPT", "KILL"}}},
		},
		after: [][]string{{"GET", k}, {"DBSIZE"}, {"SCRIPT", "KILL"}},
	})
	lib := "#!lua name=busylib\nredis.register_function('spin', function(keys, args) redis.call('set', keys[1], 'f') " +
		strings.ReplaceAll(spinTime, "ARGV", "args") + "return 'done' end)"
	cases = append(cases, busyCase{
		name:   "fcall writes then spins",
		setup:  [][]string{{"FUNCTION", "LOAD", "REPLACE", lib}, {"SET", k, "v"}},
		script: func(int) []string { return []string{"FCALL", "spin", "1", k, micros} },
		plans: []busyPlan{
			{at: busyEarly, cmds: one("GET", k)},
			{at: busyEarly, cmds: one("DBSIZE")},
			{at: busyEarly, cmds: one("EVAL", "return 1", "1", k)},
			{pre: [][]string{{"MULTI"}, {"GET", k}}, at: busyEarly, cmds: one("EXEC")},
			{at: busyLate, cmds: [][]string{{"GET", k}, {"SCAN", "0"}, {"FUNCTION", "KILL"}, {"SCRIPT", "KILL"}}},
		},
		after: [][]string{{"GET", k}},
	})
	cases = append(cases, busyCase{
		name:      "evalsha on its shard writes then spins",
		setup:     [][]string{{"SET", k, "v"}, {"SCRIPT", "LOAD", busyLoop}},
		script:    func(n int) []string { return []string{"EVALSHA", busyLoopSHA, "1", k, strconv.Itoa(n)} },
		calibrate: true,
		plans: []busyPlan{
			{at: busyEarly, cmds: one("GET", k)},
			{at: busyEarly, cmds: one("KEYS", "*")},
			{at: busyEarly, cmds: one("EVAL", "return redis.call('get', KEYS[1])", "1", k)},
			{at: busyEarly, cmds: one("MSET", k, "m", o, "m")},
			{pre: [][]string{{"MULTI"}, {"GET", k}}, at: busyEarly, cmds: one("EXEC")},
			{at: busyLate, cmds: [][]string{{"GET", k}, {"SCRIPT", "KILL"}}},
		},
		after: [][]string{{"GET", k}},
	})
	return cases
}

// busyLoopSHA is the SHA1 of the evalsha case's script (SCRIPT LOAD answers it; checked).
var busyLoopSHA = func() string {
	sum := sha1.Sum([]byte(busyLoop))
	return hex.EncodeToString(sum[:])
}()

const busyLoop = "redis.call('set', KEYS[1], 'x') " + spinLoop + "return 'done'"

// busyConn is one client connection of either server: send writes the commands at once and
// returns their replies.
type busyConn interface {
	send(cmds [][]string) []string
}

// busyServer is a server under test: its connections, and a hook run once the runner's script
// was sent (HotKV waits until the run started).
type busyServer struct {
	name    string
	dial    func() busyConn
	started func()
}

func TestScriptBusyMatchesRedis(t *testing.T) {
	addr := startBusyRedis(t)
	e := newTestEngine()
	defer e.Close()
	s := *e.Settings()
	s.BusyReplyThreshold = busyThresholdMS
	e.SetSettings(s)
	ks := keysOnShards(e, "busy:", 2)
	k, o := ks[0], ks[1]
	servers := []busyServer{
		{name: "redis", dial: func() busyConn { return dialBusyRedis(t, addr) }, started: func() {}},
		{name: "hotkv", dial: func() busyConn { return &busyTestConn{newTestConn(t, e)} }, started: func() {
			deadline := time.Now().Add(10 * time.Second)
			for e.scripting.running.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Microsecond)
			}
		}},
	}
	matched, total := 0, 0
	for _, bc := range busyCases(k, o) {
		var got [2][]string
		for i, srv := range servers {
			got[i] = runBusyCase(t, srv, bc)
		}
		if bc.calibrate {
			if sc, ok := e.Scripts().Lookup([]byte(busyLoopSHA)); !ok || sc.Hint.Load() != hintLocal {
				t.Errorf("%s: the script did not stay on its shard's work in HotKV", bc.name)
			}
		}
		if len(got[0]) != len(got[1]) {
			t.Fatalf("%s: %d replies from Redis, %d from HotKV", bc.name, len(got[0]), len(got[1]))
		}
		for j := range got[0] {
			total++
			if got[0][j] != got[1][j] {
				t.Errorf("%s:\n  Redis %s\n  HotKV %s", bc.name, got[0][j], got[1][j])
				continue
			}
			matched++
			t.Logf("%s: %s", bc.name, got[0][j])
		}
	}
	t.Logf("%d of %d replies as Redis's", matched, total)
}

// runBusyCase runs bc on srv and returns every reply, labelled by who sent what and when.
func runBusyCase(t *testing.T, srv busyServer, bc busyCase) []string {
	t.Helper()
	admin := srv.dial()
	admin.send([][]string{{"FLUSHALL"}, {"SCRIPT", "FLUSH"}, {"FUNCTION", "FLUSH"}})
	var out []string
	for _, r := range admin.send(bc.setup) {
		out = append(out, fmt.Sprintf("setup: %q", r))
	}
	iters := 0
	if bc.calibrate {
		iters = calibrateSpin(t, srv, admin, bc)
	}
	conns := make([]busyConn, len(bc.plans))
	pre := make([][]string, len(bc.plans))
	for i, p := range bc.plans {
		conns[i] = srv.dial()
		pre[i] = conns[i].send(p.pre)
	}
	runner := srv.dial()
	ran := make(chan []string, 1)
	go func() { ran <- runner.send([][]string{bc.script(iters)}) }()
	srv.started()
	start := time.Now()
	replies := make([][]string, len(bc.plans))
	var wg sync.WaitGroup
	for i, p := range bc.plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(start.Add(p.at)))
			replies[i] = conns[i].send(p.cmds)
		}()
	}
	var own []string
	select {
	case own = <-ran:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s on %s: the script did not end", bc.name, srv.name)
	}
	wg.Wait()
	if took := time.Since(start); took < busyLate+100*time.Millisecond {
		t.Fatalf("%s on %s: the script ended after %v, before the late commands could see it busy", bc.name, srv.name, took)
	}
	out = append(out, fmt.Sprintf("script: %q", own[0]))
	for i, p := range bc.plans {
		for j, r := range pre[i] {
			out = append(out, fmt.Sprintf("client %d before %q: %q", i, p.pre[j], r))
		}
		for j, r := range replies[i] {
			out = append(out, fmt.Sprintf("client %d at %v %q: %q", i, p.at, p.cmds[j], r))
		}
		for j, r := range conns[i].send(p.post) {
			out = append(out, fmt.Sprintf("client %d after %q: %q", i, p.post[j], r))
		}
	}
	for j, r := range admin.send(bc.after) {
		out = append(out, fmt.Sprintf("after %q: %q", bc.after[j], r))
	}
	return out
}

// calibrateSpin returns how many iterations of the case's loop take about busySpin on srv, from
// runs of growing counts (which also run the script on its shard's work in HotKV, as a barrier
// holding one shard does). The fastest of three runs of the last count sets it: on a loaded
// machine a slow run would make the spin too short, a fast one only makes it longer.
func calibrateSpin(t *testing.T, srv busyServer, admin busyConn, bc busyCase) int {
	run := func(n int) time.Duration {
		start := time.Now()
		if r := admin.send([][]string{bc.script(n)}); r[0] != "$4\r\ndone\r\n" {
			t.Fatalf("%s on %s: calibration run replied %q", bc.name, srv.name, r[0])
		}
		return time.Since(start)
	}
	n := 20000
	for run(n) < 40*time.Millisecond && n < 1<<30 {
		n *= 2
	}
	best := run(n)
	for range 2 {
		best = min(best, run(n))
	}
	return int(float64(n) * float64(busySpin) / float64(best))
}

// busyTestConn is a HotKV connection of the test harness.
type busyTestConn struct{ tc *testConn }

func (c *busyTestConn) send(cmds [][]string) []string {
	if len(cmds) == 0 {
		return nil
	}
	var req []byte
	for _, cmd := range cmds {
		req = append(req, encodeCommand(cmd)...)
	}
	out, err := c.tc.send(req)
	if err != nil {
		c.tc.t.Fatalf("%q: %v", cmds, err)
	}
	return splitReplies(c.tc.t, out)
}

// busyRedisConn is a connection to redis-server.
type busyRedisConn struct {
	t testing.TB
	c net.Conn
	r *bufio.Reader
}

func dialBusyRedis(t testing.TB, addr string) *busyRedisConn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &busyRedisConn{t: t, c: c, r: bufio.NewReader(c)}
}

func (c *busyRedisConn) send(cmds [][]string) []string {
	if len(cmds) == 0 {
		return nil
	}
	var req []byte
	for _, cmd := range cmds {
		req = append(req, encodeCommand(cmd)...)
	}
	c.c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.c.Write(req); err != nil {
		c.t.Fatalf("write to redis-server: %v", err)
	}
	out := make([]string, len(cmds))
	for i := range cmds {
		raw, err := resptest.ReadRaw(c.r)
		if err != nil {
			c.t.Fatalf("reply to %q from redis-server: %v", cmds[i], err)
		}
		out[i] = string(raw)
	}
	return out
}

// startBusyRedis starts redis-server with busy-reply-threshold 100 on a free port of
// 23300-23399 and returns its address; it is killed when the test ends.
func startBusyRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH: cannot compare with Redis")
	}
	for port := 23300; port <= 23399; port++ {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		l.Close()
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", t.TempDir(), "--busy-reply-threshold", strconv.Itoa(busyThresholdMS),
			"--enable-debug-command", "yes")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		for i := 0; i < 250; i++ {
			select {
			case <-exited: // the port was taken meanwhile: try the next
				i = 250
				continue
			default:
			}
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				t.Cleanup(func() { cmd.Process.Kill(); <-exited })
				return addr
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatal("no redis-server started on 23300-23399")
	return ""
}
