package command

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/vector"
	"github.com/hotkv/hotkv/ds/vector/filter"
)

// HotKV's explicit vector index commands, on the vector-set key type: VSIM.CREATEINDEX (a metric
// other than cosine, the quantization, M, EF, the default search EF), VSIM.SET (batch insert with
// attributes, tags and a per-element TTL), VSIM.SEARCH (the tag pre-filter, MINSIM, EXACT),
// VSIM.DEL and VSIM.INFO. Scores are ds/vector's one similarity scale (higher is better; cosine
// (1+cos)/2 as Redis 8's VSIM, L2 1/(1+d), IP (1+dot)/2); MINSIM compares with it, 0 included.

// vsimExactLimit is the largest tag match VSIM.SEARCH scores exactly (SearchAmong); a larger one
// filters the graph search instead.
const vsimExactLimit = 10000

// VSIM.CREATEINDEX key DIM d [METRIC COSINE|L2|IP] [QUANT NOQUANT|Q8|BIN] [M m] [EF ef]
// [EFSEARCH ef] [CAPACITY n]: +OK. CAPACITY is validated and otherwise a hint only (the index
// grows as elements arrive).
func vsimCreateIndex(c *Ctx) {
	key := c.Args[1]
	cfg := vector.Config{Metric: vector.Cosine, Quant: vector.Q8, M: vector.DefaultM, EF: vector.DefaultEF}
	efSearch := 0
	args := c.Args[2:]
	for j := 0; j < len(args); j += 2 {
		if j+1 >= len(args) {
			c.Err(ErrSyntax)
			return
		}
		a, val := args[j], args[j+1]
		n, isInt := ParseInt(val)
		switch {
		case eqFold(a, "dim"):
			if !isInt || n < 1 || n > vector.MaxDim {
				c.Err(ErrVsimDim)
				return
			}
			cfg.Dim = int(n)
		case eqFold(a, "metric"):
			switch {
			case eqFold(val, "cosine"):
				cfg.Metric = vector.Cosine
			case eqFold(val, "l2"):
				cfg.Metric = vector.L2
			case eqFold(val, "ip"):
				cfg.Metric = vector.IP
			default:
				c.Err(ErrVsimMetric)
				return
			}
		case eqFold(a, "quant"):
			switch {
			case eqFold(val, "noquant"):
				cfg.Quant = vector.NoQuant
			case eqFold(val, "q8"):
				cfg.Quant = vector.Q8
			case eqFold(val, "bin"):
				cfg.Quant = vector.Bin
			default:
				c.Err(ErrVsimQuant)
				return
			}
		case eqFold(a, "m"):
			if !isInt || n < 4 || n > vector.MaxM {
				c.Err(ErrVsetM)
				return
			}
			cfg.M = int(n)
		case eqFold(a, "ef"), eqFold(a, "efsearch"):
			if !isInt || n <= 0 || n > 1000000 {
				c.Err(ErrVsetEF)
				return
			}
			if eqFold(a, "ef") {
				cfg.EF = int(n)
			} else {
				efSearch = int(n)
			}
		case eqFold(a, "capacity"):
			if !isInt || n < 0 || n > vector.MaxNodes {
				c.Err(ErrVsimCapacity)
				return
			}
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if cfg.Dim == 0 {
		c.Err(ErrVsimDim)
		return
	}
	if e := c.Find(key); e != nil {
		if e.Kind != keyspace.KindVectorSet {
			c.WrongType()
		} else {
			c.Err(ErrVsimExists)
		}
		return
	}
	v, err := newVsetValue(c, cfg)
	if err != nil {
		vectorErr(c, err)
		return
	}
	v.hotkv, v.efSearch = true, efSearch
	addVset(c, key, v)
	c.Changed(NotifyModule, "vsim.createindex", key)
	c.Dirty(1)
	c.OK()
}

// vsimSetOpts are VSIM.SET's options before ITEMS.
type vsimSetOpts struct {
	at      int64 // expiry, unix ms; 0 none
	ttlPos  int   // index of TTL/PXAT in the arguments, 0 none
	attr    []byte
	tags    [][]byte
	items   int // index of the first item
	nitems  int
	hasTags bool
}

func parseVsimSet(c *Ctx) (o vsimSetOpts, ok bool) {
	args := c.Args
	for j := 2; j < len(args); {
		a := args[j]
		more := j+1 < len(args)
		switch {
		case (eqFold(a, "ttl") || eqFold(a, "pxat")) && more:
			n, ok := ParseInt(args[j+1])
			if !ok || n <= 0 {
				c.Err(ErrVsimTTL)
				return o, false
			}
			if eqFold(a, "ttl") {
				if n > math.MaxInt64/2-c.Now/1e6 {
					c.Err(ErrVsimTTL)
					return o, false
				}
				n += c.Now / 1e6
			}
			o.at, o.ttlPos = n, j
			j += 2
		case eqFold(a, "attr") && more:
			o.attr = args[j+1]
			j += 2
		case eqFold(a, "tags") && more:
			n, ok := ParseInt(args[j+1])
			if !ok || n < 0 || n > int64(len(args)-j-2) {
				c.Err(ErrVsimTags)
				return o, false
			}
			o.tags, o.hasTags = args[j+2:j+2+int(n)], true
			j += 2 + int(n)
		case eqFold(a, "items") && more:
			n, ok := ParseInt(args[j+1])
			if !ok || n < 1 || n*2 != int64(len(args)-j-2) {
				c.Err(ErrVsimItems)
				return o, false
			}
			o.items, o.nitems = j+2, int(n)
			return o, true
		default:
			c.Err(ErrSyntax)
			return o, false
		}
	}
	c.Err(ErrVsimItems)
	return o, false
}

// VSIM.SET key [TTL ms|PXAT ms] [ATTR json] [TAGS n t …] ITEMS n (id FP32-blob) …: adds or
// replaces n elements (vector, attribute, tags and expiry all replaced: what is not given is
// cleared) and replies how many were new. Every blob is checked before anything changes.
// Replicated with TTL turned into PXAT.
func vsimSet(c *Ctx) {
	key := c.Args[1]
	o, ok := parseVsimSet(c)
	if !ok {
		return
	}
	e, v, ok := writeVset(c, key)
	if !ok {
		return
	}
	if v == nil {
		c.Err(ErrVsimNoIndex)
		return
	}
	cfg := v.set.Config()
	vecs := make([][]float32, o.nitems)
	for i := range vecs {
		b := c.Args[o.items+2*i+1]
		if len(b) != 4*cfg.Dim {
			c.Errf(ErrVsetDimMismatch, len(b)/4, cfg.Dim)
			return
		}
		vec := make([]float32, cfg.Dim)
		for j := range vec {
			vec[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		}
		if !checkVector(c, vec, cfg.Metric) {
			return
		}
		vecs[i] = vec
	}
	added := 0
	for i, vec := range vecs {
		name := c.Args[o.items+2*i]
		isNew, err := v.set.Add(name, vec, 0)
		if err != nil {
			vectorErr(c, err) // checked above: not reached with a valid blob
			return
		}
		if isNew {
			added++
		}
		id, _ := v.set.ID(name)
		var attr []byte
		if len(o.attr) > 0 {
			attr = o.attr
		}
		v.setAttr(name, attr)
		if o.hasTags && len(o.tags) > 0 {
			if v.tags == nil {
				v.tags = filter.NewTags()
			}
			v.tags.Set(id, o.tags)
		} else if v.tags != nil {
			v.tags.RemoveID(id)
		}
		switch {
		case o.at > 0:
			if v.ttl == nil {
				v.ttl = map[uint32]int64{}
			}
			v.ttl[id] = o.at
		case v.ttl != nil:
			delete(v.ttl, id)
		}
	}
	if o.at > 0 {
		trackVexpLocked(c, key, v, o.at)
		if o.at <= c.Now/1e6 && expireVsetElements(c, c.DB, key, v, c.Now/1e6, 0) > 0 && !v.hotkv {
			dropVsetIfEmpty(c, key, e, v) // a set VADD made goes with its last element
		}
	}
	c.Changed(NotifyModule, "vsim.set", key)
	c.Dirty(o.nitems)
	if o.ttlPos > 0 {
		args := append([][]byte(nil), c.Args...)
		args[o.ttlPos] = []byte("PXAT")
		args[o.ttlPos+1] = strconv.AppendInt(nil, o.at, 10)
		c.Propagate(args...)
	}
	c.Int(int64(added))
}

// VSIM.DEL key id [id …]: how many were removed. A set VSIM.CREATEINDEX made stays when emptied;
// one VADD made is deleted, as VREM does.
func vsimDel(c *Ctx) {
	key := c.Args[1]
	e, v, ok := writeVset(c, key)
	if !ok {
		return
	}
	n := 0
	if v != nil {
		for _, name := range c.Args[2:] {
			if v.remove(name) {
				n++
			}
		}
	}
	if n > 0 {
		c.Changed(NotifyModule, "vsim.del", key)
		c.Dirty(n)
		if !v.hotkv {
			dropVsetIfEmpty(c, key, e, v)
		}
	}
	c.Int(int64(n))
}

// vsimSearchOpts are VSIM.SEARCH's options after the query.
type vsimSearchOpts struct {
	k, ef                   int
	minSim                  float64
	hasMin                  bool
	tags                    [][]byte
	allTags, hasTags        bool
	filter                  *filter.Expr
	withScores, withAttribs bool
	exact                   bool
}

func parseVsimSearch(c *Ctx, args [][]byte) (o vsimSearchOpts, ok bool) {
	o.k = 10
	for j := 0; j < len(args); j++ {
		a := args[j]
		more := j+1 < len(args)
		switch {
		case eqFold(a, "k") && more:
			n, ok := ParseInt(args[j+1])
			if !ok || n <= 0 {
				c.Err(ErrVsimK)
				return o, false
			}
			o.k = int(min(n, 1<<30))
			j++
		case eqFold(a, "ef") && more:
			n, ok := ParseInt(args[j+1])
			if !ok || n <= 0 {
				c.Err(ErrVsetEF)
				return o, false
			}
			o.ef = int(min(n, 1<<30))
			j++
		case eqFold(a, "minsim") && more:
			f, ok := ParseFloat(args[j+1])
			if !ok {
				c.Err(ErrVsimMinSim)
				return o, false
			}
			o.minSim, o.hasMin = f, true
			j++
		case eqFold(a, "tags") && j+2 < len(args):
			switch {
			case eqFold(args[j+1], "any"):
			case eqFold(args[j+1], "all"):
				o.allTags = true
			default:
				c.Err(ErrSyntax)
				return o, false
			}
			n, ok := ParseInt(args[j+2])
			if !ok || n < 1 || n > int64(len(args)-j-3) {
				c.Err(ErrVsimTags)
				return o, false
			}
			o.tags, o.hasTags = args[j+3:j+3+int(n)], true
			j += 2 + int(n)
		case eqFold(a, "filter") && more:
			if o.filter, ok = compileFilter(c, args[j+1]); !ok {
				return o, false
			}
			j++
		case eqFold(a, "withscores"):
			o.withScores = true
		case eqFold(a, "withattribs"):
			o.withAttribs = true
		case eqFold(a, "exact"):
			o.exact = true
		default:
			c.Err(ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// VSIM.SEARCH key (FP32 blob | VALUES n v … | ELE id) [K k] [EF ef] [MINSIM s]
// [TAGS ANY|ALL n t …] [FILTER expr] [WITHSCORES] [WITHATTRIBS] [EXACT]: the k most similar
// elements, replied as VSIM replies. TAGS is a pre-filter through the tag index: a match of at
// most vsimExactLimit elements is scored exactly over its members, a larger one bounds the graph
// search (with no FILTER-EF budget: it explores until k matches are found or the graph is done).
func vsimSearch(c *Ctx) {
	v, ok := readVset(c, c.Args[1])
	if !ok {
		return
	}
	if v == nil {
		c.Err(ErrVsimNoIndex)
		return
	}
	q, used, ok := queryVector(c, v)
	if !ok {
		return
	}
	o, ok := parseVsimSearch(c, c.Args[2+used:])
	if !ok {
		return
	}
	ef := max(v.searchEF(o.ef), o.k)
	ms := c.Now / 1e6
	var res []vector.Result
	switch {
	case o.hasTags:
		var ids []uint32
		if v.tags != nil {
			bm := v.tags.Match(o.tags, o.allTags)
			if bm.GetCardinality() > vsimExactLimit && !o.exact {
				keep := func(id uint32) bool {
					return v.live(id, ms) && bm.Contains(id) && (o.filter == nil || matchAttr(v, id, o.filter))
				}
				res = v.set.Search(q, o.k, ef, keep, v.Len())
				break
			}
			ids = bm.ToArray()
		}
		if ids == nil {
			ids = []uint32{}
		}
		res = v.search(q, o.k, ef, o.filter, ids, 0, true, ms)
	default:
		res = v.search(q, o.k, ef, o.filter, nil, v.Len(), o.exact, ms)
	}
	n := 0
	for n < len(res) && n < o.k && (!o.hasMin || float64(res[n].Score) >= o.minSim) {
		n++
	}
	replyHits(c, v, res[:n], o.withScores, o.withAttribs)
}

func matchAttr(v *vsetValue, id uint32, f *filter.Expr) bool {
	a := v.set.AttrID(id)
	return a != nil && f.Match(a)
}

// VSIM.INFO key: a map of the index's configuration and state (MEMORY USAGE gives its bytes).
func vsimInfo(c *Ctx) {
	v, ok := readVset(c, c.Args[1])
	switch {
	case !ok:
		return
	case v == nil:
		c.Err(ErrVsimNoIndex)
		return
	}
	in := v.set.Info()
	tagged, expiring := 0, len(v.ttl)
	if v.tags != nil {
		tagged = v.tags.Len()
	}
	made := "vadd"
	if v.hotkv {
		made = "vsim.createindex"
	}
	c.MapLen(12)
	for _, kv := range []struct {
		k string
		s string
		n int64
	}{
		{"dim", "", int64(in.Dim)}, {"metric", in.Metric.String(), 0}, {"quant", in.Quant.String(), 0},
		{"m", "", int64(in.M)}, {"ef", "", int64(in.EF)}, {"efsearch", "", int64(v.searchEF(0))},
		{"size", "", int64(in.Len)}, {"max-level", "", int64(in.MaxLevel)},
		{"attributes-count", "", int64(in.Attrs)}, {"tagged", "", int64(tagged)},
		{"expiring", "", int64(expiring)}, {"created-by", made, 0},
	} {
		c.Simple(kv.k)
		if kv.s != "" {
			c.Simple(kv.s)
		} else {
			c.Int(kv.n)
		}
	}
}
