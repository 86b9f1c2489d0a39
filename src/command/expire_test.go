package command

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/pipeline"
)

// HotKV's nanosecond expiry commands, with a fixed clock.
func TestNanosecondExpiry(t *testing.T) {
	e := newTestEngine()
	const now = int64(1_700_000_000_123_456_789)
	f := func(want string, args ...string) {
		t.Helper()
		if got := ktCall(e, 0, now, args...); got != want {
			t.Errorf("%v = %q, want %q", args, got, want)
		}
	}
	f("-ERR wrong number of arguments for 'nexpire' command\r\n", "NEXPIRE", "k")
	f("-ERR wrong number of arguments for 'nttl' command\r\n", "NTTL")
	f(":0\r\n", "NEXPIRE", "k", "100")
	f(":-2\r\n", "NTTL", "k")
	ktPlant(e, 0, "k", keyspace.KindString, "v", 0)
	f(":-1\r\n", "NTTL", "k")
	f(":1\r\n", "NEXPIRE", "k", "1500000") // 1.5 ms
	f(":1500000\r\n", "NTTL", "k")
	// The millisecond views use whole milliseconds of the expiry and of the clock:
	// expiry ...124.956789 ms, now ...123.456789 ms.
	f(":1\r\n", "PTTL", "k")
	f(":0\r\n", "TTL", "k")
	f(fmt.Sprintf(":%d\r\n", (now+1500000)/1e6), "PEXPIRETIME", "k")
	f(fmt.Sprintf(":%d\r\n", ((now+1500000)/1e6+500)/1000), "EXPIRETIME", "k")
	f(":1\r\n", "NEXPIRE", "k", "2500000000") // 2.5 s: TTL rounds half up
	f(":3\r\n", "TTL", "k")
	f(":2500\r\n", "PTTL", "k")
	f(":1\r\n", "NEXPIRE", "k", "2499000000")
	f(":2\r\n", "TTL", "k")
	f(":0\r\n", "NEXPIRE", "k", "2499000000", "GT")
	f(":1\r\n", "NEXPIRE", "k", "2499000001", "GT")
	f(":0\r\n", "NEXPIRE", "k", "5", "NX")
	f(":1\r\n", "NEXPIRE", "k", "2499000000", "LT")
	f(":1\r\n", "NEXPIREAT", "k", fmt.Sprint(now+5000), "XX")
	f(":5000\r\n", "NTTL", "k")
	f(":1\r\n", "PERSIST", "k")
	f(":-1\r\n", "NTTL", "k")
	f("-ERR invalid expire time in 'nexpire' command\r\n", "NEXPIRE", "k", fmt.Sprint(math.MaxInt64-now+1))
	f(":1\r\n", "NEXPIRE", "k", fmt.Sprint(math.MaxInt64-now))
	f(fmt.Sprint(":", math.MaxInt64-now, "\r\n"), "NTTL", "k")
	f("-ERR value is not an integer or out of range\r\n", "NEXPIREAT", "k", "1.5")
	f("-ERR Unsupported option XY\r\n", "NEXPIREAT", "k", "1", "XY")
	f("-"+ErrExpireGTAndLT+"\r\n", "NEXPIRE", "k", "1", "GT", "LT")
	f(":1\r\n", "NEXPIREAT", "k", fmt.Sprint(now)) // now is already past: the key goes
	f(":0\r\n", "EXISTS", "k")
	ktPlant(e, 0, "k", keyspace.KindString, "v", 0)
	f(":1\r\n", "NEXPIRE", "k", "-1")
	f(":0\r\n", "EXISTS", "k")
	ktPlant(e, 0, "k", keyspace.KindString, "v", 0)
	f(":1\r\n", "NEXPIRE", "k", "1")
	if got := ktCall(e, 0, now+1, "EXISTS", "k"); got != ":0\r\n" {
		t.Errorf("key alive 1 ns after its nanosecond expiry: %q", got)
	}
}

