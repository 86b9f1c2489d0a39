package command

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// maxmemory is not enforced while a pause holds the dataset still (an eviction is a write that
// would move the replication offset) nor on a replica with replica-ignore-maxmemory yes, as
// Redis 7.0's isSafeToPerformEvictions: the cron evicts nothing then, and evicts down to the
// budget once the pause ends or the setting is no.
func TestEvictionHeldWhilePausedAndOnReplicas(t *testing.T) {
	e, tc := evictQualityEngine(t, 4, "allkeys-lru", 0)
	v := strings.Repeat("v", 1000)
	const n = 3000
	for i := range n {
		tc.do("SET", "k:"+strconv.Itoa(i), v)
	}
	dbsize := func() int {
		k, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(tc.do("DBSIZE"), ":")))
		return k
	}
	half := func() string { // half of used_memory now
		info := tc.do("INFO", "memory")
		i := strings.Index(info, "used_memory:")
		u, _ := strconv.Atoi(strings.TrimSpace(info[i+len("used_memory:") : i+strings.Index(info[i:], "\r\n")]))
		return strconv.Itoa(u / 2)
	}
	evict := func() {
		for range 50 {
			e.Evict(100 * time.Millisecond)
		}
	}
	if got := tc.do("CLIENT", "PAUSE", "60000", "WRITE"); got != "+OK\r\n" {
		t.Fatalf("CLIENT PAUSE: %q", got)
	}
	tc.do("CONFIG", "SET", "maxmemory", half())
	evict()
	if k := dbsize(); k != n {
		t.Errorf("paused: %d keys of %d left, want none evicted", k, n)
	}
	tc.do("CLIENT", "UNPAUSE")
	evict()
	after := dbsize()
	if after >= n || after == 0 {
		t.Fatalf("after the pause: %d keys of %d, want some evicted", after, n)
	}

	tc.do("CONFIG", "SET", "maxmemory", "0")
	for i := range n {
		tc.do("SET", "r:"+strconv.Itoa(i), v)
	}
	before := dbsize()
	budget := half()
	e.SetReplicaRole(true)
	defer e.SetReplicaRole(false)
	tc.do("CONFIG", "SET", "maxmemory", budget)
	evict()
	if k := dbsize(); k != before {
		t.Errorf("replica with replica-ignore-maxmemory yes: %d keys of %d, want none evicted", k, before)
	}
	s := *e.Settings()
	s.ReplicaIgnoreMaxmemory = false
	e.SetSettings(s)
	evict()
	if k := dbsize(); k >= before {
		t.Errorf("replica with replica-ignore-maxmemory no: %d keys of %d, want some evicted", k, before)
	}
}
