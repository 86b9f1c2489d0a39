package testfuzz

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// scriptEffects are scripts whose replicated form and keyspace events are compared with Redis's
// AOF and notifications (TestScriptEffectsLikeRedis).
var scriptEffects = [][]string{
	{"EVAL", "return redis.call('SET', KEYS[1], '1')", "1", "a"},
	{"EVAL", "return redis.call('GET', KEYS[1])", "1", "a"},
	{"EVAL", "redis.call('SET', 'a', '2'); return redis.call('INCR', 'b')", "0"},
	{"EVAL", "redis.call('SET', 'x', '1'); redis.call('SELECT', 2); redis.call('SET', 'y', '2'); return 1", "0"},
	{"EVAL", "redis.call('SELECT', 3); return redis.call('SET', 'only3', 'v')", "0"},
	{"SET", "plain", "1"},
	{"EVAL", "redis.set_repl(redis.REPL_NONE); redis.call('SET', 'n', '1'); redis.set_repl(redis.REPL_ALL); return redis.call('SET', 'm', '1')", "0"},
	{"EVAL", "redis.call('RPUSH', KEYS[1], 'a', 'b'); redis.call('LPOP', KEYS[1]); return redis.call('DEL', KEYS[1])", "1", "l"},
	{"EVAL", "return redis.call('SET', KEYS[1], 'v', 'EX', '100000')", "1", "ex"},
	{"EVAL", "redis.call('HSET', 'h', 'f', '1'); redis.call('HINCRBY', 'h', 'f', '2'); return redis.call('EXPIRE', 'h', 100000)", "0"},
	{"EVAL", "return redis.pcall('INCR', KEYS[1])", "1", "l"},
	{"EVAL", "redis.call('SET', KEYS[1], 'z'); return redis.call('INCR', KEYS[1])", "1", "err"},
	{"MULTI"},
	{"SET", "t", "1"},
	{"EVAL", "return redis.call('INCR', KEYS[1])", "1", "t"},
	{"EXEC"},
	{"FUNCTION", "LOAD", "#!lua name=effects\nredis.register_function('bump', function(keys) redis.call('INCR', keys[1]); return redis.call('INCR', keys[1]) end)"},
	{"FCALL", "bump", "1", "fc"},
	{"EVAL", "return redis.call('FLUSHDB')", "0"},
}

// TestScriptEffectsLikeRedis sends scriptEffects to HotKV and to redis-server (appendonly yes,
// notify-keyspace-events KEA): every reply, HotKV's feed rendered as an AOF against Redis's AOF,
// and the notifications must be the same.
func TestScriptEffectsLikeRedis(t *testing.T) {
	dir := t.TempDir()
	redis := startRedis(t, "--notify-keyspace-events", "KEA", "--appendonly", "yes",
		"--appendfsync", "always", "--aof-use-rdb-preamble", "no", "--dir", dir)
	hotkv, srv := startHotKV(t, "--notify-keyspace-events", "KEA")
	rd := srv.Engine.AttachFeed()
	defer rd.Close()
	hSub, rSub := newEventSub(t, hotkv), newEventSub(t, redis)
	hc, rc := dial(t, hotkv), dial(t, redis)
	for _, cmd := range scriptEffects {
		h, r := hc.do(cmd...), rc.do(cmd...)
		if h != r {
			t.Errorf("reply to %q: HotKV %q, Redis %q", cmd, h, r)
		}
	}
	hEvents, rEvents := hSub.finish(t, hc), rSub.finish(t, rc)
	compareEvents(t, 0, "KEA", hEvents, rEvents)
	var feedCmds [][]string
	lastDB := -1
	for {
		es, err := rd.Next()
		if err != nil {
			t.Fatalf("feed: %v", err)
		}
		if len(es) == 0 {
			break
		}
		feedCmds = appendFeedCommands(t, feedCmds, es, &lastDB)
	}
	// The AOFs must replay alike: the same commands in the same databases, absolute times
	// within 2 s. HotKV's feed entries end in the database they began in (a SELECT back after
	// a script or EXEC that changed it, see multi.go), so the SELECTs are compared through the
	// database each command runs in.
	raof := inDatabases(readRedisAOF(t, dir))
	feedCmds = inDatabases(feedCmds)
	if len(feedCmds) != len(raof) {
		t.Errorf("AOF: HotKV %d commands, Redis %d\nHotKV %q\nRedis %q", len(feedCmds), len(raof), feedCmds, raof)
		return
	}
	for i := range raof {
		if !sameAOFCommand(feedCmds[i], raof[i]) {
			t.Errorf("AOF command %d: HotKV %q, Redis %q\nHotKV %q\nRedis %q", i, feedCmds[i], raof[i], feedCmds, raof)
			return
		}
	}
	t.Logf("%d AOF commands and %d notifications equal", len(raof), len(rEvents))
}

