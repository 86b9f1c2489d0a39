package server

// Replication against redis-server 7.0.15 (issue 23): HotKV as primary of a Redis replica and
// as replica of a Redis primary, disk and diskless, during a write load over every type, four
// databases and TTLs; DEBUG DIGEST and offsets equal after. Ports 31000-31049.
//
// The write load lasts 2 s by default (CI, under -race on 2 cores); HOTKV_REPL_LONG=1 makes it
// the 30 s with 100k keys preloaded.

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func replLong() bool { return os.Getenv("HOTKV_REPL_LONG") == "1" }

func replLoadTime() time.Duration {
	if replLong() {
		return 30 * time.Second
	}
	return 2 * time.Second
}

func replPreload() int {
	if replLong() {
		return 100_000
	}
	return 3_000
}

// replPort hands out the test ports 31000-31049, skipping ports in use.
var replPortNext atomic.Int32

func replPort(t *testing.T) int { return portFrom(t, &replPortNext, 31000, 50) }

// portFrom hands out the ports base..base+n-1 in turn from *next, skipping ports in use.
func portFrom(t *testing.T, next *atomic.Int32, base, n int) int {
	t.Helper()
	for range n {
		p := base + int(next.Add(1)-1)%n
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			l.Close()
			return p
		}
	}
	t.Fatalf("no free port in %d-%d", base, base+n-1)
	return 0
}

// startEither starts HotKV or redis-server on port and returns a client of it.
func startEither(t *testing.T, hotkv bool, port int) *redis.Client {
	t.Helper()
	if hotkv {
		_, c := startHotKVAt(t, port)
		return c
	}
	return startRedisAt(t, port)
}

// startRedisAt runs redis-server on port with its files in a temporary dir; stopped by PID.
func startRedisAt(t *testing.T, port int, args ...string) *redis.Client {
	t.Helper()
	return startRedisFile(t, "", port, args...)
}

// startRedisFile is startRedisAt with a config file (CONFIG REWRITE's), when conf is not "".
func startRedisFile(t *testing.T, conf string, port int, args ...string) *redis.Client {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	dir := t.TempDir()
	var all []string
	if conf != "" {
		all = []string{conf}
	}
	all = append(all, []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--daemonize", "no", "--dir", dir, "--logfile", dir + "/redis.log", "--enable-debug-command", "yes",
		"--repl-diskless-sync-delay", "0"}...)
	all = append(all, args...)
	cmd := exec.Command("redis-server", all...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(dir + "/redis.log")
			t.Logf("redis-server :%d log:\n%s", port, lastLines(string(b), 30))
		}
	})
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c.Ping(context.Background()).Err() == nil {
			return c
		}
		if time.Now().After(end) {
			t.Fatal("redis-server did not start")
		}
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// startHotKVAt runs a HotKV server in the test process on port (threads 1, diskless delay 0).
func startHotKVAt(t *testing.T, port int, args ...string) (*Server, *redis.Client) {
	t.Helper()
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--threads", "1",
		"--repl-diskless-sync-delay", "0", "--dir", t.TempDir(), "--enable-debug-command", "yes"}, args...)
	s := startTestServer(t, all...)
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return s, c
}

