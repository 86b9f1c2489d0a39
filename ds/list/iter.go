package list

// Iter walks a list from one element towards the tail, or towards the head. The values it
// returns are valid until its next call; the list must not change during the walk.
type Iter struct {
	l   *List
	ni  int32
	r   int // towards the tail: offset of the next entry in its node; towards the head: its end
	rev bool
	sc  [maxIntLen]byte
}

// IterAt returns an iterator whose first value is element i (0 <= i < Len()), walking towards
// the tail, or towards the head when rev.
func (l *List) IterAt(i int, rev bool) Iter {
	ni, k := l.locate(i)
	nd := &l.ns[ni]
	r := nd.offsetOf(k)
	if rev {
		r = skip(nd.data(), r)
	}
	return Iter{l: l, ni: ni, r: r, rev: rev}
}

// Next returns the next value, or ok false past the end of the list.
func (it *Iter) Next() (v []byte, ok bool) {
	if it.rev {
		return it.prev()
	}
	l := it.l
	for it.ni < l.hi {
		d := l.ns[it.ni].data()
		if it.r < len(d) {
			v, it.r = decode(d, it.r, it.sc[:])
			return v, true
		}
		it.ni, it.r = it.ni+1, 0
	}
	return nil, false
}

func (it *Iter) prev() ([]byte, bool) {
	l := it.l
	for it.ni >= l.lo {
		d := l.ns[it.ni].data()
		if it.r > 0 {
			start := entryStart(d, it.r)
			v, _ := decode(d, start, it.sc[:])
			it.r = start
			return v, true
		}
		it.ni--
		if it.ni >= l.lo {
			it.r = l.ns[it.ni].size()
		}
	}
	return nil, false
}
