package command

import (
	"math"
	"slices"
	"strconv"

	"github.com/hotkv/hotkv/ds/keyspace"
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/ds/zset"
)

// ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD, after Redis's
// zunionInterDiffGenericCommand; and ZSCAN. Inputs may be sorted sets or plain sets (whose
// members score 1).

type zsetOp uint8

const (
	zopUnion zsetOp = iota
	zopInter
	zopDiff
)

type zaggregate uint8

const (
	aggSum zaggregate = iota
	aggMin
	aggMax
)

// setSource is what the set algebra needs of a plain set.
type setSource interface {
	Len() int
	Has(m []byte) bool
	Each(fn func(m []byte) bool)
}

var _ setSource = (*dset.Set)(nil)

// zsrc is one input: a sorted set, a plain set, or nothing (a missing key).
type zsrc struct {
	z      *zset.ZSet
	s      setSource
	obj    any // the value, to recognise a key given twice
	weight float64
}

func (s *zsrc) size() int {
	switch {
	case s.z != nil:
		return s.z.Len()
	case s.s != nil:
		return s.s.Len()
	}
	return 0
}

// each calls fn with every member and its score.
func (s *zsrc) each(fn func(m []byte, score float64)) {
	switch {
	case s.z != nil && s.z.Len() > 0:
		s.z.Walk(0, false, func(m []byte, v float64) bool { fn(m, v); return true })
	case s.s != nil:
		s.s.Each(func(m []byte) bool { fn(m, 1); return true })
	}
}

// find returns member's score in the input.
func (s *zsrc) find(m []byte) (float64, bool) {
	switch {
	case s.z != nil:
		return s.z.Score(m)
	case s.s != nil && s.s.Has(m):
		return 1, true
	}
	return 0, false
}

// zalgebra is a parsed algebra command.
type zalgebra struct {
	op         zsetOp
	card       bool // ZINTERCARD
	dst        []byte
	srcs       []zsrc
	agg        zaggregate
	withScores bool
	limit      int64
}

// parseZAlgebra parses the command's arguments and looks its inputs up, in Redis's order: the
// key count, the keys (WRONGTYPE), then the options. It replies the error and returns false on
// failure.
func parseZAlgebra(c *Ctx, op zsetOp, store, card bool) (zalgebra, bool) {
	a := zalgebra{op: op, card: card}
	at := 1
	if store {
		a.dst, at = c.Args[1], 2
	}
	n, ok := ParseInt(c.Args[at])
	switch {
	case !ok:
		c.Err(ErrNotInt)
		return a, false
	case n < 1:
		c.Errf(ErrZNeedKey, c.Spec.Name)
		return a, false
	case n > int64(len(c.Args)-at-1):
		c.Err(ErrSyntax)
		return a, false
	}
	a.srcs = make([]zsrc, n)
	for i := range a.srcs {
		src, ok := lookupZSource(c, c.Args[at+1+i])
		if !ok {
			return a, false
		}
		a.srcs[i] = src
	}
	if msg := a.parseOptions(c.Args[at+1+int(n):]); msg != "" {
		c.Err(msg)
		return a, false
	}
	return a, true
}

func lookupZSource(c *Ctx, key []byte) (zsrc, bool) {
	src := zsrc{weight: 1}
	e := c.FindRead(key)
	switch {
	case e == nil:
	case e.Kind == keyspace.KindZSet:
		src.z = keyspace.Obj[zset.ZSet](e)
		src.obj = src.z
	case e.Kind == keyspace.KindSet:
		src.s = keyspace.Obj[dset.Set](e)
		src.obj = src.s
	default:
		c.WrongType()
		return src, false
	}
	return src, true
}

