package command

import (
	"math"

	"github.com/hotkv/hotkv/ds/agentmem"
	"github.com/hotkv/hotkv/src/ai/tokens"
)

// memMaxK bounds SEARCH's K.
const memMaxK = 1000

// parseMemFilter reads one filter option at args[j:] into f: USER, SESSION, NS, TYPE (repeatable:
// any of them), TOPICS n …, ENTITIES n …, SINCE ms, UNTIL ms. n is the arguments consumed: 0 when
// args[j] is not a filter option, -1 when it replied an error.
func parseMemFilter(c *Ctx, args [][]byte, j int, f *agentmem.Filter) int {
	a := args[j]
	if j+1 >= len(args) {
		return 0
	}
	val := args[j+1]
	switch {
	case eqFold(a, "user"):
		f.User, f.HasUser = string(val), true
	case eqFold(a, "session"):
		f.Session, f.HasSession = string(val), true
	case eqFold(a, "ns"):
		f.NS, f.HasNS = string(val), true
	case eqFold(a, "type"):
		t, ok := agentmem.ParseType(lowerASCII(val))
		if !ok {
			c.Err(ErrMemType)
			return -1
		}
		f.Types |= 1 << t
	case eqFold(a, "topics"), eqFold(a, "entities"):
		vals, n := memList(c, args, j+1)
		if n == 0 {
			return -1
		}
		if eqFold(a, "topics") {
			f.Topics = vals
		} else {
			f.Entities = vals
		}
		return 1 + n
	case eqFold(a, "since"), eqFold(a, "until"):
		t, ok := memTime(c, val)
		if !ok {
			return -1
		}
		if eqFold(a, "since") {
			f.Since = t
		} else {
			f.Until = t
		}
	default:
		return 0
	}
	return 2
}

// MEM.SEARCH key (VECTOR (FP32 blob | VALUES n v…) | QUERY text) [K k] [filters…] [ASOF ms] [MINSIM cosine]
// [WEIGHTS sim recency importance] [HALFLIFE ms] [WITHMETA]: an array of results, best first,
// each [id, score, similarity, text] (WITHMETA: then user, session, type, eventtime).
// Similarity is cosine in [-1, 1]; score = sim·w1 + 0.5^(age/halflife)·w2 + importance·w3, age
// from the event time (a pinned memory's recency is 1). Defaults: K 10, WEIGHTS 1 0 0, HALFLIFE
// one day.
func memSearch(c *Ctx) {
	v, ok := readAgentMem(c, c.Args[1])
	if !ok {
		return
	}
	s := v.s
	q := agentmem.Query{K: 10, MinSim: -2, Weights: agentmem.Weights{Sim: 1, HalfLife: 86400000}}
	var vec []float32
	withMeta := false
	args := c.Args
	for j := 2; j < len(args); {
		if n := parseMemFilter(c, args, j, &q.Filter); n < 0 {
			return
		} else if n > 0 {
			j += n
			continue
		}
		a := args[j]
		if eqFold(a, "withmeta") {
			withMeta = true
			j++
			continue
		}
		if j+1 >= len(args) {
			c.Err(ErrSyntax)
			return
		}
		val := args[j+1]
		switch {
		case eqFold(a, "vector"):
			x, n := memVector(c, args, j+1, s.Config().Dim)
			if n == 0 {
				return
			}
			vec = x
			j += 1 + n
			continue
		case eqFold(a, "query"):
			x, ok := v.embedText(c, val)
			if !ok {
				return
			}
			vec = x
		case eqFold(a, "k"):
			n, ok := ParseInt(val)
			if !ok || n < 1 || n > memMaxK {
				c.Err(ErrVsimK)
				return
			}
			q.K = int(n)
		case eqFold(a, "asof"):
			t, ok := memTime(c, val)
			if !ok {
				return
			}
			q.AsOf = max(t, 1)
		case eqFold(a, "minsim"):
			x, ok := ParseFloat(val)
			if !ok || !(x >= -1 && x <= 1) {
				c.Err(ErrVsimMinSim)
				return
			}
			q.MinSim = x
		case eqFold(a, "halflife"):
			n, ok := ParseInt(val)
			if !ok || n < 1 {
				c.Err(ErrMemHalfLife)
				return
			}
			q.Weights.HalfLife = n
		case eqFold(a, "weights"):
			if j+3 >= len(args) {
				c.Err(ErrMemWeights)
				return
			}
			var w [3]float64
			for i := range w {
				x, ok := ParseFloat(args[j+1+i])
				if !ok || math.IsInf(x, 0) {
					c.Err(ErrMemWeights)
					return
				}
				w[i] = x
			}
			q.Weights.Sim, q.Weights.Recency, q.Weights.Importance = w[0], w[1], w[2]
			j += 4
			continue
		default:
			c.Err(ErrSyntax)
			return
		}
		j += 2
	}
	if vec == nil {
		c.Err(ErrMemNeedVector)
		return
	}
	if s.Config().RequireUser && !q.HasUser {
		c.Err(ErrMemRequireUser)
		return
	}
	norm, err := s.Normalize(vec)
	if err != nil {
		memErr(c, err)
		return
	}
	q.Vec = norm
	hits := s.Search(&q, memNow(c))
	c.ArrayLen(len(hits))
	for _, h := range hits {
		r := h.Rec
		if withMeta {
			c.ArrayLen(8)
		} else {
			c.ArrayLen(4)
		}
		c.BulkString(r.ID)
		c.Double(h.Score)
		c.Double(h.Sim)
		c.Bulk(r.Text)
		if withMeta {
			c.BulkString(r.User)
			c.BulkString(r.Session)
			c.BulkString(r.Type.String())
			c.Int(r.EventTime)
		}
	}
}

