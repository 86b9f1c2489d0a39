package command

import (
	"fmt"
	"math"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/pipeline"
)

// expireCommands set, read and clear key expiry. Expiry is kept in unix nanoseconds: Redis's
// commands work in milliseconds (the seconds forms round like Redis's), HotKV's N-commands
// (NEXPIRE, NEXPIREAT, NTTL) in nanoseconds.
var expireCommands = []*Spec{
	{Name: "expire", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: expire},
	{Name: "pexpire", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: pexpire},
	{Name: "expireat", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: expireat},
	{Name: "pexpireat", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: pexpireat},
	{Name: "nexpire", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: nexpire},
	{Name: "nexpireat", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: nexpireat},
	{Name: "ttl", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: ttl},
	{Name: "pttl", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: pttl},
	{Name: "expiretime", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: expiretime},
	{Name: "pexpiretime", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: pexpiretime},
	{Name: "nttl", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: nttl},
	{Name: "persist", Arity: 2, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: persist},
}

// Units of an expiry argument, in nanoseconds.
const (
	unitNs  = 1
	unitMs  = int64(time.Millisecond)
	unitSec = int64(time.Second)
)

// Conditions of EXPIRE's NX|XX|GT|LT.
const (
	expireNX = 1 << iota
	expireXX
	expireGT
	expireLT
)

// EXPIRE key seconds [NX|XX|GT|LT]
func expire(c *Ctx) { expireGeneric(c, true, unitSec) }

// PEXPIRE key milliseconds [NX|XX|GT|LT]
func pexpire(c *Ctx) { expireGeneric(c, true, unitMs) }

// EXPIREAT key unix-time-seconds [NX|XX|GT|LT]
func expireat(c *Ctx) { expireGeneric(c, false, unitSec) }

// PEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT]
func pexpireat(c *Ctx) { expireGeneric(c, false, unitMs) }

// NEXPIRE key nanoseconds [NX|XX|GT|LT]
func nexpire(c *Ctx) { expireGeneric(c, true, unitNs) }

// NEXPIREAT key unix-time-nanoseconds [NX|XX|GT|LT]
func nexpireat(c *Ctx) { expireGeneric(c, false, unitNs) }

