package ipset

import (
	"cmp"
	"slices"
)

// hosts is the set of plain IPv4 hosts (no label, no expiry, not NOMATCH): a frozen sorted
// base plus a delta of additions and removals, merged into a new base off the shard's token
// (build.go's protocol) once it passes max(pendMin, base/8). A merge freezes the delta (fadd,
// fdel: the old view is base+fadd-fdel) and builds base' = the old view on a goroutine; new
// changes go to a fresh delta over the old view, which stays valid over base'.
//
// The base is pointer-free: below bucketMin hosts a sorted []uint32; from bucketMin on, the
// flat host index: starts[h] is the first of the hosts whose top 16 bits are h in lows, the
// packed low 16 bits (2 bytes a host plus a 256 KiB table).
type hosts struct {
	small  []uint32
	starts []uint32 // 65537 entries when bucketed, else nil
	lows   []uint16
	nbase  int
	add    map[uint32]struct{} // not in the old view
	del    map[uint32]struct{} // in the old view
	fadd   map[uint32]struct{} // frozen while a merge runs: not in the base
	fdel   map[uint32]struct{} // frozen: in the base
	nold   int                 // hosts in the old view
	job    *hostJob
}

type hostJob struct {
	bg
	base hostBase
}

// bucketMin is the fewest hosts kept as the flat host index (tests lower it).
var bucketMin = 1 << 16

func (h *hosts) len() int { return h.nold + len(h.add) - len(h.del) }

func (h *hosts) deltaLen() int { return len(h.add) + len(h.del) }

func (h *hosts) inBase(a uint32) bool {
	if h.nbase == 0 {
		return false
	}
	if h.starts == nil {
		_, ok := slices.BinarySearch(h.small, a)
		return ok
	}
	b := a >> 16
	return has16(h.lows[h.starts[b]:h.starts[b+1]], uint16(a))
}

// has16 reports whether sorted l holds x. The search has no data-dependent branch (the compiler
// makes the step a conditional move): a bucket holds a few dozen lows at most, where a
// mispredicted branch a step cost more than the search (BenchmarkContainsHosts).
func has16(l []uint16, x uint16) bool {
	n := len(l)
	if n == 0 {
		return false
	}
	base := 0
	for n > 1 {
		half := n >> 1
		if l[base+half] <= x {
			base += half
		}
		n -= half
	}
	return l[base] == x
}

// inOld reports whether a is in the old view (base+fadd-fdel).
func (h *hosts) inOld(a uint32) bool {
	if h.fadd != nil {
		if _, ok := h.fadd[a]; ok {
			return true
		}
		if _, ok := h.fdel[a]; ok {
			return false
		}
	}
	return h.inBase(a)
}

func (h *hosts) has(a uint32) bool {
	if len(h.add) > 0 {
		if _, ok := h.add[a]; ok {
			return true
		}
	}
	if len(h.del) > 0 {
		if _, ok := h.del[a]; ok {
			return false
		}
	}
	return h.inOld(a)
}

// insert adds a and reports whether it was new.
func (h *hosts) insert(a uint32) bool {
	if _, ok := h.del[a]; ok {
		delete(h.del, a)
		return true
	}
	if h.inOld(a) {
		return false
	}
	if h.add == nil {
		h.add = map[uint32]struct{}{}
	}
	n := len(h.add)
	h.add[a] = struct{}{} // one hash probe: new exactly when the map grew
	return len(h.add) > n
}

// remove deletes a and reports whether it was there.
func (h *hosts) remove(a uint32) bool {
	if _, ok := h.add[a]; ok {
		delete(h.add, a)
		return true
	}
	if _, ok := h.del[a]; ok || !h.inOld(a) {
		return false
	}
	if h.del == nil {
		h.del = map[uint32]struct{}{}
	}
	h.del[a] = struct{}{}
	return true
}

// maybeMerge starts a merge when the delta passed its threshold and none runs.
func (h *hosts) maybeMerge() {
	if h.job == nil && h.deltaLen() > max(pendMin, h.nbase/8) {
		h.startJob(false)
	}
}

// poll installs a finished merge.
func (h *hosts) poll() {
	if j := h.job; j != nil && j.finished() {
		h.install()
	}
}

// startJob freezes the delta and builds the new base from it, on a goroutine unless sync.
func (h *hosts) startJob(sync bool) {
	j := &hostJob{}
	h.job = j
	h.fadd, h.fdel = h.add, h.del
	if h.fadd == nil {
		h.fadd = map[uint32]struct{}{}
	}
	h.nold = h.len()
	h.add, h.del = nil, nil
	old := hostBase{h.small, h.starts, h.lows}
	fadd, fdel, n := h.fadd, h.fdel, h.nold
	j.start(sync, func(p *pacer) { j.base = mergeHostBase(old, fadd, fdel, n, p) })
}