func (a *zalgebra) parseOptions(args [][]byte) string {
	scored := a.op != zopDiff && !a.card
	for j := 0; j < len(args); j++ {
		left := len(args) - j
		switch opt := args[j]; {
		case scored && left > len(a.srcs) && strs.EqualFold(opt, "WEIGHTS"):
			for i := range a.srcs {
				j++
				w, ok := zset.ParseScore(args[j])
				if !ok {
					return ErrZWeightFloat
				}
				a.srcs[i].weight = w
			}
		case scored && left >= 2 && strs.EqualFold(opt, "AGGREGATE"):
			j++
			switch {
			case strs.EqualFold(args[j], "SUM"):
				a.agg = aggSum
			case strs.EqualFold(args[j], "MIN"):
				a.agg = aggMin
			case strs.EqualFold(args[j], "MAX"):
				a.agg = aggMax
			default:
				return ErrSyntax
			}
		case a.dst == nil && !a.card && strs.EqualFold(opt, "WITHSCORES"):
			a.withScores = true
		case a.card && left >= 2 && strs.EqualFold(opt, "LIMIT"):
			j++
			v, ok := ParseInt(args[j])
			if !ok || v < 0 {
				return ErrLimitNegative
			}
			a.limit = v
		default:
			return ErrSyntax
		}
	}
	return ""
}

// aggregate folds v into *target; a sum of +inf and -inf is 0, as in Redis.
func (a *zalgebra) aggregate(target *float64, v float64) {
	switch a.agg {
	case aggSum:
		*target += v
		if *target != *target {
			*target = 0
		}
	case aggMin: // not the builtin: it orders -0 below 0 and propagates NaN, Redis does neither
		if v < *target {
			*target = v
		}
	case aggMax:
		if v > *target {
			*target = v
		}
	}
}

// weighted is score times weight, with NaN (0 × inf) read as 0.
func weighted(score, w float64) float64 {
	v := score * w
	if v != v {
		return 0
	}
	return v
}

// run computes the result, sorted; for ZINTERCARD it returns only the count.
func (a *zalgebra) run() ([]zset.Entry, int) {
	if a.op != zopDiff {
		// Smallest first, as Redis does: sums are then added in Redis's order.
		slices.SortStableFunc(a.srcs, func(x, y zsrc) int { return x.size() - y.size() })
	}
	var es []zset.Entry
	var count int
	switch a.op {
	case zopUnion:
		es = a.union()
	case zopInter:
		es, count = a.inter()
	case zopDiff:
		es = a.diff()
	}
	zset.SortEntries(es)
	return es, count
}

func (a *zalgebra) union() []zset.Entry {
	var es []zset.Entry
	at := map[string]int{}
	for i := range a.srcs {
		src := &a.srcs[i]
		src.each(func(m []byte, s float64) {
			v := weighted(s, src.weight)
			if j, ok := at[string(m)]; ok {
				a.aggregate(&es[j].Score, v)
				return
			}
			k := string(m)
			at[k] = len(es)
			es = append(es, zset.Entry{Member: keyBytes(k), Score: v})
		})
	}
	return es
}

func (a *zalgebra) inter() ([]zset.Entry, int) {
	var es []zset.Entry
	count := 0
	first := &a.srcs[0]
	if first.size() == 0 {
		return nil, 0
	}
	first.each(func(m []byte, s float64) {
		if a.card && a.limit > 0 && int64(count) >= a.limit {
			return
		}
		score := weighted(s, first.weight)
		for j := 1; j < len(a.srcs); j++ {
			src := &a.srcs[j]
			v, ok := s, true
			if src.obj != first.obj {
				v, ok = src.find(m)
			}
			if !ok {
				return
			}
			// Unlike the first input's, these products are not cleared of NaN: Redis lets a
			// sum turn NaN (and then 0) and MIN and MAX ignore it.
			a.aggregate(&score, v*src.weight)
		}
		count++
		if !a.card {
			es = append(es, zset.Entry{Member: []byte(string(m)), Score: score})
		}
	})
	return es, count
}