// expireGeneric follows Redis's expireGenericCommand: options, then the number, then overflow,
// then the key. Redis computes in milliseconds, so the Redis commands do too (the time base is
// the current millisecond) and only the result is stored in nanoseconds; the N-commands compute
// in nanoseconds.
func expireGeneric(c *Ctx, relative bool, unit int64) {
	flags, msg := parseExpireFlags(c.Args[3:])
	if msg != "" {
		c.Err(msg)
		return
	}
	when, ok := ParseInt(c.Args[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	at, now, ok := expireTarget(when, relative, unit, c.Now)
	if !ok {
		c.Errf(ErrInvalidExpire, c.Spec.Name)
		return
	}
	ks := c.KS(c.Args[1])
	e := ks.Find(c.Args[1], c.Now)
	if e == nil || !expireAllowed(flags, at, currentExpire(e, unit)) {
		c.Int(0)
		return
	}
	if at <= now {
		ks.Remove(e) // a time in the past deletes the key, as Redis 7 does
	} else {
		ks.SetExpire(e, toNanos(at, unit))
	}
	c.Int(1)
}

// expireTarget converts the argument to an absolute time in the command's working unit
// (milliseconds for Redis's commands, nanoseconds for HotKV's) and returns the current time in
// that unit. ok is false on Redis's overflow checks.
func expireTarget(when int64, relative bool, unit, nowNs int64) (at, now int64, ok bool) {
	work := min(unit, unitMs)
	if unit == unitSec {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return 0, 0, false
		}
		when *= 1000
	}
	now = nowNs / work
	if !relative {
		return when, now, true
	}
	if when > math.MaxInt64-now {
		return 0, 0, false
	}
	return when + now, now, true
}

// toNanos converts a future time in the working unit of a command of unit to nanoseconds. Times
// past the year 2262 do not fit and are kept as the latest representable time.
func toNanos(at, unit int64) int64 {
	work := min(unit, unitMs)
	if at > math.MaxInt64/work {
		return math.MaxInt64
	}
	return at * work
}

// currentExpire returns e's expiry in the command's working unit, or -1 when it has none.
func currentExpire(e *keyspace.Entry, unit int64) int64 {
	if e.ExpireAt() == 0 {
		return -1
	}
	return e.ExpireAt() / min(unit, unitMs)
}

// expireAllowed applies NX|XX|GT|LT; no expiry (-1) counts as an infinite TTL.
func expireAllowed(flags int, at, cur int64) bool {
	switch {
	case flags&expireNX != 0 && cur != -1:
	case flags&expireXX != 0 && cur == -1:
	case flags&expireGT != 0 && (cur == -1 || at <= cur):
	case flags&expireLT != 0 && cur != -1 && at >= cur:
	default:
		return true
	}
	return false
}

// parseExpireFlags parses [NX|XX|GT|LT] (repeats allowed) and rejects the combinations Redis
// rejects.
func parseExpireFlags(args [][]byte) (int, string) {
	flags := 0
	for _, a := range args {
		switch {
		case EqualFold(a, "NX"):
			flags |= expireNX
		case EqualFold(a, "XX"):
			flags |= expireXX
		case EqualFold(a, "GT"):
			flags |= expireGT
		case EqualFold(a, "LT"):
			flags |= expireLT
		default:
			return 0, formatOption(a)
		}
	}
	switch {
	case flags&expireNX != 0 && flags&(expireXX|expireGT|expireLT) != 0:
		return 0, ErrExpireNXAndMore
	case flags&expireGT != 0 && flags&expireLT != 0:
		return 0, ErrExpireGTAndLT
	}
	return flags, ""
}

// formatOption builds "Unsupported option X": Redis prints the option with %s, so it ends at
// the first NUL byte.
func formatOption(a []byte) string {
	for i, b := range a {
		if b == 0 {
			a = a[:i]
			break
		}
	}
	return fmt.Sprintf(ErrExpireOption, a)
}

// TTL key
func ttl(c *Ctx) { ttlGeneric(c, unitSec, false) }

// PTTL key
func pttl(c *Ctx) { ttlGeneric(c, unitMs, false) }

// NTTL key
func nttl(c *Ctx) { ttlGeneric(c, unitNs, false) }

// EXPIRETIME key
func expiretime(c *Ctx) { ttlGeneric(c, unitSec, true) }

// PEXPIRETIME key
func pexpiretime(c *Ctx) { ttlGeneric(c, unitMs, true) }

// ttlGeneric replies -2 without the key, -1 without an expiry, else the remaining time (abs:
// the expiry time). Like Redis, the seconds forms round the milliseconds value half up, and the
// millisecond values are whole milliseconds of the expiry and the current time, so a key given
// PEXPIRE 100 reads PTTL 100 within the same millisecond.
func ttlGeneric(c *Ctx, unit int64, abs bool) {
	e := c.KS(c.Args[1]).FindQuiet(c.Args[1], c.Now)
	switch {
	case e == nil:
		c.Int(-2)
	case e.ExpireAt() == 0:
		c.Int(-1)
	default:
		work := min(unit, unitMs)
		v := e.ExpireAt() / work
		if !abs {
			v = max(v-c.Now/work, 0)
		}
		if unit == unitSec {
			v = (v + 500) / 1000
		}
		c.Int(v)
	}
}

// PERSIST key
func persist(c *Ctx) {
	e := c.Find(c.Args[1])
	if e == nil || e.ExpireAt() == 0 {
		c.Int(0)
		return
	}
	c.KS(c.Args[1]).SetExpire(e, 0)
	c.Int(1)
}

// Active expiry tuning. A shard is held at most expireShardSlice per visit so commands queued
// for it wait no longer than that; within a database the sweep goes on while more than a tenth
// of the volatile keys it meets have expired (Redis's ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE).
// Shards left with stale keys are visited again in a later round, after a pause that lets
// goroutines waiting for them in.
const (
	expireShardSlice = time.Millisecond
	expireRoundPause = 50 * time.Microsecond
	expireSample     = 20 // volatile keys to meet per step, like Redis's keys per loop
	expireMaxStep    = 1 << 14
)

// ActiveExpire reclaims expired keys in every shard, spending about budget in all, never holding
// one shard for more than about a millisecond. The server calls it hz times a second. Shards
// are visited from a random one so a budget that runs out does not always spare the same ones.
func (e *Engine) ActiveExpire(budget time.Duration) {
	deadline := time.Now().Add(budget)
	n := len(e.Group.Shards)
	first := int(e.rand() % uint64(n))
	for more := true; more; {
		more = false
		for i := range n {
			left := time.Until(deadline)
			if left <= 0 {
				return
			}
			e.Group.Do((first+i)%n, func(sh *pipeline.Shard) {
				reclaimed, stale := expireShardLocked(sh.Data.(*shardData), min(left, expireShardSlice))
				e.stats.expiredKeys.Add(int64(reclaimed))
				more = more || stale
			})
		}
		if more {
			time.Sleep(expireRoundPause)
		}
	}
}

// expireShardLocked sweeps every database of a held shard for at most limit. stale reports that
// time ran out while the sweep was still finding expired keys.
func expireShardLocked(d *shardData, limit time.Duration) (total int, stale bool) {
	start := time.Now()
	now := start.UnixNano()
	for _, ks := range d.dbs {
		for ks.Volatile() > 0 {
			// Entries to visit so that about expireSample volatile ones are met: the sweep
			// walks all keys, and only some of them have an expiry.
			step := min(expireSample*ks.Len()/ks.Volatile(), expireMaxStep)
			reclaimed, sampled := ks.Sweep(now, step)
			total += reclaimed
			if reclaimed*10 <= sampled {
				break
			}
			if time.Since(start) >= limit {
				return total, true
			}
		}
	}
	return total, false
}
