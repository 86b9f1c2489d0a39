package command

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// tinyEngine is a test connection to an engine with maxmemory limit and policy, and the
// engine's used memory before any key: the overhead the budget must leave room for.
func tinyEngine(t testing.TB, policy string, keysRoom int, valueLen int) *testConn {
	t.Helper()
	tc := newTestConn(t, newTestEngine())
	// The overhead with the policy's sketch on: set the policy first, then the budget.
	tc.do("CONFIG", "SET", "maxmemory-policy", policy)
	tc.do("CONFIG", "SET", "maxmemory", strconv.FormatInt(1<<40, 10))
	base := tc.client.e.usedMemory()
	perKey := int64(valueLen + 64 + 64)
	limit := base + int64(keysRoom)*perKey
	if r := tc.do("CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10)); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET maxmemory: %q", r)
	}
	return tc
}

// cacheGet is a cache-aside access: GET, and on a miss SET. It reports a hit.
func cacheGet(t testing.TB, tc *testConn, key, val string) bool {
	t.Helper()
	if r := tc.do("GET", key); r != "$-1\r\n" {
		return true
	}
	if r := tc.do("SET", key, val); r != "+OK\r\n" {
		t.Fatalf("SET %s: %q", key, r)
	}
	return false
}

// hotThenScan reads 100 hot keys 6 times each through a cache of room for about 300, then
// scans 3,000 fresh keys through it (each read once and stored), then reads the hot keys once
// more: it returns how many of them were still there.
func hotThenScan(t *testing.T, policy string) (survived int, tc *testConn) {
	tc = tinyEngine(t, policy, 300, 1000)
	val := strings.Repeat("v", 1000)
	for range 6 {
		for i := range 100 {
			cacheGet(t, tc, "hot:"+strconv.Itoa(i), val)
		}
	}
	for i := range 3000 {
		cacheGet(t, tc, "scan:"+strconv.Itoa(i), val)
	}
	for i := range 100 {
		if tc.do("EXISTS", "hot:"+strconv.Itoa(i)) == ":1\r\n" {
			survived++
		}
	}
	return survived, tc
}

// TestTinyLFUKeepsHotKeysThroughScan: under allkeys-tinylfu a scan of one-shot keys ten times
// the cache's size leaves the frequently read keys in place (each scan key estimates at most
// 1, below every hot key's, so admission refuses it), where allkeys-lru loses most of them
// (within one second of Redis's LRU clock every idle time ties, so LRU evicts at random here).
func TestTinyLFUKeepsHotKeysThroughScan(t *testing.T) {
	lru, _ := hotThenScan(t, "allkeys-lru")
	tiny, tc := hotThenScan(t, "allkeys-tinylfu")
	t.Logf("hot keys left after the scan: allkeys-lru %d of 100, allkeys-tinylfu %d", lru, tiny)
	if tiny < 95 || lru > 50 {
		t.Fatalf("hot keys left: allkeys-tinylfu %d (want >= 95), allkeys-lru %d (want <= 50)", tiny, lru)
	}
	e := tc.client.e
	if used, limit := e.usedMemory(), e.mem.limit.Load(); float64(used) > float64(limit)*1.05 {
		t.Fatalf("used %d over the budget %d by more than 5%%", used, limit)
	}
	if n := e.mem.evicted.Load(); n < 2700 {
		t.Fatalf("evicted_keys %d after 3,000 scan keys through a full cache", n)
	}
}

// TestTinyLFURefusedKeyEvictedNext: a new key written under pressure with a lower estimate
// than its victim is stored (the write succeeds) and evicted by the next eviction on its shard,
// counted in evicted_keys; the victims, read often, stay.
func TestTinyLFURefusedKeyEvictedNext(t *testing.T) {
	tc := tinyEngine(t, "allkeys-tinylfu", 80, 1000)
	val := strings.Repeat("v", 1000)
	for range 4 {
		for i := range 60 {
			cacheGet(t, tc, "hot:"+strconv.Itoa(i), val)
		}
	}
	e := tc.client.e
	before := e.mem.evicted.Load()
	// The 60 hot keys leave room for about 20 more. Past that, a new key is refused (estimate 0
	// against a hot victim) and evicted by the next gate on its own shard, or admitted when its
	// victim is an earlier new key (a tie): at the end about 20 new keys fit, and at most one
	// refused key per shard (8) waits.
	for i := range 40 {
		if r := tc.do("SET", "new:"+strconv.Itoa(i), val); r != "+OK\r\n" {
			t.Fatalf("SET new:%d: %q", i, r)
		}
	}
	left := 0
	for i := range 40 {
		if tc.do("EXISTS", "new:"+strconv.Itoa(i)) == ":1\r\n" {
			left++
		}
	}
	if left > 32 {
		t.Fatalf("%d of 40 refused new keys still there", left)
	}
	if got := e.mem.evicted.Load() - before; got < 8 {
		t.Fatalf("evicted_keys grew by %d over 40 writes to a full cache", got)
	}
	hot := 0
	for i := range 60 {
		if tc.do("EXISTS", "hot:"+strconv.Itoa(i)) == ":1\r\n" {
			hot++
		}
	}
	// allkeys-lru here keeps about 40: the 20 new keys past the room evict hot ones. TinyLFU's
	// count varies with the sampled victims and the shards the keys hash to: 53-60 over 120 runs
	// (56 was the bound until the final CI run of session 12 kept 55; in one process repeated, 55
	// of 60 runs kept 53-55). 50 still sits far above LRU's 40.
	if hot < 50 {
		t.Fatalf("only %d of 60 hot keys kept while new keys were refused", hot)
	}
}

