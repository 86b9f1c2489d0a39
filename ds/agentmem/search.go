package agentmem

import (
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/hotkv/hotkv/ds/vector"
)

// ExactLimit is the largest candidate set (after the bitmap pre-filters) a search ranking by
// similarity alone scores exactly; a larger one is searched through the HNSW index with the
// candidates as its filter. WeightedExactLimit is the same for a search with recency or
// importance weights, larger because the graph can only offer candidates by similarity (a set
// above it is ranked from the graph's 8K most similar, which misses memories whose recency or
// importance outweighs their similarity).
const (
	ExactLimit         = 4096
	WeightedExactLimit = 16384
)

// Filter selects records. A field left empty (Has* false, nil slice) does not filter; Topics
// and Entities match a record holding any of those given; the fields combine with AND.
type Filter struct {
	User, Session, NS          string
	HasUser, HasSession, HasNS bool
	Types                      uint8 // bit 1<<Type; 0: any
	Topics, Entities           []string
	Since, Until               int64 // on EventTime, inclusive; 0: open
	// AsOf (unix ms, 0: now) sees the versions valid then (created at or before it and not yet
	// superseded) instead of the current ones.
	AsOf int64
	// Superseded includes superseded versions as well as current ones (FORGET).
	Superseded bool
}

// Weights combine a record's similarity (cosine, in [-1, 1]), recency (0.5^(age/HalfLife), age
// from EventTime; 1 for a pinned record) and importance into its score.
type Weights struct {
	Sim, Recency, Importance float64
	HalfLife                 int64 // ms; 0: recency is 0 for every record
}

// DefaultWeights ranks by similarity alone.
var DefaultWeights = Weights{Sim: 1}

// Query is a search.
type Query struct {
	Vec     []float32 // normalized (Normalize)
	K       int
	MinSim  float64 // cosine; records below are dropped; -2: no bound
	Weights Weights
	Filter
}

// Hit is a search result.
type Hit struct {
	Rec   *Record
	Score float64
	Sim   float64
}

// candidates is the pre-filter's bitmap (a new one the caller may change); exact marks whether
// it holds only what matches (the time bounds, the as-of rule and expiry are checked per
// record).
func (s *Store) candidates(f *Filter) *roaring.Bitmap {
	base := s.current
	if f.AsOf != 0 || f.Superseded {
		base = s.all
	}
	parts := []*roaring.Bitmap{base}
	one := func(m map[string]*roaring.Bitmap, has bool, v string) bool {
		if !has {
			return true
		}
		b := m[v]
		if b == nil {
			return false
		}
		parts = append(parts, b)
		return true
	}
	if !one(s.users, f.HasUser, f.User) || !one(s.sessions, f.HasSession, f.Session) || !one(s.nss, f.HasNS, f.NS) {
		return roaring.New()
	}
	if f.Types != 0 {
		parts = append(parts, s.typesOf(f.Types))
	}
	for _, sel := range []struct {
		m    map[string]*roaring.Bitmap
		vals []string
	}{{s.topics, f.Topics}, {s.ents, f.Entities}} {
		if len(sel.vals) == 0 {
			continue
		}
		var any []*roaring.Bitmap
		for _, v := range sel.vals {
			if b := sel.m[v]; b != nil {
				any = append(any, b)
			}
		}
		if len(any) == 0 {
			return roaring.New()
		}
		parts = append(parts, roaring.FastOr(any...))
	}
	// smallest first: FastAnd's work follows its first operands
	slices.SortFunc(parts, func(a, b *roaring.Bitmap) int {
		return int(a.GetCardinality()) - int(b.GetCardinality())
	})
	if len(parts) == 1 {
		return parts[0].Clone()
	}
	return roaring.FastAnd(parts...)
}

func (s *Store) typesOf(mask uint8) *roaring.Bitmap {
	var bs []*roaring.Bitmap
	for t := Type(0); t < numTypes; t++ {
		if mask&(1<<t) != 0 {
			bs = append(bs, s.types[t])
		}
	}
	return roaring.FastOr(bs...)
}

