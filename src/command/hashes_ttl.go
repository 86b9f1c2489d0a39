package command

import (
	"fmt"

	"github.com/hotkv/hotkv/ds/hash"
)

// Per-field expiry, with Redis 7.4's syntax, checks and replies: an array with one code per
// field (a missing key counts as a hash without those fields). Times are unix milliseconds.

// hfeMaxTime is Redis's HFE_MAX_ABS_TIME_MSEC: (2^48-1)>>2, the latest field expiry accepted.
const hfeMaxTime = (1<<48 - 1) >> 2

// Per-field codes of the HFE commands.
const (
	hfeNoField = -2 // no such field (or no such key)
	hfeNoTTL   = -1 // HTTL, HPERSIST: the field has no expiry
	hfeNotMet  = 0  // HEXPIRE: the NX|XX|GT|LT condition was not met
	hfeSet     = 1  // HEXPIRE: set; HPERSIST: removed
	hfeDeleted = 2  // HEXPIRE: the time is not in the future, so the field was deleted
)

// HEXPIRE key seconds [NX|XX|GT|LT] FIELDS numfields field [field ...]
func hexpire(c *Ctx) { hexpireGeneric(c, true, unitSec) }

// HPEXPIRE key milliseconds [NX|XX|GT|LT] FIELDS numfields field [field ...]
func hpexpire(c *Ctx) { hexpireGeneric(c, true, unitMs) }

// HEXPIREAT key unix-time-seconds [NX|XX|GT|LT] FIELDS numfields field [field ...]
func hexpireat(c *Ctx) { hexpireGeneric(c, false, unitSec) }

// HPEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT] FIELDS numfields field [field ...]
func hpexpireat(c *Ctx) { hexpireGeneric(c, false, unitMs) }

// hexpireGeneric checks in Redis 7.4's order: the key's type, the time, the condition, FIELDS
// and its count; then it sets each field's expiry, deleting the fields whose time has come.
func hexpireGeneric(c *Ctx, relative bool, unit int64) {
	key := c.Args[1]
	e, h, ok := writeHash(c, key)
	if !ok {
		return
	}
	at, msg := hfeTime(c, relative, unit)
	if msg != "" {
		c.Err(msg)
		return
	}
	cond, pos := 0, 3
	if f := hfeCondition(c.Args[3]); f != 0 {
		cond, pos = f, 4
	}
	fields, msg := hfeFields(c.Args, pos, ErrHashExpireFields)
	if msg != "" {
		c.Err(msg)
		return
	}
	c.ArrayLen(len(fields))
	if h == nil {
		replyCodes(c, len(fields), hfeNoField)
		return
	}
	h.EnableTTL() // Redis converts a listpack to listpackex before looking at the fields
	before, now := h.NextExpiry(), nowMs(c)
	for _, f := range fields {
		c.Int(hfeSetField(h, f, at, cond, now))
	}
	if h.Len() == 0 {
		c.KS(key).Remove(e)
		return
	}
	hfeTrack(c.KS(key), key, before, h.NextExpiry())
}

// hfeTime parses the time argument into an absolute unix ms time.
func hfeTime(c *Ctx, relative bool, unit int64) (int64, string) {
	v, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		return 0, ErrNotInt
	case v < 0:
		return 0, ErrHashExpireNeg
	}
	base := int64(0)
	if relative {
		base = nowMs(c)
	}
	if unit == unitSec {
		if v > hfeMaxTime/1000 {
			return 0, hfeInvalidTime(c)
		}
		v *= 1000
	}
	if v > hfeMaxTime-base {
		return 0, hfeInvalidTime(c)
	}
	return v + base, ""
}

func hfeInvalidTime(c *Ctx) string { return fmt.Sprintf(ErrInvalidExpire, c.Spec.Name) }

