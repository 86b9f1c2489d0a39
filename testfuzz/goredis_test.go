package testfuzz

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A go-redis session against HotKV, in RESP3 (go-redis's default, negotiated with HELLO 3 on each
// new connection) and in RESP2.
func TestGoRedisSession(t *testing.T) {
	hotkv, _ := startHotKV(t)
	for _, proto := range []int{3, 2} {
		t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: hotkv, Protocol: proto, DialTimeout: 5 * time.Second})
			defer rdb.Close()
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatalf("FlushAll: %v", err)
			}
			goRedisBasics(ctx, t, rdb)
			goRedisPipeline(ctx, t, rdb)
			goRedisConnection(ctx, t, rdb, proto)
			goRedisServer(ctx, t, rdb)
			goRedisScan(ctx, t, rdb)
		})
	}
}

func goRedisBasics(ctx context.Context, t *testing.T, rdb *redis.Client) {
	if got, err := rdb.Ping(ctx).Result(); err != nil || got != "PONG" {
		t.Errorf("Ping = %q, %v", got, err)
	}
	if err := rdb.Set(ctx, "gr:k", "v1", 100*time.Second).Err(); err != nil {
		t.Errorf("Set with expiry: %v", err)
	}
	if got, err := rdb.Get(ctx, "gr:k").Result(); err != nil || got != "v1" {
		t.Errorf("Get = %q, %v", got, err)
	}
	if ttl, err := rdb.TTL(ctx, "gr:k").Result(); err != nil || ttl <= 90*time.Second || ttl > 100*time.Second {
		t.Errorf("TTL after Set with 100s = %v, %v", ttl, err)
	}
	if _, err := rdb.Get(ctx, "gr:missing").Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("Get of a missing key: err %v, want redis.Nil", err)
	}
	for want := int64(1); want <= 3; want++ {
		if got, err := rdb.Incr(ctx, "gr:n").Result(); err != nil || got != want {
			t.Errorf("Incr = %d, %v; want %d", got, err, want)
		}
	}
	if err := rdb.MSet(ctx, "gr:a", "1", "gr:b", "two").Err(); err != nil {
		t.Errorf("MSet: %v", err)
	}
	got, err := rdb.MGet(ctx, "gr:a", "gr:missing", "gr:b").Result()
	if want := []any{"1", nil, "two"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("MGet = %#v, %v; want %#v", got, err, want)
	}
	if _, err := rdb.Incr(ctx, "gr:b").Result(); err == nil || err.Error() != "ERR value is not an integer or out of range" {
		t.Errorf("Incr of a non-integer: err %v", err)
	}
}

func goRedisPipeline(ctx context.Context, t *testing.T, rdb *redis.Client) {
	const n = 500
	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range n {
			p.Set(ctx, "gr:p:"+strconv.Itoa(i), i, 0)
			p.Incr(ctx, "gr:pc")
			p.Get(ctx, "gr:p:"+strconv.Itoa(i))
		}
		return nil
	})
	if err != nil || len(cmds) != 3*n {
		t.Fatalf("Pipelined: %d commands, %v", len(cmds), err)
	}
	for i := range n {
		if v, err := cmds[3*i+1].(*redis.IntCmd).Result(); err != nil || v != int64(i+1) {
			t.Errorf("pipelined Incr %d = %d, %v", i, v, err)
		}
		if v, err := cmds[3*i+2].(*redis.StringCmd).Result(); err != nil || v != strconv.Itoa(i) {
			t.Errorf("pipelined Get %d = %q, %v", i, v, err)
		}
	}
}

