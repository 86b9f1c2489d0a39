package command

import (
	"github.com/hotkv/hotkv/ds/bitmap"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/sparsebits"
	"github.com/hotkv/hotkv/ds/strs"
)

// Bitmaps are string values seen as bits (ds/bitmap): GET, SETRANGE, APPEND and STRLEN see the
// same bytes. Like Redis, a bit write leaves the value raw-encoded. The reads (GETBIT, BITCOUNT,
// BITPOS, BITFIELD_RO) only read through FindRead, so they are shared (docs/decisions.md, "Shared
// reads"; TestSharedBitReadsBesideWrites).
var bitmapCommands = []*Spec{
	{Name: "setbit", Arity: 4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: setbit},
	{Name: "getbit", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: getbit, shared: true},
	{Name: "bitcount", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: bitcount, shared: true},
	{Name: "bitpos", Arity: -3, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: bitpos, shared: true},
	{Name: "bitop", Arity: -4, Flags: Write | DenyOOM, FirstKey: 2, LastKey: -1, Step: 1, Run: bitop},
	{Name: "bitfield", Arity: -2, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: bitfield},
	{Name: "bitfield_ro", Arity: -2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: bitfieldRO, shared: true},
}

// parseBitOffset is Redis's getBitOffsetFromArgument: a non-negative integer whose byte is below
// proto-max-bulk-len; with width > 0 (BITFIELD) "#n" means n*width. Redis multiplies in 64-bit
// arithmetic without checking, and so does this.
func parseBitOffset(c *Ctx, arg []byte, width int) (uint64, bool) {
	hash := width > 0 && len(arg) > 0 && arg[0] == '#'
	if hash {
		arg = arg[1:]
	}
	n, ok := ParseInt(arg)
	if hash {
		n *= int64(width)
	}
	if !ok || n < 0 || n>>3 >= maxStringLen(c) { // proto-max-bulk-len, within an Entry's 4 GB
		return 0, false
	}
	return uint64(n), true
}

// bitString is Redis's lookupStringForBitCommand: key's string grown with zero bytes to hold bit
// maxBit, created when absent. It replies WRONGTYPE and returns ok false for another type. A
// packed value is unpacked first (the caller's done packs it again); a sparse one is edited as
// it is, and a key created longer than sparsebits.MinLen starts sparse (bitmaps_sparse.go).
func bitString(c *Ctx, key []byte, maxBit uint64) (d bitDest, ok bool) {
	ks, e := c.FindIn(key)
	return bitStringAt(c, ks, e, key, maxBit)
}

// bitStringAt is bitString for key's entry e (nil when missing) in ks, as FindIn found them.
func bitStringAt(c *Ctx, ks *keyspace.Keyspace, e *keyspace.Entry, key []byte, maxBit uint64) (d bitDest, ok bool) {
	need := int(maxBit>>3) + 1
	switch {
	case maxBit>>3 >= keyspace.MaxString && (e == nil || e.Kind == keyspace.KindString):
		c.Err(ErrStringMax) // BITFIELD's last field past an Entry's 4 GB (proto-max-bulk-len >= 4 GB)
		return d, false
	case e == nil:
		e = addString(c, ks, key)
		d.grew = true
		if need >= sparsebits.MinLen {
			d.sparse = sparsebits.New(uint32(need))
		}
	case e.Kind != keyspace.KindString:
		c.WrongType()
		return d, false
	default:
		if p := sparseOf(e); p != nil {
			ks.Unpacked(e) // uncounted while edited; done counts it again
			d.grew = need > sparsebits.Len(p)
			d.sparse = sparsebits.Grow(p, need)
		}
	}
	d.ks, d.e = ks, e
	if d.sparse != nil {
		e.Enc = EncRaw
		return d, true
	}
	d.packed = unpackForEdit(ks, e)
	e.Enc = EncRaw
	if b := e.Bytes(); need > len(b) {
		e.SetBytes(bitmap.Grow(b, need))
		d.grew = true
	}
	d.dense = e.Bytes()
	return d, true
}