// hfeCondition parses an optional NX|XX|GT|LT (0: not one of them).
func hfeCondition(a []byte) int {
	switch {
	case EqualFold(a, "NX"):
		return expireNX
	case EqualFold(a, "XX"):
		return expireXX
	case EqualFold(a, "GT"):
		return expireGT
	case EqualFold(a, "LT"):
		return expireLT
	}
	return 0
}

// hfeFields parses "FIELDS numfields field..." at args[pos:], which must name exactly the
// remaining arguments. countMsg is the command's error for a count that is not positive.
func hfeFields(args [][]byte, pos int, countMsg string) ([][]byte, string) {
	if !EqualFold(args[pos], "FIELDS") {
		return nil, ErrHashFieldsArg
	}
	n, ok := ParseInt(args[pos+1])
	if !ok || n < 1 {
		return nil, countMsg
	}
	fields := args[pos+2:]
	if n != int64(len(fields)) {
		return nil, ErrHashFieldsCount
	}
	return fields, ""
}

// hfeSetField sets one field's expiry under cond and returns its code. A field without an
// expiry counts as expiring never: GT fails and LT succeeds, as in Redis.
func hfeSetField(h *hash.Hash, f []byte, at int64, cond int, now int64) int64 {
	prev, exists := h.TTL(f)
	switch {
	case !exists:
		return hfeNoField
	case prev == 0 && cond&(expireXX|expireGT) != 0:
		return hfeNotMet
	case prev != 0 && (cond == expireNX || (cond == expireGT && prev >= at) || (cond == expireLT && prev <= at)):
		return hfeNotMet
	case at <= now:
		h.Delete(f)
		return hfeDeleted
	}
	h.SetTTL(f, at)
	return hfeSet
}

func replyCodes(c *Ctx, n int, code int64) {
	for range n {
		c.Int(code)
	}
}

// HTTL key FIELDS numfields field [field ...]
func httl(c *Ctx) { httlGeneric(c, unitSec, false) }

// HPTTL key FIELDS numfields field [field ...]
func hpttl(c *Ctx) { httlGeneric(c, unitMs, false) }

// HEXPIRETIME key FIELDS numfields field [field ...]
func hexpiretime(c *Ctx) { httlGeneric(c, unitSec, true) }

// HPEXPIRETIME key FIELDS numfields field [field ...]
func hpexpiretime(c *Ctx) { httlGeneric(c, unitMs, true) }

// httlGeneric replies each field's remaining time (abs: its expiry time). Seconds round up, as
// Redis's (expire + 999 - base) / 1000 does.
func httlGeneric(c *Ctx, unit int64, abs bool) {
	h, ok := readHash(c, c.Args[1])
	if !ok {
		return
	}
	fields, msg := hfeFields(c.Args, 2, ErrHashNumFields)
	if msg != "" {
		c.Err(msg)
		return
	}
	c.ArrayLen(len(fields))
	if h == nil {
		replyCodes(c, len(fields), hfeNoField)
		return
	}
	base := nowMs(c)
	if abs {
		base = 0
	}
	for _, f := range fields {
		at, exists := h.TTL(f)
		switch {
		case !exists:
			c.Int(hfeNoField)
		case at == 0:
			c.Int(hfeNoTTL)
		case unit == unitSec:
			c.Int((at + 999 - base) / 1000)
		default:
			c.Int(at - base)
		}
	}
}

// HPERSIST key FIELDS numfields field [field ...]
func hpersist(c *Ctx) {
	_, h, ok := writeHash(c, c.Args[1])
	if !ok {
		return
	}
	fields, msg := hfeFields(c.Args, 2, ErrHashNumFields)
	if msg != "" {
		c.Err(msg)
		return
	}
	c.ArrayLen(len(fields))
	if h == nil {
		replyCodes(c, len(fields), hfeNoField)
		return
	}
	for _, f := range fields {
		at, exists := h.TTL(f)
		switch {
		case !exists:
			c.Int(hfeNoField)
		case at == 0:
			c.Int(hfeNoTTL)
		default:
			h.SetTTL(f, 0)
			c.Int(hfeSet)
		}
	}
}