// infoField returns one field of INFO section.
func replInfo(t *testing.T, c *redis.Client, section, field string) string {
	t.Helper()
	s, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	for _, l := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

// preload writes n keys of every type over four databases, a third of them with TTLs.
func preload(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	ctx := context.Background()
	for db := range 4 {
		// A client per database: SELECT in a pipeline would move a pooled connection for good.
		c := redis.NewClient(&redis.Options{Addr: c.Options().Addr, DB: db, Protocol: 2})
		defer c.Close()
		p := c.Pipeline()
		for i := range n / 4 {
			k := fmt.Sprintf("p%d:%d", db, i)
			switch i % 8 {
			case 0:
				p.Set(ctx, k, strings.Repeat("v", i%200), 0)
			case 1:
				p.Set(ctx, k, i, 0)
			case 2:
				p.RPush(ctx, k, "a", i, "c")
			case 3:
				p.HSet(ctx, k, "f", i, "g", "x")
			case 4:
				p.SAdd(ctx, k, i, i+1, "m")
			case 5:
				p.ZAdd(ctx, k, redis.Z{Score: float64(i), Member: "a"}, redis.Z{Score: 1.5, Member: "b"})
			case 6:
				p.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []any{"f", i}})
			case 7:
				p.PFAdd(ctx, k, "a", "b", i)
			}
			if i%3 == 0 {
				p.Expire(ctx, k, time.Duration(1000+i)*time.Second)
			}
			if p.Len() > 1000 {
				if _, err := p.Exec(ctx); err != nil {
					t.Fatal(err)
				}
				p = c.Pipeline()
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// writeLoad runs random writes of every type over four databases until stop; it returns the
// number of commands sent.
func writeLoad(addr string, stop <-chan struct{}) (int64, error) {
	var wg sync.WaitGroup
	var total atomic.Int64
	var first atomic.Pointer[error]
	for db := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			c := redis.NewClient(&redis.Options{Addr: addr, DB: db, Protocol: 2, MaxRetries: -1})
			defer c.Close()
			rng := rand.New(rand.NewSource(int64(db)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := c.Pipeline()
				for range 50 {
					k := "w" + strconv.Itoa(rng.Intn(2000))
					switch rng.Intn(16) {
					case 0:
						p.Set(ctx, "s"+k, rng.Int(), 0)
					case 1:
						p.SetEx(ctx, "s"+k, "x", time.Duration(100+rng.Intn(1000))*time.Second)
					case 2:
						p.IncrBy(ctx, "n"+k, int64(rng.Intn(10)))
					case 3:
						p.Append(ctx, "s"+k, "ab")
					case 4:
						p.HSet(ctx, "h"+k, "f"+strconv.Itoa(rng.Intn(20)), rng.Int())
					case 5:
						p.HIncrBy(ctx, "h"+k, "c", 1)
					case 6:
						p.RPush(ctx, "l"+k, rng.Int())
					case 7:
						p.LPop(ctx, "l"+k)
					case 8:
						p.SAdd(ctx, "t"+k, rng.Intn(100))
					case 9:
						p.SPop(ctx, "t"+k)
					case 10:
						p.ZAdd(ctx, "z"+k, redis.Z{Score: float64(rng.Intn(100)), Member: rng.Intn(50)})
					case 11:
						p.ZIncrBy(ctx, "z"+k, 1.5, "m")
					case 12:
						p.XAdd(ctx, &redis.XAddArgs{Stream: "x" + k, MaxLen: 20, Values: []any{"f", rng.Int()}})
					case 13:
						p.PFAdd(ctx, "p"+k, rng.Int())
					case 14:
						p.Del(ctx, "s"+k)
					case 15:
						p.Expire(ctx, "h"+k, time.Duration(500+rng.Intn(500))*time.Second)
					}
				}
				if _, err := p.Exec(ctx); err != nil && err != redis.Nil && !strings.Contains(err.Error(), "WRONGTYPE") {
					first.CompareAndSwap(nil, &err)
					return
				}
				// A transaction, replicated as MULTI ... EXEC.
				if _, err := c.TxPipelined(ctx, func(tp redis.Pipeliner) error {
					tp.Incr(ctx, "tx:a")
					tp.Incr(ctx, "tx:b")
					return nil
				}); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
				total.Add(52)
			}
		}()
	}
	wg.Wait()
	if e := first.Load(); e != nil {
		return total.Load(), *e
	}
	return total.Load(), nil
}

// waitInSync waits until the replica's offset equals the primary's and holds still, then
// compares DEBUG DIGEST and the offsets.
func waitInSync(t *testing.T, primary, replica *redis.Client) {
	t.Helper()
	ctx := context.Background()
	var po, ro string
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// The link first: a replica still syncing may show the offset the primary had before
		// (stop 31's CI: both 0, then the sync's PING made them 14); then the primary's offset
		// on both sides of the replica's, unchanged.
		up := replInfo(t, replica, "replication", "master_link_status") == "up"
		po = replInfo(t, primary, "replication", "master_repl_offset")
		ro = replInfo(t, replica, "replication", "slave_repl_offset")
		if up && po == ro && po == replInfo(t, primary, "replication", "master_repl_offset") {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("replica offset %s, primary's %s after 30 s", ro, po)
		}
	}
	pd, err := primary.Do(ctx, "DEBUG", "DIGEST").Text()
	if err != nil {
		t.Fatal(err)
	}
	rd, err := replica.Do(ctx, "DEBUG", "DIGEST").Text()
	if err != nil {
		t.Fatal(err)
	}
	if pd != rd || pd == strings.Repeat("0", 40) {
		diffKeys(t, primary, replica)
		t.Fatalf("DEBUG DIGEST: primary %s, replica %s", pd, rd)
	}
	// The replica's own offset equals the primary's, read on both sides of it: a Redis
	// primary's PING (every repl-ping-replica-period) may land between the reads (stop 32's
	// CI: replica 14 bytes ahead of the offset read before the digests).
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		p1 := replInfo(t, primary, "replication", "master_repl_offset")
		ro2 := replInfo(t, replica, "replication", "master_repl_offset")
		p2 := replInfo(t, primary, "replication", "master_repl_offset")
		if ro2 == p1 && p1 == p2 {
			po = p1
			break
		}
		if time.Now().After(end) {
			t.Fatalf("replica master_repl_offset %s, primary's %s then %s", ro2, p1, p2)
		}
	}
	t.Logf("in sync at offset %s, digest %s", po, pd)
}

