package set

import (
	"cmp"
	"slices"
)

// Inter calls num or str (as Walk does) with each member present in every set, until one
// returns false. Like Redis, it walks the smallest set (the first of equal ones: the sort is
// stable) and looks the members up in the others, so the members come in that set's order. The
// sets are reordered; none is nil.
func Inter(sets []*Set, num func(v int64) bool, str func(m []byte) bool) {
	slices.SortStableFunc(sets, func(a, b *Set) int { return cmp.Compare(a.Len(), b.Len()) })
	first, rest := sets[0], sets[1:]
	first.Walk(func(v int64) bool {
		for _, o := range rest {
			if o != first && !o.hasInt(v) {
				return true
			}
		}
		return num(v)
	}, func(m []byte) bool {
		for _, o := range rest {
			if o != first && !o.Has(m) {
				return true
			}
		}
		return str(m)
	})
}

// InterSet returns a new set of the members present in every set (SINTERSTORE's result, built
// from an intset up as Redis builds it).
func InterSet(sets []*Set, lim *Limits) *Set {
	out := newBuilder(lim)
	Inter(sets, func(v int64) bool { out.addInt(v); return true },
		func(m []byte) bool { out.add(m); return true })
	return out.done()
}

// InterCard counts the members present in every set, stopping at limit (0: no limit).
func InterCard(sets []*Set, limit int64) int64 {
	n := int64(0)
	more := func() bool { n++; return limit == 0 || n < limit }
	Inter(sets, func(int64) bool { return more() }, func([]byte) bool { return more() })
	return n
}

// Union returns a new set of every member of the sets; nil sets are empty. Like Redis, the
// result starts as an intset and converts as members are added, so the same members give the
// same encoding and order.
func Union(sets []*Set, lim *Limits) *Set {
	out := newBuilder(lim)
	for _, s := range sets {
		if s != nil {
			s.Walk(func(v int64) bool { out.addInt(v); return true },
				func(m []byte) bool { out.add(m); return true })
		}
	}
	return out.done()
}

// Diff returns a new set of the members of sets[0] that are in none of the others; nil sets
// are empty. A set given twice (the same key) empties the result.
func Diff(sets []*Set, lim *Limits) *Set {
	out := newBuilder(lim)
	first, rest := sets[0], sets[1:]
	if first == nil || slices.Contains(rest, first) {
		return out.done()
	}
	first.Walk(func(v int64) bool {
		for _, o := range rest {
			if o != nil && o.hasInt(v) {
				return true
			}
		}
		out.addInt(v)
		return true
	}, func(m []byte) bool {
		for _, o := range rest {
			if o != nil && o.Has(m) {
				return true
			}
		}
		out.add(m)
		return true
	})
	return out.done()
}
