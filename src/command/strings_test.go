package command

import (
	"bufio"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline"
)

// redisSession runs commands on a throwaway redis-server and returns the raw replies.
type redisSession struct {
	t *testing.T
	r *bufio.Reader
	w func([]byte) (int, error)
}

func newRedisSession(t *testing.T) *redisSession {
	conn, stop := startRedis(t)
	t.Cleanup(stop)
	conn.SetDeadline(time.Now().Add(time.Minute))
	return &redisSession{t: t, r: bufio.NewReader(conn), w: conn.Write}
}

func (rs *redisSession) do(args ...string) string {
	rs.t.Helper()
	if _, err := rs.w(encodeCommand(args)); err != nil {
		rs.t.Fatal(err)
	}
	raw, err := resptest.ReadRaw(rs.r)
	if err != nil {
		rs.t.Fatal(err)
	}
	return string(raw)
}

// plantList makes key a list without going through the list family's commands.
func plantList(e *Engine, key string) {
	ks := e.keyspace(0, []byte(key))
	e.Group.Do(int(e.shardOf([]byte(key))), func(*pipeline.Shard) {
		ent, _ := ks.Upsert([]byte(key), time.Now().UnixNano())
		keyspace.SetObj(ent, keyspace.KindList, list.New(-2))
		keyspace.Obj[list.List](ent).PushBack([]byte("a"))
	})
}

// Every string command against a key of another type, compared with Redis (where the key is a
// list made by LPUSH). Argument errors come before or after the type check as in Redis.
func TestStringsWrongTypeMatchesRedis(t *testing.T) {
	rs := newRedisSession(t)
	e := newTestEngine()
	tc := newTestConn(t, e)
	cmds := [][]string{
		{"GET", "l"}, {"SET", "l", "v", "GET"}, {"SET", "l", "v", "NX", "GET"}, {"SET", "l", "v", "XX", "GET"},
		{"SET", "l", "v", "EX", "0", "GET"}, {"SET", "l", "v", "NX"}, {"SETNX", "l", "v"}, {"GETSET", "l", "v"},
		{"GETDEL", "l"}, {"GETEX", "l"}, {"GETEX", "l", "EX", "-1"}, {"GETEX", "l", "FOO"},
		{"GETEX", "l", "PERSIST"}, {"MGET", "a", "l", "b"}, {"MSETNX", "x", "1", "l", "2"}, {"GET", "x"},
		{"APPEND", "l", "x"}, {"STRLEN", "l"}, {"INCR", "l"}, {"DECR", "l"}, {"INCRBY", "l", "2"},
		{"INCRBY", "l", "abc"}, {"DECRBY", "l", "2"}, {"DECRBY", "l", "-9223372036854775808"},
		{"INCRBYFLOAT", "l", "1.5"}, {"INCRBYFLOAT", "l", "abc"}, {"GETRANGE", "l", "0", "1"},
		{"GETRANGE", "l", "x", "1"}, {"SUBSTR", "l", "0", "1"}, {"SETRANGE", "l", "0", "x"},
		{"SETRANGE", "l", "0", ""}, {"SETRANGE", "l", "-1", "x"}, {"LCS", "l", "a"}, {"LCS", "a", "l", "LEN"},
		{"LCS", "l", "a", "FOO"}, {"SET", "l2", "x"},
	}
	for _, list := range []string{"l", "l2"} {
		rs.do("LPUSH", list, "a")
		plantList(e, list)
	}
	for _, overwrite := range [][]string{nil, {"SET", "l", "v"}, {"MSET", "l2", "w"}} {
		for _, cmd := range append(cmds, overwrite, []string{"GET", "l"}, []string{"GET", "l2"}) {
			if cmd == nil {
				continue
			}
			if want, got := rs.do(cmd...), tc.do(cmd...); got != want {
				t.Errorf("%q: got %q, redis %q", cmd, got, want)
			}
		}
	}
}