// SETBIT key offset value
func setbit(c *Ctx) {
	key := c.Args[1]
	off, ok := parseBitOffset(c, c.Args[2], 0)
	if !ok {
		c.Err(ErrBitOffset)
		return
	}
	on, ok := ParseInt(c.Args[3])
	if !ok || on&^1 != 0 {
		c.Err(ErrBitValue)
		return
	}
	ks, e := c.FindIn(key)
	var old int
	grew := false
	if b, ok := denseHolding(e, off); ok { // the common case, without bitString's destination
		e.Enc = EncRaw
		old = bitmap.SetBit(b, off, int(on))
	} else {
		d, ok := bitStringAt(c, ks, e, key, off)
		if !ok {
			return
		}
		old = d.setBit(off, int(on))
		d.done(c)
		grew = d.grew
	}
	if grew || old != int(on) { // Redis 7 counts a change only when something changed
		c.Changed(NotifyString, "setbit", key)
		c.Dirty(1)
	}
	c.Int(int64(old))
}

// denseHolding returns e's bytes when e is a raw (neither packed nor sparse) string that already
// holds bit off: SETBIT's common case, which edits them in place with nothing to grow, unpack or
// store again. ok false (a missing key, another type, a packed or sparse value, a string to grow)
// leaves the write to bitStringAt.
func denseHolding(e *keyspace.Entry, off uint64) (b []byte, ok bool) {
	if e == nil || e.Kind != keyspace.KindString || e.Packed() {
		return nil, false
	}
	b = e.Bytes()
	return b, off>>3 < uint64(len(b))
}

// GETBIT key offset
func getbit(c *Ctx) {
	off, ok := parseBitOffset(c, c.Args[2], 0)
	if !ok {
		c.Err(ErrBitOffset)
		return
	}
	switch e := c.FindRead(c.Args[1]); {
	case e == nil:
		c.Int(0)
	case e.Kind != keyspace.KindString:
		c.WrongType()
	case !e.Packed():
		c.Int(int64(bitmap.Bit(e.Bytes(), off)))
	default:
		if p := sparseOf(e); p != nil {
			c.Int(int64(sparsebits.Bit(p, off)))
			return
		}
		c.Int(int64(bitmap.Bit(c.strBytes(e), off)))
	}
}

// readBits is the lookup of BITCOUNT and BITPOS: key's bytes (or its sparse form in sp) and the
// string's length, or ok false once it replied (missing with the reply miss, WRONGTYPE).
func readBits(c *Ctx, key []byte, miss int64) (b, sp []byte, size int64, ok bool) {
	switch e := c.FindRead(key); {
	case e == nil:
		c.Int(miss)
	case e.Kind != keyspace.KindString:
		c.WrongType()
	default:
		if sp = sparseOf(e); sp != nil {
			return nil, sp, int64(sparsebits.Len(sp)), true
		}
		b = c.strBytes(e)
		return b, nil, int64(len(b)), true
	}
	return nil, nil, 0, false
}

// unitIsBit parses BITCOUNT's and BITPOS's BYTE|BIT.
func unitIsBit(arg []byte) (inBits, ok bool) {
	switch {
	case strs.EqualFold(arg, "BIT"):
		return true, true
	case strs.EqualFold(arg, "BYTE"):
		return false, true
	}
	return false, false
}

