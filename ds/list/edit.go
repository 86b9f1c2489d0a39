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
		left = l.count
	}
	removed := 0
	if count >= 0 {
		for i := l.lo; i < l.hi && left > removed; i++ {
			removed += l.ns[i].removeMatches(&m, 0, left-removed)
		}
	} else {
		for i := l.hi - 1; i >= l.lo && left > removed; i-- {
			nd := &l.ns[i]
			found := nd.countMatches(&m)
			drop := min(found, left-removed)
			removed += nd.removeMatches(&m, found-drop, drop)
		}
	}
	if removed > 0 {
		l.count -= removed
		l.tidy(l.lo, l.hi)
	}
	return removed
}

// countMatches returns how many entries of nd equal m's value.
func (nd *node) countMatches(m *matcher) int {
	d, found := nd.data(), 0
	for r := 0; r < len(d); r = skip(d, r) {
		if m.at(d, r) {
			found++
		}
	}
	return found
}

// removeMatches deletes up to limit entries equal to m's value after passing over the first
// keep of them, compacting the node in one pass; it returns how many it deleted.
func (nd *node) removeMatches(m *matcher, keep, limit int) int {
	d := nd.data()
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
	nd.b = nd.b[:int(nd.off)+w]
	nd.n -= int32(removed)
	return removed
}

// DeleteRange deletes n elements from element i on (i >= 0, n >= 0, i+n <= Len()).
func (l *List) DeleteRange(i, n int) {
	if n == 0 {
		return
	}
	first, k := l.locate(i)
	ni := first
	for left := n; left > 0; ni, k = ni+1, 0 {
		nd := &l.ns[ni]
		take := min(left, int(nd.n)-k)
		left -= take
		if take == int(nd.n) {
			*nd = node{}
			continue
		}
		d := nd.data()
		r1, r2 := nd.offsetOf(k), len(d)
		if k+take < int(nd.n) {
			r2 = r1
			for range take {
				r2 = skip(d, r2)
			}
		}
		nd.cut(r1, r2-r1)
		nd.n -= int32(take)
	}
	l.count -= n
	l.tidy(first, ni)
}

// tidy drops the empty nodes among ns[from:to] and merges small neighbours there (and with the
// nodes on either side), after deletions.
func (l *List) tidy(from, to int32) {
	l.takeSpare() // the ends move: no slot is sure to stay next to them
	from, to = max(from-1, l.lo), min(to+1, l.hi)
	w := from
	for i := from; i < to; i++ {
		nd := l.ns[i]
		switch {
		case nd.n == 0:
		case w > from && l.mergeable(&l.ns[w-1], &nd):
			l.ns[w-1].merge(&nd, l.byteLimit())
		default:
			l.ns[w] = nd
			w++
		}
	}
	copy(l.ns[w:], l.ns[to:l.hi])
	hi := w + l.hi - to
	clear(l.ns[hi:l.hi])
	l.hi = hi
}

// mergeable reports whether a and b are small enough to become one node. The margin under the
// limits keeps an insert that splits a node and a delete next to it from merging and splitting
// the same nodes over and over.
func (l *List) mergeable(a, b *node) bool {
	return a.size()+b.size() <= l.byteLimit()*3/4 && int(a.n+b.n) <= max(l.countLimit()*3/4, 1)
}

// merge appends b's entries to nd.
func (nd *node) merge(b *node, limit int) {
	k := b.size()
	nd.makeRoom(k, false, limit)
	end := len(nd.b)
	nd.b = nd.b[:end+k]
	copy(nd.b[end:], b.data())
	nd.n += b.n
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
	limit := l.count
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
	if !q.Reverse {
		for i := l.lo; i < l.hi && seen < limit; i++ {
			d := l.ns[i].data()
			for r := 0; r < len(d) && seen < limit; r, seen = skip(d, r), seen+1 {
				if m.at(d, r) && report(seen) {
					return dst
				}
			}
		}
		return dst
	}
	for i := l.hi - 1; i >= l.lo && seen < limit; i-- {
		d := l.ns[i].data()
		for end := len(d); end > 0 && seen < limit; seen++ {
			end = entryStart(d, end)
			if m.at(d, end) && report(l.count-1-seen) {
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