func dbsizes(t *testing.T, c *redis.Client) string {
	s, _ := c.Info(context.Background(), "keyspace").Result()
	return strings.ReplaceAll(strings.TrimSpace(strings.TrimPrefix(s, "# Keyspace")), "\r\n", " ")
}

// HotKV → Redis: redis-server replicates from HotKV, disk and diskless, during a write load.
func TestReplHotKVToRedis(t *testing.T) {
	for _, diskless := range []string{"no", "yes"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			hp := replPort(t)
			_, hk := startHotKVAt(t, hp, "--repl-diskless-sync", diskless)
			preload(t, hk, replPreload())
			stop := make(chan struct{})
			loadDone := make(chan error, 1)
			go func() { _, err := writeLoad(hk.Options().Addr, stop); loadDone <- err }()
			time.Sleep(replLoadTime() / 4)
			rc := startRedisAt(t, replPort(t), "--replicaof", "127.0.0.1", strconv.Itoa(hp))
			time.Sleep(replLoadTime() * 3 / 4)
			close(stop)
			if err := <-loadDone; err != nil {
				t.Fatal(err)
			}
			waitInSync(t, hk, rc)
			if got := replInfo(t, hk, "stats", "sync_full"); got != "1" {
				t.Fatalf("sync_full %s", got)
			}
			ctx := context.Background()
			hk.Set(ctx, "after", "1", 0)
			if n, err := hk.Do(ctx, "WAIT", 1, 1000).Int(); err != nil || n != 1 {
				t.Fatalf("WAIT 1 1000 = %d, %v", n, err)
			}
			if v, err := rc.Get(ctx, "after").Result(); v != "1" {
				t.Fatalf("replica GET after = %q, %v", v, err)
			}
			if err := rc.Set(ctx, "x", 1, 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
				t.Fatalf("write to the Redis replica: %v", err)
			}
			// A write Redis 7.0 cannot apply is refused while it is attached (no capa hotkv).
			if err := hk.Do(ctx, "HEXPIRE", "h:x", 100, "FIELDS", 1, "f").Err(); err == nil ||
				!strings.Contains(err.Error(), "cannot be replicated") {
				t.Fatalf("HEXPIRE with a Redis replica attached: %v", err)
			}
			// redis-cli --rdb (REPLCONF rdb-only, SYNC) gives a file redis-check-rdb accepts.
			file := t.TempDir() + "/cli.rdb"
			if out, err := exec.Command("redis-cli", "-p", strconv.Itoa(hp), "--rdb", file).CombinedOutput(); err != nil {
				t.Fatalf("redis-cli --rdb: %v\n%s", err, out)
			}
			if out, err := exec.Command("redis-check-rdb", file).CombinedOutput(); err != nil {
				t.Fatalf("redis-check-rdb: %v\n%s", err, out)
			}
			t.Logf("keyspace %s", dbsizes(t, rc))
		})
	}
}

