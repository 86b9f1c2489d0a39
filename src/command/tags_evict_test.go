package command

import (
	"strconv"
	"testing"
	"time"
)

// Evicted keys take their tags: after the cron evicts down to a small maxmemory, TAG.COUNT and
// TAG.MEMBERS name exactly the tagged keys still there (eviction removes through the keyspace,
// whose OnRemove hook drops the tags).
func TestTagsEvicted(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	const n = 5000
	for i := range n {
		k := "key:" + strconv.Itoa(i)
		tc.do("SET", k, "some value of a few dozen bytes, to weigh something")
		tc.do("TAG.SET", k, "all", "t"+strconv.Itoa(i%3))
	}
	e.SetMemorySettings(MemorySettings{MaxMemory: e.memOverhead() + e.dataUsed()/3, Policy: "allkeys-random",
		Samples: 5, Tenacity: 10})
	for range 50 {
		e.Evict(time.Second)
	}
	live := 0
	for i := range n {
		if tc.do("EXISTS", "key:"+strconv.Itoa(i)) == ":1\r\n" {
			live++
		}
	}
	if live == 0 || live > n/2 {
		t.Fatalf("%d of %d keys left: eviction did not run as the test needs", live, n)
	}
	if got := tc.do("TAG.COUNT", "all"); got != ":"+strconv.Itoa(live)+"\r\n" {
		t.Fatalf("TAG.COUNT all = %q, %d keys live", got, live)
	}
	for _, k := range replyStrings(t, tc.do("TAG.MEMBERS", "all")) {
		if tc.do("EXISTS", k) != ":1\r\n" {
			t.Fatalf("TAG.MEMBERS names evicted key %s", k)
		}
	}
}
