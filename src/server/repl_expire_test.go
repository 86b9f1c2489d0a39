package server

// Expiry on a replica, against redis-server 7.0.15: a replica deletes no key itself (no active
// expiry, no reclaim on read); a key past its time reads as missing yet is counted until the
// primary's DEL arrives. Ports 23100-23199 (foPort).

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func replicaExpiry(t *testing.T, hotkvPrimary, hotkvReplica bool) []string {
	pp, rp := foPort(t), foPort(t)
	p := startEither(t, hotkvPrimary, pp)
	r := startEither(t, hotkvReplica, rp)
	ctx := context.Background()
	var out []string
	rec := func(s string, args ...any) { out = append(out, fmt.Sprintf(s, args...)) }
	rec("primary active expiry off: %s", foDo(p, "debug", "set-active-expire", "0"))
	p.Set(ctx, "live", "1", 0)
	for i := range 5 {
		p.Set(ctx, "gone"+strconv.Itoa(i), "v", 300*time.Millisecond)
	}
	p.Do(ctx, "hset", "h", "f", "v")
	p.Do(ctx, "pexpire", "h", "300")
	rec("replicaof: %s", foDo(r, "replicaof", "127.0.0.1", pp))
	waitOffsetsEqual(t, p, r)
	time.Sleep(600 * time.Millisecond) // past the TTLs, several expiry cycles of the replica's
	rec("dbsize %s", foDo(r, "dbsize"))
	rec("get %s", foDo(r, "get", "gone0"))
	rec("mget %s", foDo(r, "mget", "gone1", "live"))
	rec("hget %s", foDo(r, "hget", "h", "f"))
	rec("hgetall %s", foDo(r, "hgetall", "h"))
	rec("strlen %s", foDo(r, "strlen", "gone2"))
	rec("dbsize after reads %s", foDo(r, "dbsize"))
	rec("exists %s ttl %s type %s", foDo(r, "exists", "gone3"), foDo(r, "pttl", "gone4"), foDo(r, "type", "gone3"))
	rec("dbsize after exists/ttl/type %s", foDo(r, "dbsize"))
	var seen []string
	for cur := uint64(0); ; {
		keys, next, err := r.Scan(ctx, cur, "*", 100).Result()
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, keys...)
		if cur = next; cur == 0 {
			break
		}
	}
	sort.Strings(seen)
	rec("scan %v keys %s", seen, foDo(r, "keys", "*"))
	rec("dbsize after scan/keys %s", foDo(r, "dbsize"))
	rec("keyspace %s", replInfo(t, r, "keyspace", "db0"))
	off := replInfo(t, p, "replication", "master_repl_offset")
	rec("primary offset unchanged by the replica's reads: %v", off == replInfo(t, r, "replication", "slave_repl_offset"))
	// The primary's own access expires two keys: their DELs reach the replica.
	rec("primary get %s %s", foDo(p, "get", "gone0"), foDo(p, "get", "gone1"))
	waitOffsetsEqual(t, p, r)
	rec("dbsize after the primary's DELs %s", foDo(r, "dbsize"))
	rec("primary active expiry on: %s", foDo(p, "debug", "set-active-expire", "1"))
	foWait(t, "the primary's cycle", 10*time.Second, func() bool { return foDo(p, "dbsize") == "1" })
	waitOffsetsEqual(t, p, r)
	rec("dbsize at the end %s", foDo(r, "dbsize"))
	return out
}

func TestReplicaExpiryAgainstRedis(t *testing.T) {
	want := replicaExpiry(t, false, false)
	for _, c := range []struct{ p, r bool }{{false, true}, {true, true}, {true, false}} {
		t.Run(fmt.Sprintf("hotkv-primary=%v,hotkv-replica=%v", c.p, c.r), func(t *testing.T) {
			compareTranscripts(t, "replica expiry", want, replicaExpiry(t, c.p, c.r))
		})
	}
}

// waitOffsetsEqual waits for the replica's offset to reach the primary's (the digests of keys
// past their time are compared in repl_expire_reads_test.go).
func waitOffsetsEqual(t *testing.T, p, r *redis.Client) {
	t.Helper()
	foWait(t, "offsets equal", 30*time.Second, func() bool {
		return replInfo(t, p, "replication", "master_repl_offset") == replInfo(t, r, "replication", "slave_repl_offset") &&
			replInfo(t, r, "replication", "master_link_status") == "up"
	})
}
