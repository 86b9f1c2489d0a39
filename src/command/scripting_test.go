package command

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/src/script"
)

// keysOnShards returns n keys named prefix<i>, each on a different shard, in the order of
// their shards when ascending (else as found).
func keysOnShards(e *Engine, prefix string, n int) []string {
	var names []string
	seen := map[int32]bool{}
	for i := 0; len(names) < n; i++ {
		k := prefix + strconv.Itoa(i)
		if sh := e.shardOf([]byte(k)); !seen[sh] {
			seen[sh] = true
			names = append(names, k)
		}
	}
	return names
}

// lowHighKeys returns, of keys prefix0, prefix1, … on 8 different shards, the one on the lowest
// shard and the one on the highest.
func lowHighKeys(e *Engine, prefix string) (low, high string) {
	ks := keysOnShards(e, prefix, 8)
	low, high = ks[0], ks[0]
	for _, k := range ks {
		if e.shardOf([]byte(k)) < e.shardOf([]byte(low)) {
			low = k
		}
		if e.shardOf([]byte(k)) > e.shardOf([]byte(high)) {
			high = k
		}
	}
	return low, high
}

// transferScript reads both accounts before it writes either: a run that must add a shard
// does so before its first write, and is rerun under every shard if it cannot.
const transferScript = `local n = tonumber(ARGV[3])
local from, to = %[1]s, %[2]s
if tonumber(redis.call('GET', from)) + tonumber(redis.call('GET', to)) < 0 then return -1 end
local a = redis.call('DECRBY', from, n)
redis.call('INCRBY', to, n)
return a`

// transfers moves money between accounts on different shards by EVAL from several clients,
// and by MULTI/EXEC from one more, while readers sum every account, with a reader script and with MGET: the total never
// changes. declared says whether the transfer script names its keys in KEYS; with undeclared
// keys the runs add shards as they go, and restart under every shard when a try fails (before
// any write: the script reads both accounts first).
func transfers(t *testing.T, declared bool) {
	body := fmt.Sprintf(transferScript, "ARGV[1]", "ARGV[2]")
	if declared {
		body = fmt.Sprintf(transferScript, "KEYS[1]", "KEYS[2]")
	}
	transfersWith(t, []string{body}, declared)
}