// A script looping forever: a client touching its key gets BUSY over the network, one on
// another key and PING are served, SCRIPT KILL (also through the network while the script's
// connection waits) ends it with Redis's error, and the key is served again. redis-server is
// run through the same steps where HotKV must answer as it does (BUSY text, KILL, the killed
// script's reply); then the same for a looping FCALL, FUNCTION STATS included.
func TestScriptBusyKillE2E(t *testing.T) {
	var replies, connReplies []string
	for _, name := range []string{"redis", "hotkv"} {
		t.Run(name, func(t *testing.T) {
			var addr string
			if name == "redis" {
				addr = startRedis(t, "--busy-reply-threshold", "50")
			} else {
				addr, _ = startHotKV(t, "--busy-reply-threshold", "50")
			}
			runner, other := dial(t, addr), dial(t, addr)
			runner.write(appendCommand(nil, "EVAL", "while true do end", "1", "k"))
			// FUNCTION KILL (allow-busy, no key) polls: NOTBUSY until the script is busy, then
			// the EVAL's BUSY text. A GET sent before that would wait for the script's shard
			// in HotKV (docs/decisions.md "Scripts"), where Redis answers it BUSY.
			want := "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
			deadline := time.Now().Add(20 * time.Second)
			for {
				got := other.do("FUNCTION", "KILL")
				if got == want {
					break
				}
				if got != "-NOTBUSY No scripts in execution right now.\r\n" || time.Now().After(deadline) {
					t.Fatalf("FUNCTION KILL while the script starts: %q", got)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if got := other.do("GET", "k"); got != want {
				t.Fatalf("GET during the script: %q, want %q", got, want)
			}
			// Connection commands without allow-busy are refused too (PING, ECHO, CLIENT,
			// CONFIG, SELECT): compared with redis-server below.
			conn := other.do("PING") + other.do("ECHO", "x") + other.do("CLIENT", "ID") +
				other.do("CONFIG", "GET", "maxmemory") + other.do("SELECT", "1")
			connReplies = append(connReplies, conn)
			if got := other.do("SCRIPT", "KILL"); got != "+OK\r\n" {
				t.Errorf("SCRIPT KILL: %q", got)
			}
			got := string(runner.reply())
			if !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL...") {
				t.Errorf("the killed script replied %q", got)
			}
			if got := other.do("GET", "k"); got != "$-1\r\n" {
				t.Errorf("GET after the kill: %q", got)
			}
			replies = append(replies, busyFunction(t, addr, runner, other))
		})
	}
	if replies[0] != replies[1] {
		t.Errorf("busy FCALL: Redis %q\nHotKV %q", replies[0], replies[1])
	}
	if len(connReplies) == 2 && connReplies[0] != connReplies[1] {
		t.Errorf("connection commands while busy: Redis %q\nHotKV %q", connReplies[0], connReplies[1])
	}
	t.Logf("busy FCALL, equal: %q", replies[1])
}

var durationMS = regexp.MustCompile(`duration_ms\r\n:[0-9]+`)

// busyFunction runs a looping FCALL on runner until it is busy and returns what other then got
// for FUNCTION STATS (its duration zeroed), SCRIPT KILL and FUNCTION KILL, and the FCALL's reply.
func busyFunction(t *testing.T, addr string, runner, other *rawConn) string {
	other.do("FUNCTION", "LOAD", "REPLACE", "#!lua name=lp\nredis.register_function('loop', function() while true do end end)")
	runner.write(appendCommand(nil, "FCALL", "loop", "1", "k"))
	deadline := time.Now().Add(20 * time.Second)
	for !strings.HasPrefix(other.do("SCRIPT", "KILL"), "-BUSY") {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the function never became busy", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stats := durationMS.ReplaceAllString(other.do("FUNCTION", "STATS"), "duration_ms\r\n:0")
	kill := other.do("SCRIPT", "KILL")
	fkill := other.do("FUNCTION", "KILL")
	return stats + kill + fkill + string(runner.reply())
}

// inDatabases drops an AOF's SELECTs, prefixing every other command with the database it runs in.
func inDatabases(cmds [][]string) [][]string {
	var out [][]string
	db := "0"
	for _, c := range cmds {
		if strings.EqualFold(c[0], "SELECT") {
			db = c[1]
			continue
		}
		where := "db" + db
		if strings.EqualFold(c[0], "MULTI") || strings.EqualFold(c[0], "EXEC") {
			where = "" // a block's bounds belong to no database
		}
		out = append(out, append([]string{where}, c...))
	}
	return out
}

// The scripting parameters through CONFIG SET on a running server: lua-time-limit is
// busy-reply-threshold (as redis-server answers), lua-max-memory takes a memory value, and
// lua-strict-keys yes makes an undeclared key an error at once.
func TestScriptConfigE2E(t *testing.T) {
	hotkv, _ := startHotKV(t)
	redis := startRedis(t)
	for _, addr := range []string{redis, hotkv} {
		c := dial(t, addr)
		c.do("CONFIG", "SET", "lua-time-limit", "123")
		if got := c.do("CONFIG", "GET", "busy-reply-threshold"); got != "*2\r\n$20\r\nbusy-reply-threshold\r\n$3\r\n123\r\n" {
			t.Errorf("%s: busy-reply-threshold after lua-time-limit 123: %q", addr, got)
		}
	}
	c := dial(t, hotkv)
	if got := c.do("CONFIG", "SET", "lua-max-memory", "64mb"); got != "+OK\r\n" {
		t.Errorf("CONFIG SET lua-max-memory: %q", got)
	}
	if got := c.do("CONFIG", "GET", "lua-max-memory"); got != "*2\r\n$14\r\nlua-max-memory\r\n$8\r\n67108864\r\n" {
		t.Errorf("CONFIG GET lua-max-memory: %q", got)
	}
	body := "return redis.call('GET', ARGV[1])"
	if got := c.do("EVAL", body, "0", "k"); got != "$-1\r\n" {
		t.Errorf("undeclared key, lua-strict-keys no: %q", got)
	}
	c.do("CONFIG", "SET", "lua-strict-keys", "yes")
	if got := c.do("EVAL", body, "0", "k"); !strings.HasPrefix(got, "-ERR Script attempted to access a key not declared in KEYS") {
		t.Errorf("undeclared key, lua-strict-keys yes: %q", got)
	}
}

// FUNCTION DUMP's payload moves both ways between HotKV and redis-server: each restores the
// other's libraries (FLUSH policy), FUNCTION LIST WITHCODE then answers alike on both, the
// default APPEND policy refuses a library that exists with Redis's error, and the restored
// functions run.
func TestFunctionDumpRestoreE2E(t *testing.T) {
	hotkv, _ := startHotKV(t)
	redis := startRedis(t)
	h, r := dial(t, hotkv), dial(t, redis)
	// One function: FUNCTION LIST orders functions by name, Redis by its hash (src/script's
	// known differences).
	lib := "#!lua name=dumplib\nredis.register_function{function_name='dget', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='reads'}"
	if got := r.do("FUNCTION", "LOAD", lib); got != "$7\r\ndumplib\r\n" {
		t.Fatalf("Redis FUNCTION LOAD: %q", got)
	}
	payload := func(c *rawConn) string {
		raw := c.do("FUNCTION", "DUMP")
		if !strings.HasPrefix(raw, "$") {
			t.Fatalf("FUNCTION DUMP: %q", raw)
		}
		body := raw[strings.Index(raw, "\r\n")+2:]
		return body[:len(body)-2]
	}
	fromRedis := payload(r)
	if got := h.do("FUNCTION", "RESTORE", fromRedis, "FLUSH"); got != "+OK\r\n" {
		t.Fatalf("HotKV RESTORE of Redis's payload: %q", got)
	}
	if hl, rl := h.do("FUNCTION", "LIST", "WITHCODE"), r.do("FUNCTION", "LIST", "WITHCODE"); hl != rl {
		t.Errorf("FUNCTION LIST WITHCODE after restoring Redis's payload:\nHotKV %q\nRedis %q", hl, rl)
	}
	if hr, rr := h.do("FUNCTION", "RESTORE", fromRedis), r.do("FUNCTION", "RESTORE", fromRedis); hr != rr {
		t.Errorf("RESTORE APPEND of an existing library: HotKV %q, Redis %q", hr, rr)
	}
	fromHotKV := payload(h)
	if got := r.do("FUNCTION", "RESTORE", fromHotKV, "REPLACE"); got != "+OK\r\n" {
		t.Fatalf("Redis RESTORE of HotKV's payload: %q", got)
	}
	if hl, rl := h.do("FUNCTION", "LIST", "WITHCODE"), r.do("FUNCTION", "LIST", "WITHCODE"); hl != rl {
		t.Errorf("FUNCTION LIST WITHCODE after Redis restored HotKV's payload:\nHotKV %q\nRedis %q", hl, rl)
	}
	for _, c := range []*rawConn{h, r} {
		c.do("SET", "dk", "dv")
	}
	if hg, rg := h.do("FCALL_RO", "dget", "1", "dk"), r.do("FCALL_RO", "dget", "1", "dk"); hg != rg || hg != "$2\r\ndv\r\n" {
		t.Errorf("restored functions: HotKV %q, Redis %q", hg, rg)
	}
}

// TestScriptBusyEarlyTxE2E sends, while a function runs but before it is busy, a command queued in
// MULTI, a script without keys, a WATCH of the script's key and an empty MULTI/EXEC, over the
// network (HotKV serves them off the poller while they wait): redis-server 7.0.15 reads them
// once the script is busy and answers BUSY, BUSY, +OK and EXECABORT with the BUSY text; every
// reply, and the queued transaction's EXEC after FUNCTION KILL, must be Redis's.
func TestScriptBusyEarlyTxE2E(t *testing.T) {
	var got []string
	for _, name := range []string{"redis", "hotkv"} {
		t.Run(name, func(t *testing.T) {
			var addr string
			if name == "redis" {
				addr = startRedis(t, "--busy-reply-threshold", "300")
			} else {
				addr, _ = startHotKV(t, "--busy-reply-threshold", "300")
			}
			runner, admin := dial(t, addr), dial(t, addr)
			a, b, c, d := dial(t, addr), dial(t, addr), dial(t, addr), dial(t, addr)
			lib := "#!lua name=spinlib\nredis.register_function('spin', function() while true do end end)"
			if r := admin.do("FUNCTION", "LOAD", lib); r != "$7\r\nspinlib\r\n" {
				t.Fatalf("FUNCTION LOAD: %q", r)
			}
			if r := a.do("MULTI"); r != "+OK\r\n" {
				t.Fatalf("MULTI: %q", r)
			}
			start := time.Now()
			runner.write(appendCommand(nil, "FCALL", "spin", "1", "k"))
			if name == "hotkv" { // FUNCTION STATS (allow-busy) shows the run once it started
				for !strings.Contains(admin.do("FUNCTION", "STATS"), "duration_ms") {
					if time.Since(start) > 10*time.Second {
						t.Fatal("the script did not start")
					}
					time.Sleep(time.Millisecond)
				}
			} else {
				time.Sleep(20 * time.Millisecond)
			}
			if time.Since(start) > 200*time.Millisecond {
				t.Skip("the script started too late to send the commands before it is busy")
			}
			a.write(appendCommand(nil, "GET", "k"))
			b.write(appendCommand(nil, "EVAL", "return 1", "0"))
			c.write(appendCommand(nil, "WATCH", "k"))
			d.write(appendCommand(appendCommand(nil, "MULTI"), "EXEC"))
			out := []string{string(a.reply()), string(b.reply()), string(c.reply()), string(d.reply()), string(d.reply())}
			if r := admin.do("FUNCTION", "KILL"); r != "+OK\r\n" {
				t.Fatalf("FUNCTION KILL: %q", r)
			}
			out = append(out, string(runner.reply()), a.do("EXEC"), c.do("MULTI"), c.do("GET", "k"), c.do("EXEC"))
			got = append(got, strings.Join(out, ""))
		})
	}
	if len(got) == 2 && got[0] != got[1] {
		t.Errorf("commands sent before the script was busy:\nRedis %q\nHotKV %q", got[0], got[1])
	} else if len(got) == 2 {
		t.Logf("equal: %q", got[1])
	}
}
