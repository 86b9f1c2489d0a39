package command

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/pipeline"
)

// storedFields is how many fields key's hash in db 0 holds, expired or not, read under its
// shard's token.
func storedFields(e *Engine, key string) int {
	k := []byte(key)
	sh := e.shardOf(k)
	n := -1
	e.Group.Do(int(sh), func(*pipeline.Shard) {
		if ent := e.data(sh).dbs[0].Peek(k, time.Now().UnixNano()); ent != nil && ent.Kind == keyspace.KindHash {
			n = keyspace.Obj[hash.Hash](ent).Len()
		}
	})
	return n
}

// TestPauseHidesExpiredHashFields: while a pause holds the dataset still (as on a replica), a
// read of a hash whose fields are past their time answers as if they were gone, and leaves them
// stored for the primary's HDELs or the end of the pause (Redis 7.4's hashTypeGetValue); after the
// pause the next read reclaims them. Small (listpackex) and large (hashtable) hashes, point reads
// and whole-hash reads.
func TestPauseHidesExpiredHashFields(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	check := func(what string, want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Fatalf("%s: %s = %q, want %q", what, strings.Join(args, " "), got, want)
		}
	}
	for _, size := range []int{3, 200} {
		what := "hash of " + strconv.Itoa(size)
		key := "h" + strconv.Itoa(size)
		args := []string{"HSET", key}
		for i := range size {
			args = append(args, "f"+strconv.Itoa(i), "v"+strconv.Itoa(i))
		}
		tc.do(args...)
		tc.do("HPEXPIRE", key, "20", "FIELDS", "1", "f1")
		tc.do("HPEXPIRE", "all"+key, "20", "FIELDS", "1", "x") // no such key: nothing
		tc.do("HSET", "all"+key, "x", "1")
		tc.do("HPEXPIRE", "all"+key, "20", "FIELDS", "1", "x")
		e.SetFailoverPause(true)
		time.Sleep(40 * time.Millisecond)
		for range 3 {
			e.ActiveExpire(10 * time.Millisecond)
		}
		check(what, "$-1\r\n", "HGET", key, "f1")
		check(what, "$2\r\nv0\r\n", "HGET", key, "f0")
		check(what, "*2\r\n$2\r\nv0\r\n$-1\r\n", "HMGET", key, "f0", "f1")
		check(what, ":0\r\n", "HEXISTS", key, "f1")
		check(what, ":0\r\n", "HSTRLEN", key, "f1")
		check(what, "*2\r\n:-2\r\n:-1\r\n", "HPTTL", key, "FIELDS", "2", "f1", "f0")
		check(what, ":"+strconv.Itoa(size-1)+"\r\n", "HLEN", key)
		if got := tc.do("HGETALL", key); strings.Contains(got, "$2\r\nf1\r\n") || !strings.HasPrefix(got, "*"+strconv.Itoa(2*(size-1))+"\r\n") {
			t.Fatalf("%s: HGETALL while paused = %q", what, got)
		}
		if got := tc.do("HSCAN", key, "0", "COUNT", "1000"); strings.Contains(got, "$2\r\nf1\r\n") {
			t.Fatalf("%s: HSCAN shows the expired field: %q", what, got)
		}
		if got := tc.do("HRANDFIELD", key, "-2000"); strings.Contains(got, "$2\r\nf1\r\n") {
			t.Fatalf("%s: HRANDFIELD draws the expired field", what)
		}
		check(what, "*0\r\n", "HGETALL", "all"+key)
		check(what, ":0\r\n", "HLEN", "all"+key)
		check(what, "$-1\r\n", "HRANDFIELD", "all"+key)
		check(what, "*2\r\n$1\r\n0\r\n*0\r\n", "HSCAN", "all"+key, "0")
		if n := storedFields(e, key); n != size {
			t.Fatalf("%s: %d fields stored while paused, want all %d", what, n, size)
		}
		if n := storedFields(e, "all"+key); n != 1 {
			t.Fatalf("%s: the all-expired hash holds %d fields while paused, want 1", what, n)
		}
		e.SetFailoverPause(false)
		check(what, "$-1\r\n", "HGET", key, "f1")
		if n := storedFields(e, key); n != size-1 {
			t.Fatalf("%s: %d fields stored after the pause and a read, want %d", what, n, size-1)
		}
		for range 3 {
			e.ActiveExpire(10 * time.Millisecond)
		}
		check(what, ":0\r\n", "EXISTS", "all"+key) // the active expiry's, now that it runs
	}
}
