package command

import (
	"testing"
	"time"
)

// The field-expiry queue of a hash lives in its key's shard only, one per keyspace, and HPEXPIRE
// queues a hash again only when it makes its next expiry earlier.
func TestHashFieldExpiryQueueIsPerShard(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	f := hashDo(t, tc)
	tc.do("HSET", "h", "a", "1", "b", "2")
	f(ints(1), "HPEXPIRE", "h", "100000", "FIELDS", "1", "a")
	f(ints(1), "HPEXPIRE", "h", "200000", "FIELDS", "1", "b") // later: already covered
	f(ints(1), "HPEXPIRE", "h", "50000", "FIELDS", "1", "b")  // earlier: queued again
	home := e.shardOf([]byte("h"))
	for i := range e.Group.Shards {
		d := e.data(int32(i))
		switch {
		case int32(i) != home && len(d.hfe) != 0:
			t.Errorf("shard %d holds queues for a key of shard %d", i, home)
		case int32(i) == home && (len(d.hfe) != 1 || d.hfe[d.dbs[0]] == nil):
			t.Fatalf("home shard queues: %v", d.hfe)
		case int32(i) == home && d.hfe[d.dbs[0]].Len() != 2:
			t.Errorf("queue entries %v, want 2", d.hfe[d.dbs[0]].Len())
		}
	}
}

// SWAPDB moves keyspaces between database numbers; a queue belongs to its keyspace, so the
// active cycle still reclaims a hash that now lives under another number.
func TestHashFieldExpiryQueueFollowsSwapDB(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	f := hashDo(t, tc)
	tc.do("HSET", "h", "a", "1")
	f(ints(1), "HPEXPIRE", "h", "20", "FIELDS", "1", "a")
	f("+OK\r\n", "SWAPDB", "0", "1")
	f("+OK\r\n", "SELECT", "1")
	time.Sleep(40 * time.Millisecond)
	f(":1\r\n", "EXISTS", "h") // nothing touched the hash: it waits for the active cycle
	e.ActiveExpire(time.Second)
	f(":0\r\n", "EXISTS", "h")
}
