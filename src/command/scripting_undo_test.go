package command

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// keysOnShardOf returns n keys named prefix<i> on the shard of key.
func keysOnShardOf(e *Engine, prefix, key string, n int) []string {
	sh := e.shardOf([]byte(key))
	var out []string
	for i := 0; len(out) < n; i++ {
		if k := prefix + strconv.Itoa(i); e.shardOf([]byte(k)) == sh {
			out = append(out, k)
		}
	}
	return out
}

// waitWide waits until the script of body is marked wide: its first run was aborted.
func waitWide(t *testing.T, e *Engine, sha string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !e.scripting.isWide(sha); {
		if time.Now().After(deadline) {
			t.Fatal("the script's run was not aborted")
		}
		time.Sleep(time.Millisecond)
	}
}

// A script that wrote and then meets an undeclared key on a busy lower shard is undone and rerun
// under every shard: while the rerun waits for that shard, the keys it wrote read as before the
// run (values, TTL, a deleted key back, a created one gone); once it ran, every write happened
// once, the feed holds only the rerun's entry and the subscriber only its events, as after
// Redis's one run of the script.
func TestScriptUndoAfterWrite(t *testing.T) {
	x := newHashFx(t)
	e := x.e
	defer e.Close()
	low, high := lowHighKeys(e, "u:")
	hk := keysOnShardOf(e, "uh:", high, 4) // a counter, a hash, a list the script deletes, a new key
	x.tc.do("SET", low, "lowvalue")
	x.tc.do("SET", hk[0], "10", "PX", "100000")
	x.tc.do("HSET", hk[1], "f", "1", "g", "2")
	x.tc.do("RPUSH", hk[2], "a", "b", "c")
	x.feed()
	x.events()
	body := `redis.call('INCR', KEYS[1]); redis.call('HSET', KEYS[2], 'f', 'changed', 'h', '3')
redis.call('DEL', KEYS[3]); redis.call('SET', KEYS[4], 'new')
return redis.call('GET', ARGV[1])`
	sha := replyText(t, x.tc.do("SCRIPT", "LOAD", body))
	other := newTestConn(t, e)
	before := func() []string {
		return []string{other.do("GET", hk[0]), other.do("HGETALL", hk[1]), other.do("LRANGE", hk[2], "0", "-1"),
			other.do("EXISTS", hk[3]), other.do("OBJECT", "ENCODING", hk[1])}
	}
	want := before()
	mon := newTestConn(t, e)
	if got := mon.do("MONITOR"); got != "+OK\r\n" {
		t.Fatalf("MONITOR: %q", got)
	}
	unlock := holdShard(e, low)
	done := make(chan string, 1)
	go func() { done <- x.tc.do("EVALSHA", sha, "4", hk[0], hk[1], hk[2], hk[3], low) }()
	waitWide(t, e, sha)
	select {
	case got := <-done:
		unlock()
		t.Fatalf("the rerun ran while a shard was held: %q", got)
	default:
	}
	got := before()
	pttl, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(other.do("PTTL", hk[0]), ":")))
	unlock()
	if !slices.Equal(got, want) {
		t.Errorf("while the rerun waits, the keys read %q, want %q (as before the run)", got, want)
	}
	if pttl <= 90_000 || pttl > 100_000 {
		t.Errorf("PTTL of the undone counter %d, want its TTL back", pttl)
	}
	if r := <-done; r != "$8\r\nlowvalue\r\n" {
		t.Fatalf("reply %q", r)
	}
	after := []string{other.do("GET", hk[0]), other.do("HGET", hk[1], "f"), other.do("EXISTS", hk[2]), other.do("GET", hk[3])}
	if w := []string{"$2\r\n11\r\n", "$7\r\nchanged\r\n", ":0\r\n", "$3\r\nnew\r\n"}; !slices.Equal(after, w) {
		t.Errorf("after the rerun %q, want %q", after, w)
	}
	wantFeed := []string{"0:MULTI", "0:INCR " + hk[0], "0:HSET " + hk[1] + " f changed h 3", "0:DEL " + hk[2],
		"0:SET " + hk[3] + " new", "0:EXEC"}
	if feed := x.feed(); !slices.Equal(feed, wantFeed) {
		t.Errorf("feed %q, want only the rerun's %q", feed, wantFeed)
	}
	evs := x.events()
	if n := len(evs); n != 8 { // incrby, hset, del, set: keyspace and keyevent each
		t.Errorf("events %q, want the rerun's 8", evs)
	}
	// MONITOR shows the EVALSHA once and the rerun's five commands, not the undone run's four.
	var lua, evalsha []string
	for _, line := range strings.SplitAfter(string(e.TakePushes(mon.client, nil)), "\r\n") {
		switch {
		case strings.Contains(line, " lua] "):
			lua = append(lua, line[strings.Index(line, "] ")+2:len(line)-2])
		case strings.Contains(line, `"EVALSHA"`):
			evalsha = append(evalsha, line)
		}
	}
	wantLua := []string{`"INCR" "` + hk[0] + `"`, `"HSET" "` + hk[1] + `" "f" "changed" "h" "3"`, `"DEL" "` + hk[2] + `"`,
		`"SET" "` + hk[3] + `" "new"`, `"GET" "` + low + `"`}
	if len(evalsha) != 1 || !slices.Equal(lua, wantLua) {
		t.Errorf("MONITOR showed %d EVALSHA lines and the script's commands %q, want 1 and %q", len(evalsha), lua, wantLua)
	}
}