// diff keeps the first input's members found in no other input, with their own scores.
func (a *zalgebra) diff() []zset.Entry {
	first := &a.srcs[0]
	for j := 1; j < len(a.srcs); j++ {
		if first.obj != nil && a.srcs[j].obj == first.obj {
			return nil
		}
	}
	var es []zset.Entry
	first.each(func(m []byte, s float64) {
		for j := 1; j < len(a.srcs); j++ {
			if _, ok := a.srcs[j].find(m); ok {
				return
			}
		}
		es = append(es, zset.Entry{Member: []byte(string(m)), Score: s})
	})
	return es
}

// zstoreEvents are the events of the STORE forms, by operation.
var zstoreEvents = [...]string{zopUnion: "zunionstore", zopInter: "zinterstore", zopDiff: "zdiffstore"}

func zalgebraGeneric(c *Ctx, op zsetOp, store, card bool) {
	a, ok := parseZAlgebra(c, op, store, card)
	if !ok {
		return
	}
	es, count := a.run()
	switch {
	case card:
		c.Int(int64(count))
	case store:
		c.Int(int64(storeResult(c, a.dst, es, zstoreEvents[op])))
	default:
		scoredLen(c, len(es), a.withScores)
		for i := range es {
			replyScored(c, es[i].Member, es[i].Score, a.withScores)
		}
	}
}

// ZUNION numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
func zunion(c *Ctx) { zalgebraGeneric(c, zopUnion, false, false) }

// ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX]
func zunionstore(c *Ctx) { zalgebraGeneric(c, zopUnion, true, false) }

// ZINTER numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
func zinter(c *Ctx) { zalgebraGeneric(c, zopInter, false, false) }

// ZINTERSTORE destination numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX]
func zinterstore(c *Ctx) { zalgebraGeneric(c, zopInter, true, false) }

// ZINTERCARD numkeys key [key ...] [LIMIT limit]
func zintercard(c *Ctx) { zalgebraGeneric(c, zopInter, false, true) }

// ZDIFF numkeys key [key ...] [WITHSCORES]
func zdiff(c *Ctx) { zalgebraGeneric(c, zopDiff, false, false) }

// ZDIFFSTORE destination numkeys key [key ...]
func zdiffstore(c *Ctx) { zalgebraGeneric(c, zopDiff, true, false) }

// ZSCAN key cursor [MATCH pattern] [COUNT count]
func zscan(c *Ctx) {
	cursor, ok := parseScanCursor(c.Args[2])
	if !ok {
		c.Err(ErrInvalidCursor)
		return
	}
	z, ok := readZSet(c, c.Args[1])
	switch {
	case !ok:
		return
	case z == nil:
		c.Out = append(c.Out, "*2\r\n$1\r\n0\r\n*0\r\n"...)
		return
	}
	opt, msg := parseMemberScanOptions(c.Args[3:])
	if msg != "" {
		c.Err(msg)
		return
	}
	var found []zset.Entry
	packed := z.Encoding() == "listpack"
	next := z.Scan(cursor, int(min(opt.count, 1<<30)), func(m []byte, s float64) {
		if opt.pattern == nil || strs.Glob(opt.pattern, m, false) {
			found = append(found, zset.Entry{Member: m, Score: s})
		}
	})
	c.ArrayLen(2)
	var buf [32]byte
	c.Bulk(strconv.AppendUint(buf[:0], next, 10))
	c.ArrayLen(len(found) * 2)
	for i := range found {
		c.Bulk(found[i].Member)
		c.Bulk(zscanScore(buf[:0], found[i].Score, packed))
	}
}

// zscanScore formats a score as ZSCAN sends it, as a string: Redis's listpack keeps integral
// scores as integers (printed in full), everything else prints as %.17g.
func zscanScore(dst []byte, s float64, packed bool) []byte {
	switch {
	case packed && s == float64(int64(s)) && s > -(1<<62) && s < 1<<62:
		return strconv.AppendInt(dst, int64(s), 10)
	case math.IsInf(s, 1):
		return append(dst, "inf"...)
	case math.IsInf(s, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, s, 'g', 17, 64)
}
