package command

import (
	"math"
	"slices"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/ds/zset"
)

// The ZRANGE family: one parser and one walker serve ZRANGE, ZRANGESTORE and the older
// ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX and ZREVRANGE, as in Redis's
// zrangeGenericCommand.

type zrangeKind uint8

const (
	zrangeAuto zrangeKind = iota
	zrangeRank
	zrangeScore
	zrangeLex
)

// zrangeOpts is a parsed range request.
type zrangeOpts struct {
	kind       zrangeKind
	rev        bool
	withScores bool
	offset     int64
	limit      int64 // -1: no limit
	limitGiven bool
	start, end int64 // rank range
	score      zset.ScoreRange
	lex        zset.LexRange
	key        []byte
}

// parseZRange parses "<src> <min> <max> [options]" from args[at:]. kind and rev fixed by the
// command (ZRANGEBYSCORE, ZREVRANGE...) reject the option that would set them again. It
// replies the error and returns false on failure.
func parseZRange(c *Ctx, at int, store bool, kind zrangeKind, rev bool) (zrangeOpts, bool) {
	o := zrangeOpts{kind: kind, rev: rev, limit: -1, key: c.Args[at]}
	dirAuto := !rev && kind == zrangeAuto
	for j := at + 3; j < len(c.Args); j++ {
		a, left := c.Args[j], len(c.Args)-j-1
		switch {
		case !store && strs.EqualFold(a, "WITHSCORES"):
			o.withScores = true
		case strs.EqualFold(a, "LIMIT") && left >= 2:
			var ok1, ok2 bool
			o.offset, ok1 = ParseInt(c.Args[j+1])
			o.limit, ok2 = ParseInt(c.Args[j+2])
			if !ok1 || !ok2 {
				c.Err(ErrNotInt)
				return o, false
			}
			o.limitGiven = true
			j += 2
		case dirAuto && strs.EqualFold(a, "REV"):
			o.rev, dirAuto = true, false
		case o.kind == zrangeAuto && strs.EqualFold(a, "BYLEX"):
			o.kind = zrangeLex
		case o.kind == zrangeAuto && strs.EqualFold(a, "BYSCORE"):
			o.kind = zrangeScore
		default:
			c.Err(ErrSyntax)
			return o, false
		}
	}
	if o.kind == zrangeAuto {
		o.kind = zrangeRank
	}
	switch {
	case o.limitGiven && o.limit != -1 && o.kind == zrangeRank: // Redis ignores LIMIT x -1 by rank
		c.Err(ErrZLimitRank)
		return o, false
	case o.withScores && o.kind == zrangeLex:
		c.Err(ErrZWithscoresLex)
		return o, false
	}
	return o, parseZRangeBounds(c, &o, c.Args[at+1], c.Args[at+2])
}

func parseZRangeBounds(c *Ctx, o *zrangeOpts, min, max []byte) bool {
	if o.rev && o.kind != zrangeRank {
		min, max = max, min // given as max min
	}
	var ok bool
	switch o.kind {
	case zrangeRank:
		var ok2 bool
		o.start, ok = ParseInt(min)
		o.end, ok2 = ParseInt(max)
		if !ok || !ok2 {
			c.Err(ErrNotInt)
			return false
		}
	case zrangeScore:
		if o.score, ok = zset.ParseScoreRange(min, max); !ok {
			c.Err(ErrZMinMaxFloat)
			return false
		}
	case zrangeLex:
		if o.lex, ok = zset.ParseLexRange(min, max); !ok {
			c.Err(ErrZMinMaxLex)
			return false
		}
	}
	return true
}

// zrangeSpan is where a range walk starts and how far it may go.
type zrangeSpan struct {
	o     *zrangeOpts
	start int  // rank of the first member visited, -1 when the range is empty
	count int  // members to visit when known (ranks), else -1
	rev   bool // walk towards rank 0
	limit int64
}

