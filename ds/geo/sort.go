package geo

import "slices"

// Point is a search result: a member found in the shape.
type Point struct {
	Lon, Lat, Dist float64
	Score          float64
	Member         []byte
}

// Sort orders points by distance as Redis does, ascending or descending: when every point is
// returned, with the C library's qsort, which on glibc is a stable merge sort; when only the
// first keep are (COUNT), with Redis's partial quicksort (pqsort.c), which orders only the
// partitions that reach them. Points at equal distances therefore come back in Redis's order.
func Sort(ps []Point, desc bool, keep int) {
	cmp := func(a, b *Point) int {
		c := 0
		switch {
		case a.Dist > b.Dist:
			c = 1
		case a.Dist < b.Dist:
			c = -1
		}
		if desc {
			c = -c
		}
		return c
	}
	if keep >= len(ps) {
		slices.SortStableFunc(ps, func(a, b Point) int { return cmp(&a, &b) })
		return
	}
	pqsort(ps, cmp, 0, keep-1, 0)
}

// pqsort is Bentley and McIlroy's quicksort as Redis 7.0's pqsort.c runs it (without the
// insertion-sort fallback of older BSD versions, which Redis's has dropped): it recurses only into
// partitions that overlap the ranks lo..hi (indexes into the whole slice; base is where ps
// starts in it), so those ranks end up sorted and the rest merely partitioned.
func pqsort(ps []Point, cmp func(a, b *Point) int, lo, hi, base int) {
	for {
		n := len(ps)
		if n < 7 {
			insertion(ps, cmp)
			return
		}
		m := n / 2
		if n > 7 {
			l, r := 0, n-1
			if n > 40 {
				d := n / 8
				l = med3(ps, l, l+d, l+2*d, cmp)
				m = med3(ps, m-d, m, m+d, cmp)
				r = med3(ps, r-2*d, r-d, r, cmp)
			}
			m = med3(ps, l, m, r, cmp)
		}
		ps[0], ps[m] = ps[m], ps[0]
		pa, pb := 1, 1
		pc, pd := n-1, n-1
		for {
			for pb <= pc {
				c := cmp(&ps[pb], &ps[0])
				if c > 0 {
					break
				}
				if c == 0 {
					ps[pa], ps[pb] = ps[pb], ps[pa]
					pa++
				}
				pb++
			}
			for pb <= pc {
				c := cmp(&ps[pc], &ps[0])
				if c < 0 {
					break
				}
				if c == 0 {
					ps[pc], ps[pd] = ps[pd], ps[pc]
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			ps[pb], ps[pc] = ps[pc], ps[pb]
			pb++
			pc--
		}
		r := min(pa, pb-pa)
		vecswap(ps, 0, pb-r, r)
		r = min(pd-pc, n-pd-1)
		vecswap(ps, pb, n-r, r)
		if r := pb - pa; r > 1 && overlaps(base, r, lo, hi) {
			pqsort(ps[:r], cmp, lo, hi, base)
		}
		r = pd - pc
		if r <= 1 {
			return
		}
		base += n - r
		ps = ps[n-r:]
		if !overlaps(base, r, lo, hi) {
			return
		}
	}
}

// overlaps reports whether the ranks lo..hi reach the run of n elements at start, as pqsort.c's
// address test decides.
func overlaps(start, n, lo, hi int) bool {
	end := start + n
	return !((lo < start && hi < start) || (lo >= end && hi >= end))
}

func insertion(ps []Point, cmp func(a, b *Point) int) {
	for m := 1; m < len(ps); m++ {
		for l := m; l > 0 && cmp(&ps[l-1], &ps[l]) > 0; l-- {
			ps[l], ps[l-1] = ps[l-1], ps[l]
		}
	}
}

func med3(ps []Point, a, b, c int, cmp func(a, b *Point) int) int {
	if cmp(&ps[a], &ps[b]) < 0 {
		switch {
		case cmp(&ps[b], &ps[c]) < 0:
			return b
		case cmp(&ps[a], &ps[c]) < 0:
			return c
		}
		return a
	}
	switch {
	case cmp(&ps[b], &ps[c]) > 0:
		return b
	case cmp(&ps[a], &ps[c]) < 0:
		return a
	}
	return c
}

// vecswap swaps the n elements at a with the n at b, pairwise.
func vecswap(ps []Point, a, b, n int) {
	for i := range n {
		ps[a+i], ps[b+i] = ps[b+i], ps[a+i]
	}
}
