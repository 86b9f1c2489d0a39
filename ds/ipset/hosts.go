package ipset

import (
	"slices"
	"sort"
)

// hosts is the set of plain IPv4 hosts (no label, no expiry, not NOMATCH): a frozen sorted
// base plus a delta of additions and removals, merged into a new base once it passes
// max(4096, base/8) (merge, called by a writer).
//
// The base is pointer-free: below bucketMin hosts a sorted []uint32; from bucketMin on, the
// flat host index: starts[h] is the first of the hosts whose top 16 bits are h in lows, the
// packed low 16 bits (2 bytes a host plus a 256 KiB table).
type hosts struct {
	small  []uint32
	starts []uint32 // 65537 entries when bucketed, else nil
	lows   []uint16
	nbase  int
	add    map[uint32]struct{} // not in the base
	del    map[uint32]struct{} // in the base
}

const bucketMin = 1 << 16

func (h *hosts) len() int { return h.nbase + len(h.add) - len(h.del) }

func (h *hosts) inBase(a uint32) bool {
	if h.starts == nil {
		i, ok := slices.BinarySearch(h.small, a)
		_ = i
		return ok
	}
	b := a >> 16
	lo, hi := h.starts[b], h.starts[b+1]
	l := h.lows[lo:hi]
	_, ok := slices.BinarySearch(l, uint16(a))
	return ok
}

func (h *hosts) has(a uint32) bool {
	if len(h.add) > 0 {
		if _, ok := h.add[a]; ok {
			return true
		}
	}
	if h.nbase == 0 {
		return false
	}
	if len(h.del) > 0 {
		if _, ok := h.del[a]; ok {
			return false
		}
	}
	return h.inBase(a)
}

// insert adds a and reports whether it was new.
func (h *hosts) insert(a uint32) bool {
	if h.nbase > 0 && h.inBase(a) {
		if _, ok := h.del[a]; ok {
			delete(h.del, a)
			return true
		}
		return false
	}
	if _, ok := h.add[a]; ok {
		return false
	}
	if h.add == nil {
		h.add = map[uint32]struct{}{}
	}
	h.add[a] = struct{}{}
	h.maybeMerge()
	return true
}

// remove deletes a and reports whether it was there.
func (h *hosts) remove(a uint32) bool {
	if _, ok := h.add[a]; ok {
		delete(h.add, a)
		return true
	}
	if h.nbase == 0 || !h.inBase(a) {
		return false
	}
	if _, ok := h.del[a]; ok {
		return false
	}
	if h.del == nil {
		h.del = map[uint32]struct{}{}
	}
	h.del[a] = struct{}{}
	h.maybeMerge()
	return true
}

func (h *hosts) maybeMerge() {
	if d := len(h.add) + len(h.del); d > max(4096, h.nbase/8) {
		h.merge()
	}
}

// eachBase calls fn for every base host in order.
func (h *hosts) eachBase(fn func(uint32)) {
	if h.starts == nil {
		for _, a := range h.small {
			fn(a)
		}
		return
	}
	for b := 0; b < 1<<16; b++ {
		for _, l := range h.lows[h.starts[b]:h.starts[b+1]] {
			fn(uint32(b)<<16 | uint32(l))
		}
	}
}

// sorted returns every host in order (a new slice).
func (h *hosts) sorted() []uint32 {
	out := make([]uint32, 0, h.len())
	h.eachBase(func(a uint32) {
		if _, ok := h.del[a]; !ok {
			out = append(out, a)
		}
	})
	if len(h.add) == 0 {
		return out
	}
	n := len(out)
	for a := range h.add {
		out = append(out, a)
	}
	add := out[n:]
	sort.Slice(add, func(i, j int) bool { return add[i] < add[j] })
	merged := make([]uint32, 0, len(out))
	i, j := 0, n
	for i < n || j < len(out) {
		if j == len(out) || i < n && out[i] < out[j] {
			merged = append(merged, out[i])
			i++
		} else {
			merged = append(merged, out[j])
			j++
		}
	}
	return merged
}

// merge folds the delta into a new base.
func (h *hosts) merge() {
	all := h.sorted()
	h.setBase(all)
}

func (h *hosts) setBase(all []uint32) {
	h.add, h.del = nil, nil
	h.nbase = len(all)
	if len(all) < bucketMin {
		h.small = slices.Clip(all)
		h.starts, h.lows = nil, nil
		return
	}
	h.small = nil
	h.starts = make([]uint32, 1<<16+1)
	h.lows = make([]uint16, len(all))
	for i, a := range all {
		h.starts[a>>16+1]++
		h.lows[i] = uint16(a)
	}
	for b := 1; b <= 1<<16; b++ {
		h.starts[b] += h.starts[b-1]
	}
}

func (h *hosts) clone() hosts {
	var c hosts
	c.setBase(h.sorted())
	return c
}

func (h *hosts) memory() int64 {
	n := int64(4*cap(h.small) + 4*len(h.starts) + 2*cap(h.lows))
	n += int64(len(h.add)+len(h.del)) * 16 // a map slot of 4-byte keys, with overhead
	return n
}