// Redis's millisecond commands on a fixed clock: the base is the current millisecond.
func TestMillisecondExpiryBase(t *testing.T) {
	e := newTestEngine()
	const now = int64(1_700_000_000_123_900_000) // 0.9 ms into a millisecond
	ktPlant(e, 0, "k", keyspace.KindString, "v", 0)
	if got := ktCall(e, 0, now, "PEXPIRE", "k", "100"); got != ":1\r\n" {
		t.Fatal(got)
	}
	if at := e.keyspace(0, []byte("k")).Peek([]byte("k"), now).ExpireAt(); at != (now/1e6+100)*1e6 {
		t.Fatalf("PEXPIRE 100 stored %d, want %d", at, (now/1e6+100)*1e6)
	}
	if got := ktCall(e, 0, now, "PTTL", "k"); got != ":100\r\n" {
		t.Fatalf("PTTL in the same millisecond = %q", got)
	}
	if got := ktCall(e, 0, now+200_000, "PTTL", "k"); got != ":99\r\n" {
		t.Fatalf("PTTL in the next millisecond = %q", got)
	}
	if got := ktCall(e, 0, now+int64(100*time.Millisecond), "PTTL", "k"); got != ":-2\r\n" {
		t.Fatalf("PTTL once expired = %q", got)
	}
}

