package command

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	"github.com/hotkv/hotkv/pipeline"
)

// ktCall runs one command's handler directly with a fixed clock, as the executor would (the
// test is the only goroutine touching the engine). It returns the raw reply.
func ktCall(e *Engine, db int, now int64, args ...string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	spec, msg := lookupArgs(argv)
	if msg != "" {
		return "-" + msg + "\r\n"
	}
	c := &Ctx{Args: argv, Proto: 2, DB: db, Now: now, E: e, Spec: spec}
	spec.Run(c)
	return string(c.Out)
}

// ktConfig is a configuration store holding a few exact names.
type ktConfig map[string]string

func (f ktConfig) Get(name string) [][2]string {
	if v, ok := f[name]; ok {
		return [][2]string{{name, v}}
	}
	return nil
}
func (f ktConfig) Set([][2]string) error { return nil }
func (f ktConfig) Rewrite() error        { return nil }

// ktPlant stores a value of kind k under key in db, holding the key's shard.
func ktPlant(e *Engine, db int, key string, k keyspace.Kind, obj any, expireAt int64) {
	e.Group.Do(int(e.shardOf([]byte(key))), func(*pipeline.Shard) {
		ks := e.keyspace(db, []byte(key))
		ent, _ := ks.Upsert([]byte(key), time.Now().UnixNano())
		if k == keyspace.KindString {
			ent.Kind = k
			ent.SetBytes([]byte(obj.(string)))
		} else {
			setObjOf(ent, k, obj)
		}
		ks.SetExpire(ent, expireAt)
	})
}

func TestKeysAcrossShards(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	want := map[string]bool{}
	for i := range 300 {
		k := fmt.Sprint("user:", i)
		want[k] = true
		tc.do("SET", k, "v")
		tc.do("SET", fmt.Sprint("other:", i), "v")
	}
	got := replyStrings(t, tc.do("KEYS", "user:*"))
	if len(got) != len(want) {
		t.Fatalf("KEYS user:* returned %d keys, want %d", len(got), len(want))
	}
	for _, k := range got {
		if !want[k] {
			t.Fatalf("unexpected key %q", k)
		}
	}
	if n := len(replyStrings(t, tc.do("KEYS", "*"))); n != 600 {
		t.Fatalf("KEYS * returned %d keys", n)
	}
	if got := tc.do("DEL", "user:1", "user:2", "other:3", "nokey", "user:1"); got != ":3\r\n" {
		t.Fatalf("DEL across shards = %q", got)
	}
	if got := tc.do("EXISTS", "user:1", "user:4", "other:4", "user:4"); got != ":3\r\n" {
		t.Fatalf("EXISTS across shards = %q", got)
	}
}

// TYPE, SCAN TYPE, COPY and OBJECT ENCODING on values of other families, planted directly
// (not by their commands), through the Cloner and Encoder interfaces those families implement.
func TestCollectionValues(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	orig := listOf("a", "b")
	ktPlant(e, 0, "l", keyspace.KindList, orig, 0)
	ktPlant(e, 0, "s", keyspace.KindString, "str", 0)
	f := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Errorf("%v = %q, want %q", args, got, want)
		}
	}
	// A hash's header lives in its entry (keyspace.Inline), so it is made as HSET makes it.
	f(":1\r\n", "HSET", "h", "f", "v")
	f("+list\r\n", "TYPE", "l")
	f("+hash\r\n", "TYPE", "h")
	f("*2\r\n$1\r\n0\r\n*1\r\n$1\r\nl\r\n", "SCAN", "0", "TYPE", "LIST")
	f("$9\r\nquicklist\r\n", "OBJECT", "ENCODING", "l")
	f("$8\r\nlistpack\r\n", "OBJECT", "ENCODING", "h")
	f(":1\r\n", "COPY", "l", "l2", "DB", "5")
	f(":1\r\n", "COPY", "h", "h2")
	f("+hash\r\n", "TYPE", "h2")
	tc.do("SELECT", "5")
	f("+list\r\n", "TYPE", "l2")
	copied := keyspace.Obj[list.List](e.keyspace(5, []byte("l2")).Peek([]byte("l2"), time.Now().UnixNano()))
	copied.Set(0, []byte("changed"))
	if copied == orig || string(orig.Index(0, nil)) != "a" {
		t.Fatal("COPY shares the collection with its source")
	}
	tc.do("SELECT", "0")
	f("+OK\r\n", "RENAME", "l", "l3")
	if keyspace.Obj[list.List](e.keyspace(0, []byte("l3")).Peek([]byte("l3"), time.Now().UnixNano())) != orig {
		t.Fatal("RENAME did not carry the value over")
	}
}

