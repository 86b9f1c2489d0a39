package list

import "slices"

// deque holds the chunks of a list of more than one: they sit in ns[lo:hi] with free slots on
// both sides, so a chunk is added or removed at either end in O(1) and in the middle by moving
// the slots of the shorter side. A list keeps its deque once it has one (a list going back and
// forth between one and two chunks allocates nothing for it).
//
// A chunk emptied at an end of a list that keeps at least spareMinNodes chunks stays, as a
// spare, in the free slot just past that end (lo-1 or hi); the next chunk added at either end
// reuses it if it is as large as the chunk it would allocate, so a list used as a queue
// allocates nothing in steady state.
// At most one spare exists, and every other free slot is nil. Short lists keep no spare: it
// could double their memory.
type deque struct {
	ns     []*chunk
	lo, hi int32
	count  int
	idx    *prefix // nil until locate needs one
}

// prefix is a deque's index for reaching the middle of a long list: its chunks' counts sit in
// their headers, apart from the slots, so walking 1,000 chunks' counts touches 1,000 scattered
// lines (a 1M-element list's middle took 5.4µs to reach that way, where contiguous slots with
// the counts inline took 2.2µs; slots that large would cost small lists 8 bytes a chunk). Any
// change of the counts or the layout invalidates it, and the next locate far from both ends
// rebuilds it from the headers, as its walk would have read them anyway.
type prefix struct {
	sums  []int // sums[j]: the elements of the list's first j chunks
	valid bool
}

// prefixMin is the walk, in chunks, from which locate uses the prefix index.
const prefixMin = 32

// changed invalidates the prefix index after the counts or the layout changed.
func (d *deque) changed() {
	if d.idx != nil {
		d.idx.valid = false
	}
}

// find returns the chunk holding element i and i's position in it, through the prefix index.
func (d *deque) find(i int) (ni int32, k int) {
	p := d.idx
	if p == nil {
		p = &prefix{}
		d.idx = p
	}
	if !p.valid {
		p.sums = append(p.sums[:0], 0)
		sum := 0
		for _, c := range d.ns[d.lo:d.hi] {
			sum += int(c.n)
			p.sums = append(p.sums, sum)
		}
		p.valid = true
	}
	j, _ := slices.BinarySearch(p.sums, i+1) // the first chunk ending after element i
	return d.lo + int32(j) - 1, i - p.sums[j-1]
}

const spareMinNodes = 3

// nodes returns the list's chunk slots; the chunks are ns[lo:hi]. Writing a slot replaces that
// chunk.
func (l *List) nodes() (ns []*chunk, lo, hi int32) {
	if d := l.d; d != nil {
		return d.ns, d.lo, d.hi
	}
	if l.one[0] == nil {
		return l.one[:], 0, 0
	}
	return l.one[:], 0, 1
}

// takeSpare removes the spare chunk from its slot and returns it, or nil.
func (d *deque) takeSpare() *chunk {
	for _, s := range [2]int32{d.lo - 1, d.hi} {
		if s >= 0 && int(s) < len(d.ns) && d.ns[s] != nil {
			c := d.ns[s]
			d.ns[s] = nil
			return c
		}
	}
	return nil
}

// addChunk adds a new chunk at position at, an end of the list (l.lo or l.hi), with k bytes
// free for a push there, and returns it: the spare if it is large enough, else a chunk of
// newCap(k) bytes.
func (l *List) addChunk(at int32, k int, front bool) *chunk {
	want := l.newCap(k)
	if l.d == nil && l.one[0] == nil {
		l.one[0] = newChunk(want, front)
		return l.one[0]
	}
	spare := l.d.spareIfAny()
	i := l.addNode(at)
	c := spare
	if c == nil || int(c.cap) < want { // a smaller spare would be outgrown at once (and circulate)
		c = newChunk(want, front)
	} else {
		c.off, c.end, c.n = 0, 0, 0
		if front {
			c.off, c.end = c.cap, c.cap
		}
	}
	l.d.ns[i] = c
	return c
}

// spareIfAny is takeSpare on a deque that may be nil.
func (d *deque) spareIfAny() *chunk {
	if d == nil {
		return nil
	}
	return d.takeSpare()
}

// addNode inserts an empty slot before absolute position at (lo <= at <= hi), turning a
// one-chunk list into a deque, and returns the new slot's position; the chunks before it may
// have moved one slot down.
func (l *List) addNode(at int32) int32 {
	if l.d == nil {
		n := int32(0)
		if l.one[0] != nil {
			n = 1
		}
		l.d = &deque{ns: l.one[:], hi: n, count: l.Len()}
	}
	d := l.d
	d.changed()
	d.takeSpare()
	canLeft, canRight := d.lo > 0, int(d.hi) < len(d.ns)
	if at == d.lo && !canLeft || at == d.hi && !canRight || !canLeft && !canRight {
		at = l.relayout(at)
		canLeft, canRight = d.lo > 0, int(d.hi) < len(d.ns)
	}
	if canLeft && (at-d.lo <= d.hi-at || !canRight) {
		copy(d.ns[d.lo-1:], d.ns[d.lo:at])
		d.lo--
		at--
	} else {
		copy(d.ns[at+1:], d.ns[at:d.hi])
		d.hi++
	}
	d.ns[at] = nil
	return at
}

// relayout centres the chunks in d.ns, first growing it when less than an eighth of it would be
// free after one more chunk, and returns position at translated to the new layout. A list of two
// chunks gets three slots (most stay that small); then the slots double, so that a list of a few
// chunks replaces its slots seldom, and past 32 grow by a quarter: slots cost 8 bytes each,
// while a relayout (O(chunks)) still comes only every size/16 additions or more.
func (l *List) relayout(at int32) int32 {
	d := l.d
	n := int(d.hi - d.lo)
	ns, inPlace := d.ns, true
	if size := len(ns); size-n-1 < max(size/8, 1) {
		inPlace = false
		want := 3
		switch {
		case n > 32:
			want = n + n/4
		case n > 1:
			want = 2*n + 2
		}
		ns = slices.Grow([]*chunk(nil), want)
		ns = ns[:cap(ns)]
	}
	lo := (len(ns) - n) / 2
	copy(ns[lo:], d.ns[d.lo:d.hi])
	if inPlace { // moved in place: drop the stale copies so their chunks can be freed
		clear(ns[:lo])
		clear(ns[lo+n:])
	} else if len(d.ns) > 0 && &d.ns[0] == &l.one[0] {
		l.one[0] = nil // nor may the inline slot keep a moved chunk alive
	}
	at += int32(lo) - d.lo
	d.ns, d.lo, d.hi = ns, int32(lo), int32(lo+n)
	return at
}

// removeNode deletes the chunk at absolute position i, moving the slots of the shorter side, and
// keeps it as the spare when the list is long enough.
func (l *List) removeNode(i int32) {
	d := l.d
	if d == nil {
		l.one[0] = nil
		return
	}
	c := d.ns[i]
	d.changed()
	d.takeSpare()
	var freed int32
	if i-d.lo < d.hi-1-i {
		copy(d.ns[d.lo+1:], d.ns[d.lo:i])
		freed = d.lo
		d.lo++
	} else {
		copy(d.ns[i:], d.ns[i+1:d.hi])
		d.hi--
		freed = d.hi
	}
	d.ns[freed] = nil
	if d.hi-d.lo >= spareMinNodes {
		d.ns[freed] = c
	}
}
