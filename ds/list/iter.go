package list

// Iter walks a list from one element towards the tail, or towards the head. The values it
// returns are valid until its next call; the list must not change during the walk.
type Iter struct {
	ns     []*chunk
	lo, hi int32
	ni     int32
	r      int // towards the tail: offset of the next entry in its node; towards the head: its end
	rev    bool
	sc     [maxIntLen]byte
}

// IterAt returns an iterator whose first value is element i (0 <= i < Len()), walking towards
// the tail, or towards the head when rev.
func (l *List) IterAt(i int, rev bool) Iter {
	ns, ni, k := l.locate(i)
	c := ns[ni]
	r := c.offsetOf(k)
	if rev {
		r = skip(c.data(), r)
	}
	_, lo, hi := l.nodes()
	return Iter{ns: ns, lo: lo, hi: hi, ni: ni, r: r, rev: rev}
}

// Next returns the next value, or ok false past the end of the list.
func (it *Iter) Next() (v []byte, ok bool) {
	if it.rev {
		return it.prev()
	}
	for it.ni < it.hi {
		d := it.ns[it.ni].data()
		if it.r < len(d) {
			v, it.r = decode(d, it.r, it.sc[:])
			return v, true
		}
		it.ni, it.r = it.ni+1, 0
	}
	return nil, false
}

func (it *Iter) prev() ([]byte, bool) {
	for it.ni >= it.lo {
		d := it.ns[it.ni].data()
		if it.r > 0 {
			start := entryStart(d, it.r)
			v, _ := decode(d, start, it.sc[:])
			it.r = start
			return v, true
		}
		it.ni--
		if it.ni >= it.lo {
			it.r = it.ns[it.ni].size()
		}
	}
	return nil, false
}
