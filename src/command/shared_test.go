package command

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// infoLine returns the line of INFO section sec that starts with field.
func infoLine(tc *testConn, sec, field string) string {
	for _, l := range strings.Split(tc.do("INFO", sec), "\r\n") {
		if strings.HasPrefix(l, field) {
			return l
		}
	}
	return ""
}

func totalCommands(tc *testConn) int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(infoLine(tc, "stats", "total_commands_processed:"), "total_commands_processed:"), 10, 64)
	return n
}

// A GET that meets an expired key in shared work runs again holding the token, which deletes
// the key: the reply, DBSIZE and the counters are Redis's (checked against redis-server 7.0.15:
// SET k v PX 1, a pause, GET k gives nil, DBSIZE 0, expired_keys:1, keyspace_misses:1 and
// cmdstat_get calls=1).
func TestSharedGetExpired(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("SET", "k", "v", "PX", "1")
	time.Sleep(5 * time.Millisecond)
	if got := tc.do("GET", "k"); got != "$-1\r\n" {
		t.Fatalf("GET of an expired key: %q", got)
	}
	if got := tc.do("DBSIZE"); got != ":0\r\n" {
		t.Errorf("DBSIZE after GET deleted the expired key: %q", got)
	}
	for sec, want := range map[string]string{"stats": "expired_keys:1", "Stats": "keyspace_misses:1",
		"commandstats": "cmdstat_get:calls=1,"} {
		field, _, _ := strings.Cut(want, ":")
		if got := infoLine(tc, sec, field); !strings.HasPrefix(got, want) {
			t.Errorf("INFO %s: %q, want %s", sec, got, want)
		}
	}
	if calls, _, _ := e.readerCalls(lookup([]byte("get"))); calls != 0 {
		t.Errorf("the undone shared GET was counted (%d calls)", calls)
	}
}

// GETs run as shared work from two connections at once count every call, hit and miss once in
// INFO, and CONFIG RESETSTAT clears what they counted.
func TestSharedGetCounted(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	before := totalCommands(tc) // Specs count in common for every engine of the test binary
	const keys, rounds, conns = 64, 50, 2
	for k := range keys / 2 {
		tc.do("SET", fmt.Sprint("k", k), "v")
	}
	var req []byte
	for k := range keys {
		req = append(req, encodeCommand([]string{"GET", fmt.Sprint("k", k)})...)
	}
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newTestConn(t, e)
			for range rounds {
				out, err := c.send(req)
				if err != nil {
					t.Error(err)
					return
				}
				if n := strings.Count(string(out), "$1\r\nv\r\n"); n != keys/2 {
					t.Errorf("%d hits in a batch, want %d", n, keys/2)
					return
				}
			}
		}()
	}
	wg.Wait()
	gets := conns * rounds * keys
	if calls, _, _ := e.readerCalls(lookup([]byte("get"))); calls == 0 {
		t.Fatal("no GET ran as shared work")
	}
	if got, want := totalCommands(tc)-before, int64(gets+keys/2+1); got != want { // +1: the INFO
		t.Errorf("total_commands_processed went up by %d, want %d", got, want)
	}
	for field, want := range map[string]string{
		"keyspace_hits":   fmt.Sprint("keyspace_hits:", gets/2),
		"keyspace_misses": fmt.Sprint("keyspace_misses:", gets/2),
		"cmdstat_get":     fmt.Sprintf("cmdstat_get:calls=%d,", gets),
		"cmdstat_set":     fmt.Sprintf("cmdstat_set:calls=%d,", keys/2),
	} {
		sec := "stats"
		if strings.HasPrefix(field, "cmdstat") {
			sec = "commandstats"
		}
		if got := infoLine(tc, sec, field); !strings.HasPrefix(got, want) {
			t.Errorf("INFO %s: %q, want %s", sec, got, want)
		}
	}
	tc.do("CONFIG", "RESETSTAT")
	if got := infoLine(tc, "stats", "keyspace_hits"); got != "keyspace_hits:0" {
		t.Errorf("after CONFIG RESETSTAT: %q", got)
	}
	if got := infoLine(tc, "commandstats", "cmdstat_get"); got != "" {
		t.Errorf("after CONFIG RESETSTAT: %q", got)
	}
}

