package command

import (
	"math"
	"strconv"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// CL.THROTTLE: redis-cell's rate limiter as one command (GCRA, the generic cell rate algorithm),
// which Dragonfly also ships built in. The state is one string key holding the theoretical
// arrival time (TAT) in unix nanoseconds as a decimal integer, as redis-cell stores it, so TYPE
// says "string", GET shows the TAT and DEL resets the limiter. The key expires when its TAT
// passes (rounded up to the millisecond), when its state equals no state.
//
// Differences from redis-cell, all where it has no defined behaviour: arithmetic saturates
// instead of overflowing; a key of another type is WRONGTYPE; the write is replicated as
// SET key tat PXAT ms (redis-cell replicates the command verbatim, so a replica's clock decides
// its state; HotKV's replicas get the primary's state exactly).

var throttleCommands = []*Spec{
	{Name: "cl.throttle", Arity: -1, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1,
		Run: clThrottle},
}

const (
	errCellUsage    = "Cell error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]"
	errCellZeroRate = "Cell error: Zero rates are not supported"
	errCellParse    = "Cell error: Couldn't parse as integer: "
)

// gcraResult is one CL.THROTTLE decision; durations in nanoseconds.
type gcraResult struct {
	limited    bool
	limit      int64
	remaining  int64
	retryAfter int64 // -1 s when allowed (or when the request can never be allowed)
	resetAfter int64
	// tat is the TAT to store when allowed (write set); 0 with write set means delete the key.
	tat   int64
	write bool
}

func satAdd(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		if (a < 0) != (b < 0) {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return p
}

// gcraRateLimit is redis-cell's rate_limit: stored is the key's TAT (ns) when has is set. ok is
// false for a zero rate.
func gcraRateLimit(stored int64, has bool, now, maxBurst, count, periodSec, quantity int64) (r gcraResult, ok bool) {
	periodNs := satMul(periodSec, 1e9)
	var emission int64
	if count != 0 && periodNs != 0 {
		emission = f64ToI64(float64(periodNs) / float64(count))
	}
	if emission == 0 {
		return r, false
	}
	dvt := satMul(emission, satAdd(maxBurst, 1))
	r.limit = satAdd(maxBurst, 1)
	r.retryAfter = -1e9
	increment := satMul(emission, quantity)
	tat := now
	if has {
		tat = stored
	}
	newTat := satAdd(max(now, tat), increment)
	allowAt := satAdd(newTat, -dvt)
	diff := satAdd(now, -allowAt)
	var ttl int64
	if diff < 0 {
		if increment <= dvt {
			r.retryAfter = -diff
		}
		r.limited = true
		ttl = satAdd(tat, -now)
	} else {
		ttl = satAdd(newTat, -now)
		r.tat, r.write = newTat, true
	}
	if next := satAdd(dvt, -ttl); next > -emission {
		// Whole microseconds over whole microseconds, in floating point, as redis-cell divides.
		num, den := float64(next/1000), float64(emission/1000)
		r.remaining = f64ToI64(num / den)
	}
	r.resetAfter = ttl
	return r, true
}

// f64ToI64 converts as Rust's `as i64` does: truncating, saturating, NaN to 0.
func f64ToI64(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= 9.223372036854775807e18:
		return math.MaxInt64
	case f <= -9.223372036854775808e18:
		return math.MinInt64
	}
	return int64(f)
}

// cellSeconds is redis-cell's rounding of a duration to whole seconds: up when it has a partial
// millisecond or more (whole_seconds, then +1 when subsec_milliseconds > 0).
func cellSeconds(ns int64) int64 {
	s := ns / 1e9
	if (ns%1e9)/1e6 > 0 {
		s++
	}
	return s
}

// CL.THROTTLE key max_burst count_per_period period [quantity]
func clThrottle(c *Ctx) {
	if len(c.Args) != 5 && len(c.Args) != 6 {
		c.Err(errCellUsage)
		return
	}
	var nums [4]int64
	nums[3] = 1
	for i := 2; i < len(c.Args); i++ {
		n, err := strconv.ParseInt(string(c.Args[i]), 10, 64) // Rust's i64 parse: a '+' is accepted
		if err != nil {
			c.Err(errCellParse + string(c.Args[i]))
			return
		}
		nums[i-2] = n
	}
	key := c.Args[1]
	ks, e := c.FindIn(key)
	var stored int64
	if e != nil {
		if e.Kind != keyspace.KindString {
			c.WrongType()
			return
		}
		v := c.strBytes(e)
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			c.Err(errCellParse + string(v))
			return
		}
		stored = n
	}
	r, ok := gcraRateLimit(stored, e != nil, c.Now, nums[0], nums[1], nums[2], nums[3])
	if !ok {
		c.Err(errCellZeroRate)
		return
	}
	if r.write {
		throttleStore(c, ks, e, key, r.tat)
	}
	c.ArrayLen(5)
	if r.limited {
		c.Int(1)
	} else {
		c.Int(0)
	}
	c.Int(r.limit)
	c.Int(r.remaining)
	c.Int(cellSeconds(r.retryAfter))
	c.Int(cellSeconds(r.resetAfter))
}

// throttleStore writes tat into key (e, of ks, nil when absent), expiring at tat rounded up to
// the millisecond; a TAT not after now is no state, so the key goes.
func throttleStore(c *Ctx, ks *keyspace.Keyspace, e *keyspace.Entry, key []byte, tat int64) {
	if tat <= c.Now {
		if e != nil && ks.Delete(key, c.Now) {
			c.Changed(NotifyGeneric, "del", key)
			c.Dirty(1)
			c.Propagate([]byte("DEL"), key)
			return
		}
		c.PropagateNothing()
		return
	}
	expMs := tat / 1e6
	if tat%1e6 != 0 {
		expMs++
	}
	if e == nil {
		e = addString(c, ks, key)
	}
	// Rewritten in place in the entry's buffer, as INCR does: no allocation once the key exists.
	ks.Unpacked(e)
	b := e.Bytes()
	if cap(b) < 20 {
		b = make([]byte, 0, 20)
	}
	e.SetBytes(strconv.AppendInt(b[:0], tat, 10))
	e.Enc = EncInt
	ks.SetExpire(e, satMul(expMs, 1e6))
	c.Changed(NotifyString, "set", key)
	c.Notify(NotifyGeneric, "expire", key)
	c.Dirty(1)
	if c.E.Feed.Active() { // the entry's own copy of the value: buf stays on the stack
		c.Propagate([]byte("SET"), key, e.Bytes(), []byte("PXAT"), strconv.AppendInt(nil, expMs, 10))
	} else {
		c.PropagateNothing()
	}
}
