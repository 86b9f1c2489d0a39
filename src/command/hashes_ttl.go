package command

import (
	"fmt"
	"strconv"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
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
	switch {
	case msg != "":
		c.Err(msg)
	case h == nil:
		hfeEachField(c, nil, 0, fields, nil)
	default:
		hexpireFields(c, e, h, fields, at, cond, pos)
	}
}

// hexpireFields sets the expiry of fields of the hash h at entry e to at under cond, deletes the
// hash if that emptied it, and otherwise queues it for active expiry. pos is the index of FIELDS
// in the arguments.
//
// Effects are Redis 7.4's hashTypeSetExDone: a change counted per field set or deleted, then
// "hexpire", or "hdel" when a field was deleted (and "del" if none is left). A field whose time
// has passed is deleted and its HDEL propagated at once; the command is replicated as HPEXPIREAT
// of the fields it set, or not at all if it set none (hexpireGenericCommand).
func hexpireFields(c *Ctx, e *keyspace.Entry, h *hash.Hash, fields [][]byte, at int64, cond, pos int) {
	h.EnableTTL() // Redis converts a listpack to listpackex before looking at the fields
	before, now := h.NextExpiry(), nowMs(c)
	key := c.Args[1]
	active := c.E.Feed.Active()
	set, deleted := 0, 0
	var kept [][]byte // the fields set, for the replicated form (only with a feed reader)
	hfeEachField(c, h, 0, fields, func(f []byte, prev int64) int64 {
		code := hfeSetField(h, f, prev, at, cond, now)
		switch {
		case code == hfeSet:
			set++
			if active {
				kept = append(kept, f)
			}
		case code == hfeDeleted:
			deleted++
			propagateFieldDeletion(c, c.DB, key, f)
		}
		return code
	})
	if set+deleted > 0 {
		c.Dirty(set + deleted)
		c.Touch(key)
		if deleted > 0 {
			c.Notify(NotifyHash, "hdel", key)
		} else {
			c.Notify(NotifyHash, "hexpire", key)
		}
	}
	switch {
	case set == 0:
		c.PropagateNothing()
	case active:
		c.Propagate(hexpireReplicated(c, at, pos, len(fields), kept)...)
	}
	d := c.E.data(c.E.shardOf(key))
	if h.Len() == 0 {
		c.Notify(NotifyGeneric, "del", key)
		d.dbs[c.DB].Remove(e)
		return
	}
	d.hfe.trackLocked(d.dbs[c.DB], key, before, h.NextExpiry())
}

// hexpireReplicated is the HPEXPIREAT an HFE command that set the expiry of the fields kept (of
// n named) is replicated as: Redis rewrites the name and time unless the command was HPEXPIREAT
// already, and the count and fields when some were not set; the rest stays as the client sent it.
func hexpireReplicated(c *Ctx, at int64, pos, n int, kept [][]byte) [][]byte {
	args := make([][]byte, 0, pos+2+len(kept))
	name, when := c.Args[0], c.Args[2]
	if c.Spec.Name != "hpexpireat" {
		name, when = hashHpexpireatArg, strconv.AppendInt(nil, at, 10)
	}
	args = append(args, name, c.Args[1], when)
	args = append(args, c.Args[3:pos+1]...) // the condition, if any, and FIELDS
	count := c.Args[pos+1]
	if len(kept) != n {
		count = strconv.AppendInt(nil, int64(len(kept)), 10)
	}
	args = append(args, count)
	return append(args, kept...)
}

// hashHpexpireatArg is the name the HFE commands are replicated under (Redis's shared.hpexpireat).
var hashHpexpireatArg = []byte("HPEXPIREAT")

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
	case strs.EqualFold(a, "NX"):
		return expireNX
	case strs.EqualFold(a, "XX"):
		return expireXX
	case strs.EqualFold(a, "GT"):
		return expireGT
	case strs.EqualFold(a, "LT"):
		return expireLT
	}
	return 0
}

// hfeFields parses "FIELDS numfields field..." at args[pos:], which must name exactly the
// remaining arguments. countMsg is the command's error for a count that is not positive.
func hfeFields(args [][]byte, pos int, countMsg string) ([][]byte, string) {
	if !strs.EqualFold(args[pos], "FIELDS") {
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

// hfeSetField sets the expiry of f, an existing field expiring at prev (0: never), under cond
// and returns its code. A field without an expiry counts as expiring never: GT fails and LT
// succeeds, as in Redis.
func hfeSetField(h *hash.Hash, f []byte, prev, at int64, cond int, now int64) int64 {
	switch {
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

// hfeEachField replies an array with one code per field: hfeNoField for a field h does not have
// (h nil: no such key), otherwise op's code for the field and its current expiry (0: none),
// which op may change. This is the one per-field loop of every HFE command.
func hfeEachField(c *Ctx, h *hash.Hash, hide int64, fields [][]byte, op func(f []byte, at int64) int64) {
	c.ArrayLen(len(fields))
	for _, f := range fields {
		code := int64(hfeNoField)
		if h != nil {
			if at, exists := h.TTL(f); exists && !ttlHidden(at, hide) {
				code = op(f, at)
			}
		}
		c.Int(code)
	}
}

// hfeFieldsOnly is the start of the commands whose only argument after the key is FIELDS: it
// finds the hash (for writing when write) and parses the fields, replying the error when it
// returns false.
func hfeFieldsOnly(c *Ctx, write bool) (h *hash.Hash, hide int64, fields [][]byte, ok bool) {
	if write {
		_, h, ok = writeHash(c, c.Args[1])
	} else {
		h, hide, ok = readHashFields(c, c.Args[1])
	}
	if !ok {
		return nil, 0, nil, false
	}
	fields, msg := hfeFields(c.Args, 2, ErrHashNumFields)
	if msg != "" {
		c.Err(msg)
		return nil, 0, nil, false
	}
	return h, hide, fields, true
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
	h, hide, fields, ok := hfeFieldsOnly(c, false)
	if !ok {
		return
	}
	base := nowMs(c)
	if abs {
		base = 0
	}
	hfeEachField(c, h, hide, fields, func(_ []byte, at int64) int64 {
		switch {
		case at == 0:
			return hfeNoTTL
		case unit == unitSec:
			return (at + 999 - base) / 1000
		}
		return at - base
	})
}

// HPERSIST key FIELDS numfields field [field ...]. One change counted and one "hpersist" raised
// if any field lost its expiry, however many did (Redis 7.4's hpersistCommand); replicated as
// itself.
func hpersist(c *Ctx) {
	h, _, fields, ok := hfeFieldsOnly(c, true)
	if !ok {
		return
	}
	changed := false
	hfeEachField(c, h, 0, fields, func(f []byte, at int64) int64 {
		if at == 0 {
			return hfeNoTTL
		}
		h.SetTTL(f, 0)
		changed = true
		return hfeSet
	})
	if changed {
		c.Changed(NotifyHash, "hpersist", c.Args[1])
		c.Dirty(1)
	}
}
