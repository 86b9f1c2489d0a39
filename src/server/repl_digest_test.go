package server

import (
	"context"
	"fmt"
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

// DEBUG POPULATE makes the keys and values redis-server 7.0.15 makes (DEBUG DIGEST equal after
// each call, in two databases), keeps keys that exist, and answers as Redis on bad arguments.
func TestDebugPopulateAgainstRedis(t *testing.T) {
	ctx := context.Background()
	rc := startRedisAt(t, replPort(t))
	_, hk := startHotKVAt(t, replPort(t))
	long := strings.Repeat("p", 200) // the name is cut at 127 bytes
	steps := [][]any{
		{"SET", "key:5", "mine"},
		{"DEBUG", "POPULATE", "1000"},
		{"DEBUG", "POPULATE", "50", "pad", "20"},
		{"DEBUG", "POPULATE", "50", "cut", "3"},
		{"DEBUG", "POPULATE", "20", "zero", "0"},
		{"DEBUG", "POPULATE", "3", long},
		{"DEBUG", "POPULATE", "3", "nul\x00after"},
		{"DEBUG", "POPULATE", "0"},
		{"DEBUG", "POPULATE", "x"},
		{"DEBUG", "POPULATE", "-1"},
		{"DEBUG", "POPULATE", "2", "p", "-3"},
		{"DEBUG", "POPULATE", "2", "p", "y"},
		{"DEBUG", "POPULATE"},
		{"DEBUG", "POPULATE", "1", "a", "2", "b"},
		{"SELECT", "2"},
		{"DEBUG", "POPULATE", "100", "db2", "7"},
	}
	ra := rc.Conn()
	defer ra.Close()
	ha := hk.Conn()
	defer ha.Close()
	for _, st := range steps {
		rv, rerr := ra.Do(ctx, st...).Result()
		hv, herr := ha.Do(ctx, st...).Result()
		if fmt.Sprint(rv, rerr) != fmt.Sprint(hv, herr) {
			t.Fatalf("%q: Redis %v %v, HotKV %v %v", st, rv, rerr, hv, herr)
		}
		rd, err := ra.Do(ctx, "DEBUG", "DIGEST").Text()
		if err != nil || rd == strings.Repeat("0", 40) {
			t.Fatalf("Redis DEBUG DIGEST %q, %v", rd, err)
		}
		hd, _ := ha.Do(ctx, "DEBUG", "DIGEST").Text()
		if rd != hd {
			diffKeys(t, rc, hk)
			t.Fatalf("after %q: DEBUG DIGEST Redis %s, HotKV %s", st, rd, hd)
		}
	}
	if v, _ := hk.Get(ctx, "key:5").Result(); v != "mine" {
		t.Fatalf("GET key:5 = %q: POPULATE replaced a key that existed", v)
	}
	if got := replInfo(t, hk, "persistence", "rdb_changes_since_last_save"); got != replInfo(t, rc, "persistence", "rdb_changes_since_last_save") {
		t.Fatalf("rdb_changes_since_last_save: HotKV %s, Redis %s", got, replInfo(t, rc, "persistence", "rdb_changes_since_last_save"))
	}
}
