package ipset

import (
	"slices"
	"sort"
)

// index is the frozen, pointer-free lookup structure of one family's records: the segment table
// (bounds[i] is where segment i starts; a segment ends where the next starts) with, per segment,
// the node of its most specific covering record. A node is a record and the node of the next
// most specific record covering the same segment, so a lookup that finds its record expired or
// removed walks on to the next cover. Nodes are shared between segments, so a nested family of
// prefixes costs one node per prefix.
//
// An index never changes once built: a merge (build.go) builds a new one, off the shard's token,
// from the old one's order and the records added since.
//
// IPv4 segments are packed as bound<<32 | top in p4, so the step of the binary search that finds
// the segment also reads its node, and a large IPv4 table has buckets by the top 16 bits of the
// bound (bk[k] is the first segment whose bound's top bits are >= k), so a search starts within
// one bucket: two or three cache misses a lookup instead of the dozen a search of the whole table
// takes (the profile of IPSET.MATCH in benchmarks/results/2026-12-02-ipsets.md).
//
// A laminar IPv4 family (any set of prefixes, disjoint or nested ranges: libloc's and Tor's
// lists), nested at most maxDepth4 deep, has no segment table: n4 holds one node per record in
// order (byOrder), each with the record's start and the node of its smallest container. The
// records covering an address a are the containers of the last record starting at or before a
// (or itself), so a lookup searches the starts (bucketed by their top 16 bits as above) and
// walks up from there, passing the few that end before a. That is 12 bytes a record against a
// segment table's 8 bytes a segment (about two a record) plus a node and an order entry.
//
// A laminar IPv6 family has the same kind of index, n6: 24 bytes a record (its 16-byte start,
// slot and container) against the segment table's 20 bytes a segment, about two a record, plus
// a node and an order entry (1M labelled /29-/48 prefixes: 105.5 B an entry on the heap before,
// see docs/ipsets.md for after). It has no buckets: IPv6 starts crowd into a few values of their
// top 16 bits (2001:, 2a0x:), so a table by those bits would narrow little.
type index struct {
	bounds []U128   // IPv6 bounds; nil for IPv4
	top    []uint32 // IPv6: node per segment, noNode: none
	p4     []uint64 // IPv4 segment table: bound<<32 | node per segment
	n4     []node4  // laminar IPv4: the nodes in order; then bounds, top, p4, nodes and order are nil
	n6     []node6  // laminar IPv6: the same
	bk     []uint32 // IPv4 with at least bucketSegs segments or n4 nodes: 1<<16+1 bucket starts, else nil
	nodes  []node
	order  []uint32 // the records' slots by start, then end from the greatest (byOrder)
}

// node4 is a record of a laminar IPv4 index: its start, slot and the node of its smallest
// container (noNode: none).
type node4 struct{ start, slot, parent uint32 }

// node6 is a record of a laminar IPv6 index, as node4.
type node6 struct {
	start        U128
	slot, parent uint32
}

// maxDepth4 is the deepest nesting given an n4 or n6 index: IPv4 prefixes nest at most 33 deep,
// and a lookup walks at most this many containers.
const maxDepth4 = 40

// bucketSegs is the fewest IPv4 segments given buckets (their table is 256 KiB; tests lower it).
var bucketSegs = 1 << 15

type node struct{ slot, parent uint32 }

const noNode = ^uint32(0)

// byOrder is the index order: by start, then by end from the greatest, so that a record comes
// after every record that contains it.
func byOrder(a, b Range) int {
	if c := a.Lo.Cmp(b.Lo); c != 0 {
		return c
	}
	return b.Hi.Cmp(a.Hi)
}

// lookup returns the slot of s's most specific record live at now covering a, or -1.
func (ix *index) lookup(s *Set, a U128, now int64) int64 {
	if ix.n4 != nil {
		x := uint32(a.Lo)
		for n := ix.last4(x); n != noNode; {
			nd := &ix.n4[n]
			if s.recs[nd.slot].hi >= x && s.alive(nd.slot, now) {
				return int64(nd.slot)
			}
			n = nd.parent
		}
		return -1
	}
	if ix.n6 != nil {
		v := s.view()
		for n := ix.last6(a); n != noNode; {
			nd := &ix.n6[n]
			if !v.hi6(&s.recs[nd.slot], nd.start).Less(a) && s.alive(nd.slot, now) {
				return int64(nd.slot)
			}
			n = nd.parent
		}
		return -1
	}
	for n := ix.seg(a); n != noNode; {
		nd := ix.nodes[n]
		if s.alive(nd.slot, now) {
			return int64(nd.slot)
		}
		n = nd.parent
	}
	return -1
}

