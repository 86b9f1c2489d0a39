package list

// Remove deletes the elements equal to v: the first count from the head when count > 0, the last
// -count from the tail when count < 0, all of them when count is 0 (LREM). It returns how many
// it deleted.
func (l *List) Remove(v []byte, count int) int {
	m := newMatcher(v)
	left := count
	switch {
	case count < 0:
		left = -count
	case count == 0:
		left = l.Len()
	}
	removed := 0
	ns, lo, hi := l.nodes()
	if count >= 0 {
		for i := lo; i < hi && left > removed; i++ {
			removed += ns[i].removeMatches(&m, 0, left-removed)
		}
	} else {
		for i := hi - 1; i >= lo && left > removed; i-- {
			c := ns[i]
			found := c.countMatches(&m)
			drop := min(found, left-removed)
			removed += c.removeMatches(&m, found-drop, drop)
		}
	}
	if removed > 0 {
		l.counted(-removed)
		l.tidy(lo, hi)
	}
	return removed
}

// countMatches returns how many entries of c equal m's value.
func (c *chunk) countMatches(m *matcher) int {
	d, found := c.data(), 0
	for r := 0; r < len(d); r = skip(d, r) {
		if m.at(d, r) {
			found++
		}
	}
	return found
}

// removeMatches deletes up to limit entries equal to m's value after passing over the first
// keep of them, compacting the chunk in one pass; it returns how many it deleted.
func (c *chunk) removeMatches(m *matcher, keep, limit int) int {
	d := c.data()
	w, removed := 0, 0
	for r := 0; r < len(d); {
		next := skip(d, r)
		if removed < limit && m.at(d, r) {
			if keep == 0 {
				removed++
				r = next
				continue
			}
			keep--
		}
		if w != r {
			copy(d[w:], d[r:next])
		}
		w, r = w+next-r, next
	}
	c.end = c.off + uint32(w)
	c.n -= uint32(removed)
	return removed
}

// DeleteRange deletes n elements from element i on (i >= 0, n >= 0, i+n <= Len()).
func (l *List) DeleteRange(i, n int) {
	if n == 0 {
		return
	}
	ns, first, k := l.locate(i)
	ni := first
	for left := n; left > 0; ni, k = ni+1, 0 {
		c := ns[ni]
		take := min(left, int(c.n)-k)
		left -= take
		if take == int(c.n) {
			c.n, c.end = 0, c.off
			continue
		}
		d := c.data()
		r1, r2 := c.offsetOf(k), len(d)
		if k+take < int(c.n) {
			r2 = r1
			for range take {
				r2 = skip(d, r2)
			}
		}
		c.cut(r1, r2-r1)
		c.n -= uint32(take)
	}
	if ni == first+1 {
		l.countedAt(first, -n)
	} else {
		l.counted(-n)
	}
	l.tidy(first, ni)
}

// tidy drops the empty chunks among ns[from:to] and merges small neighbours there (and with the
// chunks on either side), after deletions.
func (l *List) tidy(from, to int32) {
	d := l.d
	if d == nil {
		if c := l.one[0]; c != nil && c.n == 0 {
			l.one[0] = nil
		}
		return
	}
	d.takeSpare() // the ends move: no slot is sure to stay next to them
	from, to = max(from-1, d.lo), min(to+1, d.hi)
	w := from
	for i := from; i < to; i++ {
		c := d.ns[i]
		switch {
		case c.n == 0:
		case w > from && l.mergeable(d.ns[w-1], c):
			d.ns[w-1] = l.merge(d.ns[w-1], c)
		default:
			d.ns[w] = c
			w++
		}
	}
	if w == to { // nothing dropped or merged
		return
	}
	d.changed()
	copy(d.ns[w:], d.ns[to:d.hi])
	hi := w + d.hi - to
	clear(d.ns[hi:d.hi])
	d.hi = hi
}

// mergeable reports whether a and b are small enough to become one chunk. The margin under the
// limits keeps an insert that splits a chunk and a delete next to it from merging and splitting
// the same chunks over and over.
func (l *List) mergeable(a, b *chunk) bool {
	return a.size()+b.size() <= l.byteLimit()*3/4 && int(a.n+b.n) <= max(l.countLimit()*3/4, 1)
}

// merge appends b's entries to a and returns a, or the larger copy of it that took them.
func (l *List) merge(a, b *chunk) *chunk {
	k := b.size()
	if !a.roomAt(k, false) {
		a = l.reserve(a, k, false)
	}
	copy(a.buf()[a.end:], b.data())
	a.end += uint32(k)
	a.n += b.n
	return a
}

// PosQuery is an LPOS search.
type PosQuery struct {
	Reverse bool // search from the tail
	Skip    int  // matches to pass over before the first reported one (RANK-1)
	Count   int  // matches to report; 0: all
	MaxLen  int  // elements to compare at most; 0: all
}

// Pos appends to dst the indexes (counted from the head) of the elements equal to v that q
// selects, in the order the search meets them.
func (l *List) Pos(v []byte, q PosQuery, dst []int) []int {
	m := newMatcher(v)
	limit := l.Len()
	if q.MaxLen > 0 {
		limit = min(limit, q.MaxLen)
	}
	want := len(dst) + q.Count
	seen := 0
	report := func(idx int) bool { // reports whether the search is complete
		if q.Skip > 0 {
			q.Skip--
			return false
		}
		dst = append(dst, idx)
		return q.Count > 0 && len(dst) == want
	}
	ns, lo, hi := l.nodes()
	if !q.Reverse {
		for i := lo; i < hi && seen < limit; i++ {
			d := ns[i].data()
			for r := 0; r < len(d) && seen < limit; r, seen = skip(d, r), seen+1 {
				if m.at(d, r) && report(seen) {
					return dst
				}
			}
		}
		return dst
	}
	count := l.Len()
	for i := hi - 1; i >= lo && seen < limit; i-- {
		d := ns[i].data()
		for end := len(d); end > 0 && seen < limit; seen++ {
			end = entryStart(d, end)
			if m.at(d, end) && report(count-1-seen) {
				return dst
			}
		}
	}
	return dst
}

// Move pops an element from the head (srcFront) or the tail of src and pushes it onto the head
// (dstFront) or the tail of dst, which may be src itself (a rotation). It returns the element
// (valid until src or dst next changes; buf holds it when it is an integer, or for a rotation)
// and ok false when src is empty.
func Move(src, dst *List, srcFront, dstFront bool, buf []byte) ([]byte, bool) {
	var v []byte
	var ok bool
	if srcFront {
		v, ok = src.PopFront(buf[:0])
	} else {
		v, ok = src.PopBack(buf[:0])
	}
	if !ok {
		return nil, false
	}
	// The popped bytes may lie in room of the node that a push to the same list rearranges.
	if src == dst {
		v = append(buf[:0], v...)
	}
	if dstFront {
		dst.PushFront(v)
	} else {
		dst.PushBack(v)
	}
	return v, true
}