// MGET over several shards reads them shared; one expired key makes it run again holding the
// tokens, which deletes the key (redis-server 7.0.15: MGET of an expired and a live key gives
// nil and the value, DBSIZE 1, expired_keys:1).
func TestSharedMGetExpired(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	a, b := "a", "b"
	for i := 0; e.shardOf([]byte(a)) == e.shardOf([]byte(b)); i++ {
		b = fmt.Sprint("b", i)
	}
	tc.do("SET", a, "x", "PX", "200")
	tc.do("SET", b, "y")
	if got := tc.do("MGET", a, b); got != "*2\r\n$1\r\nx\r\n$1\r\ny\r\n" {
		t.Fatalf("MGET of two live keys: %q", got)
	}
	time.Sleep(250 * time.Millisecond)
	if got := tc.do("MGET", a, b); got != "*2\r\n$-1\r\n$1\r\ny\r\n" {
		t.Fatalf("MGET of an expired and a live key: %q", got)
	}
	if got := tc.do("DBSIZE"); got != ":1\r\n" {
		t.Errorf("DBSIZE after MGET deleted the expired key: %q", got)
	}
	if got := infoLine(tc, "stats", "expired_keys"); got != "expired_keys:1" {
		t.Errorf("INFO stats: %q", got)
	}
	if calls, _, _ := e.readerCalls(lookup([]byte("mget"))); calls != 1 {
		t.Errorf("MGETs counted as shared reads: %d, want the first one only", calls)
	}
}

// The collection and string reads marked shared run beside each other on two connections while
// a third writes the same keys: each reply is one the writes could have produced at some moment
// (counts never go back, preloaded members stay), and under -race no read writes shared state.
func TestSharedReadsBesideWrites(t *testing.T) {
	e := newTestEngine()
	w := newTestConn(t, e)
	for i := range 200 { // past the small encodings' limits
		w.do("SADD", "s", fmt.Sprint("m", i))
		w.do("ZADD", "z", fmt.Sprint(i), fmt.Sprint("m", i))
	}
	w.do("SET", "k", "v")
	var reads []byte
	for _, args := range [][]string{{"SISMEMBER", "s", "m7"}, {"SMISMEMBER", "s", "m7", "x"},
		{"SCARD", "s"}, {"ZSCORE", "z", "m7"}, {"ZCARD", "z"}, {"STRLEN", "k"}, {"GETRANGE", "k", "0", "0"}} {
		reads = append(reads, encodeCommand(args)...)
	}
	const rounds = 300
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newTestConn(t, e)
			lastS, lastZ, lastK := 0, 0, 0
			for range rounds {
				out, err := r.send(reads)
				if err != nil {
					t.Error(err)
					return
				}
				var s, z, k int
				_, err = fmt.Sscanf(string(out), ":1\r\n*2\r\n:1\r\n:0\r\n:%d\r\n$1\r\n7\r\n:%d\r\n:%d\r\n$1\r\nv\r\n", &s, &z, &k)
				if err != nil || s < lastS || z < lastZ || k < lastK {
					t.Errorf("replies %q after SCARD %d, ZCARD %d, STRLEN %d", out, lastS, lastZ, lastK)
					return
				}
				lastS, lastZ, lastK = s, z, k
			}
		}()
	}
	for i := range rounds {
		w.do("SADD", "s", fmt.Sprint("n", i))
		w.do("ZADD", "z", "1", fmt.Sprint("n", i))
		w.do("APPEND", "k", "v")
	}
	wg.Wait()
	for _, name := range []string{"sismember", "smismember", "scard", "zscore", "zcard", "strlen", "getrange"} {
		if calls, _, _ := e.readerCalls(lookup([]byte(name))); calls == 0 {
			t.Errorf("%s never ran as shared work", name)
		}
	}
}
