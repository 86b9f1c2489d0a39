package ipset

import (
	"slices"
	"sort"
)

// index is the frozen, pointer-free lookup structure of one family's records: the segment table
// (bounds[i] is where segment i starts; a segment ends where the next starts) with, per segment,
// the node of its most specific covering record. A node is a record and the node of the next
// most specific record covering the same segment, so a lookup that finds its record expired or
// removed walks on to the next cover. Nodes are shared between segments (hash-consed while the
// table is built), so a nested family of prefixes costs one node per prefix.
type index struct {
	bounds []U128   // IPv6; nil for IPv4, whose bounds are b4
	b4     []uint32 // IPv4 bounds
	top    []uint32 // node per segment, noNode: none
	nodes  []node
	order  []uint32 // the records' slots by start, then end
}

type node struct{ slot, parent uint32 }

const noNode = ^uint32(0)

// lookup returns the slot of the most specific record live at now covering a, or -1.
func (ix *index) lookup(recs []rec, a U128, now int64) int64 {
	// the last bound <= a
	var lo int
	if b := ix.b4; b != nil {
		x := uint32(a.Lo)
		hi := len(b)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if b[m] <= x {
				lo = m + 1
			} else {
				hi = m
			}
		}
	} else {
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
	}
	if lo == 0 {
		return -1
	}
	for n := ix.top[lo-1]; n != noNode; {
		nd := ix.nodes[n]
		if recs[nd.slot].live(now) {
			return int64(nd.slot)
		}
		n = nd.parent
	}
	return -1
}

type event struct {
	at   U128
	slot uint32
	add  bool
}

// lessSpecific orders records from the least specific (most addresses, tie: smaller start).
func lessSpecific(recs []rec, a, b uint32) bool {
	return moreSpecific(recs[b].r, recs[a].r)
}

// buildIndex builds the index of the records of family v6 not removed; nil when there is none.
func buildIndex(recs []rec, v6 bool) *index { return buildIndexAt(recs, v6, 0) }

// buildIndexAt is buildIndex of the records live at now (now 0: not removed).
func buildIndexAt(recs []rec, v6 bool, now int64) *index {
	var ev []event
	for i := range recs {
		x := &recs[i]
		if x.flags&fDead != 0 || x.r.V6 != v6 || now != 0 && !x.live(now) {
			continue
		}
		ev = append(ev, event{x.r.Lo, uint32(i), true})
		if end, over := x.r.Hi.Add1(); !over && (v6 || end.Lo <= 0xffffffff) { // no segment past the family's last address
			ev = append(ev, event{end, uint32(i), false})
		}
	}
	if len(ev) == 0 {
		return nil
	}
	ix := &index{order: make([]uint32, 0, len(ev)/2+1)}
	for _, e := range ev {
		if e.add {
			ix.order = append(ix.order, e.slot)
		}
	}
	slices.SortFunc(ix.order, func(a, b uint32) int {
		if c := recs[a].r.Lo.Cmp(recs[b].r.Lo); c != 0 {
			return c
		}
		return recs[a].r.Hi.Cmp(recs[b].r.Hi)
	})
	sort.Slice(ev, func(i, j int) bool { return ev[i].at.Less(ev[j].at) })
	intern := map[uint64]uint32{}
	var active, nodeAt []uint32
	pos := func(slot uint32) int {
		return sort.Search(len(active), func(k int) bool { return !lessSpecific(recs, active[k], slot) })
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
		if n := len(ix.top); n > 0 && ix.top[n-1] == top {
			continue
		}
		ix.bounds = append(ix.bounds, at)
		ix.top = append(ix.top, top)
	}
	if !v6 {
		ix.b4 = make([]uint32, len(ix.bounds))
		for i, b := range ix.bounds {
			ix.b4[i] = uint32(b.Lo)
		}
		ix.bounds = nil
	}
	ix.bounds = slices.Clip(ix.bounds)
	ix.top = slices.Clip(ix.top)
	ix.nodes = slices.Clip(ix.nodes)
	return ix
}

func (ix *index) memory() int64 {
	return int64(16*cap(ix.bounds) + 4*cap(ix.b4) + 4*cap(ix.top) + 8*cap(ix.nodes) + 4*cap(ix.order))
}

// n is the number of segments, bound(i) where segment i starts.
func (ix *index) n() int { return len(ix.top) }

func (ix *index) bound(i int) U128 {
	if ix.b4 != nil {
		return U128{0, uint64(ix.b4[i])}
	}
	return ix.bounds[i]
}