// transfersWith is transfers with the given scripts, run in turn by each writer.
func transfersWith(t *testing.T, bodies []string, declared bool) {
	e := newTestEngine()
	defer e.Close()
	const accounts, start = 8, 1000
	names := keysOnShards(e, "acct:", accounts)
	setup := newTestConn(t, e)
	for _, k := range names {
		setup.do("SET", k, strconv.Itoa(start))
	}
	shas := make([]string, len(bodies))
	for i, body := range bodies {
		shas[i] = replyText(t, setup.do("SCRIPT", "LOAD", body))
	}
	sum := `local t = 0 for _, k in ipairs(ARGV) do t = t + tonumber(redis.call('GET', k)) end return t`
	total := 100_000
	if txRace {
		total = 10_000
	}
	const writers, readers = 4, 2
	var wg sync.WaitGroup
	var stop atomic.Bool
	var reads atomic.Int64
	for w := range writers {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req []byte
			for i := range total / writers {
				from, to := names[(i+w)%accounts], names[(i*3+w+1)%accounts]
				if from == to {
					to = names[(i+w+1)%accounts]
				}
				sha := shas[i%len(shas)]
				if declared {
					req = encodeCommand([]string{"EVALSHA", sha, "2", from, to, "", "", "7"})
				} else {
					req = encodeCommand([]string{"EVALSHA", sha, "0", from, to, "7"})
				}
				out, err := tc.send(req)
				if err != nil || len(out) == 0 || out[0] != ':' {
					t.Errorf("transfer %q: %v", out, err)
					return
				}
			}
		}()
	}
	// A writer beside the scripts: MULTI/EXEC transfers on the same accounts (EXEC's barrier
	// against the scripts' locking), until the scripts are done.
	var xg sync.WaitGroup
	var xfers atomic.Int64
	xg.Add(1)
	go func() {
		defer xg.Done()
		tc := newTestConn(t, e)
		for i := 0; !stop.Load(); i++ {
			from, to := names[i%accounts], names[(i+3)%accounts]
			req := encodeCommand([]string{"MULTI"})
			req = append(req, encodeCommand([]string{"DECRBY", from, "3"})...)
			req = append(req, encodeCommand([]string{"INCRBY", to, "3"})...)
			req = append(req, encodeCommand([]string{"EXEC"})...)
			if _, err := tc.send(req); err != nil {
				t.Error(err)
				return
			}
			xfers.Add(1)
		}
	}()
	var rg sync.WaitGroup
	for r := range readers {
		tc := newTestConn(t, e)
		rg.Add(1)
		go func() {
			defer rg.Done()
			for !stop.Load() {
				var raw string
				if r == 0 {
					args := append([]string{"EVAL", sum, "0"}, names...)
					raw = tc.do(args...)
				} else {
					raw = tc.do(append([]string{"MGET"}, names...)...)
				}
				n := 0
				if strings.HasPrefix(raw, ":") {
					n, _ = strconv.Atoi(strings.TrimSpace(raw[1:]))
				} else {
					for _, v := range replyStrings(t, raw) {
						x, _ := strconv.Atoi(v)
						n += x
					}
				}
				if n != accounts*start {
					t.Errorf("reader %d: total %d, want %d (%q)", r, n, accounts*start, raw)
					return
				}
				reads.Add(1)
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	rg.Wait()
	xg.Wait()
	t.Logf("%d transfers by script, %d by MULTI/EXEC beside them, %d consistent reads, %d scripts marked wide",
		total, xfers.Load(), reads.Load(), e.scripting.wideN.Load())
}

func TestScriptTransfers(t *testing.T)           { transfers(t, true) }
func TestScriptUndeclaredTransfers(t *testing.T) { transfers(t, false) }

// holdShard locks the shard of key from the test, as another client's command would, until
// the returned func is called.
func holdShard(e *Engine, key string) func() {
	id := []int32{e.shardOf([]byte(key))}
	e.Group.Lock(id)
	return func() { e.Group.Unlock(id) }
}

// A script that reads an undeclared key on a busy shard below the ones it holds, before it
// wrote, is rerun under every shard once that shard is free; a pcall that catches the abort
// cannot make a write of the aborted run happen: the counter is incremented once.
func TestScriptRestartBeforeWrite(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	low, high := lowHighKeys(e, "r:")
	tc := newTestConn(t, e)
	tc.do("SET", low, "lowvalue")
	body := `local ok, v = pcall(redis.call, 'GET', ARGV[1]); redis.call('INCR', KEYS[1]); return v`
	unlock := holdShard(e, low)
	done := make(chan string)
	go func() { done <- tc.do("EVAL", body, "1", high, low) }()
	select {
	case got := <-done:
		t.Fatalf("the script ran while its undeclared key's shard was held: %q", got)
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	if got := <-done; got != "$8\r\nlowvalue\r\n" {
		t.Fatalf("reply %q", got)
	}
	other := newTestConn(t, e)
	if got := other.do("GET", high); got != "$1\r\n1\r\n" {
		t.Errorf("counter %q, want 1: a write of the aborted run survived", got)
	}
	sha := replyText(t, other.do("SCRIPT", "LOAD", body))
	if !e.scripting.isWide(sha) {
		t.Errorf("the script was not marked wide")
	}
}

// After a write, an undeclared key on a busy lower shard undoes the run, which is rerun under
// every shard once that shard is free, and marks the script wide: the counter is incremented once
// per EVAL, and the next run takes every shard too.
func TestScriptUndeclaredAfterWrite(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	low, high := lowHighKeys(e, "w:")
	tc := newTestConn(t, e)
	body := `redis.call('INCR', KEYS[1]); return redis.call('GET', ARGV[1])`
	for i := 1; i <= 2; i++ {
		unlock := holdShard(e, low)
		done := make(chan string)
		go func() { done <- tc.do("EVAL", body, "1", high, low) }()
		select {
		case got := <-done:
			t.Fatalf("run %d: the script ran while a shard was held: %q", i, got)
		case <-time.After(50 * time.Millisecond):
		}
		unlock()
		if got := <-done; got != "$-1\r\n" {
			t.Errorf("run %d: %q", i, got)
		}
		if got := tc.do("GET", high); got != fmt.Sprintf("$1\r\n%d\r\n", i) {
			t.Errorf("run %d: counter %q, want %d", i, got, i)
		}
	}
}

// lua-strict-keys yes: an undeclared key is an error, declared ones work.
func TestScriptStrictKeys(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	s := *e.Settings()
	s.LuaStrictKeys = true
	e.SetSettings(s)
	tc := newTestConn(t, e)
	if got := tc.do("EVAL", "return redis.call('SET', KEYS[1], 'v')", "1", "a"); got != "+OK\r\n" {
		t.Errorf("declared: %q", got)
	}
	ks := keysOnShards(e, "s:", 2)
	got := tc.do("EVAL", "return redis.call('GET', ARGV[1])", "1", ks[0], ks[1])
	if !strings.HasPrefix(got, "-"+ErrScriptStrictKeys) {
		t.Errorf("undeclared: %q", got)
	}
	if got := tc.do("EVAL", "return redis.call('DBSIZE')", "0"); got != ":1\r\n" {
		t.Errorf("DBSIZE: %q", got)
	}
}

// A script's writes reach the feed as one entry, MULTI … EXEC around two or more, as Redis 7.0
// propagates a script (the same forms are checked against its AOF in testfuzz
// TestScriptEffectsLikeRedis);
// redis.set_repl(redis.REPL_NONE) leaves a command out; EVAL inside EXEC joins EXEC's entry.
func TestScriptFeed(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	rd := e.AttachFeed()
	defer rd.Close()
	tc := newTestConn(t, e)
	feed := func() string { return fmt.Sprint(feedEntries(t, rd)) }
	cases := []struct {
		cmds [][]string
		want string
	}{
		{[][]string{{"EVAL", "return redis.call('SET', KEYS[1], '1')", "1", "a"}}, "[db0: SET a 1]"},
		{[][]string{{"EVAL", "return redis.call('GET', KEYS[1])", "1", "a"}}, "[]"},
		{[][]string{{"EVAL", "redis.call('SET', 'a', '2'); return redis.call('INCR', 'b')", "0"}},
			"[db0: MULTI; SET a 2; INCR b; EXEC]"},
		{[][]string{{"EVAL", "redis.call('SET', 'x', '1'); redis.call('SELECT', 2); return redis.call('SET', 'y', '2')", "0"}},
			"[db0: MULTI; SET x 1; SELECT 2; SET y 2; SELECT 0; EXEC]"},
		{[][]string{{"EVAL", "redis.set_repl(redis.REPL_NONE); redis.call('SET', 'n', '1'); redis.set_repl(redis.REPL_ALL); return redis.call('SET', 'm', '1')", "0"}},
			"[db0: SET m 1]"},
		{[][]string{{"EVAL", "return redis.call('SET', KEYS[1], 'v', 'EX', '100')", "1", "ex"}}, ""},
		{[][]string{{"MULTI"}, {"SET", "t", "1"}, {"EVAL", "return redis.call('INCR', KEYS[1])", "1", "t"}, {"EXEC"}},
			"[db0: MULTI; SET t 1; INCR t; EXEC]"},
	}
	for _, c := range cases {
		for _, cmd := range c.cmds {
			tc.do(cmd...)
		}
		got := feed()
		if c.want == "" { // SET … EX propagates as SET … PXAT with the time of the run
			if !strings.HasPrefix(got, "[db0: SET ex v PXAT ") {
				t.Errorf("%q: feed %s", c.cmds, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%q: feed %s, want %s", c.cmds, got, c.want)
		}
	}
}

// A script's keyspace events are published after its reply, in the order its commands raised
// them, on the connection's slot.
func TestScriptEvents(t *testing.T) {
	e := newNotifyAllEngine()
	defer e.Close()
	sub := newTestConn(t, e)
	sub.do("PSUBSCRIBE", "__keyevent@0__:*")
	tc := newTestConn(t, e)
	tc.do("EVAL", "redis.call('SET', 'a', '1'); redis.call('LPUSH', 'l', 'x'); return redis.call('DEL', 'a')", "0")
	out := sub.do("PING")
	var events []string
	for _, r := range splitReplies(t, []byte(out)) {
		if el := replyStrings(t, r); len(el) == 4 && el[0] == "pmessage" {
			events = append(events, el[2]+" "+el[3])
		}
	}
	want := "[__keyevent@0__:set a __keyevent@0__:lpush l __keyevent@0__:del a]"
	if got := fmt.Sprint(events); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// A script past busy-reply-threshold: a client touching its shard gets BUSY, one on another
// shard and connection commands are served, FUNCTION STATS answers BUSY (as Redis 7.0.15),
// SCRIPT KILL ends it.
func TestScriptBusyKill(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	s := *e.Settings()
	s.BusyReplyThreshold = 20
	e.SetSettings(s)
	ks := keysOnShards(e, "b:", 2)
	tc := newTestConn(t, e)
	done := make(chan string)
	go func() { done <- tc.do("EVAL", "while true do end", "1", ks[0]) }()
	other := newTestConn(t, e)
	deadline := time.Now().Add(10 * time.Second)
	for !e.Scripts().Busy() {
		if time.Now().After(deadline) {
			t.Fatal("the script never became busy")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := other.do("GET", ks[0]); got != "-"+script.ErrBusyScript+"\r\n" {
		t.Errorf("GET on the script's shard: %q", got)
	}
	if got := other.do("GET", ks[1]); got != "$-1\r\n" {
		t.Errorf("GET on another shard: %q", got)
	}
	for _, cmd := range [][]string{{"PING"}, {"ECHO", "x"}, {"CLIENT", "ID"}, {"SELECT", "1"}} { // as redis-server 7.0.15
		if got := other.do(cmd...); got != "-"+script.ErrBusyScript+"\r\n" {
			t.Errorf("%s: %q, want BUSY", cmd[0], got)
		}
	}
	if got := other.do("FUNCTION", "KILL"); got != "-"+script.ErrBusyScript+"\r\n" {
		t.Errorf("FUNCTION KILL: %q", got)
	}
	if got := other.do("FUNCTION", "STATS"); got != "-"+script.ErrBusyScript+"\r\n" {
		t.Errorf("FUNCTION STATS during a busy EVAL: %q", got)
	}
	if got := other.do("SCRIPT", "KILL"); got != "+OK\r\n" {
		t.Errorf("SCRIPT KILL: %q", got)
	}
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL...") {
			t.Errorf("killed script replied %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SCRIPT KILL did not end the script")
	}
	if got := other.do("GET", ks[0]); got != "$-1\r\n" {
		t.Errorf("GET after the kill: %q", got)
	}
	if got := other.do("SCRIPT", "KILL"); got != "-"+script.ErrNotBusy+"\r\n" {
		t.Errorf("SCRIPT KILL when idle: %q", got)
	}
}

// CONFIG SET of the scripting parameters reaches the engine (lua-time-limit is the old name).
func TestScriptConfig(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	s := *e.Settings()
	if s.BusyReplyThreshold != 5000 || s.LuaMaxMemory != 256<<20 || s.LuaStrictKeys {
		t.Errorf("defaults %d %d %v", s.BusyReplyThreshold, s.LuaMaxMemory, s.LuaStrictKeys)
	}
	s.LuaStrictKeys = true
	e.SetSettings(s)
	if !e.scripting.strict.Load() {
		t.Errorf("lua-strict-keys not applied")
	}
}

// INFO memory counts the cached scripts and the loaded libraries and functions, as Redis 7.0.15
// does after the same commands (number_of_cached_scripts:2, number_of_functions:2,
// number_of_libraries:1 there).
func TestScriptInfo(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	tc := newTestConn(t, e)
	tc.do("SCRIPT", "LOAD", "return 1")
	tc.do("EVAL", "return 2", "0")
	tc.do("FUNCTION", "LOAD", "#!lua name=infolib\nredis.register_function('a', function() return 1 end)\nredis.register_function('b', function() return 1 end)")
	info := replyText(t, tc.do("INFO", "memory"))
	for _, want := range []string{"number_of_cached_scripts:2\r\n", "number_of_functions:2\r\n", "number_of_libraries:1\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO memory lacks %q", want)
		}
	}
}

// After a write, a busy lower shard that its holder lets go within tryAfterWrite is taken: the
// command succeeds (here the test holds it for 2 ms).
func TestScriptUndeclaredRetried(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	low, high := lowHighKeys(e, "q:")
	tc := newTestConn(t, e)
	tc.do("SET", low, "v")
	unlock := holdShard(e, low)
	go func() {
		time.Sleep(2 * time.Millisecond)
		unlock()
	}()
	got := tc.do("EVAL", `redis.call('INCR', KEYS[1]); return redis.call('GET', ARGV[1])`, "1", high, low)
	if got != "$1\r\nv\r\n" {
		t.Errorf("reply %q", got)
	}
}

// Inside EXEC a script reading an undeclared key on a shard EXEC does not hold fails (EXEC
// cannot take more tokens) and is marked wide: the next EXEC holding it (EVAL or EVALSHA, any
// case of the SHA) takes every shard and the script succeeds.
func TestScriptWideInMulti(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	ks := keysOnShards(e, "m:", 2)
	tc := newTestConn(t, e)
	tc.do("SET", ks[1], "other")
	body := "return redis.call('GET', ARGV[1])"
	run := func(cmd ...string) string {
		tc.do("MULTI")
		tc.do(cmd...)
		return tc.do("EXEC")
	}
	if got := run("EVAL", body, "1", ks[0], ks[1]); !strings.Contains(got, ErrScriptUndeclaredTx) {
		t.Fatalf("first EXEC: %q", got)
	}
	if got := run("EVAL", body, "1", ks[0], ks[1]); got != "*1\r\n$5\r\nother\r\n" {
		t.Errorf("EVAL in the second EXEC: %q", got)
	}
	sha := strings.ToUpper(replyText(t, tc.do("SCRIPT", "LOAD", body)))
	if got := run("EVALSHA", sha, "1", ks[0], ks[1]); got != "*1\r\n$5\r\nother\r\n" {
		t.Errorf("EVALSHA in a third EXEC: %q", got)
	}
}

// The Lua engine starts with the first script and Engine.Close stops its watchdog: no
// goroutine is left behind (src/server's Stop calls Close).
func TestScriptEngineClose(t *testing.T) {
	// This engine's own watchdog, not a count of every test's goroutines: other tests' engines
	// start and stop theirs meanwhile (the count flaked in the full suite).
	e := newTestEngine()
	tc := newTestConn(t, e)
	if got := tc.do("EVAL", "return 1", "0"); got != ":1\r\n" {
		t.Fatalf("EVAL: %q", got)
	}
	sc := e.Scripts()
	if !sc.WatchdogRunning() {
		t.Fatal("no watchdog after EVAL")
	}
	e.Close()
	if sc.WatchdogRunning() {
		t.Fatal("the watchdog still runs after Engine.Close returned")
	}
}

// A client blocked on a list a script pushes to is served after the script, as in Redis 7.0.15:
// the script sees both its pushes (LLEN 2), the waiter gets the head after both ("y"), "x"
// stays.
func TestScriptServesBlockedAfter(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	waiter, tc := newTestConn(t, e), newTestConn(t, e)
	got := make(chan string)
	go func() { got <- waiter.do("BLPOP", "bl", "5") }()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(tc.do("CLIENT", "LIST"), "cmd=blpop") {
		if time.Now().After(deadline) {
			t.Fatal("the waiter never blocked")
		}
		time.Sleep(time.Millisecond)
	}
	body := "redis.call('LPUSH', KEYS[1], 'x'); redis.call('LPUSH', KEYS[1], 'y'); return redis.call('LLEN', KEYS[1])"
	if r := tc.do("EVAL", body, "1", "bl"); r != ":2\r\n" {
		t.Errorf("script: %q", r)
	}
	if r := <-got; r != "*2\r\n$2\r\nbl\r\n$1\r\ny\r\n" {
		t.Errorf("waiter: %q", r)
	}
	if r := tc.do("LRANGE", "bl", "0", "-1"); r != "*1\r\n$1\r\nx\r\n" {
		t.Errorf("left: %q", r)
	}
}

// lua-max-memory reaches the engine: a script growing a table without end is stopped with the
// engine's error once the heap grew by the cap (32 MB here), and the server goes on serving.
func TestScriptMaxMemory(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	s := *e.Settings()
	s.LuaMaxMemory = 32 << 20
	e.SetSettings(s)
	tc := newTestConn(t, e)
	body := "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 64) .. i end return #t"
	if got := tc.do("EVAL", body, "0"); !strings.HasPrefix(got, "-ERR Script exceeded lua-max-memory, stopped") {
		t.Errorf("runaway table: %.200q", got)
	}
	if got := tc.do("EVAL", "return 1", "0"); got != ":1\r\n" {
		t.Errorf("after the stop: %q", got)
	}
}

// The connection's cache of its last EVALSHA (Client.sha) and a run's cache of its last
// command (scriptRun.resolve) answer only what a lookup would: SCRIPT FLUSH ends the cached
// script on the connection that ran it, the SHA is matched in either case, and a script that
// alternates commands, subcommands among them, gets each one's own reply.
func TestScriptLookupCaches(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	body := "return redis.call('INCR', KEYS[1])"
	sha := replyText(t, tc.do("SCRIPT", "LOAD", body))
	if got := tc.do("EVALSHA", strings.ToUpper(sha), "1", "n"); got != ":1\r\n" {
		t.Fatalf("EVALSHA in upper case = %q", got)
	}
	for i, want := range []string{":2\r\n", ":3\r\n"} { // the second from the cache
		if got := tc.do("EVALSHA", sha, "1", "n"); got != want {
			t.Fatalf("EVALSHA #%d = %q, want %q", i+1, got, want)
		}
	}
	tc.do("SCRIPT", "FLUSH")
	if got := tc.do("EVALSHA", sha, "1", "n"); !strings.HasPrefix(got, "-NOSCRIPT") {
		t.Fatalf("EVALSHA after SCRIPT FLUSH = %q, want NOSCRIPT", got)
	}
	if got := replyText(t, tc.do("SCRIPT", "LOAD", body)); got != sha {
		t.Fatalf("SCRIPT LOAD again = %q", got)
	}
	if got := tc.do("EVALSHA", sha, "1", "n"); got != ":4\r\n" {
		t.Fatalf("EVALSHA after loading again = %q", got)
	}
	mixed := `local out = {}
for i = 1, 3 do
  out[#out+1] = redis.call('SET', KEYS[1], 'v' .. i)['ok']
  out[#out+1] = redis.call('OBJECT', 'ENCODING', KEYS[1])
  out[#out+1] = redis.call('OBJECT', 'REFCOUNT', KEYS[1])
  out[#out+1] = redis.call('GET', KEYS[1])
  out[#out+1] = redis.call('get', KEYS[1])
end
local ok, err = pcall(redis.call, 'OBJECT', 'NOSUCH', KEYS[1])
out[#out+1] = tostring(ok)
return out`
	got := tc.do("EVAL", mixed, "1", "s")
	want := "*16\r\n"
	for i := 1; i <= 3; i++ {
		v := "v" + strconv.Itoa(i)
		want += "$2\r\nOK\r\n$6\r\nembstr\r\n:1\r\n$2\r\n" + v + "\r\n$2\r\n" + v + "\r\n"
	}
	want += "$5\r\nfalse\r\n"
	if got != want {
		t.Fatalf("EVAL alternating commands = %q, want %q", got, want)
	}
}

// A script that the server's stop ends inside EXEC replicates nothing of the transaction, as
// Redis, which exits inside the script: the writes queued before it (and after it) are not
// left in the feed as a MULTI … EXEC without the script's. An EXEC whose script ends normally
// replicates the whole transaction.
func TestStoppedScriptInExecReplicatesNothing(t *testing.T) {
	run := func(stop bool) [][]string {
		e := newTestEngine()
		defer e.Close()
		tc := newTestConn(t, e)
		rd := e.AttachFeed()
		defer rd.Close()
		body := "redis.call('SET', KEYS[1], '1') return 1"
		if stop {
			body = "redis.call('SET', KEYS[1], '1') while true do end"
		}
		tc.do("MULTI")
		tc.do("SET", "a", "1")
		tc.do("EVAL", body, "1", "b")
		tc.do("SET", "c", "1")
		done := make(chan string, 1)
		go func() { done <- tc.do("EXEC") }()
		if stop {
			deadline := time.Now().Add(5 * time.Second)
			for e.scripting.running.Load() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the script never started")
				}
				time.Sleep(time.Millisecond)
			}
			e.StopScripts()
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("EXEC did not return")
		}
		return feedCommands(t, rd)
	}
	want := [][]string{{"MULTI"}, {"SET", "a", "1"}, {"SET", "b", "1"}, {"SET", "c", "1"}, {"EXEC"}}
	if got := run(false); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("EXEC with a script that ends replicated %q, want %q", got, want)
	}
	if got := run(true); len(got) != 0 {
		t.Fatalf("EXEC whose script the stop ended replicated %q, want nothing", got)
	}
}
