package command

import (
	"math"

	dset "github.com/hotkv/hotkv/ds/set"
)

// setReplyMax bounds a SRANDMEMBER reply with a negative count, whose length the client chooses
// freely: past it the reply stops and the client is closed, as Redis closes a client whose
// output buffer passes its limit, rather than the server running out of memory.
const setReplyMax = 1 << 30

// Names of the commands SPOP is replicated as.
var (
	sremName = []byte("SREM")
	delName  = []byte("DEL")
)

// SPOP key [count]. Replicated as SREM of the member popped.
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
		c.Notify(NotifySet, "spop", key)
		m := s.Pop(c.E.rand(), buf[:0])
		c.Propagate(sremName, key, m)
		c.Bulk(m)
		if s.Len() == 0 {
			c.KS(key).Remove(e)
			c.Notify(NotifyGeneric, "del", key)
		}
		c.Touch(key)
		c.Dirty(1)
	}
}

// spopCount is SPOP key count: the whole set when count reaches its size (replied as SUNION
// would, then deleted, and replicated as DEL), else count random members (replicated as one
// SREM each, which Redis 7.0 wraps in MULTI/EXEC when there are several).
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
		c.Notify(NotifySet, "spop", key)
		c.Dirty(s.Len())
		lim := setLimits(c)
		replySet(c, dset.Union([]*dset.Set{s}, &lim))
		ss := c.E.lazyServerDelNow(c.KS(key), e) // lazyfree.go
		c.KS(key).Remove(e)
		if ss != nil {
			ss.detach = nil
		}
		c.Notify(NotifyGeneric, "del", key)
		c.Propagate(delName, key) // DEL even under lazyfree-lazy-server-del (redis-server 7.0.15's AOF)
		c.Touch(key)
	default:
		c.Notify(NotifySet, "spop", key)
		c.Dirty(int(n))
		lim := setLimits(c)
		c.SetLen(int(n))
		feed := c.E.Feed.Active()
		s.PopN(int(n), c.E.rand(), &lim, func(m []byte) {
			c.Bulk(m)
			if feed {
				c.Propagate(sremName, key, m)
			}
		})
		c.Touch(key)
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
