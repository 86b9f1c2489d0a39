package command

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/pipeline"
)

// expireCommands set, read and clear key expiry. Redis's commands work in exact unix
// milliseconds up to int64 (the keyspace's SetExpireMs/ExpireMs; the seconds forms round like
// Redis's), HotKV's N-commands (NEXPIRE, NEXPIREAT, NTTL) in nanoseconds, which end in 2262.
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
// the current millisecond) and store the exact millisecond; the N-commands compute in
// nanoseconds.
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
	if e == nil || !expireAllowed(flags, e.ExpireAt() != 0, compareExpire(ks, e, at, unit)) {
		c.Int(0)
		return
	}
	if at <= now {
		removeExpired(c, ks, e, c.Args[1]) // a time in the past deletes the key, as Redis 7 does
		c.Int(1)
		return
	}
	if unit == unitNs {
		ks.SetExpire(e, at)
	} else {
		ks.SetExpireMs(e, at)
	}
	c.Changed(NotifyGeneric, "expire", c.Args[1])
	c.Dirty(1)
	propagateExpire(c, at, relative, unit)
	c.Int(1)
}

// propagateExpire replicates an expiry set at at (in the command's working unit) as Redis does:
// PEXPIREAT as typed stays itself, EXPIRE, PEXPIRE and EXPIREAT become PEXPIREAT key unix-ms
// with their options as typed. NEXPIRE and NEXPIREAT become the PEXPIREAT a Redis replica reads,
// the time rounded up to its millisecond (so a replica never drops the key before HotKV does)
// and without their options: HotKV decided them at nanoseconds, which the replica cannot.
func propagateExpire(c *Ctx, at int64, relative bool, unit int64) {
	switch {
	case unit == unitMs && !relative:
	case unit == unitNs:
		propagatePexpireat(c, c.Args[1], at/unitMs+boolInt(at%unitMs != 0), nil)
	default:
		propagatePexpireat(c, c.Args[1], at, c.Args[3:])
	}
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

// compareExpire compares at, in the command's working unit, with e's expiry (-1, 0 or +1 as at
// is earlier, equal or later). An expiry past 2262 is later than every nanosecond time.
func compareExpire(ks *keyspace.Keyspace, e *keyspace.Entry, at, unit int64) int {
	cur := ks.ExpireMs(e)
	switch {
	case unit != unitNs:
	case cur > keyspace.MaxNearMs:
		return -1
	default:
		cur = e.ExpireAt()
	}
	return cmp.Compare(at, cur)
}

// expireAllowed applies NX|XX|GT|LT to a key that has an expiry or not (an infinite TTL), whose
// expiry compares with the new time as order does.
func expireAllowed(flags int, has bool, order int) bool {
	switch {
	case flags&expireNX != 0 && has:
	case flags&expireXX != 0 && !has:
	case flags&expireGT != 0 && (!has || order <= 0):
	case flags&expireLT != 0 && has && order >= 0:
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
		case strs.EqualFold(a, "NX"):
			flags |= expireNX
		case strs.EqualFold(a, "XX"):
			flags |= expireXX
		case strs.EqualFold(a, "GT"):
			flags |= expireGT
		case strs.EqualFold(a, "LT"):
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
	ks := c.KS(c.Args[1])
	e := c.FindQuiet(c.Args[1])
	switch {
	case e == nil:
		c.Int(-2)
	case e.ExpireAt() == 0:
		c.Int(-1)
	case unit == unitNs:
		c.Int(remainingNs(ks, e, c.Now))
	default:
		v := ks.ExpireMs(e)
		if !abs {
			v = max(v-c.Now/unitMs, 0)
		}
		if unit == unitSec {
			v = roundMsToSec(v)
		}
		c.Int(v)
	}
}

// roundMsToSec is Redis's (ms+500)/1000 for ms >= 0. Redis 7.0.15's build evaluates it without
// overflow (EXPIRETIME after PXAT 9223372036854775807 is 9223372036854776), so this rounds
// without the sum.
func roundMsToSec(ms int64) int64 {
	if ms%1000 >= 500 {
		return ms/1000 + 1
	}
	return ms / 1000
}

// remainingNs is NTTL's reply: the nanoseconds from now until e expires, at least 0. A key set
// past 2262 by a Redis command may be further away than int64 nanoseconds reach; NTTL then
// replies math.MaxInt64.
func remainingNs(ks *keyspace.Keyspace, e *keyspace.Entry, now int64) int64 {
	ms := ks.ExpireMs(e)
	if ms <= keyspace.MaxNearMs {
		return max(e.ExpireAt()-now, 0)
	}
	left := ms - now/unitMs // whole milliseconds from now's millisecond
	if left > math.MaxInt64/unitMs {
		return math.MaxInt64
	}
	return left*unitMs - now%unitMs
}

// PERSIST key
func persist(c *Ctx) {
	e := c.Find(c.Args[1])
	if e == nil || e.ExpireAt() == 0 {
		c.Int(0)
		return
	}
	c.KS(c.Args[1]).SetExpire(e, 0)
	c.Changed(NotifyGeneric, "persist", c.Args[1])
	c.Dirty(1)
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
	// DEBUG SET-ACTIVE-EXPIRE 0; a replica waits for DELs; a paused server keeps its dataset
	// (and so its replication offset) as it is until the pause ends, as Redis 7.0's
	// activeExpireCycle returns while clients are paused.
	if e.lat.noActiveExpire.Load() || e.expiryHeld() {
		return
	}
	start := time.Now()
	defer func() {
		d := time.Since(start)
		e.lat.expireCycleNs.Add(int64(d)) // INFO expire_cycle_cpu_milliseconds
		e.LatencyEvent("expire-cycle", d)
	}()
	deadline := start.Add(budget)
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
				d := sh.Data.(*shardData)
				_, stale := expireShardLocked(d, min(left, expireShardSlice))
				if len(d.block.groupKeys) > 0 { // XREADGROUP clients of expired streams
					e.checkGroupWaitersLocked(d, time.Now().UnixNano())
				}
				e.commitBackgroundLocked(d)
				more = more || stale // reclaimed keys were reported by expiredLocked
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
	d.epoch++ // no handler runs: entries removed before now may be reused, their values let go
	for _, ks := range d.dbs {
		ks.Recycle()
		d.expireHashFieldsLocked(ks, now) // hashes_expire.go
		d.expireVsetsLocked(ks, now)      // vset_expire.go
		d.expireIPSetsLocked(ks, now)     // ipsets.go
		d.expireAgentMemLocked(ks, now)   // mem_expire.go
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