// last4 is the n4 node of the last record starting at or before x, noNode when none.
func (ix *index) last4(x uint32) uint32 {
	p := ix.n4
	lo, hi := 0, len(p)
	if ix.bk != nil {
		lo, hi = int(ix.bk[x>>16]), int(ix.bk[x>>16+1])
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p[m].start <= x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return uint32(lo - 1) // noNode when lo is 0
}

// last6 is the n6 node of the last record starting at or before a, noNode when none.
func (ix *index) last6(a U128) uint32 {
	p := ix.n6
	lo, hi := 0, len(p)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !a.Less(p[m].start) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return uint32(lo - 1) // noNode when lo is 0
}

// slots is the index's order.
func (ix *index) slots() []uint32 {
	switch {
	case ix.n4 != nil:
		out := make([]uint32, len(ix.n4))
		for i := range ix.n4 {
			out[i] = ix.n4[i].slot
		}
		return out
	case ix.n6 != nil:
		out := make([]uint32, len(ix.n6))
		for i := range ix.n6 {
			out[i] = ix.n6[i].slot
		}
		return out
	}
	return ix.order
}

// seg is the top node of the segment holding a, noNode when none covers it (not for n4).
func (ix *index) seg(a U128) uint32 {
	if p := ix.p4; p != nil {
		// the first segment whose bound is > a, searched as its packed form > a<<32 | max
		x := uint32(a.Lo)
		key := uint64(x)<<32 | 0xffffffff
		lo, hi := 0, len(p)
		if ix.bk != nil {
			lo, hi = int(ix.bk[x>>16]), int(ix.bk[x>>16+1])
		}
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if p[m] <= key {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == 0 {
			return noNode
		}
		return uint32(p[lo-1])
	}
	// the last bound <= a
	var lo int
	b := ix.bounds
	hi := len(b)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !a.Less(b[m]) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return noNode
	}
	return ix.top[lo-1]
}

// buildOrdered builds the index of the records at order (slots of family v6, sorted byOrder;
// the index keeps the slice); nil when order is empty. It reads only v's ends. A laminar family
// (every two records nested or disjoint: any set of prefixes, disjoint ranges) is one linear
// sweep with a stack; records that overlap without nesting take the general sweep. An index
// is an n4 or n6 index when it can be, unless segs asks for the segment table.
func buildOrdered(v view, order []uint32, v6, segs bool, p *pacer) *index {
	if len(order) == 0 {
		return nil
	}
	if v6 && !segs {
		if ix, ok := sweep6(v, order, p); ok {
			return ix
		}
	}
	if !v6 && !segs {
		if ix, ok := sweep4(v, order, p); ok {
			ix.bucket4(p)
			return ix
		}
	}
	ix, ok := sweepLaminar(v, order, v6, p)
	if !ok {
		ix = sweepGeneral(v, order, v6, p)
	}
	if !v6 {
		ix.pack4(p)
	}
	ix.bounds = slices.Clip(ix.bounds)
	ix.top = slices.Clip(ix.top)
	ix.nodes = slices.Clip(ix.nodes)
	return ix
}

// pack4 moves an IPv4 index's bounds and tops into p4 and, when it is large, bk.
func (ix *index) pack4(p *pacer) {
	ix.p4 = make([]uint64, len(ix.bounds))
	for i, b := range ix.bounds {
		ix.p4[i] = b.Lo<<32 | uint64(ix.top[i])
		p.step()
	}
	ix.bounds, ix.top = nil, nil
	if len(ix.p4) < bucketSegs {
		return
	}
	ix.bk = make([]uint32, 1<<16+1)
	for _, p := range ix.p4 {
		ix.bk[p>>48+1]++
	}
	for k := 1; k <= 1<<16; k++ {
		ix.bk[k] += ix.bk[k-1]
	}
}

// sweep4 is the n4 index of a laminar IPv4 family. It reports false when two records overlap
// without nesting or nest deeper than maxDepth4.
func sweep4(v view, order []uint32, p *pacer) (*index, bool) {
	type open struct{ hi, node uint32 }
	ix := &index{n4: make([]node4, 0, len(order))}
	var stk []open
	for _, sl := range order {
		p.step()
		x := &v.recs[sl]
		for len(stk) > 0 && stk[len(stk)-1].hi < x.lo {
			stk = stk[:len(stk)-1]
		}
		parent := noNode
		if len(stk) > 0 {
			t := stk[len(stk)-1]
			if t.hi < x.hi {
				return nil, false
			}
			parent = t.node
		}
		if len(stk) == maxDepth4 {
			return nil, false
		}
		n := uint32(len(ix.n4))
		ix.n4 = append(ix.n4, node4{x.lo, sl, parent})
		stk = append(stk, open{x.hi, n})
	}
	return ix, true
}

// sweep6 is sweep4 for IPv6: the n6 index of a laminar family.
func sweep6(v view, order []uint32, p *pacer) (*index, bool) {
	type open struct {
		hi   U128
		node uint32
	}
	ix := &index{n6: make([]node6, 0, len(order))}
	var stk []open
	for _, sl := range order {
		p.step()
		r := v.rng(sl)
		for len(stk) > 0 && stk[len(stk)-1].hi.Less(r.Lo) {
			stk = stk[:len(stk)-1]
		}
		parent := noNode
		if len(stk) > 0 {
			t := stk[len(stk)-1]
			if t.hi.Less(r.Hi) {
				return nil, false
			}
			parent = t.node
		}
		if len(stk) == maxDepth4 {
			return nil, false
		}
		n := uint32(len(ix.n6))
		ix.n6 = append(ix.n6, node6{r.Lo, sl, parent})
		stk = append(stk, open{r.Hi, n})
	}
	return ix, true
}

// bucket4 gives a large n4 index its buckets.
func (ix *index) bucket4(p *pacer) {
	if len(ix.n4) < bucketSegs {
		return
	}
	ix.bk = make([]uint32, 1<<16+1)
	for i := range ix.n4 {
		ix.bk[ix.n4[i].start>>16+1]++
		p.step()
	}
	for k := 1; k <= 1<<16; k++ {
		ix.bk[k] += ix.bk[k-1]
	}
}

// endOf is where a record ending at hi stops covering: hi+1, or false past the family's last
// address.
func endOf(hi U128, v6 bool) (U128, bool) {
	end, over := hi.Add1()
	return end, !over && (v6 || end.Lo <= 0xffffffff)
}

// emit starts a segment at at with node top (bounds come in order; equal ones replace the last,
// and a segment with the previous one's node is not a new segment).
func (ix *index) emit(at U128, top uint32) {
	n := len(ix.top)
	if n > 0 && ix.bounds[n-1] == at {
		if n > 1 && ix.top[n-2] == top || n == 1 && top == noNode {
			ix.bounds, ix.top = ix.bounds[:n-1], ix.top[:n-1]
		} else {
			ix.top[n-1] = top
		}
		return
	}
	if n > 0 && ix.top[n-1] == top {
		return
	}
	ix.bounds = append(ix.bounds, at)
	ix.top = append(ix.top, top)
}

// sweepLaminar is the index of a laminar family: the records containing a point are a stack,
// the most specific on top (a nested record has fewer addresses). It reports false when two
// records overlap without nesting.
func sweepLaminar(v view, order []uint32, v6 bool, p *pacer) (*index, bool) {
	type open struct {
		hi   U128
		node uint32
	}
	ix := &index{order: order, nodes: make([]node, 0, len(order)), bounds: make([]U128, 0, len(order)+len(order)/2)}
	ix.top = make([]uint32, 0, cap(ix.bounds))
	var stk []open
	pop := func() {
		t := stk[len(stk)-1]
		stk = stk[:len(stk)-1]
		end, ok := endOf(t.hi, v6)
		if !ok {
			return
		}
		next := noNode
		if len(stk) > 0 {
			next = stk[len(stk)-1].node
		}
		ix.emit(end, next)
	}
	for _, sl := range order {
		p.step()
		r := v.rng(sl)
		for len(stk) > 0 && stk[len(stk)-1].hi.Less(r.Lo) {
			pop()
		}
		parent := noNode
		if len(stk) > 0 {
			t := stk[len(stk)-1]
			if t.hi.Less(r.Hi) {
				return nil, false
			}
			parent = t.node
		}
		n := uint32(len(ix.nodes))
		ix.nodes = append(ix.nodes, node{sl, parent})
		stk = append(stk, open{r.Hi, n})
		ix.emit(r.Lo, n)
	}
	for len(stk) > 0 {
		pop()
	}
	return ix, true
}

type event struct {
	at   U128
	slot uint32
	add  bool
}

// sweepGeneral is the index of any records: at each bound the covering records sorted from the
// least specific, their nodes hash-consed.
func sweepGeneral(v view, order []uint32, v6 bool, p *pacer) *index {
	ev := make([]event, 0, 2*len(order))
	for _, sl := range order {
		r := v.rng(sl)
		ev = append(ev, event{r.Lo, sl, true})
		if end, ok := endOf(r.Hi, v6); ok {
			ev = append(ev, event{end, sl, false})
		}
	}
	p.step()
	slices.SortStableFunc(ev, func(a, b event) int { return a.at.Cmp(b.at) })
	p.step()
	ix := &index{order: order}
	// lessSpecific orders records from the least specific (most addresses, tie: smaller start).
	lessSpecific := func(a, b uint32) bool { return moreSpecific(v.rng(b), v.rng(a)) }
	intern := map[uint64]uint32{}
	var active, nodeAt []uint32
	pos := func(slot uint32) int {
		return sort.Search(len(active), func(k int) bool { return !lessSpecific(active[k], slot) })
	}
	relink := func(from int) {
		nodeAt = nodeAt[:from]
		for j := from; j < len(active); j++ {
			parent := noNode
			if j > 0 {
				parent = nodeAt[j-1]
			}
			k := uint64(active[j])<<32 | uint64(parent)
			n, ok := intern[k]
			if !ok {
				n = uint32(len(ix.nodes))
				ix.nodes = append(ix.nodes, node{active[j], parent})
				intern[k] = n
			}
			nodeAt = append(nodeAt, n)
		}
	}
	for i := 0; i < len(ev); {
		p.step()
		at := ev[i].at
		from := len(active)
		for ; i < len(ev) && ev[i].at == at; i++ {
			e := ev[i]
			p := pos(e.slot)
			if e.add {
				active = slices.Insert(active, p, e.slot)
			} else {
				active = slices.Delete(active, p, p+1)
			}
			from = min(from, p)
		}
		relink(from)
		top := noNode
		if len(nodeAt) > 0 {
			top = nodeAt[len(nodeAt)-1]
		}
		ix.emit(at, top)
	}
	return ix
}

// sortOrder sorts slots byOrder of their ranges.
func sortOrder(v view, slots []uint32) { slices.SortFunc(slots, v.cmpOrder) }

// mergeOrder merges two slices of slots sorted byOrder, keeping only the slots keep accepts.
func mergeOrder(v view, a, b []uint32, keep func(uint32) bool, p *pacer) []uint32 {
	out := make([]uint32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		p.step()
		var sl uint32
		if j == len(b) || i < len(a) && v.cmpOrder(a[i], b[j]) < 0 {
			sl = a[i]
			i++
		} else {
			sl = b[j]
			j++
		}
		if keep(sl) {
			out = append(out, sl)
		}
	}
	return out
}

func (ix *index) memory() int64 {
	return int64(16*cap(ix.bounds) + 4*cap(ix.top) + 8*cap(ix.p4) + 12*cap(ix.n4) + 24*cap(ix.n6) + 4*len(ix.bk) + 8*cap(ix.nodes) + 4*cap(ix.order))
}

// n is the number of segments (of a segment table, not an n4 index), bound(i) where segment i starts, topAt(i) its node.
func (ix *index) n() int { return len(ix.top) + len(ix.p4) }

func (ix *index) bound(i int) U128 {
	if ix.p4 != nil {
		return U128{0, ix.p4[i] >> 32}
	}
	return ix.bounds[i]
}

func (ix *index) topAt(i int) uint32 {
	if ix.p4 != nil {
		return uint32(ix.p4[i])
	}
	return ix.top[i]
}