// span resolves a parsed range against z. Score and lex walks start at the first member in
// range (the last when reversed) and skip offset members without looking at them, then walk
// while members stay in range, exactly as Redis walks, so a lex range over members of mixed
// scores gives Redis's answer.
func (o *zrangeOpts) span(z *zset.ZSet) zrangeSpan {
	n := z.Len()
	if o.kind == zrangeRank {
		start, end := normalizeRange(o.start, o.end, n)
		if start < 0 {
			return zrangeSpan{start: -1}
		}
		s := zrangeSpan{o: o, start: start, count: end - start + 1, rev: o.rev, limit: -1}
		if o.rev {
			s.start = n - 1 - start
		}
		return s
	}
	s := zrangeSpan{o: o, count: -1, rev: o.rev, limit: o.limit}
	switch {
	case o.kind == zrangeScore && !o.rev:
		s.start = z.FirstInScore(&o.score)
	case o.kind == zrangeScore:
		s.start = z.LastInScore(&o.score)
	case !o.rev:
		s.start = z.FirstInLex(&o.lex)
	default:
		s.start = z.LastInLex(&o.lex)
	}
	if s.start < 0 || o.offset < 0 || (o.kind == zrangeScore && o.offset > 0 && o.offset >= int64(n)) {
		s.start = -1
		return s
	}
	if o.rev {
		s.start -= int(min(o.offset, int64(n)))
	} else {
		s.start += int(min(o.offset, int64(n)))
	}
	if s.start < 0 || s.start >= n {
		s.start = -1
	}
	return s
}

// in reports whether a member met while walking is still in range: a score or lex walk stops
// at the first member past the far end.
func (s *zrangeSpan) in(m []byte, v float64) bool {
	o := s.o
	switch {
	case o.kind == zrangeScore && !o.rev:
		return o.score.LteMax(v)
	case o.kind == zrangeScore:
		return o.score.GteMin(v)
	case o.kind == zrangeLex && !o.rev:
		return o.lex.LteMax(m)
	case o.kind == zrangeLex:
		return o.lex.GteMin(m)
	}
	return true
}

// normalizeRange clamps a rank range like Redis (negative ranks count from the end); start is
// -1 when the range is empty.
func normalizeRange(start, end int64, n int) (int, int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	start = max(start, 0)
	if start > end || start >= ln {
		return -1, -1
	}
	return int(start), int(min(end, ln-1))
}

// walk visits the span's members and returns how many it visited.
func (s *zrangeSpan) walk(z *zset.ZSet, fn func(m []byte, v float64)) int {
	if s.start < 0 {
		return 0
	}
	n := 0
	if want := s.count; want > 1 && (s.limit < 0 || s.limit > int64(want)) {
		z.Warm(s.start, s.rev, want)
	}
	z.Walk(s.start, s.rev, func(m []byte, v float64) bool {
		if (s.count >= 0 && n >= s.count) || (s.limit >= 0 && int64(n) >= s.limit) || !s.in(m, v) {
			return false
		}
		fn(m, v)
		n++
		return true
	})
	return n
}