// TestTinyLFUWriteOnlyAdmitted: keys only ever written estimate 0 and tie their victims, so a
// write-only load is admitted: the key written before is still there after the next write
// (were ties refused, each would be evicted by the next write's gate).
func TestTinyLFUWriteOnlyAdmitted(t *testing.T) {
	tc := tinyEngine(t, "allkeys-tinylfu", 100, 1000)
	val := strings.Repeat("v", 1000)
	gone := 0
	for i := range 1000 {
		if r := tc.do("SET", "w:"+strconv.Itoa(i), val); r != "+OK\r\n" {
			t.Fatalf("SET: %q", r)
		}
		if i > 200 && tc.do("EXISTS", "w:"+strconv.Itoa(i-1)) != ":1\r\n" {
			gone++
		}
	}
	if e := tc.client.e; e.mem.evicted.Load() < 800 {
		t.Fatalf("evicted_keys %d: the budget was not reached", e.mem.evicted.Load())
	}
	if gone > 80 {
		t.Fatalf("%d of 799 keys gone right after the next write", gone)
	}
}

// TestTinyLFUConfig: the policy is a maxmemory-policy value, and leaving it stops the touches.
func TestTinyLFUConfig(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	if r := tc.do("CONFIG", "SET", "maxmemory-policy", "allkeys-tinylfu"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", r)
	}
	if r := tc.do("CONFIG", "GET", "maxmemory-policy"); !strings.Contains(r, "allkeys-tinylfu") {
		t.Fatalf("CONFIG GET: %q", r)
	}
	e := tc.client.e
	if !e.mem.tiny.on.Load() || e.tinyBytes() == 0 {
		t.Fatal("sketch off under allkeys-tinylfu")
	}
	tc.do("GET", "k")
	tc.do("GET", "k")
	if est := e.mem.tiny.sketch.Load().Estimate(keyspace.HashString("k")); est != 2 {
		t.Fatalf("two GETs of a missing key estimate %d", est)
	}
	tc.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	if e.mem.tiny.on.Load() || e.tinyBytes() != 0 {
		t.Fatal("sketch still on under allkeys-lru")
	}
	tc.do("GET", "k")
	if est := e.mem.tiny.sketch.Load().Estimate(keyspace.HashString("k")); est != 2 {
		t.Fatalf("a GET under allkeys-lru touched the sketch: %d", est)
	}
}

// TestTinyLFUHotPathAllocatesNothing: GET under allkeys-tinylfu touches the sketch without
// allocating (hit and miss).
func TestTinyLFUHotPathAllocatesNothing(t *testing.T) {
	for _, cmd := range [][]string{{"GET", "key:1"}, {"GET", "missing"}} {
		h := newTinyHotConn(t, "allkeys-tinylfu", cmd)
		checkNoAllocs(t, "tinylfu "+cmd[1], h)
	}
}

func newTinyHotConn(tb testing.TB, policy string, cmd []string) *hotConn {
	return newBatchConn(tb, [][]string{{"CONFIG", "SET", "maxmemory-policy", policy}, {"SET", "key:1", value}}, cmd)
}

// BenchmarkTinyLFUGet: a batch of 30 GETs of one key under allkeys-lru (no sketch) and
// allkeys-tinylfu (a sketch touch per GET), with no budget set: the access path's cost alone.
func BenchmarkTinyLFUGet(b *testing.B) {
	for _, policy := range []string{"allkeys-lru", "allkeys-tinylfu"} {
		b.Run(policy, func(b *testing.B) { benchHot(b, newTinyHotConn(b, policy, []string{"GET", "key:1"})) })
	}
}
