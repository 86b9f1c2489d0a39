package command

import (
	"github.com/hotkv/hotkv/ds/strs"
)

// HINCRBY key field increment. The field keeps its TTL: Redis 7.4 clears a field's expiry only
// when the field is replaced or deleted.
func hincrby(c *Ctx) {
	delta, ok := ParseInt(c.Args[3])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	key, field := c.Args[1], c.Args[2]
	_, h, ok := writeHash(c, key)
	if !ok {
		return
	}
	var buf, out [hashScratch]byte
	cur, found := hashGet(h, field, buf[:0])
	if !found {
		cur = strZero
	}
	b, v, err := strs.IncrBy(out[:0], cur, delta)
	switch err {
	case nil:
	case strs.ErrNotInt:
		c.Err(ErrHashNotInt)
		return
	default:
		c.Err(stringsErr(err))
		return
	}
	if h == nil {
		_, h = createHash(c, key, nil)
	}
	h.Set(field, b, true, hashLimits(c))
	c.Changed(NotifyHash, "hincrby", key)
	c.Dirty(1)
	c.Int(v)
}

// HINCRBYFLOAT key field increment: the sum of two long doubles, formatted as INCRBYFLOAT
// formats it. The increment is checked before the key, as Redis does.
func hincrbyfloat(c *Ctx) {
	switch _, err := strs.IncrByFloat(nil, strZero, c.Args[3]); err {
	case nil:
	case strs.ErrNaNInf: // the increment is an infinity
		c.Err(ErrHashNaNInf)
		return
	default:
		c.Err(ErrNotFloat)
		return
	}
	key, field := c.Args[1], c.Args[2]
	_, h, ok := writeHash(c, key)
	if !ok {
		return
	}
	var buf [hashScratch]byte
	cur, found := hashGet(h, field, buf[:0])
	if !found {
		cur = strZero
	}
	b, err := strs.IncrByFloat(nil, cur, c.Args[3])
	switch err {
	case nil:
	case strs.ErrNotFloat:
		c.Err(ErrHashNotFloat)
		return
	default:
		c.Err(stringsErr(err))
		return
	}
	if h == nil {
		_, h = createHash(c, key, nil)
	}
	h.Set(field, b, true, hashLimits(c))
	c.Changed(NotifyHash, "hincrbyfloat", key)
	c.Dirty(1)
	// Replicated as HSET of the result, so that a replica or an AOF reload does not redo the
	// long-double arithmetic (t_hash.c rewrites the command's arguments the same way).
	c.Propagate(hashHsetArg, key, field, b)
	c.Bulk(b)
}

// hashHsetArg is the name HINCRBYFLOAT is replicated under, as Redis's shared.hset spells it.
var hashHsetArg = []byte("HSET")