// size returns how many members the walk will visit.
func (s *zrangeSpan) size(z *zset.ZSet) int {
	if s.start < 0 {
		return 0
	}
	if s.count >= 0 {
		return s.count
	}
	return s.walk(z, func([]byte, float64) {})
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
func zrange(c *Ctx) { zrangeGeneric(c, zrangeAuto, false) }

// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
func zrangebyscore(c *Ctx) { zrangeGeneric(c, zrangeScore, false) }

// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
func zrevrangebyscore(c *Ctx) { zrangeGeneric(c, zrangeScore, true) }

// ZRANGEBYLEX key min max [LIMIT offset count]
func zrangebylex(c *Ctx) { zrangeGeneric(c, zrangeLex, false) }

// ZREVRANGEBYLEX key max min [LIMIT offset count]
func zrevrangebylex(c *Ctx) { zrangeGeneric(c, zrangeLex, true) }

// ZREVRANGE key start stop [WITHSCORES]
func zrevrange(c *Ctx) { zrangeGeneric(c, zrangeRank, true) }

func zrangeGeneric(c *Ctx, kind zrangeKind, rev bool) {
	o, ok := parseZRange(c, 1, false, kind, rev)
	if !ok {
		return
	}
	z, ok := readZSet(c, o.key)
	switch {
	case !ok:
	case z == nil:
		c.ArrayLen(0)
	default:
		s := o.span(z)
		scoredLen(c, s.size(z), o.withScores)
		s.walk(z, func(m []byte, v float64) { replyScored(c, m, v, o.withScores) })
	}
}

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
func zrangestore(c *Ctx) {
	o, ok := parseZRange(c, 2, true, zrangeAuto, false)
	if !ok {
		return
	}
	z, ok := readZSet(c, o.key)
	if !ok {
		return
	}
	var es []zset.Entry
	if z != nil {
		s := o.span(z)
		s.walk(z, func(m []byte, v float64) { es = append(es, zset.Entry{Member: m, Score: v}) })
		clearNegativeZeros(es, zsetLimits(c), o.kind == zrangeRank)
		if o.rev {
			slices.Reverse(es)
		}
	}
	c.Int(int64(storeResult(c, c.Args[1], es, "zrangestore")))
}

// clearNegativeZeros reproduces how Redis builds a ZRANGESTORE result: member by member, in the
// order the range walks, into a set that starts as a listpack (unless a rank range is known to
// be too long for one) and converts when it outgrows it. A listpack stores -0 as 0, so the
// members added before the conversion lose the sign of a -0 score and the later ones keep it.
func clearNegativeZeros(es []zset.Entry, lim zset.Limits, knownLen bool) {
	if knownLen && int64(len(es)) > lim.MaxEntries {
		return
	}
	for i := range es {
		if int64(i+1) > lim.MaxEntries || int64(len(es[i].Member)) > lim.MaxValue {
			return
		}
		if es[i].Score == 0 {
			es[i].Score = 0 // +0 whatever the sign was
		}
	}
}

// storeResult replaces dst with a set of entries (distinct, in order), or deletes it when
// there are none, and returns the new size; event (the command's name) is raised on a stored
// set, "del" on a deleted one. The entries may be views into a source set, even dst's own: the
// new set copies them before dst is replaced. Like Redis's setKey, replacing a key keeps it (no
// "new" event) and drops its expiry; only a dst created here wakes its blocked clients: Redis
// 7.0 overwrites an existing key without signalling it.
func storeResult(c *Ctx, dst []byte, es []zset.Entry, event string) int {
	if len(es) == 0 {
		deleteStored(c, dst)
		return 0
	}
	z := zset.FromSorted(es, zsetLimits(c))
	ks, e, created := c.UpsertIn(dst)
	ks.Unpacked(e) // a packed string it replaces leaves the counts (strings_packed.go)
	keyspace.SetObj(e, keyspace.KindZSet, z)
	e.Enc = 0
	ks.SetExpire(e, 0)
	untagOverwritten(c, dst)
	if created {
		c.SignalReady(dst)
	}
	c.Changed(NotifyZSet, event, dst)
	c.Dirty(1)
	return len(es)
}

// deleteStored deletes the destination of a STORE whose result is empty, as Redis's dbDelete
// does, without looking at its expiry: a key whose time has passed but that is still there is
// deleted like a live one ("del", one change, the command replicated as itself), not reported
// expired.
func deleteStored(c *Ctx, dst []byte) {
	if c.KS(dst).Delete(dst, math.MinInt64) { // at the dawn of time every entry is live
		c.Changed(NotifyGeneric, "del", dst)
		c.Dirty(1)
	}
}

// ZREMRANGEBYRANK key start stop
func zremrangebyrank(c *Ctx) {
	start, ok1 := ParseInt(c.Args[2])
	end, ok2 := ParseInt(c.Args[3])
	if !ok1 || !ok2 {
		c.Err(ErrNotInt)
		return
	}
	zremrange(c, "zremrangebyrank", func(z *zset.ZSet) (int, int) {
		first, last := normalizeRange(start, end, z.Len())
		return first, last - first + 1
	})
}

// ZREMRANGEBYSCORE key min max
func zremrangebyscore(c *Ctx) {
	r, ok := zset.ParseScoreRange(c.Args[2], c.Args[3])
	if !ok {
		c.Err(ErrZMinMaxFloat)
		return
	}
	zremrange(c, "zremrangebyscore", func(z *zset.ZSet) (int, int) { return z.FirstInScore(&r), z.CountInScore(&r) })
}

// ZREMRANGEBYLEX key min max
func zremrangebylex(c *Ctx) {
	r, ok := zset.ParseLexRange(c.Args[2], c.Args[3])
	if !ok {
		c.Err(ErrZMinMaxLex)
		return
	}
	zremrange(c, "zremrangebylex", func(z *zset.ZSet) (int, int) { return z.FirstInLex(&r), z.CountInLex(&r) })
}

// zremrange deletes the run of members that span finds (its first rank, -1 for none, and its
// length), raises event when it deleted any, and replies how many it deleted.
func zremrange(c *Ctx, event string, span func(z *zset.ZSet) (first, count int)) {
	key := c.Args[1]
	ks, e, z, ok := writeZSet(c, key)
	if !ok {
		return
	}
	deleted := 0
	if z != nil {
		if first, count := span(z); first >= 0 && count > 0 {
			deleted = z.RemoveRange(first, first+count-1)
		}
	}
	if deleted > 0 {
		c.Touch(key)
		c.Notify(NotifyZSet, event, key)
		if dropEmptyZSet(ks, e, z) {
			c.Notify(NotifyGeneric, "del", key)
		}
		c.Dirty(deleted)
	}
	c.Int(int64(deleted))
}