// A write the log cannot record (a list longer than undoMaxElems) makes the run take every
// shard before it: with a lower shard busy, the run aborts before the write, and the push happens
// once.
func TestScriptUndoEscalates(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	low, high := lowHighKeys(e, "e:")
	tc := newTestConn(t, e)
	args := []string{"RPUSH", high}
	for i := range undoMaxElems + 10 {
		args = append(args, strconv.Itoa(i))
	}
	tc.do(args...)
	counter := keysOnShardOf(e, "ec:", high, 1)[0]
	body := `redis.call('INCR', KEYS[2]); redis.call('LPUSH', KEYS[1], 'x'); return redis.call('GET', ARGV[1])`
	sha := replyText(t, tc.do("SCRIPT", "LOAD", body))
	unlock := holdShard(e, low)
	done := make(chan string, 1)
	go func() { done <- tc.do("EVALSHA", sha, "2", high, counter, low) }()
	waitWide(t, e, sha)
	other := newTestConn(t, e)
	n, c := other.do("LLEN", high), other.do("EXISTS", counter)
	unlock()
	if want := fmt.Sprintf(":%d\r\n", undoMaxElems+10); n != want || c != ":0\r\n" {
		t.Errorf("while the rerun waits: LLEN %q (want %q), counter EXISTS %q (want 0)", n, want, c)
	}
	if r := <-done; r != "$-1\r\n" {
		t.Fatalf("reply %q", r)
	}
	if got := other.do("LLEN", high); got != fmt.Sprintf(":%d\r\n", undoMaxElems+11) {
		t.Errorf("LLEN %q: pushed other than once", got)
	}
	if got := other.do("GET", counter); got != "$1\r\n1\r\n" {
		t.Errorf("counter %q", got)
	}
}

// PUBLISH cannot be taken back: the run takes every shard before it, so a message is published
// once although the run was aborted after a write.
func TestScriptUndoPublishOnce(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	low, high := lowHighKeys(e, "p:")
	tc, sub := newTestConn(t, e), newTestConn(t, e)
	sub.do("SUBSCRIBE", "ch")
	body := `redis.call('INCR', KEYS[1]); redis.call('PUBLISH', 'ch', 'm'); return redis.call('GET', ARGV[1])`
	sha := replyText(t, tc.do("SCRIPT", "LOAD", body))
	unlock := holdShard(e, low)
	done := make(chan string, 1)
	go func() { done <- tc.do("EVALSHA", sha, "1", high, low) }()
	waitWide(t, e, sha)
	unlock()
	if r := <-done; r != "$-1\r\n" {
		t.Fatalf("reply %q", r)
	}
	out, _ := sub.send(nil)
	if n := strings.Count(string(out), "$1\r\nm\r\n"); n != 1 {
		t.Errorf("the subscriber got %d messages, want 1: %q", n, out)
	}
	if got := tc.do("GET", high); got != "$1\r\n1\r\n" {
		t.Errorf("counter %q", got)
	}
}