func goRedisConnection(ctx context.Context, t *testing.T, rdb *redis.Client, proto int) {
	hello, err := rdb.Do(ctx, "HELLO", strconv.Itoa(proto)).Result()
	if err != nil {
		t.Fatalf("HELLO %d: %v", proto, err)
	}
	if got := fmt.Sprint(helloField(hello, "proto")); got != strconv.Itoa(proto) {
		t.Errorf("HELLO %d reply has proto %s: %#v", proto, got, hello)
	}
	conn := rdb.Conn()
	defer conn.Close()
	if err := conn.ClientSetName(ctx, "gotest").Err(); err != nil {
		t.Errorf("ClientSetName: %v", err)
	}
	if got, err := conn.ClientGetName(ctx).Result(); err != nil || got != "gotest" {
		t.Errorf("ClientGetName = %q, %v", got, err)
	}
	if list, err := conn.ClientList(ctx).Result(); err != nil || !strings.Contains(list, "name=gotest") {
		t.Errorf("ClientList lacks the name set: %q, %v", list, err)
	}
}

// helloField finds a field of HELLO's reply: a map in RESP3, a flat array in RESP2.
func helloField(reply any, name string) any {
	switch r := reply.(type) {
	case map[any]any:
		return r[name]
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			if r[i] == name {
				return r[i+1]
			}
		}
	}
	return nil
}

func goRedisServer(ctx context.Context, t *testing.T, rdb *redis.Client) {
	cfg, err := rdb.ConfigGet(ctx, "maxclients").Result()
	if err != nil || cfg["maxclients"] != "10000" {
		t.Errorf("ConfigGet maxclients = %v, %v", cfg, err)
	}
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil || !strings.Contains(info, "# Server\r\n") || !strings.Contains(info, "redis_version:") {
		t.Errorf("Info server = %q, %v", info, err)
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n == 0 {
		t.Errorf("DBSize = %d, %v", n, err)
	}
}

// goRedisScan iterates 1000 keys with SCAN and must see each exactly once (no writes happen
// meanwhile, so Redis's guarantee is that strong).
func goRedisScan(ctx context.Context, t *testing.T, rdb *redis.Client) {
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatalf("FlushDB: %v", err)
	}
	const n = 1000
	var pairs []any
	for i := range n {
		pairs = append(pairs, "scan:"+strconv.Itoa(i), i)
	}
	if err := rdb.MSet(ctx, pairs...).Err(); err != nil {
		t.Fatalf("MSet of %d keys: %v", n, err)
	}
	seen := map[string]int{}
	it := rdb.Scan(ctx, 0, "scan:*", 50).Iterator()
	for it.Next(ctx) {
		seen[it.Val()]++
	}
	if err := it.Err(); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if len(seen) != n {
		t.Errorf("Scan saw %d distinct keys, want %d", len(seen), n)
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("Scan returned %q %d times", k, c)
		}
	}
}

// go-redis's transactions against HotKV, in RESP3 and RESP2: TxPipelined (MULTI … EXEC around a
// pipeline, each command's result in place, an error inside EXEC on its own command only, a
// queuing error failing the whole EXEC with EXECABORT) and the Watch helper, 20 goroutines
// incrementing one counter optimistically, retrying on TxFailedErr, losing no increment.
func TestGoRedisTx(t *testing.T) {
	hotkv, _ := startHotKV(t)
	for _, proto := range []int{3, 2} {
		t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: hotkv, Protocol: proto, DialTimeout: 5 * time.Second, PoolSize: 25})
			defer rdb.Close()
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatalf("FlushAll: %v", err)
			}
			goRedisTxPipeline(ctx, t, rdb)
			goRedisWatch(ctx, t, rdb)
		})
	}
}

