package command

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// latencyEventNames returns the events LATENCY LATEST lists.
func latencyEventNames(t *testing.T, tc *testConn) []string {
	t.Helper()
	var out []string
	for _, ev := range replyElems(t, tc.do("LATENCY", "LATEST")) {
		out = append(out, replyText(t, replyElems(t, ev)[0]))
	}
	return out
}

func hasEvent(t *testing.T, tc *testConn, name string) bool {
	t.Helper()
	for _, ev := range latencyEventNames(t, tc) {
		if ev == name {
			return true
		}
	}
	return false
}

// latencyThreshold sets latency-monitor-threshold to ms on e.
func latencyThreshold(e *Engine, ms int64) {
	s := *e.Settings()
	s.LatencyMonitorThreshold = ms
	e.SetSettings(s)
}

// fillStrings writes n keys of 100 bytes, 500 a batch.
func fillStrings(t *testing.T, tc *testConn, prefix string, n int) {
	v := strings.Repeat("v", 100)
	for i := 0; i < n; i += 500 {
		args := []string{"MSET"}
		for j := i; j < min(i+500, n); j++ {
			args = append(args, prefix+strconv.Itoa(j), v)
		}
		if r := tc.do(args...); r != "+OK\r\n" {
			t.Fatalf("MSET: %q", r)
		}
	}
}

// eviction-cycle is recorded, as Redis's performEvictions records it, by the cron's eviction
// after maxmemory is lowered far below the data and by a write's gate with an unlimited
// tenacity: each evicts up to 100,000 keys in one cycle, well over the 1 ms threshold.
func TestLatencyEvictionCycle(t *testing.T) {
	for _, by := range []string{"cron", "gate"} {
		t.Run(by, func(t *testing.T) {
			e, tc := evictSetup(t, "allkeys-random", 1<<30)
			fillStrings(t, tc, "k", 100_000)
			latencyThreshold(e, 1)
			if hasEvent(t, tc, "eviction-cycle") {
				t.Fatal("eviction-cycle before any eviction")
			}
			tc.do("CONFIG", "SET", "maxmemory-eviction-tenacity", "100")
			tc.do("CONFIG", "SET", "maxmemory", strconv.FormatInt(e.memOverhead()+10_000, 10))
			if by == "cron" {
				e.Evict(4 * time.Second) // a quarter of it: time enough for all of them
			} else if r := tc.do("SET", "x", "1"); r != "+OK\r\n" {
				t.Fatalf("SET over maxmemory: %q", r)
			}
			if n := e.mem.evicted.Load(); n < 10_000 { // all 100,000 unless -race slows the cron's second
				t.Fatalf("%d keys evicted", n)
			}
			if !hasEvent(t, tc, "eviction-cycle") {
				t.Fatalf("no eviction-cycle after evicting %d keys: %v", e.mem.evicted.Load(), latencyEventNames(t, tc))
			}
		})
	}
}

// eviction-del times the delete of one evicted key: the slow one here is a 300,000-member zset
// evicted while a snapshot that has not reached its shard runs, so the delete serializes it
// first (the copy-on-write hook; lazyfree-lazy-eviction hands it to the snapshot instead).
func TestLatencyEvictionDel(t *testing.T) {
	e, tc := evictSetup(t, "allkeys-random", 1<<30)
	var big string
	for i := 0; ; i++ {
		if big = "big" + strconv.Itoa(i); e.shardOf([]byte(big)) == int32(len(e.Group.Shards)-1) {
			break
		}
	}
	fillBig(t, tc, "zset", big, 300_000)
	latencyThreshold(e, 1)
	release := make(chan struct{})
	var once sync.Once
	snapshotStepped = func() { once.Do(func() { <-release }) }
	defer func() { snapshotStepped = nil }()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var rdb bytes.Buffer
		if _, err := e.WriteRDB(context.Background(), &rdb, RDBOptions{}); err != nil {
			t.Error(err)
		}
	}()
	for e.snapshot.Load() == nil {
		time.Sleep(time.Millisecond)
	}
	tc.do("CONFIG", "SET", "maxmemory", strconv.FormatInt(e.memOverhead()+10_000, 10))
	t0 := time.Now()
	e.Evict(4 * time.Second)
	took := time.Since(t0)
	close(release)
	wg.Wait()
	t.Logf("evicting the zset during the snapshot took %v", took)
	if tc.do("EXISTS", big) != ":0\r\n" {
		t.Fatal("the big zset was not evicted")
	}
	if !hasEvent(t, tc, "eviction-del") {
		t.Fatalf("no eviction-del for a zset serialized as it was evicted (the eviction took %v): %v", took, latencyEventNames(t, tc))
	}
}