// transferWriteFirst writes the first account before it reads the second: a run that must add
// a lower shard then has written, and is undone when it cannot take it.
const transferWriteFirst = `local n = tonumber(ARGV[3])
local a = redis.call('DECRBY', ARGV[1], n)
redis.call('INCRBY', ARGV[2], n)
return a -- %d`

// Write-first transfers on undeclared keys between accounts on different shards, beside
// MULTI/EXEC transfers, while readers check the total: no transfer fails and the total never
// changes. Each writer cycles through 200 copies of the script (a comment apart), so that many
// first runs, not yet marked wide, meet a busy lower shard after their first write.
func TestScriptUndeclaredWriteFirst(t *testing.T) {
	bodies := make([]string, 200)
	for i := range bodies {
		bodies[i] = fmt.Sprintf(transferWriteFirst, i)
	}
	transfersWith(t, bodies, false)
}

// A run that found a key expired (and deleted it) and is then undone to run again keeps that
// key's "expired" events: the deletion happened, the rerun finds no key, and Redis's one run
// raises them once.
func TestScriptUndoKeepsExpiredEvents(t *testing.T) {
	x := newHashFx(t)
	e := x.e
	defer e.Close()
	low, high := lowHighKeys(e, "ux:")
	x.tc.do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	defer x.tc.do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
	x.tc.do("SET", low, "lowvalue")
	x.tc.do("SET", high, "gone", "PX", "1")
	time.Sleep(5 * time.Millisecond)
	x.feed()
	x.events()
	sha := replyText(t, x.tc.do("SCRIPT", "LOAD", "redis.call('GET', KEYS[1]) return redis.call('GET', ARGV[1])"))
	unlock := holdShard(e, low)
	done := make(chan string, 1)
	go func() { done <- x.tc.do("EVALSHA", sha, "1", high, low) }()
	waitWide(t, e, sha)
	unlock()
	if r := <-done; r != "$8\r\nlowvalue\r\n" {
		t.Fatalf("reply %q", r)
	}
	want := []string{"__keyspace@0__:" + high + " expired", "__keyevent@0__:expired " + high}
	if evs := x.events(); !slices.Equal(evs, want) {
		t.Errorf("events %q, want %q", evs, want)
	}
	if feed := x.feed(); len(feed) != 1 || !strings.Contains(feed[0], high) {
		t.Errorf("feed %q, want the one deletion of %s", feed, high)
	}
}

// A WATCH of a key an undone run wrote but its rerun does not is not dirtied: a run tells the
// watchers of what it changed when it ends, and an undo drops what it had to tell. Here another
// client turns the script's flag off while the rerun waits for every shard.
func TestScriptUndoLeavesWatchClean(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	low, high := lowHighKeys(e, "uw:")
	ks := keysOnShardOf(e, "uwh:", high, 2) // the watched key and the flag
	tc, watcher, other := newTestConn(t, e), newTestConn(t, e), newTestConn(t, e)
	tc.do("SET", low, "lowvalue")
	tc.do("SET", ks[0], "before")
	sha := replyText(t, tc.do("SCRIPT", "LOAD",
		"if redis.call('GET', KEYS[2]) ~= 'off' then redis.call('SET', KEYS[1], 'x') end return redis.call('GET', ARGV[1])"))
	if got := watcher.do("WATCH", ks[0]); got != "+OK\r\n" {
		t.Fatalf("WATCH: %q", got)
	}
	unlock := holdShard(e, low)
	done := make(chan string, 1)
	go func() { done <- tc.do("EVALSHA", sha, "2", ks[0], ks[1], low) }()
	waitWide(t, e, sha)
	if got := other.do("SET", ks[1], "off"); got != "+OK\r\n" { // the high shard is free meanwhile
		unlock()
		t.Fatalf("SET flag: %q", got)
	}
	unlock()
	if r := <-done; r != "$8\r\nlowvalue\r\n" {
		t.Fatalf("reply %q", r)
	}
	if got := tc.do("GET", ks[0]); got != "$6\r\nbefore\r\n" {
		t.Fatalf("the rerun wrote the watched key: %q", got)
	}
	watcher.do("MULTI")
	watcher.do("GET", ks[0])
	if got := watcher.do("EXEC"); got != "*1\r\n$6\r\nbefore\r\n" {
		t.Errorf("EXEC after the undone write %q, want it to run (the key did not change)", got)
	}
	// A write the run keeps does dirty the watch.
	watcher.do("WATCH", ks[0])
	tc.do("DEL", ks[1])
	if r := tc.do("EVALSHA", sha, "2", ks[0], ks[1], low); r != "$8\r\nlowvalue\r\n" {
		t.Fatalf("second run: %q", r)
	}
	watcher.do("MULTI")
	watcher.do("GET", ks[0])
	if got := watcher.do("EXEC"); got != "*-1\r\n" {
		t.Errorf("EXEC after the run's write %q, want it aborted", got)
	}
}

