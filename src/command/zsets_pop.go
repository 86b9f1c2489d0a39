package command

import (
	"bytes"
	"math"
	"strconv"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/ds/zset"
)

// Pops (ZPOPMIN, ZPOPMAX, ZMPOP and the blocking BZPOPMIN, BZPOPMAX, BZMPOP) and ZRANDMEMBER.

// zpopShape is how a pop reply is laid out (Redis's addZpopInitialReply).
type zpopShape struct {
	emitKey bool // the key comes first: BZPOP* (flat) and *ZMPOP (nested)
	nested  bool // [member, score] pairs, each an array
	nilNone bool // nothing to pop replies a null array (ZMPOP) rather than an empty one
	// rewrite: replicated as ZPOPMIN/ZPOPMAX key [count] (ZMPOP and the blocking pops); the
	// count is the number popped, left out for a plain pop (BZPOPMIN, BZPOPMAX).
	rewrite bool
}

// The names a pop is replicated as, in Redis's shared objects' spelling.
var (
	zpopminName = []byte("ZPOPMIN")
	zpopmaxName = []byte("ZPOPMAX")
)

// ZPOPMIN key [count]
func zpopmin(c *Ctx) { zpopMinMax(c, false) }

// ZPOPMAX key [count]
func zpopmax(c *Ctx) { zpopMinMax(c, true) }

func zpopMinMax(c *Ctx, max bool) {
	if len(c.Args) > 3 {
		c.Err(ErrSyntax)
		return
	}
	count := int64(-1) // a plain pop: a flat reply even in RESP3
	if len(c.Args) == 3 {
		n, ok := ParseInt(c.Args[2])
		if !ok || n < 0 {
			c.Err(ErrPositive)
			return
		}
		count = n
	}
	zpopFrom(c, c.Args[1:2], max, count, zpopShape{nested: c.Proto >= 3 && count != -1})
}

// zpopFrom pops up to count members (-1 for one, plainly) from the first of keys that holds a
// set, replying in shape. It reports whether it found a set to pop from; it replies WRONGTYPE
// (and reports true) when a key before it holds another type.
func zpopFrom(c *Ctx, keys [][]byte, max bool, count int64, shape zpopShape) bool {
	for _, key := range keys {
		ks, e, z, ok := writeZSet(c, key)
		if !ok {
			return true
		}
		if z != nil {
			zpopKey(c, ks, e, z, key, max, count, shape)
			return true
		}
	}
	if shape.nilNone {
		c.NullArray()
	} else {
		c.ArrayLen(0)
	}
	return false
}

// zpopKey pops from the set z of key and replies.
func zpopKey(c *Ctx, ks *keyspace.Keyspace, e *keyspace.Entry, z *zset.ZSet, key []byte, max bool, count int64, shape zpopShape) {
	if count == 0 {
		c.ArrayLen(0)
		return
	}
	n := int(min(max64(count, 1), int64(z.Len())))
	switch {
	case !shape.nested && !shape.emitKey:
		c.ArrayLen(n * 2)
	case !shape.emitKey:
		c.ArrayLen(n)
	case !shape.nested:
		c.ArrayLen(n*2 + 1)
		c.Bulk(key)
	default:
		c.ArrayLen(2)
		c.Bulk(key)
		c.ArrayLen(n)
	}
	start, left := 0, n
	if max {
		start = z.Len() - 1
	}
	z.Walk(start, max, func(m []byte, s float64) bool {
		if shape.nested {
			c.ArrayLen(2)
		}
		c.Bulk(m)
		c.Double(s)
		left--
		return left > 0
	})
	if max {
		z.RemoveRange(z.Len()-n, z.Len()-1)
	} else {
		z.RemoveRange(0, n-1)
	}
	zpopEffects(c, ks, e, z, key, max, count, n, shape)
}

