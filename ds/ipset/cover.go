package ipset

import (
	"math/big"
	"math/bits"
)

// covered returns the addresses of family v6 whose Contains is true at now, as sorted,
// disjoint, non-adjacent ranges. It costs a build of the index of the live records.
func (s *Set) covered(v6 bool, now int64) []Range {
	var segs []Range // matching segments, in order
	var slots []uint32
	for i := range s.recs {
		if s.recs[i].v6() == v6 && s.alive(uint32(i), now) {
			slots = append(slots, uint32(i))
		}
	}
	sortOrder(s.view(), slots)
	ix := buildOrdered(s.view(), slots, v6, true, nil)
	var maxA U128
	if v6 {
		maxA = U128{^uint64(0), ^uint64(0)}
	} else {
		maxA = U128{0, 0xffffffff}
	}
	matchAt := func(a U128) bool { return false }
	if ix != nil {
		for i := range ix.n() {
			b := ix.bound(i)
			t := ix.topAt(i)
			if t == noNode || s.recs[ix.nodes[t].slot].m&fNoMatch != 0 {
				continue
			}
			end := maxA
			if i+1 < ix.n() {
				end = ix.bound(i + 1).Sub(U128{0, 1})
			}
			segs = append(segs, Range{b, end, v6})
		}
		matchAt = func(a U128) bool {
			sl := ix.lookup(s, a, now)
			return sl >= 0 && s.recs[sl].m&fNoMatch == 0
		}
	}
	if !v6 && s.hosts.len() > 0 {
		var hs []Range
		for _, h := range s.hosts.sorted() {
			a := U128{0, uint64(h)}
			if !matchAt(a) {
				hs = append(hs, Range{a, a, false})
			}
		}
		segs = mergeSorted(segs, hs)
	}
	// coalesce adjacent ranges
	out := segs[:0]
	for _, r := range segs {
		if n := len(out); n > 0 {
			if next, over := out[n-1].Hi.Add1(); !over && next == r.Lo {
				out[n-1].Hi = r.Hi
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

func mergeSorted(a, b []Range) []Range {
	out := make([]Range, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || i < len(a) && a[i].Lo.Less(b[j].Lo) {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return out
}

// AddrCount is the number of addresses (of IPv4 if v4, IPv6 if v6) whose Contains is true at now.
func (s *Set) AddrCount(v4, v6 bool, now int64) *big.Int {
	n := new(big.Int)
	var t big.Int
	for _, fam := range []bool{false, true} {
		if fam && !v6 || !fam && !v4 {
			continue
		}
		for _, r := range s.covered(fam, now) {
			d := r.Hi.Sub(r.Lo)
			t.SetUint64(d.Hi)
			t.Lsh(&t, 64)
			t.Or(&t, new(big.Int).SetUint64(d.Lo))
			t.Add(&t, big.NewInt(1))
			n.Add(n, &t)
		}
	}
	return n
}

// Merged is the minimal list of CIDR prefixes of the addresses whose Contains is true at now,
// IPv4 (if v4) then IPv6 (if v6), in order.
func (s *Set) Merged(v4, v6 bool, now int64) []Range {
	var out []Range
	for _, fam := range []bool{false, true} {
		if fam && !v6 || !fam && !v4 {
			continue
		}
		for _, r := range s.covered(fam, now) {
			out = appendCIDRs(out, r)
		}
	}
	return out
}

// appendCIDRs appends the minimal prefixes covering r exactly.
func appendCIDRs(out []Range, r Range) []Range {
	w := width(r.V6)
	lo := r.Lo
	for {
		// the largest aligned block at lo that fits in [lo, r.Hi]
		tz := w
		if lo != (U128{}) {
			if lo.Lo != 0 {
				tz = bits.TrailingZeros64(lo.Lo)
			} else {
				tz = 64 + bits.TrailingZeros64(lo.Hi)
			}
			tz = min(tz, w)
		}
		span := r.Hi.Sub(lo) // size-1
		var fit int          // largest k with 2^k - 1 <= span
		if span.Hi == ^uint64(0) && span.Lo == ^uint64(0) {
			fit = 128
		} else if s1, over := span.Add1(); !over {
			if s1.Hi != 0 {
				fit = 63 + bits.Len64(s1.Hi) + 1 - 1
			} else {
				fit = bits.Len64(s1.Lo) - 1
			}
		}
		k := min(tz, fit, w)
		hm := hostMask(w-k, w)
		hi := U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}
		out = append(out, Range{lo, hi, r.V6})
		if hi == r.Hi {
			return out
		}
		lo, _ = hi.Add1()
	}
}