// mergeHostBase is the base of the n hosts of old without del and with add (add holds none of
// old's, del only old's), written straight into the new base's arrays: no sorted copy of old
// and no merged one in between (a merge of a 200k-host base allocated 2.3 MB where it now
// allocates the 0.65 MB it keeps).
func mergeHostBase(old hostBase, add, del map[uint32]struct{}, n int, p *pacer) hostBase {
	ad := make([]uint32, 0, len(add))
	for a := range add {
		ad = append(ad, a)
		p.step()
	}
	if p == nil { // inline, under the token: slices.Sort is a third faster than a compare func
		slices.Sort(ad)
	} else {
		sortPaced(ad, cmp.Compare[uint32], p)
	}
	var b hostBase
	k := 0
	put := func(a uint32) {
		if b.starts != nil {
			b.starts[a>>16+1]++
			b.lows[k] = uint16(a)
		} else {
			b.small = append(b.small, a)
		}
		k++
		p.step()
	}
	if n >= bucketMin {
		b.starts, b.lows = make([]uint32, 1<<16+1), make([]uint16, n)
	} else {
		b.small = make([]uint32, 0, n)
	}
	j := 0
	old.each(func(a uint32) {
		for j < len(ad) && ad[j] < a {
			put(ad[j])
			j++
		}
		if len(del) > 0 {
			if _, ok := del[a]; ok {
				return
			}
		}
		put(a)
	})
	for ; j < len(ad); j++ {
		put(ad[j])
	}
	if b.starts != nil {
		b.lows = b.lows[:k] // k is n: nold counts base+add-del
		for i := 1; i <= 1<<16; i++ {
			b.starts[i] += b.starts[i-1]
		}
	}
	return b
}

func (h *hosts) install() {
	j := h.job
	h.job = nil
	h.small, h.starts, h.lows = j.base.small, j.base.starts, j.base.lows
	h.nbase = h.nold
	h.fadd, h.fdel = nil, nil
}

// compact merges the whole delta, waiting for it.
func (h *hosts) compact() {
	if j := h.job; j != nil {
		j.join()
		h.install()
	}
	if h.deltaLen() > 0 {
		h.startJob(true)
		h.install()
	}
}

// hostBase is a frozen base: small, or starts and lows.
type hostBase struct {
	small  []uint32
	starts []uint32
	lows   []uint16
}

func (b hostBase) each(fn func(uint32)) {
	if b.starts == nil {
		for _, a := range b.small {
			fn(a)
		}
		return
	}
	for k := 0; k < 1<<16; k++ {
		for _, l := range b.lows[b.starts[k]:b.starts[k+1]] {
			fn(uint32(k)<<16 | uint32(l))
		}
	}
}

func (b hostBase) sorted() []uint32 {
	var out []uint32
	if b.starts == nil {
		return slices.Clone(b.small)
	}
	out = make([]uint32, 0, len(b.lows))
	b.each(func(a uint32) { out = append(out, a) })
	return out
}

// applyDelta is sorted (which it may reuse) without del and with add.
func applyDelta(sorted []uint32, add, del map[uint32]struct{}) []uint32 {
	if len(del) > 0 {
		out := sorted[:0]
		for _, a := range sorted {
			if _, ok := del[a]; !ok {
				out = append(out, a)
			}
		}
		sorted = out
	}
	if len(add) == 0 {
		return sorted
	}
	ad := make([]uint32, 0, len(add))
	for a := range add {
		ad = append(ad, a)
	}
	slices.Sort(ad)
	merged := make([]uint32, 0, len(sorted)+len(ad))
	i, j := 0, 0
	for i < len(sorted) || j < len(ad) {
		if j == len(ad) || i < len(sorted) && sorted[i] < ad[j] {
			merged = append(merged, sorted[i])
			i++
		} else {
			merged = append(merged, ad[j])
			j++
		}
	}
	return merged
}

func newHostBase(all []uint32) hostBase {
	if len(all) < bucketMin {
		return hostBase{small: slices.Clip(all)}
	}
	b := hostBase{starts: make([]uint32, 1<<16+1), lows: make([]uint16, len(all))}
	for i, a := range all {
		b.starts[a>>16+1]++
		b.lows[i] = uint16(a)
	}
	for k := 1; k <= 1<<16; k++ {
		b.starts[k] += b.starts[k-1]
	}
	return b
}

// sorted returns every host in order (a new slice).
func (h *hosts) sorted() []uint32 {
	old := applyDelta(hostBase{h.small, h.starts, h.lows}.sorted(), h.fadd, h.fdel)
	return applyDelta(old, h.add, h.del)
}

func (h *hosts) clone() hosts {
	b := newHostBase(h.sorted())
	return hosts{small: b.small, starts: b.starts, lows: b.lows, nbase: h.len(), nold: h.len()}
}

func (h *hosts) memory() int64 {
	n := int64(4*cap(h.small) + 4*len(h.starts) + 2*cap(h.lows))
	n += int64(len(h.add)+len(h.del)+len(h.fadd)+len(h.fdel)) * 16 // a map slot of 4-byte keys, with overhead
	return n
}