// RENAME, COPY and MOVE between keys of different shards carry value, type and expiry.
func TestRenameCopyMoveAcrossShards(t *testing.T) {
	e := newTestEngine()
	now := time.Now().UnixNano()
	at := now + int64(time.Hour)
	src, dst := "a", "b"
	for i := 0; e.shardOf([]byte(src)) == e.shardOf([]byte(dst)); i++ {
		dst = fmt.Sprint("b", i)
	}
	ktPlant(e, 0, src, keyspace.KindString, "value", at)
	if got := ktCall(e, 0, now, "RENAME", src, dst); got != "+OK\r\n" {
		t.Fatalf("RENAME = %q", got)
	}
	if ktCall(e, 0, now, "EXISTS", src) != ":0\r\n" || ktCall(e, 0, now, "GET", dst) != "$5\r\nvalue\r\n" {
		t.Fatal("RENAME across shards lost the value")
	}
	if got := ktCall(e, 0, now, "PEXPIRETIME", dst); got != fmt.Sprintf(":%d\r\n", at/1e6) {
		t.Fatalf("RENAME lost the expiry: %q", got)
	}
	if got := ktCall(e, 0, now, "COPY", dst, src); got != ":1\r\n" {
		t.Fatalf("COPY = %q", got)
	}
	if got := ktCall(e, 0, now, "PEXPIRETIME", src); got != fmt.Sprintf(":%d\r\n", at/1e6) {
		t.Fatalf("COPY lost the expiry: %q", got)
	}
	ktCall(e, 0, now, "SET", src, "changed")
	if ktCall(e, 0, now, "GET", dst) != "$5\r\nvalue\r\n" {
		t.Fatal("COPY shares the string with its source")
	}
	if got := ktCall(e, 0, now, "MOVE", dst, "7"); got != ":1\r\n" {
		t.Fatalf("MOVE = %q", got)
	}
	if got := ktCall(e, 7, now, "PEXPIRETIME", dst); got != fmt.Sprintf(":%d\r\n", at/1e6) {
		t.Fatalf("MOVE lost the expiry: %q", got)
	}
	// An expired destination does not block RENAMENX or MOVE.
	ktPlant(e, 0, "x", keyspace.KindString, "new", 0)
	ktPlant(e, 0, "y", keyspace.KindString, "old", now-1)
	ktPlant(e, 7, "x", keyspace.KindString, "old", now-1)
	if ktCall(e, 0, now, "MOVE", "x", "7") != ":1\r\n" || ktCall(e, 7, now, "GET", "x") != "$3\r\nnew\r\n" {
		t.Fatal("MOVE over an expired key failed")
	}
	ktPlant(e, 0, "x", keyspace.KindString, "new", 0)
	if ktCall(e, 0, now, "RENAMENX", "x", "y") != ":1\r\n" || ktCall(e, 0, now, "GET", "y") != "$3\r\nnew\r\n" {
		t.Fatal("RENAMENX over an expired key failed")
	}
}

// RENAME carries the value's access time over to the new entry; COPY makes a fresh value.
func TestRenameKeepsAccessTime(t *testing.T) {
	e := newTestEngine()
	now := time.Now().UnixNano()
	ktPlant(e, 0, "k", keyspace.KindString, "v", 0)
	e.keyspace(0, []byte("k")).Peek([]byte("k"), now).Access = uint32(now/1e9) - 100
	ktCall(e, 0, now, "COPY", "k", "c")
	ktCall(e, 0, now, "RENAMENX", "k", "r") // RENAME reads its source: the read is an access
	if got := ktCall(e, 0, now+5e9, "OBJECT", "IDLETIME", "r"); got != ":5\r\n" {
		t.Fatalf("idle time after RENAME = %q", got)
	}
	if got := ktCall(e, 0, now+7e9, "OBJECT", "IDLETIME", "c"); got != ":7\r\n" {
		t.Fatalf("idle time of a copy = %q", got)
	}
	// TYPE, EXISTS, TTL and OBJECT are not accesses; TOUCH and GET are.
	for _, cmd := range [][]string{{"TYPE", "c"}, {"EXISTS", "c"}, {"TTL", "c"}, {"OBJECT", "ENCODING", "c"}} {
		ktCall(e, 0, now+8e9, cmd...)
	}
	if got := ktCall(e, 0, now+9e9, "OBJECT", "IDLETIME", "c"); got != ":9\r\n" {
		t.Fatalf("idle time after inspection = %q", got)
	}
	ktCall(e, 0, now+9e9, "TOUCH", "c")
	if got := ktCall(e, 0, now+10e9, "OBJECT", "IDLETIME", "c"); got != ":1\r\n" {
		t.Fatalf("idle time after TOUCH = %q", got)
	}
}

