package vector

import "math"

// Search returns up to k results, best first, by HNSW: a greedy descent to level 0, then a beam of ef
// (0: SearchEF; raised to k). filter (nil: none) is asked per candidate id and only accepted ids are
// returned; a filtered search computes at most filterEF distances (0: k*100). A query of the wrong
// dimension, with NaN/Inf, or a zero vector under cosine returns nil (callers validate with Check).
func (s *Set) Search(q []float32, k, ef int, filter func(id uint32) bool, filterEF int) []Result {
	return s.search(q, k, ef, filter, filterEF, false, 0)
}

// SearchNarrow is Search for a caller that uses only results scoring at least minScore (a
// thresholded lookup, as an LLM cache's): once the beam holds an accepted result scoring that
// much, it narrows from ef to k, so the walk ends soon after it reaches the query's neighbourhood
// instead of widening that neighbourhood to ef nodes. A search that finds no such result (a
// lookup that misses) does Search's work and returns what Search would.
func (s *Set) SearchNarrow(q []float32, k, ef int, minScore float32, filter func(id uint32) bool, filterEF int) []Result {
	return s.search(q, k, ef, filter, filterEF, true, s.distOfScore(minScore))
}

// distOfScore is the internal distance of a score (score's inverse).
func (s *Set) distOfScore(score float32) float32 {
	if s.cfg.Metric == L2 && s.cfg.Quant != Bin {
		if score <= 0 {
			return float32(math.Inf(1))
		}
		return 1/score - 1
	}
	return 2 * (1 - score)
}

func (s *Set) search(q []float32, k, ef int, filter func(id uint32) bool, filterEF int, narrow bool, narrowAt float32) []Result {
	if s.count == 0 || k <= 0 {
		return nil
	}
	sc := getScratch(len(s.level))
	defer putScratch(sc)
	if _, err := s.prepare(q, &sc.q); err != nil {
		return nil
	}
	if ef <= 0 {
		ef = SearchEF
	}
	ef = max(ef, k)
	budget := 0
	if filter != nil {
		budget = filterEF
		if budget <= 0 {
			budget = k * 100
		}
	}
	ep := s.entry
	epd := s.dist(&sc.q, ep)
	for l := s.maxLevel; l > 0; l-- {
		ep, epd = s.greedy(&sc.q, ep, epd, l)
	}
	if narrow {
		sc.narrowTo, sc.narrowAt = k, narrowAt
	}
	s.searchLayer(sc, &sc.q, ep, epd, ef, 0, filter, budget)
	for len(sc.res) > k {
		sc.res.pop()
	}
	return s.results(sc)
}

// Check validates a query vector as Search would (ErrDim, ErrNaN, ErrZero).
func (s *Set) Check(q []float32) error {
	sc := getScratch(0)
	defer putScratch(sc)
	_, err := s.prepare(q, &sc.q)
	return err
}

func (s *Set) results(sc *scratch) []Result {
	out := make([]Result, len(sc.res))
	for i := len(out) - 1; i >= 0; i-- {
		it := sc.res.pop()
		out[i] = Result{ID: it.id, Score: s.score(it.d)}
	}
	return out
}

// SearchExact scans every element (filter nil: all) and returns the k nearest, best first: the ground
// truth Search is measured against (VSIM TRUTH).
func (s *Set) SearchExact(q []float32, k int, filter func(id uint32) bool) []Result {
	if s.count == 0 || k <= 0 {
		return nil
	}
	sc := getScratch(0)
	defer putScratch(sc)
	if _, err := s.prepare(q, &sc.q); err != nil {
		return nil
	}
	sc.res = sc.res[:0]
	for i, l := range s.level {
		id := uint32(i)
		if l == freeLevel || (filter != nil && !filter(id)) {
			continue
		}
		s.offer(sc, id, k)
	}
	return s.results(sc)
}

