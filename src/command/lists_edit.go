package command

import (
	"math"

	"github.com/hotkv/hotkv/ds/list"
	"github.com/hotkv/hotkv/ds/strs"
)

// LINSERT key BEFORE|AFTER pivot element
func linsert(c *Ctx) {
	after := strs.EqualFold(c.Args[2], "AFTER")
	if !after && !strs.EqualFold(c.Args[2], "BEFORE") {
		c.Err(ErrSyntax)
		return
	}
	_, l, ok := writeList(c, c.Args[1])
	switch {
	case !ok:
		return
	case l == nil:
		c.Int(0)
		return
	}
	i := l.Find(c.Args[3])
	if i < 0 {
		c.Int(-1)
		return
	}
	if after {
		i++
	}
	l.Insert(i, c.Args[4])
	c.Int(int64(l.Len()))
	c.Changed(NotifyList, "linsert", c.Args[1])
	c.Dirty(1)
}

// LREM key count element
func lrem(c *Ctx) {
	count, ok := ParseInt(c.Args[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	key := c.Args[1]
	e, l, ok := writeList(c, key)
	switch {
	case !ok:
		return
	case l == nil:
		c.Int(0)
		return
	}
	// Clamping keeps the meaning (a count past the length removes every match) and turns
	// LONG_MIN, which Redis cannot negate, into "all from the tail" as Redis ends up doing.
	count = max(min(count, int64(l.Len())), -int64(l.Len()))
	removed := l.Remove(c.Args[3], int(count))
	if removed > 0 {
		c.Changed(NotifyList, "lrem", key)
		dropIfEmpty(c, key, e, l)
		c.Dirty(removed)
	}
	c.Int(int64(removed))
}

// LTRIM key start stop
func ltrim(c *Ctx) {
	start, stop, ok := parseRange(c)
	if !ok {
		return
	}
	key := c.Args[1]
	e, l, ok := writeList(c, key)
	switch {
	case !ok:
		return
	case l == nil:
		c.OK()
		return
	}
	// Like Redis, the event is raised (and the key touched) even when nothing is trimmed; only
	// the dirty count tells.
	length := l.Len()
	first, n := listRange(start, stop, length)
	if n > 0 {
		l.DeleteRange(first+n, length-first-n)
		l.DeleteRange(0, first)
	}
	c.Notify(NotifyList, "ltrim", key)
	if n == 0 { // everything trimmed: the key goes
		c.KS(key).Remove(e)
		c.Notify(NotifyGeneric, "del", key)
	}
	c.Touch(key)
	c.Dirty(length - n)
	c.OK()
}

// lposArgs are LPOS's options; count < 0 means COUNT was not given.
type lposArgs struct {
	q     list.PosQuery
	count int64
}

// parseLPos reads [RANK rank] [COUNT num-matches] [MAXLEN len] in order, the last of a repeated
// option winning; the first error ends the parse, as in Redis.
func parseLPos(argv [][]byte) (lposArgs, string) {
	o := lposArgs{count: -1}
	for a := NewArgs(argv, 0); ; {
		switch {
		case !a.More():
			return o, a.Err()
		case a.Is("RANK"):
			n := a.Int()
			a.Require(n != 0, ErrLPosRank)
			o.q.Reverse, o.q.Skip = n < 0, rankSkip(n)
		case a.Is("COUNT"):
			n := a.IntErr(ErrLPosCount)
			a.Require(n >= 0, ErrLPosCount)
			o.count, o.q.Count = n, int(n)
		case a.Is("MAXLEN"):
			n := a.IntErr(ErrLPosMaxLen)
			a.Require(n >= 0, ErrLPosMaxLen)
			o.q.MaxLen = int(n)
		default:
			a.Fail(ErrSyntax)
		}
	}
}

// rankSkip is how many matches RANK passes over. Redis negates a negative rank, which leaves
// LONG_MIN negative, so every match then satisfies it: RANK LONG_MIN behaves as -1.
func rankSkip(rank int64) int {
	switch {
	case rank == math.MinInt64:
		return 0
	case rank < 0:
		return int(-rank - 1)
	}
	return int(rank - 1)
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
func lpos(c *Ctx) {
	o, msg := parseLPos(c.Args[3:])
	if msg != "" {
		c.Err(msg)
		return
	}
	l, ok := readList(c, c.Args[1])
	switch {
	case !ok:
		return
	case l == nil && o.count >= 0:
		c.ArrayLen(0)
		return
	case l == nil:
		c.Null()
		return
	}
	if o.count < 0 {
		o.q.Count = 1
	}
	var buf [8]int
	pos := l.Pos(c.Args[2], o.q, buf[:0])
	switch {
	case o.count >= 0:
		c.ArrayLen(len(pos))
		for _, p := range pos {
			c.Int(int64(p))
		}
	case len(pos) == 0:
		c.Null()
	default:
		c.Int(int64(pos[0]))
	}
}