// Redis → HotKV: HotKV replicates from redis-server, disk and diskless, during a write load.
func TestReplRedisToHotKV(t *testing.T) {
	for _, diskless := range []string{"no", "yes"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			rp := replPort(t)
			rc := startRedisAt(t, rp, "--repl-diskless-sync", diskless)
			preload(t, rc, replPreload())
			stop := make(chan struct{})
			loadDone := make(chan error, 1)
			go func() { _, err := writeLoad(rc.Options().Addr, stop); loadDone <- err }()
			time.Sleep(replLoadTime() / 4)
			_, hk := startHotKVAt(t, replPort(t))
			ctx := context.Background()
			if err := hk.Do(ctx, "REPLICAOF", "127.0.0.1", rp).Err(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(replLoadTime() * 3 / 4)
			close(stop)
			if err := <-loadDone; err != nil {
				t.Fatal(err)
			}
			waitInSync(t, rc, hk)
			if err := hk.Set(ctx, "x", 1, 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
				t.Fatalf("write to the HotKV replica: %v", err)
			}
			rc.Set(ctx, "after", "1", 0)
			if n, err := rc.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
				t.Fatalf("Redis WAIT 1 2000 = %d, %v (HotKV's ACK)", n, err)
			}
			if v, err := hk.Get(ctx, "after").Result(); v != "1" {
				t.Fatalf("HotKV GET after = %q, %v", v, err)
			}
			t.Logf("keyspace %s", dbsizes(t, hk))
		})
	}
}

// diffKeys logs the first keys whose presence, TTL or DEBUG DIGEST-VALUE differ.
func diffKeys(t *testing.T, a, b *redis.Client) {
	ctx := context.Background()
	shown := 0
	for db := range 4 {
		ca := redis.NewClient(&redis.Options{Addr: a.Options().Addr, DB: db, Protocol: 2})
		cb := redis.NewClient(&redis.Options{Addr: b.Options().Addr, DB: db, Protocol: 2})
		keys := map[string]bool{}
		for _, c := range []*redis.Client{ca, cb} {
			it := c.Scan(ctx, 0, "*", 1000).Iterator()
			for it.Next(ctx) {
				keys[it.Val()] = true
			}
		}
		for k := range keys {
			da, _ := ca.Do(ctx, "DEBUG", "DIGEST-VALUE", k).StringSlice()
			db2, _ := cb.Do(ctx, "DEBUG", "DIGEST-VALUE", k).StringSlice()
			ta, _ := ca.PTTL(ctx, k).Result()
			tb, _ := cb.PTTL(ctx, k).Result()
			ea, _ := ca.Exists(ctx, k).Result()
			eb, _ := cb.Exists(ctx, k).Result()
			if fmt.Sprint(da) != fmt.Sprint(db2) || ea != eb || (ta < 0) != (tb < 0) {
				typ, _ := ca.Type(ctx, k).Result()
				t.Logf("db %d key %q (%s): exists %d/%d digest %v/%v pttl %v/%v", db, k, typ, ea, eb, da, db2, ta, tb)
				if shown++; shown > 15 {
					ca.Close()
					cb.Close()
					return
				}
			}
		}
		ca.Close()
		cb.Close()
	}
	if shown == 0 {
		t.Logf("no key differs: the digests' computation differs")
	}
}
