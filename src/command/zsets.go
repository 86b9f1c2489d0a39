package command

import (
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/ds/zset"
)

// Sorted sets. The value is a *zset.ZSet in the Entry (keyspace.Obj); handlers parse, call ds/zset, encode.
// Ranges and stores are in zsets_range.go, pops and ZRANDMEMBER in zsets_pop.go, the set
// algebra and ZSCAN in zsets_algebra.go.
var zsetCommands = []*Spec{
	{Name: "zadd", Arity: -4, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: zadd},
	{Name: "zincrby", Arity: 4, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 3, Run: zincrby},
	{Name: "zrem", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: zrem},
	{Name: "zcard", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: zcard, shared: true},
	{Name: "zscore", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: zscore, shared: true},
	{Name: "zmscore", Arity: -3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: zmscore},
	// ZRANK and ZREVRANK take Redis 7.2's optional WITHSCORE, so their arity is 7.2's -3.
	{Name: "zrank", Arity: -3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: zrank},
	{Name: "zrevrank", Arity: -3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: zrevrank},
	{Name: "zcount", Arity: 4, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: zcount},
	{Name: "zlexcount", Arity: 4, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: zlexcount},
	{Name: "zrange", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Rank: 2, Run: zrange},
	{Name: "zrangestore", Arity: -5, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Run: zrangestore},
	{Name: "zrangebyscore", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: zrangebyscore},
	{Name: "zrevrangebyscore", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: zrevrangebyscore},
	{Name: "zrangebylex", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: zrangebylex},
	{Name: "zrevrangebylex", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: zrevrangebylex},
	{Name: "zrevrange", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: zrevrange},
	{Name: "zremrangebyrank", Arity: 4, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: zremrangebyrank},
	{Name: "zremrangebyscore", Arity: 4, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: zremrangebyscore},
	{Name: "zremrangebylex", Arity: 4, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: zremrangebylex},
	{Name: "zpopmin", Arity: -2, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: zpopmin},
	{Name: "zpopmax", Arity: -2, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: zpopmax},
	{Name: "zmpop", Arity: -4, Flags: Write | MovableKeys, NumKeys: 1, Run: zmpop},
	{Name: "bzpopmin", Arity: -3, Flags: Write | NoScript | Blocking | Fast, FirstKey: 1, LastKey: -2, Step: 1, Run: bzpopmin},
	{Name: "bzpopmax", Arity: -3, Flags: Write | NoScript | Blocking | Fast, FirstKey: 1, LastKey: -2, Step: 1, Run: bzpopmax},
	{Name: "bzmpop", Arity: -5, Flags: Write | Blocking | MovableKeys, NumKeys: 2, Run: bzmpop},
	{Name: "zrandmember", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: zrandmember},
	{Name: "zunion", Arity: -3, Flags: ReadOnly | MovableKeys, NumKeys: 1, Run: zunion},
	{Name: "zunionstore", Arity: -4, Flags: Write | DenyOOM | MovableKeys, FirstKey: 1, LastKey: 1, Step: 1, NumKeys: 2, Run: zunionstore},
	{Name: "zinter", Arity: -3, Flags: ReadOnly | MovableKeys, NumKeys: 1, Run: zinter},
	{Name: "zinterstore", Arity: -4, Flags: Write | DenyOOM | MovableKeys, FirstKey: 1, LastKey: 1, Step: 1, NumKeys: 2, Run: zinterstore},
	{Name: "zintercard", Arity: -3, Flags: ReadOnly | MovableKeys, NumKeys: 1, Run: zintercard},
	{Name: "zdiff", Arity: -3, Flags: ReadOnly | MovableKeys, NumKeys: 1, Run: zdiff},
	{Name: "zdiffstore", Arity: -4, Flags: Write | DenyOOM | MovableKeys, FirstKey: 1, LastKey: 1, Step: 1, NumKeys: 2, Run: zdiffstore},
	{Name: "zscan", Arity: -3, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: zscan},
}

// zsetLimits returns the listpack thresholds from the configuration.
func zsetLimits(c *Ctx) zset.Limits {
	s := c.E.Settings()
	return zset.Limits{MaxEntries: s.ZSetMaxListpackEntries, MaxValue: s.ZSetMaxListpackValue}
}

// readZSet finds key for a read (counting a keyspace hit or miss). It returns nil for a missing
// key, and ok false after replying WRONGTYPE.
func readZSet(c *Ctx, key []byte) (z *zset.ZSet, ok bool) {
	e := c.FindRead(key)
	switch {
	case e == nil:
		return nil, true
	case e.Kind != keyspace.KindZSet:
		c.WrongType()
		return nil, false
	}
	return keyspace.Obj[zset.ZSet](e), true
}