// Keyspace hits and misses are counted by the commands that read, as INFO's keyspace_hits and
// keyspace_misses show them on Redis.
func TestStringsKeyspaceStatsMatchRedis(t *testing.T) {
	rs := newRedisSession(t)
	e := newTestEngine()
	tc := newTestConn(t, e)
	script := [][]string{
		{"GET", "a"}, {"SET", "a", "1"}, {"GET", "a"}, {"MGET", "a", "b", "a"}, {"SET", "a", "2", "GET"},
		{"SET", "b", "2", "GET"}, {"SETNX", "a", "3"}, {"GETSET", "a", "4"}, {"GETDEL", "a"}, {"GETDEL", "a"},
		{"GETEX", "b"}, {"GETEX", "z", "EX", "10"}, {"STRLEN", "b"}, {"STRLEN", "z"}, {"GETRANGE", "b", "0", "1"},
		{"GETRANGE", "z", "x", "1"}, {"SUBSTR", "z", "0", "1"}, {"LCS", "b", "z"}, {"APPEND", "b", "x"},
		{"INCR", "n"}, {"INCRBYFLOAT", "n", "1"}, {"SETRANGE", "n", "0", "1"}, {"MSETNX", "b", "1"},
		{"SET", "x", "1", "PX", "1"},
	}
	for _, cmd := range script {
		rs.do(cmd...)
		tc.do(cmd...)
	}
	time.Sleep(5 * time.Millisecond) // x expires: reading it is a miss
	rs.do("GET", "x")
	tc.do("GET", "x")
	info := rs.do("INFO", "stats")
	stat := func(name string) int64 {
		m := regexp.MustCompile(name + `:(\d+)`).FindStringSubmatch(info)
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	e.Group.LockAll()
	h, m := e.keyspaceHits()
	e.Group.UnlockAll()
	if h != stat("keyspace_hits") || m != stat("keyspace_misses") {
		t.Errorf("hits/misses %d/%d, redis %d/%d", h, m, stat("keyspace_hits"), stat("keyspace_misses"))
	}
}

// entry returns key's entry in database 0 (the test is the only client, so no token is needed).
func entry(e *Engine, key string) *keyspace.Entry {
	return e.keyspace(0, []byte(key)).Peek([]byte(key), time.Now().UnixNano())
}

func TestSetReusesValueBuffer(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	v1, v2 := strings.Repeat("a", 256), strings.Repeat("b", 250)
	tc.do("SET", "k", v1)
	before := &entry(e, "k").Bytes()[0]
	tc.do("SET", "k", v2)
	if got := entry(e, "k").Bytes(); &got[0] != before || string(got) != v2 {
		t.Errorf("a value of similar size was not written in place")
	}
	tc.do("SET", "k", "tiny")
	if got := entry(e, "k").Bytes(); cap(got) > 2*4+64 || string(got) != "tiny" {
		t.Errorf("a much smaller value kept a buffer of %d bytes", cap(got))
	}
	tc.do("SET", "k", "")
	tc.do("SET", "fresh", "")
	for _, key := range []string{"k", "fresh"} {
		if got := entry(e, key); got.Bytes() == nil {
			t.Errorf("%s: an empty string must not look like a missing value", key)
		}
		if got := tc.do("INCR", key); got != "-"+ErrNotInt+"\r\n" {
			t.Errorf("%s: INCR on an empty string: %q", key, got)
		}
	}
}

func TestStringsExpiryStorage(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	now := time.Now().UnixNano()
	f := func(key string, lo, hi int64) {
		t.Helper()
		ent := entry(e, key)
		if ent == nil || ent.ExpireAt() < lo || ent.ExpireAt() > hi {
			t.Errorf("%s: entry %v, want expiry in [%d, %d]", key, ent, lo, hi)
		}
	}
	// Redis's commands work in whole milliseconds: relative times count from now's.
	base := now / 1e6 * 1e6
	tc.do("SET", "ex", "v", "EX", "10")
	f("ex", base+10e9, base+11e9)
	tc.do("SET", "px", "v", "PX", "1500")
	f("px", base+1500e6, base+2500e6)
	tc.do("SET", "exat", "v", "EXAT", "4000000000")
	f("exat", 4000000000e9, 4000000000e9)
	tc.do("SET", "pxat", "v", "PXAT", "4000000000123")
	f("pxat", 4000000000123e6, 4000000000123e6)
	tc.do("SETEX", "setex", "5", "v")
	f("setex", base+5e9, base+6e9)
	tc.do("GETEX", "setex", "PX", "100")
	f("setex", base+100e6, base+1100e6)
	// Past year 2262 the entry holds the latest nanosecond and the keyspace the exact time.
	farMs := func(key string, lo, hi int64) {
		t.Helper()
		ent := entry(e, key)
		if ent == nil || ent.ExpireAt() != math.MaxInt64 {
			t.Fatalf("%s: entry %v, want a far expiry", key, ent)
		}
		if ms := e.keyspace(0, []byte(key)).ExpireMs(ent); ms < lo || ms > hi {
			t.Errorf("%s: expiry %d ms, want [%d, %d]", key, ms, lo, hi)
		}
	}
	tc.do("SET", "far", "v", "PXAT", "9223372036854775807")
	farMs("far", math.MaxInt64, math.MaxInt64)
	tc.do("GETEX", "far", "EXAT", "9223372036854775")
	farMs("far", 9223372036854775000, 9223372036854775000)
	tc.do("SET", "far", "v", "KEEPTTL")
	farMs("far", 9223372036854775000, 9223372036854775000)
	const px = math.MaxInt64 - 4e12 // leaves room for the current time in ms
	tc.do("SET", "far", "v", "PX", fmt.Sprint(int64(px)))
	farMs("far", px+now/1e6, px+time.Now().UnixMilli())
	tc.do("SET", "far", "v")
	f("far", 0, 0)
	tc.do("GETEX", "setex", "PERSIST")
	f("setex", 0, 0)
	if n := e.keyspace(0, []byte("ex")).Volatile(); n < 0 {
		t.Errorf("volatile count %d", n)
	}
}

func TestStringsRespectProtoMaxBulkLen(t *testing.T) {
	e := newTestEngine()
	s := *e.Settings()
	s.ProtoMaxBulkLen = 1 << 20
	e.SetSettings(s)
	tc := newTestConn(t, e)
	tooBig := "-" + ErrStringMax + "\r\n"
	tc.do("SETRANGE", "k", strconv.Itoa(1<<20-1), "x")
	for _, cmd := range [][]string{{"APPEND", "k", "y"}, {"SETRANGE", "k", strconv.Itoa(1 << 20), "x"}, {"SETRANGE", "k2", strconv.Itoa(1<<20 - 1), "xy"}} {
		if got := tc.do(cmd...); got != tooBig {
			t.Errorf("%q: %q", cmd, got)
		}
	}
	if got := tc.do("STRLEN", "k"); got != fmt.Sprintf(":%d\r\n", 1<<20) {
		t.Errorf("STRLEN after refused writes: %q", got)
	}
	// LCS refuses tables of (len+1)^2 uint32 cells over the limit, as Redis does.
	tc.do("SETRANGE", "a", "599", "x")
	tc.do("SETRANGE", "b", "599", "x")
	if got := tc.do("LCS", "a", "b", "LEN"); got != "-"+ErrLCSMemory+"\r\n" {
		t.Errorf("LCS over the limit: %q", got)
	}
	tc.do("SET", "a", strings.Repeat("z", 400))
	tc.do("SET", "b", strings.Repeat("z", 300))
	if got := tc.do("LCS", "a", "b", "LEN"); got != ":300\r\n" {
		t.Errorf("LCS within the limit: %q", got)
	}
}

// Concurrent clients: increments are not lost, and MSET is atomic for MGET even when its keys
// live on different shards.
func TestStringsConcurrentClients(t *testing.T) {
	e := newTestEngine()
	keys := []string{"a", "b", "c", "d"} // over 8 shards, some pairs differ
	const clients, rounds = 4, 300
	var wg sync.WaitGroup
	errs := make(chan string, clients*rounds)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tc := newTestConn(t, e)
			for r := range rounds {
				tc.do("INCR", "counter")
				v := strconv.Itoa(i*rounds + r)
				tc.do("MSET", keys[0], v, keys[1], v, keys[2], v, keys[3], v)
				got := splitReplies(t, []byte(tc.do("MGET", keys[0], keys[1], keys[2], keys[3]))[4:])
				for _, g := range got[1:] {
					if g != got[0] {
						errs <- fmt.Sprintf("MGET saw a partial MSET: %q", got)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Fatal(msg)
	}
	tc := newTestConn(t, e)
	if got := tc.do("GET", "counter"); got != fmt.Sprintf("$4\r\n%d\r\n", clients*rounds) {
		t.Errorf("counter = %q after %d increments", got, clients*rounds)
	}
}

// strEntry is an entry outside any keyspace holding the string v with the encoding hint enc.
func strEntry(v string, enc uint8) *keyspace.Entry {
	e := &keyspace.Entry{Kind: keyspace.KindString, Enc: enc}
	e.SetBytes([]byte(v))
	return e
}

func TestStringEncodingNameDerivesUnrecorded(t *testing.T) {
	f := func(v, want string) {
		t.Helper()
		if got := StringEncodingName(strEntry(v, 0)); got != want {
			t.Errorf("%q: %s, want %s", v, got, want)
		}
	}
	f("123", "int")
	f("-9223372036854775808", "int")
	f("9223372036854775808", "embstr")
	f("01", "embstr")
	f("", "embstr")
	f(strings.Repeat("x", 44), "embstr")
	f(strings.Repeat("x", 45), "raw")
	if got := StringEncodingName(strEntry("1", EncRaw)); got != "raw" {
		t.Errorf("a recorded encoding wins: %s", got)
	}
}