// BITCOUNT key [start end [BYTE|BIT]]
//
// As in Redis 7.0, a missing key answers 0 before the range is looked at.
func bitcount(c *Ctx) {
	b, sp, size, ok := readBits(c, c.Args[1], 0)
	if !ok {
		return
	}
	span := bitmap.Span{First: 0, Last: size*8 - 1}
	switch len(c.Args) {
	case 2:
	case 4, 5:
		start, ok1 := ParseInt(c.Args[2])
		end, ok2 := ParseInt(c.Args[3])
		if !ok1 || !ok2 {
			c.Err(ErrNotInt)
			return
		}
		if start < 0 && end < 0 && start > end {
			c.Int(0)
			return
		}
		inBits := false
		if len(c.Args) == 5 {
			if inBits, ok = unitIsBit(c.Args[4]); !ok {
				c.Err(ErrSyntax)
				return
			}
		}
		span = bitmap.Normalize(size, start, end, inBits)
	default:
		c.Err(ErrSyntax)
		return
	}
	if sp != nil {
		c.Int(sparsebits.CountRange(sp, span.First, span.Last))
		return
	}
	c.Int(bitmap.Count(b, span))
}

// BITPOS key bit [start [end [BYTE|BIT]]]
//
// Past the string every bit is clear: looking for a 0 without an end answers the first bit after
// the string when the string has none.
func bitpos(c *Ctx) {
	bit, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrNotInt)
		return
	case bit != 0 && bit != 1:
		c.Err(ErrBitposBit)
		return
	}
	b, sp, size, ok := readBits(c, c.Args[1], -bit)
	if !ok {
		return
	}
	span := bitmap.Span{First: 0, Last: size*8 - 1}
	endGiven := false
	switch n := len(c.Args); {
	case n == 3:
	case n <= 6:
		start, ok := ParseInt(c.Args[3])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		inBits := false
		if n == 6 {
			if inBits, ok = unitIsBit(c.Args[5]); !ok {
				c.Err(ErrSyntax)
				return
			}
		}
		end := int64(-1)
		if n >= 5 {
			if end, ok = ParseInt(c.Args[4]); !ok {
				c.Err(ErrNotInt)
				return
			}
			endGiven = true
		}
		span = bitmap.Normalize(size, start, end, inBits)
	default:
		c.Err(ErrSyntax)
		return
	}
	var pos int64
	if sp != nil {
		pos = sparsebits.Pos(sp, int(bit), span.First, span.Last)
	} else {
		pos = bitmap.Pos(b, int(bit), span)
	}
	if pos < 0 && bit == 0 && !endGiven && !span.Empty() {
		pos = span.Last + 1
	}
	c.Int(pos)
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]: the result replaces destkey (its TTL gone); an
// empty result deletes it.
func bitop(c *Ctx) {
	var op bitmap.Op
	switch name := c.Args[1]; {
	case strs.EqualFold(name, "AND"):
		op = bitmap.And
	case strs.EqualFold(name, "OR"):
		op = bitmap.Or
	case strs.EqualFold(name, "XOR"):
		op = bitmap.Xor
	case strs.EqualFold(name, "NOT"):
		op = bitmap.Not
	default:
		c.Err(ErrSyntax)
		return
	}
	if op == bitmap.Not && len(c.Args) != 4 {
		c.Err(ErrBitopNot)
		return
	}
	dest := c.Args[2]
	srcs := make([][]byte, 0, len(c.Args)-3)
	for _, key := range c.Args[3:] {
		switch e := c.FindRead(key); {
		case e == nil:
			srcs = append(srcs, nil)
		case e.Kind != keyspace.KindString:
			c.WrongType()
			return
		default:
			srcs = append(srcs, strCopy(e))
		}
	}
	res := bitmap.Apply(op, nil, srcs)
	if len(res) == 0 {
		if ks, e := c.FindIn(dest); e != nil {
			ks.Remove(e)
			c.Changed(NotifyGeneric, "del", dest)
			c.Dirty(1)
		}
		c.Int(0)
		return
	}
	ks := c.KS(dest)
	e, _ := ks.Upsert(dest, c.Now)
	ks.Unpacked(e)
	e.Kind, e.Enc = keyspace.KindString, EncRaw
	e.SetBytes(res)
	ks.SetExpire(e, 0)
	untagOverwritten(c, dest)
	c.Changed(NotifyString, "set", dest)
	c.Dirty(1)
	c.Int(int64(len(res)))
}
