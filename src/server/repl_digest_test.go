package server

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// DEBUG DIGEST and DIGEST-VALUE equal redis-server's on every type and encoding (small and
// large, int and string members, special scores, streams with deletions and groups, TTLs,
// four databases): a replica's digest is comparable with its Redis primary's.
func TestDebugDigestAgainstRedis(t *testing.T) {
	ctx := context.Background()
	rc := startRedisAt(t, replPort(t))
	_, hk := startHotKVAt(t, replPort(t))
	big := strings.Repeat("x", 100)
	var writes [][]any
	add := func(a ...any) { writes = append(writes, a) }
	add("SET", "s:int", "12345")
	add("SET", "s:emb", "hello")
	add("SET", "s:raw", strings.Repeat("r", 300))
	add("SET", "s:ttl", "v", "EX", "1000")
	add("RPUSH", "l:small", "a", "1", "b")
	for i := range 300 {
		add("RPUSH", "l:big", "e"+strconv.Itoa(i), i)
		add("SADD", "set:big", "m"+strconv.Itoa(i))
		add("SADD", "set:intbig", i)
		add("HSET", "h:big", "f"+strconv.Itoa(i), big)
		add("ZADD", "z:big", i, "m"+strconv.Itoa(i))
	}
	add("SADD", "set:int", 1, 2, 3, -7)
	add("SADD", "set:lp", "a", "b", "7")
	add("HSET", "h:small", "f", "v", "n", "12")
	add("ZADD", "z:small", "0.1", "a", "1e20", "b", "-0", "c", "+inf", "d", "-inf", "e", "3", "7")
	add("XADD", "x", "1-1", "f", "v", "g", "w")
	add("XADD", "x", "2-5", "f", "v2")
	add("XADD", "x", "3-0", "a", "b")
	add("XDEL", "x", "2-5")
	add("XGROUP", "CREATE", "x", "g", "0")
	add("PFADD", "hll", "a", "b", "c")
	add("SETBIT", "bits", "100", "1")
	add("EXPIRE", "h:small", "5000")
	add("SELECT", "2")
	add("SET", "s:int", "12345")
	add("SELECT", "3")
	add("RPUSH", "l3", "q")
	add("HSET", "h3", "a", "1")
	add("SELECT", "0")
	for _, cl := range []*redis.Client{rc, hk} {
		conn := cl.Conn()
		for _, w := range writes {
			if err := conn.Do(ctx, w...).Err(); err != nil {
				t.Fatalf("%v: %v", w, err)
			}
		}
		conn.Close()
	}
	want, _ := rc.Do(ctx, "DEBUG", "DIGEST").Text()
	got, _ := hk.Do(ctx, "DEBUG", "DIGEST").Text()
	keys := []any{"DEBUG", "DIGEST-VALUE", "s:int", "s:emb", "s:raw", "s:ttl", "l:small", "l:big", "set:big",
		"set:intbig", "h:big", "z:big", "set:int", "set:lp", "h:small", "z:small", "x", "hll", "bits", "nokey"}
	wv, _ := rc.Do(ctx, keys...).StringSlice()
	gv, _ := hk.Do(ctx, keys...).StringSlice()
	for i := range wv {
		if i >= len(gv) || wv[i] != gv[i] {
			t.Errorf("DIGEST-VALUE %s: HotKV %v, Redis %s", keys[i+2], gv, wv[i])
		}
	}
	if want != got {
		t.Fatalf("DEBUG DIGEST: HotKV %s, Redis %s", got, want)
	}
	rc.FlushAll(ctx)
	hk.FlushAll(ctx)
	want, _ = rc.Do(ctx, "DEBUG", "DIGEST").Text()
	got, _ = hk.Do(ctx, "DEBUG", "DIGEST").Text()
	if want != got || want != strings.Repeat("0", 40) {
		t.Fatalf("empty DEBUG DIGEST: HotKV %s, Redis %s", got, want)
	}
}
