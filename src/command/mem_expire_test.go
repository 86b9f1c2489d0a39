package command

import (
	"testing"
	"time"
)

// TestMemActiveExpiry: the active cycle removes the expired memories of a store nobody writes,
// replicated as MEM.DEL and raising mem.expired; memories expiring later stay queued, and an
// UPDATE's new TTL is queued too. Without the cycle the first sweep (after 60 ms) fails.
func TestMemActiveExpiry(t *testing.T) {
	x := newHashFx(t)
	st := *x.e.Settings()
	st.NotifyKeyspaceEvents |= int64(NotifyModule)
	x.e.SetSettings(st)
	tc := newTestConn(t, x.e)
	tc.do("MEM.CREATE", "m", "DIM", "2")
	tc.do("MEM.ADD", "m", "ID", "a", "TEXT", "a", "VECTOR", "VALUES", "2", "1", "0", "TTL", "20")
	tc.do("MEM.ADD", "m", "ID", "b", "TEXT", "b", "VECTOR", "VALUES", "2", "0", "1", "TTL", "30")
	tc.do("MEM.ADD", "m", "ID", "c", "TEXT", "c", "VECTOR", "VALUES", "2", "1", "1", "TTL", "400")
	tc.do("MEM.ADD", "m", "ID", "d", "TEXT", "d", "VECTOR", "VALUES", "2", "1", "2")
	tc.do("MEM.UPDATE", "m", "d", "TTL", "200")
	x.events()
	x.feed()
	time.Sleep(60 * time.Millisecond)
	x.e.ActiveExpire(50 * time.Millisecond)
	if got := x.feed(); !sameFeed(got, []string{"0:MEM.DEL m a b"}) {
		t.Fatalf("first cycle replicated %q", got)
	}
	if got := x.events(); len(got) != 2 || got[0] != "__keyspace@0__:m mem.expired" {
		t.Fatalf("first cycle raised %q", got)
	}
	if got := tc.do("MEM.GET", "m", "c"); got == "$-1\r\n" {
		t.Fatal("c expired early")
	}
	time.Sleep(400 * time.Millisecond)
	x.e.ActiveExpire(50 * time.Millisecond)
	if got := x.feed(); !sameFeed(got, []string{"0:MEM.DEL m d c"}) {
		t.Fatalf("second cycle replicated %q", got)
	}
	x.e.ActiveExpire(50 * time.Millisecond)
	if got := x.feed(); len(got) != 0 {
		t.Fatalf("third cycle replicated %q", got)
	}
}
