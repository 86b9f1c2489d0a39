package zset

import "slices"

// Entry is a member and its score, for building sets in bulk.
type Entry struct {
	Member []byte
	Score  float64
}

// SortEntries sorts entries in set order.
func SortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int { return compare(a.Score, a.Member, b.Score, b.Member) })
}

// FromSorted builds a set from entries with distinct members, already in set order, in the
// encoding Redis gives a stored result of that size (ZUNIONSTORE, ZRANGESTORE...). The
// entries' bytes are copied.
func FromSorted(es []Entry, lim Limits) *ZSet {
	maxLen, total := 0, 0
	for i := range es {
		maxLen = max(maxLen, len(es[i].Member))
		total += len(es[i].Member)
	}
	if lim.fits(len(es), maxLen, total) {
		b := slices.Grow([]byte(nil), total+11*len(es)+countSize)
		for i := range es {
			b = appendRecord(b, es[i].Member, es[i].Score)
		}
		b = append(b, 0, 0)
		lpSetLen(b, len(es))
		z := &ZSet{}
		z.setBuf(b)
		return z
	}
	z := &ZSet{}
	z.setLarge(bigFrom(len(es), func(yield func([]byte, float64)) {
		for i := range es {
			yield(es[i].Member, es[i].Score)
		}
	}))
	return z
}