// visible reports whether r passes f's per-record conditions at now (unix ms).
func visible(r *Record, f *Filter, now int64) bool {
	if r.ExpireAt != 0 && r.ExpireAt <= now {
		return false
	}
	if f.Since != 0 && r.EventTime < f.Since || f.Until != 0 && r.EventTime > f.Until {
		return false
	}
	if f.AsOf != 0 {
		return r.Created <= f.AsOf && (r.ValidTo == 0 || r.ValidTo > f.AsOf)
	}
	return true
}

// Matching returns the ids of the records f selects at now, in index order.
func (s *Store) Matching(f *Filter, now int64) []string {
	var out []string
	it := s.candidates(f).Iterator()
	for it.HasNext() {
		if r := s.recs[it.Next()]; visible(r, f, now) {
			out = append(out, r.ID)
		}
	}
	return out
}

// Cosine is the dot product of two normalized vectors.
func Cosine(a, b []float32) float64 { return float64(vector.Dot(a, b)) }

// Score is r's score for a query of similarity sim at now.
func Score(r *Record, sim float64, w *Weights, now int64) float64 {
	score := w.Sim * sim
	if w.Recency != 0 {
		rec := 0.0
		switch {
		case r.Pinned:
			rec = 1
		case w.HalfLife > 0:
			age := max(now-r.EventTime, 0)
			rec = math.Exp2(-float64(age) / float64(w.HalfLife))
		}
		score += w.Recency * rec
	}
	return score + w.Importance*r.Importance
}

// Search returns up to q.K records, best score first (ties by id order of the index).
func (s *Store) Search(q *Query, now int64) []Hit {
	if q.K <= 0 || len(q.Vec) != s.cfg.Dim {
		return nil
	}
	cand := s.candidates(&q.Filter)
	n := cand.GetCardinality()
	if n == 0 {
		return nil
	}
	// hits keeps the best q.K so far, best first: a candidate set of thousands costs K slots.
	hits := make([]Hit, 0, min(q.K, int(n)))
	offer := func(r *Record, sim float64) {
		if sim < q.MinSim {
			return
		}
		h := Hit{Rec: r, Sim: sim, Score: Score(r, sim, &q.Weights, now)}
		if len(hits) == q.K {
			if !better(h, hits[len(hits)-1]) {
				return
			}
			hits = hits[:len(hits)-1]
		}
		i := len(hits)
		hits = append(hits, h)
		for ; i > 0 && better(h, hits[i-1]); i-- {
			hits[i] = hits[i-1]
		}
		hits[i] = h
	}
	weighted := q.Weights.Recency != 0 || q.Weights.Importance != 0
	if n <= ExactLimit || weighted && n <= WeightedExactLimit {
		it := cand.Iterator()
		for it.HasNext() {
			r := s.recs[it.Next()]
			if visible(r, &q.Filter, now) {
				offer(r, Cosine(q.Vec, r.Vec))
			}
		}
	} else {
		// The graph ranks by (quantized) similarity; fetch more than K when other weights may
		// reorder, then rescore exactly.
		k := q.K
		if weighted {
			k = max(8*q.K, 200)
		}
		total := s.all.GetCardinality()
		budget := int(min(total, max(uint64(k)*100, uint64(k)*100*total/n)))
		res := s.idx.Search(q.Vec, k, max(k, 100), func(id uint32) bool {
			return cand.Contains(id) && visible(s.recs[id], &q.Filter, now)
		}, budget)
		for _, x := range res {
			r := s.recs[x.ID]
			offer(r, Cosine(q.Vec, r.Vec))
		}
	}
	return hits
}

// better orders hits: higher score first, then lower index id.
func better(a, b Hit) bool {
	return a.Score > b.Score || a.Score == b.Score && a.Rec.id < b.Rec.id
}
