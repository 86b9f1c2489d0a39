package command

import (
	"math"

	dset "github.com/hotkv/hotkv/ds/set"
)

// setReplyMax bounds a SRANDMEMBER reply with a negative count, whose length the client chooses
// freely: past it the reply stops and the client is closed, as Redis closes a client whose
// output buffer passes its limit, rather than the server running out of memory.
const setReplyMax = 1 << 30

// SPOP key [count]
func spop(c *Ctx) {
	switch len(c.Args) {
	case 3:
		spopCount(c)
		return
	case 2:
	default:
		c.Err(ErrSyntax)
		return
	}
	key := c.Args[1]
	e, s, ok := writeSet(c, key)
	switch {
	case !ok:
	case s == nil:
		c.Null()
	default:
		var buf [64]byte
		c.Bulk(s.Pop(c.E.rand(), buf[:0]))
		if s.Len() == 0 {
			c.KS(key).Remove(e)
		}
	}
}

// spopCount is SPOP key count: the whole set when count reaches its size (replied as SUNION
// would, then deleted), else count random members.
func spopCount(c *Ctx) {
	n, ok := ParseInt(c.Args[2])
	if !ok || n < 0 {
		c.Err(ErrPositive)
		return
	}
	key := c.Args[1]
	e, s, ok := writeSet(c, key)
	switch {
	case !ok:
	case s == nil || n == 0:
		c.SetLen(0)
	case n >= int64(s.Len()):
		lim := setLimits(c)
		replySet(c, dset.Union([]*dset.Set{s}, &lim))
		c.KS(key).Remove(e)
	default:
		lim := setLimits(c)
		c.SetLen(int(n))
		s.PopN(int(n), c.E.rand(), &lim, func(m []byte) { c.Bulk(m) })
	}
}

// SRANDMEMBER key [count]
func srandmember(c *Ctx) {
	switch len(c.Args) {
	case 3:
		srandmemberCount(c)
		return
	case 2:
	default:
		c.Err(ErrSyntax)
		return
	}
	s, ok := readSet(c, c.Args[1])
	switch {
	case !ok:
	case s == nil:
		c.Null()
	default:
		var buf [64]byte
		c.Bulk(s.Random(c.E.rand(), buf[:0]))
	}
}

// srandmemberCount is SRANDMEMBER key count: a negative count (or 1) draws members
// independently, a count reaching the size returns the whole set, any other count that many
// distinct members. All three reply arrays, as Redis 7.0 does.
func srandmemberCount(c *Ctx) {
	n, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrNotInt)
		return
	case n == math.MinInt64:
		c.Err(ErrCountRange)
		return
	}
	s, ok := readSet(c, c.Args[1])
	switch {
	case !ok:
	case s == nil || n == 0:
		c.ArrayLen(0)
	case n < 0 || n == 1:
		n = max(n, -n)
		c.ArrayLen(int(n))
		s.RandomRepeat(int(n), c.E.rand(), func(m []byte) bool {
			c.Bulk(m)
			if len(c.Out) > setReplyMax {
				c.Client.CloseAfterReply()
				return false
			}
			return true
		})
	case n >= int64(s.Len()):
		c.ArrayLen(s.Len())
		replySetMembers(c, s)
	default:
		c.ArrayLen(int(n))
		s.RandomDistinct(int(n), c.E.rand(), func(m []byte) { c.Bulk(m) })
	}
}