// An undone attempt sends no client-tracking invalidation and its calls leave INFO
// commandstats as they were: Redis runs the script once, so a tracking client hears of a write
// once, and each call is counted once. Here the rerun does not write (a flag set meanwhile), so
// the undone attempt's SET must not reach the tracking client, and only the rerun's two GETs
// are counted.
func TestScriptUndoNoInvalidationOrCalls(t *testing.T) {
	e := newTestEngine()
	defer e.Close()
	low, high := lowHighKeys(e, "ut:")
	ks := keysOnShardOf(e, "uth:", high, 2) // the tracked key and the flag
	tc, tracker, other := newTestConn(t, e), newTestConn(t, e), newTestConn(t, e)
	tc.do("SET", low, "lowvalue")
	tc.do("SET", ks[0], "before")
	sha := replyText(t, tc.do("SCRIPT", "LOAD",
		"if redis.call('GET', KEYS[2]) ~= 'off' then redis.call('SET', KEYS[1], 'x') end return redis.call('GET', ARGV[1])"))
	tracker.do("HELLO", "3")
	if got := tracker.do("CLIENT", "TRACKING", "on"); got != "+OK\r\n" {
		t.Fatalf("CLIENT TRACKING: %q", got)
	}
	tracker.do("GET", ks[0])
	e.TakePushes(tracker.client, nil)
	tc.do("CONFIG", "RESETSTAT")
	unlock := holdShard(e, low)
	done := make(chan string, 1)
	go func() { done <- tc.do("EVALSHA", sha, "2", ks[0], ks[1], low) }()
	waitWide(t, e, sha)
	if got := other.do("SET", ks[1], "off"); got != "+OK\r\n" {
		unlock()
		t.Fatalf("SET flag: %q", got)
	}
	unlock()
	if r := <-done; r != "$8\r\nlowvalue\r\n" {
		t.Fatalf("reply %q", r)
	}
	if got := string(e.TakePushes(tracker.client, nil)); strings.Contains(got, "invalidate") {
		t.Errorf("the tracking client got %q for a write that was undone", got)
	}
	stats := tc.do("INFO", "commandstats")
	for cmd, want := range map[string]string{"get": "calls=2,", "set": "calls=1,", "evalsha": "calls=1,"} {
		if !strings.Contains(stats, "cmdstat_"+cmd+":"+want) {
			t.Errorf("INFO commandstats %q, want cmdstat_%s:%s (the rerun's calls, and the flag's SET)", stats, cmd, want)
		}
	}
	// A write the run keeps is invalidated, once.
	tracker.do("GET", ks[0])
	tc.do("DEL", ks[1])
	if r := tc.do("EVALSHA", sha, "2", ks[0], ks[1], low); r != "$8\r\nlowvalue\r\n" {
		t.Fatalf("second run: %q", r)
	}
	if got := string(e.TakePushes(tracker.client, nil)); strings.Count(got, "invalidate") != 1 || !strings.Contains(got, ks[0]) {
		t.Errorf("after a kept write the tracking client got %q, want one invalidation of %s", got, ks[0])
	}
}