// zpopEffects reports a pop of n members from key, as Redis's genericZpopCommand: one change
// per member, the pop's event, "del" when the set is now empty (and so deleted); and the
// replicated form of the commands that are not replicated as themselves (count is the count
// asked for, -1 for a plain pop).
func zpopEffects(c *Ctx, ks *keyspace.Keyspace, e *keyspace.Entry, z *zset.ZSet, key []byte, max bool, count int64, n int, shape zpopShape) {
	c.Dirty(n)
	event, name := "zpopmin", zpopminName
	if max {
		event, name = "zpopmax", zpopmaxName
	}
	c.Changed(NotifyZSet, event, key)
	if dropEmptyZSet(ks, e, z) {
		c.Notify(NotifyGeneric, "del", key)
	}
	if !shape.rewrite || !c.E.Feed.Active() {
		return
	}
	if count == -1 {
		c.Propagate(name, key)
		return
	}
	var buf [20]byte
	c.Propagate(name, key, strconv.AppendInt(buf[:0], int64(n), 10))
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// zmpopOpts are the parsed arguments of ZMPOP and BZMPOP.
type zmpopOpts struct {
	keys  [][]byte
	max   bool
	count int64
}

// parseZMPop parses "numkeys key [key ...] MIN|MAX [COUNT count]" from args[at:], in Redis's
// order of checks, and returns the error to reply.
func parseZMPop(args [][]byte, at int) (zmpopOpts, string) {
	var o zmpopOpts
	n, ok := ParseInt(args[at])
	if !ok || n < 1 {
		return o, ErrNumkeys
	}
	where := at + 1
	if n >= int64(len(args)-where) {
		return o, ErrSyntax
	}
	where += int(n)
	o.keys = args[at+1 : where]
	switch {
	case strs.EqualFold(args[where], "MIN"):
	case strs.EqualFold(args[where], "MAX"):
		o.max = true
	default:
		return o, ErrSyntax
	}
	o.count = -1
	for j := where + 1; j < len(args); j++ {
		if o.count != -1 || !strs.EqualFold(args[j], "COUNT") || j == len(args)-1 {
			return o, ErrSyntax
		}
		j++
		v, ok := ParseInt(args[j])
		if !ok || v < 1 {
			return o, ErrCountPositive
		}
		o.count = v
	}
	if o.count == -1 {
		o.count = 1
	}
	return o, ""
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
func zmpop(c *Ctx) {
	o, msg := parseZMPop(c.Args, 1)
	if msg != "" {
		c.Err(msg)
		return
	}
	zpopFrom(c, o.keys, o.max, o.count, zpopShape{emitKey: true, nested: true, nilNone: true, rewrite: true})
}

// BZPOPMIN key [key ...] timeout
func bzpopmin(c *Ctx) { bzpop(c, false) }

// BZPOPMAX key [key ...] timeout
func bzpopmax(c *Ctx) { bzpop(c, true) }

func bzpop(c *Ctx, max bool) {
	deadline, ok := c.ParseTimeout(c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	zblockingPop(c, keys, max, -1, zpopShape{emitKey: true, rewrite: true}, deadline)
}

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
func bzmpop(c *Ctx) {
	o, msg := parseZMPop(c.Args, 2)
	if msg != "" {
		c.Err(msg)
		return
	}
	deadline, ok := c.ParseTimeout(c.Args[1])
	if !ok {
		return
	}
	zblockingPop(c, o.keys, o.max, o.count, zpopShape{emitKey: true, nested: true, nilNone: true, rewrite: true}, deadline)
}

// zblockingPop pops from the first key holding a set, or blocks on all of them (see block.go).
// Run for a waiter (c.Serving set) it may pop only from the key that became ready, and a key
// that holds no set by then leaves the waiter blocked rather than answering WRONGTYPE.
func zblockingPop(c *Ctx, keys [][]byte, max bool, count int64, shape zpopShape, deadline int64) {
	for _, key := range keys {
		if c.Serving != nil && !bytes.Equal(key, c.Serving) {
			continue
		}
		ks, e := c.FindIn(key)
		switch {
		case e == nil:
			continue
		case e.Kind != keyspace.KindZSet && c.Serving != nil:
			continue
		case e.Kind != keyspace.KindZSet:
			c.WrongType()
			return
		}
		zpopKey(c, ks, e, keyspace.Obj[zset.ZSet](e), key, max, count, shape)
		return
	}
	c.Block(keyspace.KindZSet, keys, deadline)
}

// zsetReplyMax bounds a ZRANDMEMBER reply with a negative count, whose length the client
// chooses freely: past it the reply stops and the client is closed, as Redis closes a client
// whose output buffer passes its limit, rather than the server running out of memory.
const zsetReplyMax = 1 << 30

// ZRANDMEMBER key [count [WITHSCORES]]
func zrandmember(c *Ctx) {
	if len(c.Args) == 2 {
		z, ok := readZSet(c, c.Args[1])
		switch {
		case !ok:
		case z == nil:
			c.Null()
		default:
			m, _ := z.RandomAt(int(c.E.rand() % uint64(z.Len())))
			c.Bulk(m)
		}
		return
	}
	l, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrNotInt)
		return
	case l == math.MinInt64:
		c.Err(ErrCountRange)
		return
	case len(c.Args) > 4 || (len(c.Args) == 4 && !strs.EqualFold(c.Args[3], "WITHSCORES")):
		c.Err(ErrSyntax)
		return
	case len(c.Args) == 4 && (l < -math.MaxInt64/2 || l > math.MaxInt64/2):
		c.Err(ErrOutOfRange)
		return
	}
	zrandWithCount(c, l, len(c.Args) == 4)
}

// zrandWithCount follows Redis's cases: a negative count samples with repetition; a count at
// least the size returns the whole set (highest first, as Redis iterates); otherwise count
// distinct members.
func zrandWithCount(c *Ctx, l int64, withScores bool) {
	z, ok := readZSet(c, c.Args[1])
	switch {
	case !ok:
		return
	case z == nil || l == 0:
		c.ArrayLen(0)
		return
	}
	size := z.Len()
	switch count := uint64(l); {
	case l < 0 || l == 1:
		if l < 0 {
			count = uint64(-l)
		}
		zrandRepeat(c, z, count, withScores)
	case l >= int64(size):
		scoredLen(c, size, withScores)
		z.Walk(size-1, true, func(m []byte, s float64) bool { replyScored(c, m, s, withScores); return true })
	case z.Encoding() == "listpack" || l*3 > int64(size):
		zrandOrdered(c, z, int(l), withScores)
	default:
		zrandDistinct(c, z, int(l), withScores)
	}
}

// zrandRepeat replies count members drawn independently.
func zrandRepeat(c *Ctx, z *zset.ZSet, count uint64, withScores bool) {
	// count*2 fits: WITHSCORES limits the count to half the int64 range.
	scoredLen(c, int(count), withScores)
	n := uint64(z.Len())
	for range count {
		m, s := z.RandomAt(int(c.E.rand() % n))
		replyScored(c, m, s, withScores)
		if len(c.Out) > zsetReplyMax {
			c.Client.CloseAfterReply()
			return
		}
	}
}

// zrandOrdered replies count distinct members chosen by selection sampling, in the set's
// storage order (rank order for a listpack, as Redis's lpRandomPairsUnique returns them).
func zrandOrdered(c *Ctx, z *zset.ZSet, count int, withScores bool) {
	scoredLen(c, count, withScores)
	size := z.Len()
	need := count
	for i := 0; i < size && need > 0; i++ {
		if c.E.rand()%uint64(size-i) < uint64(need) {
			m, s := z.RandomAt(i)
			replyScored(c, m, s, withScores)
			need--
		}
	}
}

// zrandDistinct replies count distinct members of a set at least three times larger, drawing
// until it has enough, in the order drawn.
func zrandDistinct(c *Ctx, z *zset.ZSet, count int, withScores bool) {
	scoredLen(c, count, withScores)
	seen := make(map[int]struct{}, count)
	n := uint64(z.Len())
	for len(seen) < count {
		i := int(c.E.rand() % n)
		if _, dup := seen[i]; dup {
			continue
		}
		seen[i] = struct{}{}
		m, s := z.RandomAt(i)
		replyScored(c, m, s, withScores)
	}
}
