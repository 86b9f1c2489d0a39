package server

// A redis-server 7.0.15 replica of a HotKV primary holding HotKV's own types: the full sync's
// RDB leaves those keys out (Redis exited on their module records: "no matching module type
// 'hotkv-vec'"), the Redis keys arrive equal, NEXPIRE reaches the replica as PEXPIREAT, and
// writes Redis cannot apply are refused while it is attached. Disk and diskless. Ports
// 23100-23199 (foPort).

import (
	"context"
	"strings"
	"testing"
)

func TestReplRedisReplicaOfHotKVTypes(t *testing.T) {
	for _, diskless := range []string{"no", "yes"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			ctx := context.Background()
			pp, rp := foPort(t), foPort(t)
			_, p := startHotKVAt(t, pp, "--repl-diskless-sync", diskless)
			for _, args := range [][]any{
				{"set", "s", "v"}, {"rpush", "l", "a", "b"}, {"hset", "h", "f", "v", "g", "w"},
				{"sadd", "st", "m"}, {"zadd", "z", "1", "m"}, {"xadd", "x", "1-1", "f", "v"},
				{"set", "ttl", "v", "px", "100000"},
				{"vadd", "vs", "VALUES", "2", "1", "2", "e1"}, {"ipset.add", "ips", "10.0.0.0/8"},
				{"hexpire", "h", "1000", "FIELDS", "1", "f"},
			} {
				if err := p.Do(ctx, args...).Err(); err != nil {
					t.Fatalf("%v: %v", args, err)
				}
			}
			r := startRedisAt(t, rp)
			if err := r.Do(ctx, "replicaof", "127.0.0.1", pp).Err(); err != nil {
				t.Fatal(err)
			}
			waitOffsetsEqual(t, p, r)
			if err := r.Ping(ctx).Err(); err != nil {
				t.Fatalf("the Redis replica is gone after the full sync: %v", err)
			}
			if n := foDo(r, "dbsize"); n != "7" {
				t.Fatalf("Redis replica DBSIZE %s, want the 7 Redis keys", n)
			}
			keys := []any{"debug", "digest-value", "s", "l", "h", "st", "z", "x", "ttl"}
			if pd, rd := foDo(p, keys...), foDo(r, keys...); pd != rd {
				t.Fatalf("DIGEST-VALUE: primary %s, replica %s", pd, rd)
			}
			// NEXPIRE replicates as PEXPIREAT, rounded up to the millisecond.
			if got := foDo(p, "nexpire", "s", "50000000000123"); got != "1" {
				t.Fatalf("NEXPIRE with a Redis replica: %s", got)
			}
			// Writes Redis cannot apply are refused; reads of HotKV's types are served.
			for _, args := range [][]any{
				{"vadd", "vs", "VALUES", "2", "3", "4", "e2"}, {"hexpire", "h", "1000", "FIELDS", "1", "g"},
				{"ipset.add", "ips", "192.168.0.0/16"},
			} {
				if got := foDo(p, args...); !strings.Contains(got, "cannot be replicated") {
					t.Fatalf("%v with a Redis replica: %s", args, got)
				}
			}
			if got := foDo(p, "vcard", "vs"); got != "1" {
				t.Fatalf("VCARD: %s", got)
			}
			waitOffsetsEqual(t, p, r)
			// The primary's time is ...123 ns past a millisecond: PEXPIRETIME floors it, the
			// replica was sent the next millisecond.
			pt, rt := atoi(foDo(p, "pexpiretime", "s")), atoi(foDo(r, "pexpiretime", "s"))
			if rt != pt+1 || pt <= 0 {
				t.Fatalf("PEXPIRETIME after NEXPIRE: primary %d, replica %d (want primary's + 1)", pt, rt)
			}
			if pd, rd := foDo(p, keys...), foDo(r, keys...); pd != rd {
				t.Fatalf("DIGEST-VALUE after the stream: primary %s, replica %s", pd, rd)
			}
		})
	}
}
