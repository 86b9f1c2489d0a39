package zset

import "slices"

// Scan is one ZSCAN step from cursor: it calls fn with members and returns the next cursor (0
// when the walk is done). A packed set is returned whole with cursor 0, as Redis does. A large
// set walks its index's home slots in reverse-binary order, visiting slots until count members
// were returned or ten times count slots were visited, so a member present for the whole walk
// is returned at least once whatever inserts, deletes and resizes happen between calls.
func (z *ZSet) Scan(cursor uint64, count int, fn func(member []byte, score float64)) uint64 {
	if z.large() == nil {
		lpWalk(lpRecords(z.buf()), 0, false, func(m []byte, s float64) bool { fn(m, s); return true })
		return 0
	}
	b := z.large()
	emitted, budget := 0, count*10
	emit := func(id uint32) {
		it := b.item(id)
		fn(b.arena.get(it.ref), it.score)
		emitted++
	}
	for {
		cursor = b.scanBucket(cursor, emit)
		budget--
		if cursor == 0 || budget <= 0 || emitted >= count {
			return cursor
		}
	}
}

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
