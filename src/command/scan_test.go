package command

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
)

func TestParseScanCursor(t *testing.T) {
	f := func(in string, want uint64, ok bool) {
		t.Helper()
		got, gotOK := parseScanCursor([]byte(in))
		if got != want || gotOK != ok {
			t.Errorf("parseScanCursor(%q) = %d, %v; want %d, %v", in, got, gotOK, want, ok)
		}
	}
	f("0", 0, true)
	f("", 0, true)
	f("123", 123, true)
	f("+7", 7, true)
	f("007", 7, true)
	f("-1", math.MaxUint64, true)
	f("-18446744073709551615", 1, true)
	f("18446744073709551615", math.MaxUint64, true)
	f("18446744073709551616", 0, false)
	f("99999999999999999999", 0, false)
	f("5\x00junk", 5, true) // Redis reads a C string: it ends at the NUL
	f("\x00", 0, true)
	f(" 1", 0, false)
	f("\t1", 0, false)
	f("1 ", 0, false)
	f("-", 0, false)
	f("+", 0, false)
	f("0x10", 0, false)
	f("abc", 0, false)
}

// ktScanAll runs SCAN to completion and returns how often each key came back and the number of
// calls.
func ktScanAll(t *testing.T, tc *testConn, between func(), opts ...string) (map[string]int, int) {
	t.Helper()
	seen := map[string]int{}
	cursor, calls := "0", 0
	for {
		reply := replyAny(t, tc.do(append([]string{"SCAN", cursor}, opts...)...)).([]any)
		cursor = reply[0].(string)
		for _, k := range reply[1].([]any) {
			seen[k.(string)]++
		}
		calls++
		if cursor == "0" {
			return seen, calls
		}
		if calls > 100000 {
			t.Fatal("SCAN does not end")
		}
		if between != nil {
			between()
		}
	}
}

func TestScanWalksEveryShard(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	for i := range 1000 {
		tc.do("SET", fmt.Sprint("key:", i), "v")
	}
	tc.do("SELECT", "1")
	tc.do("SET", "elsewhere", "v")
	tc.do("SELECT", "0")
	for _, count := range []string{"1", "10", "100", "100000"} {
		seen, calls := ktScanAll(t, tc, nil, "COUNT", count)
		if len(seen) != 1000 || seen["elsewhere"] != 0 {
			t.Fatalf("COUNT %s: %d keys", count, len(seen))
		}
		for k, n := range seen {
			if n != 1 { // no resize happened, so nothing repeats
				t.Fatalf("COUNT %s: %q returned %d times", count, k, n)
			}
		}
		t.Logf("COUNT %s: %d calls", count, calls)
		if count == "100000" && calls != 1 {
			t.Fatalf("a large COUNT needed %d calls", calls)
		}
	}
	// COUNT is a hint that bounds the work: one call sees about COUNT keys, not all of them.
	reply := replyAny(t, tc.do("SCAN", "0", "COUNT", "5")).([]any)
	if n := len(reply[1].([]any)); n < 5 || n > 50 || reply[0] == "0" {
		t.Fatalf("SCAN 0 COUNT 5 returned %d keys, cursor %v", n, reply[0])
	}
}

// The returned cursor packs the shard in its low bits and the in-shard cursor above.
func TestScanCursorEncoding(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	shards := uint64(len(e.Group.Shards))
	for i := range 200 {
		tc.do("SET", fmt.Sprint(i), "v")
	}
	cursor, lastShard := "0", uint64(0)
	for {
		reply := replyAny(t, tc.do("SCAN", cursor, "COUNT", "3")).([]any)
		cursor = reply[0].(string)
		if cursor == "0" {
			break
		}
		c, _ := strconv.ParseUint(cursor, 10, 64)
		shard := c & (shards - 1)
		if shard < lastShard {
			t.Fatalf("cursor %d went back from shard %d to %d", c, lastShard, shard)
		}
		lastShard = shard
		for _, k := range reply[1].([]any) { // keys come from the shard walked so far
			if s := uint64(e.shardOf([]byte(k.(string)))); s > shard {
				t.Fatalf("key of shard %d returned before cursor reached it (%d)", s, shard)
			}
		}
	}
	if lastShard != shards-1 {
		t.Fatalf("the walk ended at shard %d", lastShard)
	}
}

// SCAN's contract: a key present for the whole scan is returned at least once, even while the
// tables grow and shrink between calls.
func TestScanContractUnderResize(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	other := newTestConn(t, e)
	for i := range 300 {
		tc.do("SET", fmt.Sprint("stable:", i), "v")
	}
	round := 0
	churn := func() {
		round++
		switch round % 6 {
		case 1: // grow every shard's table
			for i := range 3000 {
				other.do("SET", fmt.Sprint("churn:", i), "v")
			}
		case 4: // and shrink it again
			for i := range 3000 {
				other.do("DEL", fmt.Sprint("churn:", i))
			}
		}
	}
	seen, _ := ktScanAll(t, tc, churn, "COUNT", "20")
	for i := range 300 {
		if k := fmt.Sprint("stable:", i); seen[k] == 0 {
			t.Fatalf("%s never returned", k)
		}
	}
}

func TestScanFilters(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	now := time.Now().UnixNano()
	for i := range 100 {
		tc.do("SET", fmt.Sprint("s:", i), "v")
		ktPlant(e, 0, fmt.Sprint("l:", i), keyspace.KindList, listOf(), 0)
		ktPlant(e, 0, fmt.Sprint("x:", i), keyspace.KindString, "v", now-1) // expired
	}
	count := func(opts ...string) int {
		seen, _ := ktScanAll(t, tc, nil, opts...)
		return len(seen)
	}
	if n := count("MATCH", "s:*"); n != 100 {
		t.Errorf("MATCH s:* found %d", n)
	}
	if n := count("TYPE", "list"); n != 100 {
		t.Errorf("TYPE list found %d", n)
	}
	if n := count("TYPE", "string", "MATCH", "l:*"); n != 0 {
		t.Errorf("TYPE string MATCH l:* found %d", n)
	}
	if n := count("MATCH", "*1*", "COUNT", "7"); n != 38 { // 1, 10-19, 21…91, 100 is absent: 19 per prefix
		t.Errorf("MATCH *1* found %d", n)
	}
	if n := count(); n != 200 {
		t.Errorf("SCAN found %d live keys", n)
	}
	// The expired keys SCAN met were reclaimed.
	total := 0
	for _, sh := range e.Group.Shards {
		total += sh.Data.(*shardData).dbs[0].Len()
	}
	if total != 200 {
		t.Errorf("%d entries left after SCAN, want the 200 live ones", total)
	}
}

// SCAN holds one shard at a time while other connections write: run under -race.
func TestScanConcurrentWriters(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	for i := range 500 {
		tc.do("SET", fmt.Sprint("stable:", i), "v")
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wc := newTestConn(t, e)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprint("w", w, ":", i%2000)
				if i%3 == 2 {
					wc.do("DEL", k)
				} else {
					wc.do("SET", k, "v")
				}
			}
		}()
	}
	for range 5 {
		seen, _ := ktScanAll(t, tc, nil, "COUNT", "50")
		for i := range 500 {
			if seen[fmt.Sprint("stable:", i)] == 0 {
				close(stop)
				t.Fatalf("stable:%d missed", i)
			}
		}
	}
	close(stop)
	wg.Wait()
}