func TestObjectFreqAndPolicies(t *testing.T) {
	e := newTestEngine()
	now := time.Now().UnixNano()
	ktPlant(e, 0, "k", keyspace.KindString, "5", 0)
	if got := ktCall(e, 0, now, "OBJECT", "REFCOUNT", "k"); got != ":2147483647\r\n" {
		t.Fatalf("REFCOUNT of a shared integer = %q", got)
	}
	e.Config = ktConfig{"maxmemory-policy": "allkeys-lfu", "maxmemory": "1048576", "lfu-decay-time": "1"}
	if got := ktCall(e, 0, now, "OBJECT", "FREQ", "k"); got != fmt.Sprintf(":%d\r\n", keyspace.LFUInitVal) {
		t.Fatalf("FREQ of a new key = %q", got)
	}
	if got := ktCall(e, 0, now+180e9, "OBJECT", "FREQ", "k"); got != fmt.Sprintf(":%d\r\n", keyspace.LFUInitVal-3) {
		t.Fatalf("FREQ after three idle minutes = %q", got)
	}
	if got := ktCall(e, 0, now, "OBJECT", "IDLETIME", "k"); got != "-"+ErrLFUPolicy+"\r\n" {
		t.Fatalf("IDLETIME under LFU = %q", got)
	}
	if got := ktCall(e, 0, now, "OBJECT", "REFCOUNT", "k"); got != ":1\r\n" {
		t.Fatalf("REFCOUNT under an LFU policy with maxmemory = %q", got)
	}
	e.Config = ktConfig{"maxmemory-policy": "volatile-lru"}
	if got := ktCall(e, 0, now, "OBJECT", "FREQ", "k"); got != "-"+ErrNoLFUPolicy+"\r\n" {
		t.Fatalf("FREQ under LRU = %q", got)
	}
}

func TestRandomKey(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	now := time.Now().UnixNano()
	live := map[string]bool{}
	for i := range 40 {
		k := fmt.Sprint("k", i)
		if i%4 == 0 {
			live[k] = true
			ktPlant(e, 3, k, keyspace.KindString, "v", 0)
		} else {
			ktPlant(e, 3, k, keyspace.KindString, "v", now-1) // already expired
		}
	}
	ktPlant(e, 0, "db0only", keyspace.KindString, "v", 0)
	tc.do("SELECT", "3")
	seen := map[string]bool{}
	for range 2000 {
		raw := tc.do("RANDOMKEY")
		k, _ := replyAny(t, raw).(string)
		if !live[k] {
			t.Fatalf("RANDOMKEY returned %q", raw)
		}
		seen[k] = true
	}
	if len(seen) != len(live) {
		t.Fatalf("RANDOMKEY reached %d of %d keys", len(seen), len(live))
	}
	tc.do("FLUSHDB")
	ktPlant(e, 3, "dead", keyspace.KindString, "v", now-1)
	if got := tc.do("RANDOMKEY"); got != "$-1\r\n" {
		t.Fatalf("RANDOMKEY with only expired keys = %q", got)
	}
}

// SWAPDB swaps the data, not the expiry hooks, which report under a database's number.
func TestSwapDBKeepsHooks(t *testing.T) {
	e := newTestEngine()
	var expired []string
	for _, sh := range e.Group.Shards {
		for db, ks := range sh.Data.(*shardData).dbs {
			ks.OnExpire = func(k string) { expired = append(expired, fmt.Sprint(db, ":", k)) }
		}
	}
	now := time.Now().UnixNano()
	ktPlant(e, 2, "k", keyspace.KindString, "v", now+1)
	if got := ktCall(e, 0, now, "SWAPDB", "2", "9"); got != "+OK\r\n" {
		t.Fatalf("SWAPDB = %q", got)
	}
	if got := ktCall(e, 9, now+2, "GET", "k"); got != "$-1\r\n" {
		t.Fatalf("expired key read %q", got)
	}
	if len(expired) != 1 || expired[0] != "9:k" {
		t.Fatalf("expirations reported as %v, want [9:k]", expired)
	}
}

// The handlers of the hot keyspace commands allocate nothing.
func TestKeysHotPathAllocatesNothing(t *testing.T) {
	e := newTestEngine()
	now := time.Now().UnixNano()
	ktPlant(e, 0, "k", keyspace.KindString, "v", 0)
	for _, args := range [][]string{
		{"EXISTS", "k", "nokey"}, {"TOUCH", "k"}, {"TYPE", "k"}, {"EXPIRE", "k", "100"},
		{"PEXPIRE", "k", "100000", "GT"}, {"TTL", "k"}, {"PTTL", "k"}, {"NTTL", "k"},
		{"EXPIRETIME", "k"}, {"PERSIST", "k"}, {"DEL", "nokey"}, {"OBJECT", "ENCODING", "k"},
		// Commands replicated in a rewritten form build it only while a feed reader is attached.
		{"SET", "k", "v", "EX", "100"}, {"SET", "k", "v", "GET"}, {"GETEX", "k", "PX", "100000"},
		{"GETEX", "k", "PERSIST"}, {"GETSET", "k", "v"}, {"SETRANGE", "k", "0", "v"},
		{"NEXPIRE", "k", "100000000000"},
	} {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		spec, _ := lookupArgs(argv)
		c := &Ctx{Args: argv, Proto: 2, Now: now, E: e, Spec: spec, Out: make([]byte, 0, 64)}
		if n := testing.AllocsPerRun(100, func() { c.Out = c.Out[:0]; spec.Run(c) }); n != 0 {
			t.Errorf("%s allocates %.0f per call", strings.Join(args, " "), n)
		}
	}
}