// writeZSet finds key for a write, like readZSet, also returning its keyspace and entry.
func writeZSet(c *Ctx, key []byte) (*keyspace.Keyspace, *keyspace.Entry, *zset.ZSet, bool) {
	ks, e := c.FindIn(key)
	switch {
	case e == nil:
		return ks, nil, nil, true
	case e.Kind != keyspace.KindZSet:
		c.WrongType()
		return ks, nil, nil, false
	}
	return ks, e, keyspace.Obj[zset.ZSet](e), true
}

// storeZSet makes key (found missing in ks) hold an empty sorted set, and wakes clients
// blocked on it. The set's header lives in the entry (keyspace.Inline):
// change it through the pointer returned, not a copy.
func storeZSet(c *Ctx, ks *keyspace.Keyspace, key []byte) (*keyspace.Entry, *zset.ZSet) {
	e := ks.Add(key)
	keyspace.SetObj(e, keyspace.KindZSet, &zset.ZSet{})
	e.Access = uint32(c.Now / 1e9)
	c.SignalReady(key)
	return e, keyspace.Obj[zset.ZSet](e)
}

// dropEmptyZSet deletes key's entry when its set has no member left: Redis keeps no empty set.
// It reports whether it did.
func dropEmptyZSet(ks *keyspace.Keyspace, e *keyspace.Entry, z *zset.ZSet) bool {
	if z.Len() == 0 {
		ks.Remove(e)
		return true
	}
	return false
}

// replyScored replies one member of a WITHSCORES listing: a [member, score] pair in RESP3, the
// two flat in RESP2.
func replyScored(c *Ctx, member []byte, score float64, withScores bool) {
	if withScores && c.Proto >= 3 {
		c.ArrayLen(2)
	}
	c.Bulk(member)
	if withScores {
		c.Double(score)
	}
}

