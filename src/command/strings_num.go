package command

import (
	"math"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
)

// strZero is the value a missing key counts from.
var strZero = []byte("0")

// INCR key
func incr(c *Ctx) { incrDecr(c, 1) }

// DECR key
func decr(c *Ctx) { incrDecr(c, -1) }

// INCRBY key increment
func incrby(c *Ctx) {
	if n, ok := ParseInt(c.Args[2]); !ok {
		c.Err(ErrNotInt)
	} else {
		incrDecr(c, n)
	}
}

// DECRBY key decrement
func decrby(c *Ctx) {
	n, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrNotInt)
	case n == math.MinInt64: // its negation does not exist
		c.Err(ErrDecrOverflow)
	default:
		incrDecr(c, -n)
	}
}

// incrDecr adds delta to key's integer value in place, keeping its TTL; the rewritten value
// reuses the entry's buffer, so a counter allocates nothing once it exists.
func incrDecr(c *Ctx, delta int64) {
	key := c.Args[1]
	ks, e := c.FindIn(key)
	var b []byte
	var v int64
	var err error
	switch {
	case e == nil:
		b, v, err = strs.IncrBy(nil, strZero, delta)
	case e.Kind != keyspace.KindString:
		c.WrongType()
		return
	case e.Packed(): // never a canonical integer, but its raw bytes decide the error
		b, v, err = strs.IncrBy(nil, c.strBytes(e), delta)
	default:
		b, v, err = strs.IncrBy(e.Bytes(), e.Bytes(), delta)
	}
	if err != nil {
		c.Err(stringsErr(err))
		return
	}
	if e == nil {
		e = addString(c, ks, key)
	}
	ks.Unpacked(e)
	e.SetBytes(b)
	e.Enc = EncInt
	c.Changed(NotifyString, "incrby", key) // INCR, DECR and DECRBY too
	c.Dirty(1)
	c.Int(v)
}

// INCRBYFLOAT key increment: replicated as SET key result KEEPTTL, so that replicas need not
// repeat the float arithmetic and formatting.
func incrbyfloat(c *Ctx) {
	key := c.Args[1]
	ks := c.KS(key)
	e := ks.Find(key, c.Now)
	cur := strZero
	if e != nil {
		if e.Kind != keyspace.KindString {
			c.WrongType()
			return
		}
		cur = c.strBytes(e)
	}
	b, err := strs.IncrByFloat(nil, cur, c.Args[2])
	if err != nil {
		c.Err(stringsErr(err))
		return
	}
	if e == nil {
		e = addString(c, ks, key)
	}
	// Redis stores the text as a plain string object: never the int encoding, even for "3".
	ks.Unpacked(e)
	e.SetBytes(b)
	e.Enc = EncEmbstr
	if len(b) > embstrMax {
		e.Enc = EncRaw
	}
	c.Changed(NotifyString, "incrbyfloat", key)
	c.Dirty(1)
	c.Propagate(propWord.SET, key, b, propWord.KEEPTTL)
	c.Bulk(b)
}

// stringsErr maps a ds/strs error to its wire error.
func stringsErr(err error) string {
	switch err {
	case strs.ErrNotInt:
		return ErrNotInt
	case strs.ErrOverflow:
		return ErrOverflow
	case strs.ErrNotFloat:
		return ErrNotFloat
	case strs.ErrNaNInf:
		return ErrIncrNaNInf
	case strs.ErrTooBig:
		return ErrStringMax
	case strs.ErrLCSTooLong:
		return ErrLCSTooLong
	case strs.ErrLCSMemory:
		return ErrLCSMemory
	case strs.ErrLCSAlloc:
		return ErrLCSAlloc
	}
	panic("BUG: unmapped strings error: " + err.Error())
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
