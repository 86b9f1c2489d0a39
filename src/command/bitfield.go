package command

import (
	"bytes"

	"github.com/hotkv/hotkv/ds/bitmap"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
)

// fieldOp is one BITFIELD GET, SET or INCRBY, with the OVERFLOW in force when it was named.
type fieldOp struct {
	kind  byte // 'g', 's' or 'i'
	field bitmap.Field
	off   uint64
	arg   int64
	ow    bitmap.Overflow
}

// BITFIELD key [GET type offset] [SET type offset value] [INCRBY type offset increment]
// [OVERFLOW WRAP|SAT|FAIL] ...
func bitfield(c *Ctx) { bitfieldGeneric(c, false) }

// BITFIELD_RO key [GET type offset ...]
func bitfieldRO(c *Ctx) { bitfieldGeneric(c, true) }

// bitfieldGeneric parses every operation first (the first bad one is the reply), then runs them
// in order. Writes grow the string once, to the farthest bit any of them reaches (creating the
// key even when every write then fails, as in Redis, which then reports no change).
func bitfieldGeneric(c *Ctx, readOnly bool) {
	ops, maxBit, writes, msg := parseFieldOps(c)
	if msg != "" {
		c.Err(msg)
		return
	}
	key := c.Args[1]
	if writes == 0 {
		var d bitDest
		switch e := c.FindRead(key); {
		case e != nil && e.Kind != keyspace.KindString:
			c.WrongType()
			return
		case e != nil:
			if d.sparse = sparseOf(e); d.sparse == nil {
				d.dense = c.strBytes(e)
			}
		}
		replyFieldOps(c, ops, &d)
		return
	}
	if readOnly {
		c.Err(ErrBitfieldRO)
		return
	}
	d, ok := bitString(c, key, maxBit)
	if !ok {
		return
	}
	changes := replyFieldOps(c, ops, &d)
	d.done(c)
	if changes > 0 {
		c.Changed(NotifyString, "setbit", key)
		c.Dirty(changes)
	}
}

// replyFieldOps runs ops over d, which holds every bit a write reaches (reads only: whatever
// the key holds), and replies their results. It returns the changes, as Redis 7 counts them: every write that was not stopped by
// FAIL when the string was created or grew, else those that changed their field.
func replyFieldOps(c *Ctx, ops []fieldOp, d *bitDest) (changes int) {
	c.ArrayLen(len(ops))
	for _, op := range ops {
		old := d.getField(op.field, op.off)
		if op.kind == 'g' {
			c.Int(old)
			continue
		}
		v, incr, ret := op.arg, int64(0), old
		if op.kind == 'i' {
			v, incr = old, op.arg
		}
		nv, over := op.field.Add(v, incr, op.ow)
		if over && op.ow == bitmap.Fail {
			c.Null()
			continue
		}
		if op.kind == 'i' {
			ret = nv
		}
		d.setField(op.field, op.off, nv)
		if d.grew || nv != old {
			changes++
		}
		c.Int(ret)
	}
	return changes
}

// parseFieldOps parses BITFIELD's operations. It returns them, the highest bit a write reaches,
// the number of writes, and the first error's wire string.
func parseFieldOps(c *Ctx) (ops []fieldOp, maxBit uint64, writes int, msg string) {
	ow := bitmap.Wrap
	for j := 2; j < len(c.Args); j++ {
		left := len(c.Args) - j - 1
		var kind byte
		switch sub := c.Args[j]; {
		case strs.EqualFold(sub, "GET") && left >= 2:
			kind = 'g'
		case strs.EqualFold(sub, "SET") && left >= 3:
			kind = 's'
		case strs.EqualFold(sub, "INCRBY") && left >= 3:
			kind = 'i'
		case strs.EqualFold(sub, "OVERFLOW") && left >= 1:
			j++
			switch w := c.Args[j]; {
			case strs.EqualFold(w, "WRAP"):
				ow = bitmap.Wrap
			case strs.EqualFold(w, "SAT"):
				ow = bitmap.Sat
			case strs.EqualFold(w, "FAIL"):
				ow = bitmap.Fail
			default:
				return nil, 0, 0, ErrBitfieldOverflow
			}
			continue
		default:
			return nil, 0, 0, ErrSyntax
		}
		f, ok := parseFieldType(c.Args[j+1])
		if !ok {
			return nil, 0, 0, ErrBitfieldType
		}
		off, ok := parseBitOffset(c, c.Args[j+2], int(f.Bits))
		if !ok {
			return nil, 0, 0, ErrBitOffset
		}
		op := fieldOp{kind: kind, field: f, off: off, ow: ow}
		if kind != 'g' {
			if op.arg, ok = ParseInt(c.Args[j+3]); !ok {
				return nil, 0, 0, ErrNotInt
			}
			maxBit = max(maxBit, off+uint64(f.Bits)-1)
			writes++
			j++
		}
		ops = append(ops, op)
		j += 2
	}
	return ops, maxBit, writes, ""
}

// parseFieldType parses i1..i64 or u1..u63. Redis reads the width as a C string, so it ends at
// a NUL byte.
func parseFieldType(arg []byte) (bitmap.Field, bool) {
	if len(arg) == 0 || (arg[0] != 'i' && arg[0] != 'u') {
		return bitmap.Field{}, false
	}
	w := arg[1:]
	if i := bytes.IndexByte(w, 0); i >= 0 {
		w = w[:i]
	}
	n, ok := ParseInt(w)
	signed := arg[0] == 'i'
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		return bitmap.Field{}, false
	}
	return bitmap.Field{Bits: uint(n), Signed: signed}, true
}
