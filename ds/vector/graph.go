package vector

import (
	"cmp"
	"math"
	"slices"
)

func (s *Set) capAt(l int) int {
	if l == 0 {
		return 2 * s.cfg.M
	}
	return s.cfg.M
}

// block is id's link block at level l: count, then capAt(l) slots.
func (s *Set) block(id uint32, l int) []uint32 {
	if l == 0 {
		o := int(id) * s.s0
		return s.links0[o : o+s.s0 : o+s.s0]
	}
	o := (l - 1) * s.s1
	return s.upper[id][o : o+s.s1 : o+s.s1]
}

func (s *Set) links(id uint32, l int) []uint32 {
	b := s.block(id, l)
	return b[1 : 1+b[0]]
}

func revEntry(l int, id uint32) uint32 { return uint32(l)<<levelShift | id }

func (s *Set) revAdd(target uint32, l int, src uint32) {
	c := cap(s.rev[target])
	s.rev[target] = append(s.rev[target], revEntry(l, src))
	s.heap += 4 * (cap(s.rev[target]) - c)
}

func (s *Set) revRemove(target uint32, l int, src uint32) {
	r := s.rev[target]
	e := revEntry(l, src)
	for i, x := range r {
		if x == e {
			r[i] = r[len(r)-1]
			s.rev[target] = r[:len(r)-1]
			return
		}
	}
	panic("BUG: vector: reverse link missing")
}

// setLinks replaces id's links at level l by sel, keeping the reverse links in step.
func (s *Set) setLinks(id uint32, l int, sel []item) {
	b := s.block(id, l)
	old := b[1 : 1+b[0]]
	for _, o := range old {
		if !containsItem(sel, o) {
			s.revRemove(o, l, id)
			s.noteOrphan(o, l)
		}
	}
	for _, n := range sel {
		if !slices.Contains(old, n.id) {
			s.revAdd(n.id, l, id)
		}
	}
	for i, n := range sel {
		b[1+i] = n.id
	}
	b[0] = uint32(len(sel))
}

func containsItem(a []item, id uint32) bool {
	for _, x := range a {
		if x.id == id {
			return true
		}
	}
	return false
}

func sortItems(a []item) {
	slices.SortFunc(a, func(x, y item) int {
		if c := cmp.Compare(x.d, y.d); c != 0 {
			return c
		}
		return cmp.Compare(x.id, y.id)
	})
}