// SearchExactBatch is SearchExact for many queries at once, scanning the arena once per block of
// queries instead of once per query (the scan is memory-bound when the set outgrows the cache).
// A bad query gets nil.
func (s *Set) SearchExactBatch(qs [][]float32, k int, filter func(id uint32) bool) [][]Result {
	out := make([][]Result, len(qs))
	if s.count == 0 || k <= 0 {
		return out
	}
	const block = 32
	scs := make([]*scratch, 0, block)
	for lo := 0; lo < len(qs); lo += block {
		hi := min(lo+block, len(qs))
		scs = scs[:0]
		for i := lo; i < hi; i++ {
			sc := new(scratch)
			if _, err := s.prepare(qs[i], &sc.q); err != nil {
				sc = nil
			}
			scs = append(scs, sc)
		}
		for i, l := range s.level {
			id := uint32(i)
			if l == freeLevel || (filter != nil && !filter(id)) {
				continue
			}
			for _, sc := range scs {
				if sc != nil {
					s.offer(sc, id, k)
				}
			}
		}
		for j, sc := range scs {
			if sc != nil {
				out[lo+j] = s.results(sc)
			}
		}
	}
	return out
}

func (s *Set) offer(sc *scratch, id uint32, k int) {
	d := s.dist(&sc.q, id)
	if len(sc.res) < k {
		sc.res.push(item{d, id})
	} else if d < sc.res.worst() {
		sc.res.pop()
		sc.res.push(item{d, id})
	}
}

// SearchAmong is an exact search over the candidate ids (a tag pre-filter's list); free or repeated
// ids are skipped.
func (s *Set) SearchAmong(q []float32, k int, ids []uint32) []Result {
	if s.count == 0 || k <= 0 {
		return nil
	}
	sc := getScratch(len(s.level))
	defer putScratch(sc)
	if _, err := s.prepare(q, &sc.q); err != nil {
		return nil
	}
	sc.res = sc.res[:0]
	sc.newEpoch()
	for _, id := range ids {
		if s.live(id) && sc.visit(id) {
			s.offer(sc, id, k)
		}
	}
	return s.results(sc)
}

// Links is name's neighbours at each of its levels (0 first) with their scores from name.
func (s *Set) Links(name []byte) [][]Result {
	id, ok := s.byName[string(name)]
	if !ok {
		return nil
	}
	out := make([][]Result, s.level[id]+1)
	for l := range out {
		ls := s.links(id, l)
		out[l] = make([]Result, len(ls))
		for i, nb := range ls {
			out[l][i] = Result{ID: nb, Score: s.score(s.distNodes(id, nb))}
		}
	}
	return out
}

// RandomIDs picks n distinct elements (fewer if the set is smaller), or -n with repeats when n < 0.
// rnd is the caller's generator. The caller bounds -n.
func (s *Set) RandomIDs(n int, rnd func() uint64) []uint32 {
	if s.count == 0 || n == 0 {
		return nil
	}
	if n < 0 {
		out := make([]uint32, -n)
		dense := s.count*2 >= len(s.level)
		var all []uint32
		if !dense {
			all = s.liveIDs()
		}
		for i := range out {
			if dense {
				out[i] = s.randomLive(rnd)
			} else {
				out[i] = all[rnd()%uint64(len(all))]
			}
		}
		return out
	}
	all := s.liveIDs()
	n = min(n, len(all))
	for i := 0; i < n; i++ { // partial Fisher-Yates
		j := i + int(rnd()%uint64(len(all)-i))
		all[i], all[j] = all[j], all[i]
	}
	return all[:n]
}

func (s *Set) liveIDs() []uint32 {
	out := make([]uint32, 0, s.count)
	for i, l := range s.level {
		if l != freeLevel {
			out = append(out, uint32(i))
		}
	}
	return out
}

// randomLive draws slots until a live one (at least half the slots are live when called).
func (s *Set) randomLive(rnd func() uint64) uint32 {
	for {
		id := uint32(rnd() % uint64(len(s.level)))
		if s.level[id] != freeLevel {
			return id
		}
	}
}