// MEM.FORGET key (filters… | ALL) [MAXIMPORTANCE f] [DRYRUN]: deletes every memory (all
// versions) the filters select, pinned ones excepted, and replies how many; DRYRUN deletes
// nothing and replies their ids. Replicated as MEM.DEL of those ids.
func memForget(c *Ctx) {
	key := c.Args[1]
	var f agentmem.Filter
	f.Superseded = true
	dry, all, filtered := false, false, false
	maxImp := math.Inf(1)
	args := c.Args
	for j := 2; j < len(args); {
		if n := parseMemFilter(c, args, j, &f); n < 0 {
			return
		} else if n > 0 {
			j, filtered = j+n, true
			continue
		}
		switch a := args[j]; {
		case eqFold(a, "dryrun"):
			dry = true
		case eqFold(a, "all"):
			all = true
		case eqFold(a, "maximportance") && j+1 < len(args):
			x, ok := ParseFloat(args[j+1])
			if !ok || math.IsNaN(x) {
				c.Err(ErrMemImportance)
				return
			}
			maxImp, filtered = x, true
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
		j++
	}
	if !filtered && !all {
		c.Err(ErrMemForgetFilter)
		return
	}
	var v *memValue
	var ok bool
	if dry {
		v, ok = readAgentMem(c, key)
	} else {
		v, ok = writeAgentMem(c, key)
	}
	if !ok {
		return
	}
	if v.s.Config().RequireUser && !f.HasUser {
		c.Err(ErrMemRequireUser)
		return
	}
	if !dry {
		sweepAgentMem(c, key, v, memNow(c))
	}
	var ids []string
	for _, id := range v.s.Matching(&f, memNow(c)) {
		if r := v.s.Get(id); !r.Pinned && r.Importance <= maxImp {
			ids = append(ids, id)
		}
	}
	if dry {
		memStrings(c, ids)
		return
	}
	for _, id := range ids {
		v.s.Delete(id)
	}
	if len(ids) > 0 {
		args := append(make([][]byte, 0, 2+len(ids)), memDelArg, key)
		for _, id := range ids {
			args = append(args, []byte(id))
		}
		c.Propagate(args...)
		c.Changed(NotifyModule, "mem.forget", key)
		c.Dirty(len(ids))
	} else {
		c.PropagateNothing()
	}
	c.Int(int64(len(ids)))
}

// memEncoding is the token encoding of a memory's windows.
func memEncoding(cfg agentmem.Config) tokens.Encoding { return tokens.Encoding(cfg.Encoding) }
