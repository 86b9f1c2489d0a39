package server

// Hash-field TTLs across a HotKV -> HotKV full sync (the hotkv-hfe aux field, persist_hfe.go),
// disk and diskless: the replica holds the same field expiry times, and a field the primary
// expires later leaves the replica by the primary's HDEL. Ports 23100-23199 (foPort).

import (
	"context"
	"testing"
	"time"
)

func TestReplHotKVFullSyncKeepsFieldTTLs(t *testing.T) {
	for _, diskless := range []string{"no", "yes"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			ctx := context.Background()
			pp, rp := foPort(t), foPort(t)
			_, p := startHotKVAt(t, pp, "--repl-diskless-sync", diskless)
			_, r := startHotKVAt(t, rp)
			for _, args := range [][]any{
				{"hset", "h", "f1", "v1", "f2", "v2", "f3", "v3"},
				{"hpexpire", "h", "100000", "FIELDS", "1", "f1"}, {"hpexpire", "h", "700", "FIELDS", "1", "f2"},
				{"select", "2"}, // a large hash in another db, with many field TTLs
			} {
				if err := p.Do(ctx, args...).Err(); err != nil {
					t.Fatalf("%v: %v", args, err)
				}
			}
			for i := range 300 {
				p.Do(ctx, "hset", "big", i, "v")
			}
			p.Do(ctx, "hexpire", "big", "5000", "FIELDS", "2", "7", "250")
			p.Do(ctx, "select", "0")
			q := []any{"hpexpiretime", "h", "FIELDS", "3", "f1", "f2", "f3"}
			want := foDo(p, q...)
			if err := r.Do(ctx, "replicaof", "127.0.0.1", pp).Err(); err != nil {
				t.Fatal(err)
			}
			waitOffsetsEqual(t, p, r)
			if got := foDo(r, q...); got != want {
				t.Fatalf("replica HPEXPIRETIME %s, primary's %s", got, want)
			}
			c2 := []any{"eval", "redis.call('select', 2) return redis.call('hpexpiretime', 'big', 'FIELDS', 3, '7', '250', '8')", "0"}
			if pw, rw := foDo(p, c2...), foDo(r, c2...); pw != rw {
				t.Fatalf("db 2: replica %s, primary %s", rw, pw)
			}
			time.Sleep(time.Second) // f2 expires on the primary, which sends HDEL
			foWait(t, "f2 gone on the primary", 5*time.Second, func() bool { return foDo(p, "hlen", "h") == "2" })
			waitOffsetsEqual(t, p, r)
			if got := foDo(r, "hlen", "h"); got != "2" {
				t.Fatalf("replica HLEN %s after the primary's field expiry", got)
			}
			if pd, rd := foDo(p, "debug", "digest"), foDo(r, "debug", "digest"); pd != rd {
				t.Fatalf("DEBUG DIGEST: primary %s, replica %s", pd, rd)
			}
		})
	}
}