// scoredLen replies the array header of a listing of n members.
func scoredLen(c *Ctx, n int, withScores bool) {
	if withScores && c.Proto < 3 {
		n *= 2
	}
	c.ArrayLen(n)
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
func zadd(c *Ctx) { zaddGeneric(c, 0) }

// ZINCRBY key increment member
func zincrby(c *Ctx) { zaddGeneric(c, zset.Incr) }

// zaddOptions reads ZADD's leading options and returns where the score-member pairs start.
func zaddOptions(args [][]byte, flags zset.Flags) (zset.Flags, bool, int) {
	ch, i := false, 2
	for ; i < len(args); i++ {
		switch a := args[i]; {
		case strs.EqualFold(a, "NX"):
			flags |= zset.NX
		case strs.EqualFold(a, "XX"):
			flags |= zset.XX
		case strs.EqualFold(a, "GT"):
			flags |= zset.GT
		case strs.EqualFold(a, "LT"):
			flags |= zset.LT
		case strs.EqualFold(a, "INCR"):
			flags |= zset.Incr
		case strs.EqualFold(a, "CH"):
			ch = true
		default:
			return flags, ch, i
		}
	}
	return flags, ch, i
}

// zaddCheck validates ZADD's options and scores in Redis's order, before anything changes.
func zaddCheck(args [][]byte, flags zset.Flags, at int) string {
	pairs := len(args) - at
	has := func(f zset.Flags) bool { return flags&f != 0 }
	switch {
	case pairs == 0 || pairs%2 != 0:
		return ErrSyntax
	case has(zset.NX) && has(zset.XX):
		return ErrNXXX
	case has(zset.NX) && (has(zset.GT) || has(zset.LT)), has(zset.GT) && has(zset.LT):
		return ErrGTLTNX
	case has(zset.Incr) && pairs > 2:
		return ErrZIncrPairs
	}
	for i := at; i < len(args); i += 2 {
		if _, ok := zset.ParseScore(args[i]); !ok {
			return ErrNotFloat
		}
	}
	return ""
}

func zaddGeneric(c *Ctx, flags zset.Flags) {
	flags, ch, at := zaddOptions(c.Args, flags)
	if msg := zaddCheck(c.Args, flags, at); msg != "" {
		c.Err(msg)
		return
	}
	key := c.Args[1]
	ks, e, z, ok := writeZSet(c, key)
	if !ok {
		return
	}
	incr := flags&zset.Incr != 0
	if z == nil {
		if flags&zset.XX != 0 {
			zaddReply(c, incr, ch, 0, 0, 0, 0)
			return
		}
		e, z = storeZSet(c, ks, key)
	}
	lim := zsetLimits(c)
	var added, updated, processed int
	var last float64
	for i := at; i < len(c.Args); i += 2 {
		score, _ := zset.ParseScore(c.Args[i])
		out, s, err := z.Add(c.Args[i+1], score, flags, lim)
		if err != nil {
			dropEmptyZSet(ks, e, z)
			c.Err(ErrZNaN)
			return
		}
		switch out {
		case zset.Added:
			added++
		case zset.Updated:
			updated++
		}
		if out != zset.Nop {
			processed++
		}
		last = s
	}
	if added+updated > 0 {
		c.Dirty(added + updated)
		event := "zadd"
		if incr {
			event = "zincr"
		}
		c.Changed(NotifyZSet, event, key)
	}
	zaddReply(c, incr, ch, added, updated, processed, last)
}

func zaddReply(c *Ctx, incr, ch bool, added, updated, processed int, score float64) {
	switch {
	case incr && processed > 0:
		c.Double(score)
	case incr:
		c.Null()
	case ch:
		c.Int(int64(added + updated))
	default:
		c.Int(int64(added))
	}
}

// ZREM key member [member ...]
func zrem(c *Ctx) {
	key := c.Args[1]
	ks, e, z, ok := writeZSet(c, key)
	if !ok {
		return
	}
	deleted, removed := 0, false
	if z != nil {
		for _, m := range c.Args[2:] {
			if z.Remove(m) {
				deleted++
			}
			if z.Len() == 0 {
				ks.Remove(e)
				removed = true
				break
			}
		}
	}
	if deleted > 0 {
		c.Notify(NotifyZSet, "zrem", key)
		if removed {
			c.Notify(NotifyGeneric, "del", key)
		}
		c.Touch(key)
		c.Dirty(deleted)
	}
	c.Int(int64(deleted))
}

// ZCARD key
func zcard(c *Ctx) {
	if z, ok := readZSet(c, c.Args[1]); ok {
		n := 0
		if z != nil {
			n = z.Len()
		}
		c.Int(int64(n))
	}
}

// ZSCORE key member
func zscore(c *Ctx) {
	z, ok := readZSet(c, c.Args[1])
	if ok {
		replyScore(c, z, c.Args[2])
	}
}

func replyScore(c *Ctx, z *zset.ZSet, member []byte) {
	if z != nil {
		if s, found := z.Score(member); found {
			c.Double(s)
			return
		}
	}
	c.Null()
}

// ZMSCORE key member [member ...]
func zmscore(c *Ctx) {
	z, ok := readZSet(c, c.Args[1])
	if !ok {
		return
	}
	c.ArrayLen(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		replyScore(c, z, m)
	}
}

// ZRANK key member [WITHSCORE]
func zrank(c *Ctx) { zrankGeneric(c, false) }

// ZREVRANK key member [WITHSCORE]
func zrevrank(c *Ctx) { zrankGeneric(c, true) }

// zrankGeneric is Redis 7.2's ZRANK: WITHSCORE replies [rank, score], or a null array.
func zrankGeneric(c *Ctx, rev bool) {
	withScore := false
	switch {
	case len(c.Args) > 4:
		c.ArityErr()
		return
	case len(c.Args) == 4 && !strs.EqualFold(c.Args[3], "WITHSCORE"):
		c.Err(ErrSyntax)
		return
	case len(c.Args) == 4:
		withScore = true
	}
	z, ok := readZSet(c, c.Args[1])
	if !ok {
		return
	}
	var rank int
	var score float64
	found := false
	if z != nil {
		rank, score, found = z.Rank(c.Args[2])
	}
	switch {
	case !found && withScore:
		c.NullArray()
	case !found:
		c.Null()
	default:
		if rev {
			rank = z.Len() - 1 - rank
		}
		if withScore {
			c.ArrayLen(2)
		}
		c.Int(int64(rank))
		if withScore {
			c.Double(score)
		}
	}
}

// ZCOUNT key min max
func zcount(c *Ctx) {
	r, ok := zset.ParseScoreRange(c.Args[2], c.Args[3])
	if !ok {
		c.Err(ErrZMinMaxFloat)
		return
	}
	if z, ok := readZSet(c, c.Args[1]); ok {
		n := 0
		if z != nil {
			n = z.CountInScore(&r)
		}
		c.Int(int64(n))
	}
}

// ZLEXCOUNT key min max
func zlexcount(c *Ctx) {
	r, ok := zset.ParseLexRange(c.Args[2], c.Args[3])
	if !ok {
		c.Err(ErrZMinMaxLex)
		return
	}
	if z, ok := readZSet(c, c.Args[1]); ok {
		n := 0
		if z != nil {
			n = z.CountInLex(&r)
		}
		c.Int(int64(n))
	}
}