func goRedisTxPipeline(ctx context.Context, t *testing.T, rdb *redis.Client) {
	var set *redis.StatusCmd
	var incr *redis.IntCmd
	var get *redis.StringCmd
	var mget *redis.SliceCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		set = p.Set(ctx, "tx:a", "10", 0)
		incr = p.IncrBy(ctx, "tx:a", 5)
		p.MSet(ctx, "tx:b", "x", "tx:c", "y")
		get = p.Get(ctx, "tx:a")
		mget = p.MGet(ctx, "tx:a", "tx:b", "tx:c", "tx:none")
		return nil
	})
	if err != nil || set.Val() != "OK" || incr.Val() != 15 || get.Val() != "15" ||
		!reflect.DeepEqual(mget.Val(), []any{"15", "x", "y", nil}) {
		t.Errorf("TxPipelined: err %v; set %q incr %d get %q mget %v", err, set.Val(), incr.Val(), get.Val(), mget.Val())
	}
	var push *redis.IntCmd
	var after *redis.IntCmd
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		push = p.LPush(ctx, "tx:a", "v")
		after = p.Incr(ctx, "tx:a")
		return nil
	})
	if err == nil || !strings.HasPrefix(push.Err().Error(), "WRONGTYPE") || after.Val() != 16 {
		t.Errorf("TxPipelined with an error in place: err %v; lpush %v; incr %d, %v", err, push.Err(), after.Val(), after.Err())
	}
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "tx:a")
		p.Do(ctx, "nosuchcommand", "x")
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "EXECABORT") {
		t.Errorf("TxPipelined with a queuing error: err %v, want EXECABORT", err)
	}
	if got, _ := rdb.Get(ctx, "tx:a").Result(); got != "16" {
		t.Errorf("after the aborted transaction tx:a = %q, want 16", got)
	}
}

