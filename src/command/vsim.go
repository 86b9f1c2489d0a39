package command

import (
	"github.com/hotkv/hotkv/ds/vector"
	"github.com/hotkv/hotkv/ds/vector/filter"
)

// vsimOpts are VSIM's options after the query vector.
type vsimOpts struct {
	withScores, withAttribs, truth bool
	count                          int
	ef, filterEF                   int
	epsilon                        float64
	filter                         *filter.Expr
}

// parseVsimOpts reads VSIM's options as Redis 8's VSIM_RedisCommand does, replying the first
// error.
func parseVsimOpts(c *Ctx, args [][]byte) (o vsimOpts, ok bool) {
	o.count, o.epsilon = 10, 2
	num := func(b []byte, msg string) (int, bool) {
		n, ok := ParseInt(b)
		if !ok || n <= 0 {
			c.Err(msg)
			return 0, false
		}
		return int(min(n, 1<<30)), true
	}
	for j := 0; j < len(args); j++ {
		more := j+1 < len(args)
		var ok bool
		switch a := args[j]; {
		case eqFold(a, "withscores"):
			o.withScores = true
			continue
		case eqFold(a, "withattribs"):
			o.withAttribs = true
			continue
		case eqFold(a, "truth"):
			o.truth = true
			continue
		case eqFold(a, "nothread"):
			continue // HotKV's searches run on the connection's goroutine anyway
		case eqFold(a, "count") && more:
			o.count, ok = num(args[j+1], ErrVsetCount)
		case eqFold(a, "epsilon") && more:
			o.epsilon, ok = ParseFloat(args[j+1])
			if !ok || o.epsilon <= 0 {
				c.Err(ErrVsetEpsilon)
				return o, false
			}
		case eqFold(a, "ef") && more:
			o.ef, ok = num(args[j+1], ErrVsetEF)
		case eqFold(a, "filter-ef") && more:
			o.filterEF, ok = num(args[j+1], ErrVsetFilterEF)
		case eqFold(a, "filter") && more:
			o.filter, ok = compileFilter(c, args[j+1])
		default:
			c.Err(ErrVsetVsimSyntax)
			return o, false
		}
		if !ok {
			return o, false
		}
		j++
	}
	if o.filterEF == 0 {
		o.filterEF = o.count * 100
	}
	return o, true
}

// compileFilter compiles a FILTER expression, replying Redis 8's error when it does not parse.
func compileFilter(c *Ctx, expr []byte) (*filter.Expr, bool) {
	f, err := filter.Compile(expr)
	if err != nil {
		near := expr
		if se, ok := err.(*filter.SyntaxError); ok {
			near = se.Near(expr)
		}
		c.Err(ErrVsetFilterSyntax + string(near))
		return nil, false
	}
	return f, true
}

// queryVector reads VSIM's query at args[2:]: ELE name, FP32 blob or VALUES n …, projected
// through the set's REDUCE matrix. It replies the error and returns ok false.
func queryVector(c *Ctx, v *vsetValue) (q []float32, used int, ok bool) {
	args := c.Args
	if eqFold(args[2], "ele") {
		vec, found := v.set.Vector(args[3])
		if !found || !v.liveName(args[3], c.Now/1e6) {
			c.Err(ErrVsetEleNotFound)
			return nil, 0, false
		}
		return vec, 2, true
	}
	vs, ok := parseVector(args, 2, false)
	if !ok {
		c.Err(ErrVsetVectorSpec)
		return nil, 0, false
	}
	q = vs.vec
	dim := v.set.Config().Dim
	if v.proj != nil && len(q) != dim {
		if len(q) != v.projIn {
			c.Errf(ErrVsetProjInput, len(q), v.projIn)
			return nil, 0, false
		}
		q = v.project(q)
	}
	if len(q) != dim {
		c.Errf(ErrVsetDimMismatch, len(vs.vec), dim)
		return nil, 0, false
	}
	return q, vs.n, true
}

// VSIM key (ELE element | FP32 blob | VALUES n v …) [WITHSCORES] [WITHATTRIBS] [COUNT n]
// [EPSILON d] [EF ef] [FILTER expr] [FILTER-EF n] [TRUTH] [NOTHREAD]: the COUNT most similar
// elements, best first; with scores and attributes a flat array in RESP2, a map in RESP3 (to
// [score, attribute] when both). A missing key is an empty array.
func vsim(c *Ctx) {
	v, ok := readVset(c, c.Args[1])
	if !ok {
		return
	}
	if v == nil {
		c.ArrayLen(0)
		return
	}
	q, used, ok := queryVector(c, v)
	if !ok {
		return
	}
	o, ok := parseVsimOpts(c, c.Args[2+used:])
	if !ok {
		return
	}
	ef := max(v.searchEF(o.ef), o.count)
	res := v.search(q, ef, ef, o.filter, nil, o.filterEF, o.truth, c.Now/1e6)
	// Redis's EPSILON is a distance bound: similarity at least 1 - epsilon.
	minSim := float32(1 - o.epsilon)
	n := 0
	for n < len(res) && n < o.count && res[n].Score >= minSim {
		n++
	}
	replyHits(c, v, res[:n], o.withScores, o.withAttribs)
}

// searchEF is the search EF: the one asked for, else the set's EFSEARCH, else Redis's 100.
func (v *vsetValue) searchEF(asked int) int {
	switch {
	case asked > 0:
		return asked
	case v.efSearch > 0:
		return v.efSearch
	}
	return vector.SearchEF
}

// search runs one query: exact (TRUTH) or through the graph, with the FILTER expression and an
// id pre-filter (tags) applied, expired elements left out. k results at most.
func (v *vsetValue) search(q []float32, k, ef int, f *filter.Expr, among []uint32, filterEF int, exact bool, ms int64) []vector.Result {
	var keep func(id uint32) bool
	if f != nil || v.ttl != nil {
		keep = func(id uint32) bool {
			if !v.live(id, ms) {
				return false
			}
			if f == nil {
				return true
			}
			a := v.set.AttrID(id)
			return a != nil && f.Match(a)
		}
	}
	switch {
	case among != nil:
		if keep != nil {
			kept := among[:0:0]
			for _, id := range among {
				if keep(id) {
					kept = append(kept, id)
				}
			}
			among = kept
		}
		return v.set.SearchAmong(q, k, among)
	case exact:
		return v.set.SearchExact(q, k, keep)
	}
	return v.set.Search(q, k, ef, keep, filterEF)
}

// replyHits replies search results as VSIM does.
func replyHits(c *Ctx, v *vsetValue, res []vector.Result, withScores, withAttribs bool) {
	asMap := c.Proto == 3 && (withScores || withAttribs)
	if asMap {
		c.MapLen(len(res))
	} else {
		per := 1
		if withScores {
			per++
		}
		if withAttribs {
			per++
		}
		c.ArrayLen(len(res) * per)
	}
	for _, r := range res {
		c.Bulk(v.set.Name(r.ID))
		if c.Proto == 3 && withScores && withAttribs {
			c.ArrayLen(2)
		}
		if withScores {
			c.Double(float64(r.Score))
		}
		if withAttribs {
			if a := v.set.AttrID(r.ID); a != nil {
				c.Bulk(a)
			} else {
				c.Null()
			}
		}
	}
}