// Times past the year 2262 do not fit in nanoseconds; Redis's commands still see them exactly
// (to the millisecond, up to int64), and HotKV's nanosecond commands as later than any time
// they can name.
func TestExpiryBeyondNanosecondRange(t *testing.T) {
	e := newTestEngine()
	const now = int64(1_700_000_000_123_456_789)
	const nowMs, maxMs = now / 1e6, int64(math.MaxInt64)
	f := func(db int, want any, args ...string) {
		t.Helper()
		if got := ktCall(e, db, now, args...); got != fmt.Sprint(":", want, "\r\n") {
			t.Errorf("%v = %q, want %v", args, got, want)
		}
	}
	ktPlant(e, 0, "k", keyspace.KindString, "v", 0)
	f(0, 1, "PEXPIREAT", "k", "9223372036854775807")
	f(0, maxMs, "PEXPIRETIME", "k")
	f(0, int64(9223372036854776), "EXPIRETIME", "k")
	f(0, maxMs-nowMs, "PTTL", "k")
	f(0, (maxMs-nowMs+500)/1000, "TTL", "k")
	f(0, maxMs, "NTTL", "k") // further than int64 nanoseconds: clamped
	f(0, 0, "PEXPIREAT", "k", "9223372036854775807", "GT")
	f(0, 1, "PEXPIREAT", "k", "9223372036854775806", "LT")
	f(0, maxMs-1, "PEXPIRETIME", "k")
	f(0, 0, "NEXPIREAT", "k", "9223372036854775807", "GT") // every ns time is earlier
	f(0, 1, "EXPIREAT", "k", "9223372036854775")
	f(0, int64(9223372036854775000), "PEXPIRETIME", "k")
	f(0, 1, "NEXPIREAT", "k", "9223372036854775807", "LT")
	f(0, keyspace.MaxNearMs, "PEXPIRETIME", "k")
	f(0, maxMs-now, "NTTL", "k")
	// Just past the nanosecond range the remaining nanoseconds still fit: NTTL is exact.
	f(0, 1, "PEXPIREAT", "k", fmt.Sprint(keyspace.MaxNearMs+1))
	f(0, (keyspace.MaxNearMs+1-nowMs)*1e6-now%1e6, "NTTL", "k")
	// RENAME, MOVE and COPY carry the exact time.
	f(0, 1, "PEXPIREAT", "k", "9223372036854775001")
	if got := ktCall(e, 0, now, "RENAME", "k", "r"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	f(0, int64(9223372036854775001), "PEXPIRETIME", "r")
	f(0, 1, "MOVE", "r", "1")
	f(1, int64(9223372036854775001), "PEXPIRETIME", "r")
	f(1, 1, "COPY", "r", "c", "DB", "0")
	f(0, int64(9223372036854775001), "PEXPIRETIME", "c")
	f(1, 1, "PERSIST", "r")
	f(1, -1, "PEXPIRETIME", "r")
	f(0, 1, "EXISTS", "c")
}

// INFO's expired_keys counts keys removed because their time passed, lazily as well as by the
// sweep, and not keys a command deleted by giving them a past time.
func TestExpiredKeysCounted(t *testing.T) {
	e := newTestEngine()
	now := time.Now().UnixNano()
	for _, k := range []string{"a", "b", "c", "d"} {
		ktPlant(e, 0, k, keyspace.KindString, "v", now+1)
	}
	ktPlant(e, 3, "x", keyspace.KindString, "v", 0)
	for _, args := range [][]string{{"GET", "a"}, {"TTL", "b"}, {"SET", "c", "v2"}, {"EXPIRE", "x", "-1"}} {
		db := 0
		if args[1] == "x" {
			db = 3
		}
		ktCall(e, db, now+2, args...)
	}
	if got := e.stats.expiredKeys.Load(); got != 3 {
		t.Fatalf("expired_keys %d after three lazy expirations, want 3", got)
	}
	e.ActiveExpire(time.Second) // reclaims d
	if got := e.stats.expiredKeys.Load(); got != 4 {
		t.Fatalf("expired_keys %d after the sweep, want 4", got)
	}
}

// ktFillExpiring puts n keys in each database of dbs of one shard (ignoring which shard their
// hash names: the sweep does not care), half of them expired.
func ktFillExpiring(e *Engine, shard int, dbs []int, n int, now int64) {
	e.Group.Do(shard, func(sh *pipeline.Shard) {
		for _, db := range dbs {
			ks := sh.Data.(*shardData).dbs[db]
			for i := range n {
				ent := ks.Add(fmt.Append(nil, "k", i))
				switch i % 4 {
				case 0, 1:
					ks.SetExpire(ent, now-1) // expired
				case 2:
					ks.SetExpire(ent, now+int64(time.Hour))
				}
			}
		}
	})
}

func ktCountKeys(e *Engine) (total int) {
	for i := range e.Group.Shards {
		e.Group.Do(i, func(sh *pipeline.Shard) {
			for _, ks := range sh.Data.(*shardData).dbs {
				total += ks.Len()
			}
		})
	}
	return total
}

func TestActiveExpireReclaimsEverything(t *testing.T) {
	e := newTestEngine()
	now := time.Now().UnixNano()
	for shard := range e.Group.Shards {
		ktFillExpiring(e, shard, []int{0, 3, 15}, 1000, now)
	}
	want := len(e.Group.Shards) * 3 * 1000
	for i := 0; ktCountKeys(e) > want/2; i++ {
		if i > 1000 {
			t.Fatalf("%d keys left after %d cycles", ktCountKeys(e), i)
		}
		e.ActiveExpire(10 * time.Millisecond)
	}
	if got := e.stats.expiredKeys.Load(); got != int64(want/2) {
		t.Fatalf("expired_keys = %d, want %d", got, want/2)
	}
	// Live keys are untouched, with and without expiry.
	for shard := range e.Group.Shards {
		e.Group.Do(shard, func(sh *pipeline.Shard) {
			ks := sh.Data.(*shardData).dbs[3]
			if ks.Len() != 500 || ks.Volatile() != 250 {
				t.Errorf("shard %d db 3: %d keys, %d volatile", shard, ks.Len(), ks.Volatile())
			}
		})
	}
}

// ActiveExpire reclaims a large backlog over many rounds while another goroutine keeps taking
// the shard (its worst wait is logged), and a small budget stops it early.
func TestActiveExpireBoundsHoldTime(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a large keyspace")
	}
	e := newTestEngine()
	now := time.Now().UnixNano()
	ktFillExpiring(e, 0, []int{0}, 400_000, now)
	var wg sync.WaitGroup
	var worst time.Duration
	waits := 0
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			start := time.Now()
			e.Group.Do(0, func(*pipeline.Shard) {})
			worst = max(worst, time.Since(start))
			waits++
			time.Sleep(100 * time.Microsecond)
		}
	}()
	start := time.Now()
	e.ActiveExpire(time.Minute)
	spent := time.Since(start)
	close(done)
	wg.Wait()
	reclaimed := e.stats.expiredKeys.Load()
	t.Logf("reclaimed %d keys in %v; %d waits for the shard, the worst %v", reclaimed, spent, waits, worst)
	if reclaimed != 200_000 {
		t.Fatalf("reclaimed %d of 200000 expired keys", reclaimed)
	}
	// Hold times are logged, not asserted: wall-clock limits fail on a loaded machine. A small
	// budget must still stop the sweep before the backlog is gone.
	ktFillExpiring(e, 0, []int{1}, 400_000, now)
	before := e.stats.expiredKeys.Load()
	e.ActiveExpire(time.Nanosecond)
	if got := e.stats.expiredKeys.Load() - before; got >= 200_000 {
		t.Fatalf("a 1ns budget reclaimed the whole backlog (%d keys)", got)
	}
}

// A database whose volatile keys are mostly alive is left after a short look.
func TestActiveExpireStopsWhenLittleIsStale(t *testing.T) {
	e := newTestEngine()
	now := time.Now().UnixNano()
	e.Group.Do(0, func(sh *pipeline.Shard) {
		ks := sh.Data.(*shardData).dbs[0]
		for i := range 100_000 {
			ent := ks.Add(fmt.Append(nil, "k", i))
			ks.SetExpire(ent, now+int64(time.Hour))
		}
	})
	start := time.Now()
	e.ActiveExpire(time.Second)
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("a sweep that finds nothing stale ran for %v", d)
	}
}