// heuristic is the paper's neighbour selection (Algorithm 4 without extending or keeping pruned
// candidates): walking cands nearest first, keep a candidate only if it is nearer to the base than to
// every one already kept, up to m. Fewer than m candidates are all kept, as hnswlib.
func (s *Set) heuristic(cands []item, m int, out []item) []item {
	if len(cands) <= m {
		return append(out, cands...)
	}
	for _, c := range cands {
		if len(out) >= m {
			break
		}
		cq := s.node(c.id)
		keep := true
		for _, r := range out {
			if s.dist(&cq, r.id) < c.d {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// greedy walks level l from ep to the nearest node it can reach by improving steps.
func (s *Set) greedy(q *query, ep uint32, epd float32, l int) (uint32, float32) {
	for changed := true; changed; {
		changed = false
		for _, nb := range s.links(ep, l) {
			if d := s.dist(q, nb); d < epd {
				ep, epd, changed = nb, d, true
			}
		}
	}
	return ep, epd
}

// searchLayer is the paper's SEARCH-LAYER from one entry point, leaving up to ef nearest in sc.res.
// With a filter, every reached node is explored but only accepted ids enter the results, and at most
// budget distances are computed (0: no bound).
func (s *Set) searchLayer(sc *scratch, q *query, ep uint32, epd float32, ef, l int, filter func(uint32) bool, budget int) {
	sc.cand = sc.cand[:0]
	sc.res = sc.res[:0]
	sc.newEpoch()
	sc.visit(ep)
	sc.cand.push(item{epd, ep})
	if filter == nil || filter(ep) {
		sc.res.push(item{epd, ep})
		ef = sc.narrowed(epd, ef)
	}
	evaluated := 1
	for len(sc.cand) > 0 {
		c := sc.cand.pop()
		if len(sc.res) >= ef && c.d > sc.res.worst() {
			break
		}
		// The unvisited neighbours are gathered first and their vectors asked of memory at
		// once, so the misses overlap instead of each distance starting with its own.
		nbs := sc.nbs[:0]
		for _, nb := range s.links(c.id, l) {
			if sc.visit(nb) {
				nbs = append(nbs, nb)
			}
		}
		sc.nbs = nbs
		if prefetchN > 0 {
			for _, nb := range nbs {
				s.prefetch(nb)
			}
		}
		for _, nb := range nbs {
			if budget > 0 && evaluated >= budget {
				return
			}
			evaluated++
			d := s.dist(q, nb)
			if len(sc.res) < ef || d < sc.res.worst() {
				sc.cand.push(item{d, nb})
				if filter == nil || filter(nb) {
					sc.res.push(item{d, nb})
					ef = sc.narrowed(d, ef)
					for len(sc.res) > ef {
						sc.res.pop()
					}
				}
			}
		}
	}
}

// insert links node id (its vector stored, its blocks empty) at level L.
func (s *Set) insert(sc *scratch, id uint32, q *query, L, ef int) {
	if s.count == 0 {
		s.entry, s.maxLevel = id, L
		return
	}
	ep := s.entry
	epd := s.dist(q, ep)
	for l := s.maxLevel; l > L; l-- {
		ep, epd = s.greedy(q, ep, epd, l)
	}
	for l := min(L, s.maxLevel); l >= 0; l-- {
		s.searchLayer(sc, q, ep, epd, ef, l, nil, 0)
		sc.a = sc.res.drainAscending(sc.a)
		sc.b = s.heuristic(sc.a, s.cfg.M, sc.b[:0])
		s.setLinks(id, l, sc.b)
		for _, nb := range sc.b {
			s.addLink(sc, nb.id, l, id, nb.d)
		}
		ep, epd = sc.a[0].id, sc.a[0].d
		s.noteOrphan(id, l)
	}
	if L > s.maxLevel {
		s.entry, s.maxLevel = id, L
	}
}

// addLink adds to's link from e at level l (d apart); a full list is re-selected by the heuristic
// over its links and the new one.
func (s *Set) addLink(sc *scratch, e uint32, l int, to uint32, d float32) {
	b := s.block(e, l)
	if slices.Contains(b[1:1+b[0]], to) {
		return
	}
	if n := int(b[0]); n < s.capAt(l) {
		b[1+n] = to
		b[0]++
		s.revAdd(to, l, e)
		return
	}
	eq := s.node(e)
	sc.c = append(sc.c[:0], item{d, to})
	for _, x := range b[1 : 1+b[0]] {
		sc.c = append(sc.c, item{s.dist(&eq, x), x})
	}
	sortItems(sc.c)
	sc.d = s.heuristic(sc.c, s.capAt(l), sc.d[:0])
	s.setLinks(e, l, sc.d)
}

// unlink takes id out of the graph: each in-neighbour loses its link and is re-selected among its
// remaining links and id's out-neighbours; nodes left without in-links are noted for fixOrphans.
// id keeps its slot and vector; its blocks end empty.
func (s *Set) unlink(sc *scratch, id uint32) {
	L := int(s.level[id])
	if s.entry == id {
		s.chooseEntry(id)
	}
	for l := L; l >= 0; l-- { // top down: levels above l no longer reach id when l is repaired
		out := append(sc.ids[:0], s.links(id, l)...)
		sc.ids = out
		for _, z := range out {
			s.revRemove(z, l, id)
			s.noteOrphan(z, l)
		}
		s.block(id, l)[0] = 0
		var ins []uint32
		for _, e := range s.rev[id] {
			if int(e>>levelShift) == l {
				ins = append(ins, e&(1<<levelShift-1))
			}
		}
		for _, y := range ins {
			s.dropLink(y, l, id)
			s.relink(sc, y, l, out)
		}
	}
	s.rev[id] = s.rev[id][:0]
}

// dropLink removes to from y's list at level l (the caller fixes the reverse entry).
func (s *Set) dropLink(y uint32, l int, to uint32) {
	b := s.block(y, l)
	n := int(b[0])
	for i := 1; i <= n; i++ {
		if b[i] == to {
			copy(b[i:], b[i+1:1+n])
			b[0]--
			return
		}
	}
	panic("BUG: vector: forward link missing")
}

// relink re-selects y's links at level l among its own and extra.
func (s *Set) relink(sc *scratch, y uint32, l int, extra []uint32) {
	yq := s.node(y)
	sc.c = sc.c[:0]
	for _, x := range s.links(y, l) {
		sc.c = append(sc.c, item{s.dist(&yq, x), x})
	}
	for _, x := range extra {
		if x != y && !containsItem(sc.c, x) {
			sc.c = append(sc.c, item{s.dist(&yq, x), x})
		}
	}
	sortItems(sc.c)
	sc.d = s.heuristic(sc.c, s.capAt(l), sc.d[:0])
	s.setLinks(y, l, sc.d)
	if len(sc.d) == 0 { // a dead end: adopt searches it new links
		s.orphans = append(s.orphans, revEntry(l, y))
	}
}

func (s *Set) hasIn(z uint32, l int) bool {
	for _, e := range s.rev[z] {
		if int(e>>levelShift) == l {
			return true
		}
	}
	return false
}

// noteOrphan queues (z, l) when z has just lost its last in-link at level l: nothing could reach it
// there. fixOrphans links such nodes (and dead ends without out-links) back at the end of the write.
func (s *Set) noteOrphan(z uint32, l int) {
	if !s.hasIn(z, l) {
		s.orphans = append(s.orphans, revEntry(l, z))
	}
}

// fixOrphans adopts every queued orphan that is still live and still without an in-link. A forced
// link can orphan another node, which is queued in turn; the bound only guards against a cycle.
func (s *Set) fixOrphans(sc *scratch) {
	for n := 0; len(s.orphans) > 0 && n < 1<<16; n++ {
		e := s.orphans[len(s.orphans)-1]
		s.orphans = s.orphans[:len(s.orphans)-1]
		z, l := e&(1<<levelShift-1), int(e>>levelShift)
		if s.live(z) && int(s.level[z]) >= l && (!s.hasIn(z, l) || len(s.links(z, l)) == 0) {
			s.adopt(sc, z, l, n >= 256)
		}
	}
	s.orphans = s.orphans[:0]
}

// adopt gives z an in-link at level l: from the nearest of its neighbours whose heuristic keeps it,
// else forced into the nearest one in place of its farthest link. With no neighbour at all z is
// first linked like a fresh insert at that level; alone at its level it needs nothing.
//
// careful (after many adoptions in one write) skips the heuristic re-selection, which can drop
// another node's only in-link: orphans that displace each other in turn would never settle.
func (s *Set) adopt(sc *scratch, z uint32, l int, careful bool) {
	zq := s.node(z)
	if len(s.links(z, l)) == 0 {
		ep, ok := s.entry, true
		if ep == z {
			ep, ok = s.another(z, l)
		}
		if !ok {
			return
		}
		epd := s.dist(&zq, ep)
		for ll := int(s.level[ep]); ll > l; ll-- {
			ep, epd = s.greedy(&zq, ep, epd, ll)
		}
		s.searchLayer(sc, &zq, ep, epd, max(s.cfg.EF, s.capAt(l)+1), l, nil, 0)
		sc.a = sc.res.drainAscending(sc.a)
		sc.a = slices.DeleteFunc(sc.a, func(x item) bool { return x.id == z })
		sc.b = s.heuristic(sc.a, s.cfg.M, sc.b[:0])
		s.setLinks(z, l, sc.b)
	}
	if s.hasIn(z, l) {
		return
	}
	sc.a = sc.a[:0]
	for _, x := range s.links(z, l) {
		sc.a = append(sc.a, item{s.dist(&zq, x), x})
	}
	if len(sc.a) == 0 {
		return
	}
	sortItems(sc.a)
	for _, x := range sc.a {
		if careful {
			break
		}
		s.addLink(sc, x.id, l, z, x.d)
		if s.hasIn(z, l) {
			return
		}
	}
	for _, x := range sc.a { // replacing a link whose target keeps another in-link orphans nobody
		if s.forceLink(x.id, l, z, true) {
			return
		}
	}
	nearest := sc.a[0].id
	if ep, ok := s.another(z, l); ok { // wider: the nodes a search for z meets
		if s.entry != z {
			ep = s.entry
		}
		epd := s.dist(&zq, ep)
		for ll := int(s.level[ep]); ll > l; ll-- {
			ep, epd = s.greedy(&zq, ep, epd, ll)
		}
		s.searchLayer(sc, &zq, ep, epd, max(s.cfg.EF, s.capAt(l)+1), l, nil, 0)
		sc.a = sc.res.drainAscending(sc.a)
		for _, x := range sc.a {
			if x.id != z && s.forceLink(x.id, l, z, true) {
				return
			}
		}
	}
	// Every node the search met keeps only links that are their target's sole in-link (under IP a
	// hub can draw all of them). Some node at the level has a free slot or a link whose target has
	// another in-link while the lists hold at least 2 links; forcing one unsafely instead can cycle,
	// each orphan displacing the last.
	for i, lv := range s.level {
		if x := uint32(i); lv != freeLevel && x != z && int(lv) >= l && s.forceLink(x, l, z, true) {
			return
		}
	}
	s.forceLink(nearest, l, z, false)
}

// another is a live node other than z reaching level l.
func (s *Set) another(z uint32, l int) (uint32, bool) {
	for i, lv := range s.level {
		if lv != freeLevel && uint32(i) != z && int(lv) >= l {
			return uint32(i), true
		}
	}
	return 0, false
}

// forceLink puts to into x's list at level l, in place of x's farthest link when the list is full;
// with safe set, only a link whose target has another in-link is replaced (false if none is).
func (s *Set) forceLink(x uint32, l int, to uint32, safe bool) bool {
	b := s.block(x, l)
	n := int(b[0])
	if slices.Contains(b[1:1+n], to) {
		return true
	}
	if n < s.capAt(l) {
		b[1+n] = to
		b[0]++
		s.revAdd(to, l, x)
		return true
	}
	xq := s.node(x)
	far, fd := 0, float32(math.Inf(-1)) // IP distances (1-dot) go below -1
	for i := 1; i <= n; i++ {
		if safe && s.inDegree(b[i], l) < 2 {
			continue
		}
		if d := s.dist(&xq, b[i]); d > fd {
			far, fd = i, d
		}
	}
	if far == 0 {
		return false
	}
	old := b[far]
	b[far] = to
	s.revRemove(old, l, x)
	s.revAdd(to, l, x)
	s.noteOrphan(old, l)
	return true
}

func (s *Set) inDegree(z uint32, l int) int {
	n := 0
	for _, e := range s.rev[z] {
		if int(e>>levelShift) == l {
			n++
		}
	}
	return n
}

// chooseEntry moves the entry point off id to the highest other node.
func (s *Set) chooseEntry(id uint32) {
	best, bl := id, -1
	for i, l := range s.level {
		if l != freeLevel && uint32(i) != id && int(l) > bl {
			best, bl = uint32(i), int(l)
			if bl == int(s.level[id]) {
				break
			}
		}
	}
	if bl < 0 {
		s.maxLevel = 0
		return
	}
	s.entry, s.maxLevel = best, bl
}