func goRedisWatch(ctx context.Context, t *testing.T, rdb *redis.Client) {
	const workers, each = 20, 25
	var mu sync.Mutex
	retries := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				for {
					err := rdb.Watch(ctx, func(tx *redis.Tx) error {
						n, err := tx.Get(ctx, "tx:counter").Int()
						if err != nil && !errors.Is(err, redis.Nil) {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.Set(ctx, "tx:counter", n+1, 0)
							return nil
						})
						return err
					}, "tx:counter")
					if errors.Is(err, redis.TxFailedErr) {
						mu.Lock()
						retries++
						mu.Unlock()
						continue
					}
					if err != nil {
						t.Errorf("Watch: %v", err)
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	if got, err := rdb.Get(ctx, "tx:counter").Int(); err != nil || got != workers*each {
		t.Errorf("counter = %d, %v; want %d (%d retries)", got, err, workers*each, retries)
	}
	if retries == 0 {
		t.Logf("no Watch retried: the increments did not contend")
	}
}

// go-redis's Script: Run sends EVALSHA, gets NOSCRIPT the first time, then sends EVAL; later runs
// hit the cache with EVALSHA. Load, Exists and RunRO (EVALSHA_RO) too, in RESP3 and RESP2.
func TestGoRedisScript(t *testing.T) {
	hotkv, _ := startHotKV(t)
	for _, proto := range []int{3, 2} {
		t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: hotkv, Protocol: proto, DialTimeout: 5 * time.Second})
			defer rdb.Close()
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatalf("ScriptFlush: %v", err)
			}
			rdb.Del(ctx, "gs:counter")
			incr := redis.NewScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`)
			if ok, err := incr.Exists(ctx, rdb).Result(); err != nil || ok[0] {
				t.Fatalf("Exists before the first run: %v %v", ok, err)
			}
			if err := rdb.EvalSha(ctx, incr.Hash(), []string{"gs:counter"}, 1).Err(); err == nil ||
				!strings.HasPrefix(err.Error(), "NOSCRIPT") {
				t.Fatalf("EVALSHA before the first run: %v", err)
			}
			for i := 1; i <= 3; i++ {
				n, err := incr.Run(ctx, rdb, []string{"gs:counter"}, 5).Int()
				if err != nil || n != 5*i {
					t.Fatalf("Run %d: %d %v", i, n, err)
				}
			}
			if ok, err := incr.Exists(ctx, rdb).Result(); err != nil || !ok[0] {
				t.Fatalf("Exists after Run: %v %v", ok, err)
			}
			get := redis.NewScript(`return redis.call('GET', KEYS[1])`)
			if err := get.Load(ctx, rdb).Err(); err != nil {
				t.Fatalf("Load: %v", err)
			}
			if v, err := get.RunRO(ctx, rdb, []string{"gs:counter"}).Text(); err != nil || v != "15" {
				t.Fatalf("RunRO: %q %v", v, err)
			}
			fail := redis.NewScript(`return redis.call('INCR', KEYS[1])`)
			rdb.Set(ctx, "gs:str", "abc", 0)
			if err := fail.Run(ctx, rdb, []string{"gs:str"}).Err(); err == nil ||
				!strings.HasPrefix(err.Error(), "ERR value is not an integer or out of range script: ") {
				t.Fatalf("script error: %v", err)
			}
			tbl, err := redis.NewScript(`return {1, 'two', {3}}`).Run(ctx, rdb, nil).Slice()
			if err != nil || fmt.Sprint(tbl) != "[1 two [3]]" {
				t.Fatalf("table reply: %v %v", tbl, err)
			}
		})
	}
}

// go-redis's function API against HotKV, RESP3 and RESP2: FunctionLoad, FunctionList (which
// parses the reply's nested maps and the flags set), FCall, FCallRO, FunctionStats,
// FunctionDump and FunctionRestore, FunctionDelete.
func TestGoRedisFunctions(t *testing.T) {
	hotkv, _ := startHotKV(t)
	for _, proto := range []int{3, 2} {
		t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: hotkv, Protocol: proto, DialTimeout: 5 * time.Second})
			defer rdb.Close()
			if err := rdb.FunctionFlush(ctx).Err(); err != nil {
				t.Fatalf("FunctionFlush: %v", err)
			}
			code := "#!lua name=golib\nredis.register_function{function_name='gread', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='reads a key'}"
			if name, err := rdb.FunctionLoad(ctx, code).Result(); err != nil || name != "golib" {
				t.Fatalf("FunctionLoad: %q %v", name, err)
			}
			libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "go*", WithCode: true}).Result()
			want := []redis.Library{{Name: "golib", Engine: "LUA", Code: code,
				Functions: []redis.Function{{Name: "gread", Description: "reads a key", Flags: []string{"no-writes"}}}}}
			if err != nil || !reflect.DeepEqual(libs, want) {
				t.Fatalf("FunctionList: %+v %v", libs, err)
			}
			rdb.Set(ctx, "gf:k", "v", 0)
			if v, err := rdb.FCall(ctx, "gread", []string{"gf:k"}).Text(); err != nil || v != "v" {
				t.Fatalf("FCall: %q %v", v, err)
			}
			if v, err := rdb.FCallRO(ctx, "gread", []string{"gf:k"}).Text(); err != nil || v != "v" {
				t.Fatalf("FCallRO: %q %v", v, err)
			}
			stats, err := rdb.FunctionStats(ctx).Result()
			if err != nil || stats.Running() || len(stats.Engines) != 1 || stats.Engines[0].LibrariesCount != 1 ||
				stats.Engines[0].FunctionsCount != 1 {
				t.Fatalf("FunctionStats: %+v %v", stats, err)
			}
			dump, err := rdb.FunctionDump(ctx).Result()
			if err != nil {
				t.Fatalf("FunctionDump: %v", err)
			}
			if err := rdb.FunctionDelete(ctx, "golib").Err(); err != nil {
				t.Fatalf("FunctionDelete: %v", err)
			}
			if err := rdb.FCall(ctx, "gread", []string{"gf:k"}).Err(); err == nil || err.Error() != "ERR Function not found" {
				t.Fatalf("FCall after delete: %v", err)
			}
			if err := rdb.FunctionRestore(ctx, dump).Err(); err != nil {
				t.Fatalf("FunctionRestore: %v", err)
			}
			if v, err := rdb.FCall(ctx, "gread", []string{"gf:k"}).Text(); err != nil || v != "v" {
				t.Fatalf("FCall after restore: %q %v", v, err)
			}
		})
	}
}
