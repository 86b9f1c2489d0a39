// Package list is the list value: a sequence of byte strings kept, like Redis's quicklist, as a
// deque of nodes (chunks, chunk.go) that each pack many elements into one pointer-free buffer
// (see entry.go for the layout). Pushes and pops at either end are O(1); reaching the middle
// walks chunk counts from the nearer end (through a prefix index in long lists, deque.go), then
// one chunk's entries. Chunks are limited by list-max-listpack-size as in Redis 7.0: a negative
// value caps a chunk's bytes, a positive one its entries (with a safety cap on bytes).
//
// Small lists cost what they hold: one 24-byte header and one chunk sized to its entries
// (rounded up to the allocator's size class); how chunks grow is List.grow's comment.
//
// A List is touched only by the holder of its shard's token; it has no locks and knows nothing
// of RESP. Values returned by its methods alias its memory (or the caller's scratch buffer for
// elements stored as integers) and are valid until the list is next changed.
package list

// Node size limits of list-max-listpack-size -1..-5, and the byte cap of count-limited nodes, in
// bytes of allocation (a chunk's header included; each is one of the allocator's size classes).
// They are about twice Redis's (4 KB ... 64 KB, 8 KB): Go keeps some 160 bytes of metadata per
// span, and an 8 KB buffer fills a span alone, where 4 buffers of 18 KB share one (10 KB: 4, 32 KB
// and up: one per 32 KB or more). With these sizes a list's overhead per element stays below
// Redis's (see TestLongListStaysPacked); Redis 7.0 shows nothing of the node size (OBJECT
// ENCODING is always quicklist), so only speed and memory depend on it.
var sizeLimits = [...]int{10240, 18432, 32768, 65536, 131072}

const (
	safetyLimit = 18432
	fillMax     = 1 << 15
)

// packMax is the size up to which a chunk grows by copying itself to a little more than its
// entries need: a small list is one chunk with little slack. Past it, a push that does not fit
// starts a new chunk instead (its fixed cost, a 16-byte header and an 8-byte slot, is under 5% of
// packMax), so that growing copies nothing and leaves no outgrown buffer for the collector, until
// a list is large enough for its chunks to double (see grow). A list of 256-byte elements is thus
// one 288-byte chunk per element while short: building 20 of them one push at a time allocated
// 16,240 bytes per list for 5,456 kept when its one buffer grew by copying, and allocates 6,192
// for 6,024 (BenchmarkSmallCollections).
const packMax = 512

// List is a list value. The zero value is not usable; call New.
//
// A list of one chunk keeps it in one, and needs no other allocation: 24 bytes of header and one
// chunk the size of its entries. A longer one keeps its chunks in d.
type List struct {
	one  [1]*chunk // the chunk of a one-chunk list (nil while empty); unused once d is set
	d    *deque
	fill int32
}

// New returns an empty list whose nodes follow the list-max-listpack-size value fill.
func New(fill int) *List {
	fill = min(max(fill, -len(sizeLimits)), fillMax)
	return &List{fill: int32(fill)}
}

// Len returns the number of elements.
func (l *List) Len() int {
	switch {
	case l.d != nil:
		return l.d.count
	case l.one[0] != nil:
		return int(l.one[0].n)
	}
	return 0
}

// counted adds delta to the element count (which a one-chunk list reads from its chunk) after
// the counts of chunks changed in ways the prefix index cannot follow.
func (l *List) counted(delta int) {
	if d := l.d; d != nil {
		d.count += delta
		d.changed()
	}
}

// countedAt is counted after a change of delta elements in chunk i alone: the prefix index
// follows it, unless i is the first chunk (every sum would move; a front push must stay O(1)).
func (l *List) countedAt(i int32, delta int) {
	d := l.d
	if d == nil {
		return
	}
	d.count += delta
	if p := d.idx; p != nil && p.valid {
		if i == d.lo {
			p.valid = false
			return
		}
		for j := int(i-d.lo) + 1; j < len(p.sums); j++ {
			p.sums[j] += delta
		}
	}
}

// Encoding names the representation as Redis 7.0's OBJECT ENCODING does: every list is a
// quicklist there (the "listpack" list encoding arrived in Redis 7.2).
func (l *List) Encoding() string { return "quicklist" }

// byteLimit is the number of bytes of entries a chunk may grow to.
func (l *List) byteLimit() int {
	if l.fill < 0 {
		return sizeLimits[-l.fill-1] - hdrSize
	}
	return safetyLimit - hdrSize
}

// countLimit is the number of entries a node may hold.
func (l *List) countLimit() int {
	if l.fill < 0 {
		return 1 << 30
	}
	return max(int(l.fill), 1)
}

// room reports whether c may take one more entry of add bytes. An empty chunk takes anything, so
// an element larger than the limit sits in a chunk of its own.
func (l *List) room(c *chunk, add int) bool {
	return c.n == 0 || c.size()+add <= l.byteLimit() && int(c.n) < l.countLimit()
}

// over reports whether c must be split: it holds more than one entry and exceeds a limit.
func (l *List) over(c *chunk) bool {
	return c.n > 1 && (c.size() > l.byteLimit() || int(c.n) > l.countLimit())
}

// PushFront adds v at the head.
func (l *List) PushFront(v []byte) {
	e := encode(v)
	l.endFor(e.size, true).putFront(&e)
	l.counted(1)
}

// PushBack adds v at the tail.
func (l *List) PushBack(v []byte) {
	e := encode(v)
	l.endFor(e.size, false).putBack(&e)
	if l.d != nil {
		l.countedAt(l.d.hi-1, 1)
	}
}

// endFor returns the chunk at the head (front) or the tail of the list with k free bytes on that
// side: the end chunk if it has them, or can make them as grow says, else a new chunk there.
func (l *List) endFor(k int, front bool) *chunk {
	ns, lo, hi := l.nodes()
	if lo < hi {
		i := hi - 1
		if front {
			i = lo
		}
		c := ns[i]
		if l.room(c, k) {
			if c.roomAt(k, front) {
				return c
			}
			if g := l.grow(c, k, front); g != nil {
				ns[i] = g
				return g
			}
		}
	}
	at := lo
	if !front {
		at = hi
	}
	return l.addChunk(at, k, front)
}

// grow makes k bytes free on one side of an end chunk that may take them, or returns nil when
// the list should start a new chunk instead. It returns c (the entries moved within it) or a
// larger copy of it, which replaces it:
//
//   - a chunk of up to packMax bytes moves within its buffer if it can, or grows to a quarter
//     more than its entries need (rounded up to the size class, at most packMax). Growing to the
//     exact need copied a chunk of 16-byte entries on almost every push: building 20-element
//     lists allocated 3,320 bytes per list for 408 kept, and the outgrown copies, until the
//     collector's next cycle, counted in used_memory and RSS (RSS twice the live bytes); with a
//     quarter more, 1,432 bytes for the same 408 (BenchmarkSmallCollections);
//   - a larger chunk moves within its buffer when a quarter of its entries' size stays free
//     after the push, so that moving is amortized;
//   - a chunk of an eighth of the size limit or more (only large lists make them, see addChunk)
//     doubles, up to the limit; at the limit it moves within the buffer while it has the room;
//   - any other chunk stays as it is and the list gets a new one.
func (l *List) grow(c *chunk, k int, front bool) *chunk {
	used, free, limit := c.size(), int(c.cap)-c.size(), l.byteLimit()
	small := used+k <= packMax
	switch {
	case free >= k && (small || free-k >= used/4):
		c.shift(k, front)
		return c
	case small:
		return c.moved(min(packMax, used+k+(used+k)/4), k, front)
	case int(c.cap) >= limit/8 && int(c.cap) < limit:
		return c.moved(max(used+k, min(2*int(c.cap), limit)), k, front)
	case free >= k && int(c.cap) >= limit:
		c.shift(k, front)
		return c
	}
	return nil
}

// newCap is the room to give a new end chunk for entries of k bytes, in whole entries of k bytes:
// one while the list is short, then an eighth of the list's length (slack of at most an eighth at
// each end), up to a quarter of the size limit, from where grow doubles it.
func (l *List) newCap(k int) int {
	m := min(l.Len()/8, l.countLimit(), l.byteLimit()/4/k)
	return k * max(m, 1)
}

// PopFront removes and returns the head element; ok is false when the list is empty. sc is
// scratch space for an element stored as an integer (20 bytes suffice).
func (l *List) PopFront(sc []byte) (v []byte, ok bool) {
	ns, lo, hi := l.nodes()
	if lo == hi {
		return nil, false
	}
	c := ns[lo]
	v, next := decode(c.data(), 0, sc)
	c.off += uint32(next)
	l.dropped(c, lo)
	return v, true
}

// PopBack removes and returns the tail element, as PopFront.
func (l *List) PopBack(sc []byte) (v []byte, ok bool) {
	ns, lo, hi := l.nodes()
	if lo == hi {
		return nil, false
	}
	c := ns[hi-1]
	start := entryStart(c.data(), c.size())
	v, _ = decode(c.data(), start, sc)
	c.end = c.off + uint32(start)
	l.dropped(c, hi-1)
	return v, true
}

// dropped accounts for one entry removed from chunk i, removing the chunk once empty.
func (l *List) dropped(c *chunk, i int32) {
	c.n--
	l.countedAt(i, -1)
	if c.n == 0 {
		l.removeNode(i)
	}
}

// Index returns element i (0 <= i < Len()).
func (l *List) Index(i int, sc []byte) []byte {
	ns, ni, k := l.locate(i)
	c := ns[ni]
	v, _ := decode(c.data(), c.offsetOf(k), sc)
	return v
}

// Set replaces element i (0 <= i < Len()) with v.
func (l *List) Set(i int, v []byte) {
	ns, ni, k := l.locate(i)
	c := ns[ni]
	r := c.offsetOf(k)
	e := encode(v)
	old := skip(c.data(), r) - r
	if old == e.size {
		e.put(c.data()[r : r+old])
		return
	}
	c.cut(r, old)
	c.n--
	l.insertInto(ns, ni, r, &e)
}

// Insert adds v so that it becomes element i (0 <= i <= Len()).
func (l *List) Insert(i int, v []byte) {
	switch i {
	case 0:
		l.PushFront(v)
		return
	case l.Len():
		l.PushBack(v)
		return
	}
	ns, ni, k := l.locate(i)
	e := encode(v)
	l.countedAt(ni, 1) // first: a split may turn a one-chunk list into a deque, counting its chunk
	l.insertInto(ns, ni, ns[ni].offsetOf(k), &e)
}

// insertInto writes e at offset r of chunk ni, moving the smaller part of the chunk aside (and
// growing it when it lacks the room), then splits it if it went over the limits.
func (l *List) insertInto(ns []*chunk, ni int32, r int, e *enc) {
	c := ns[ni]
	front := r <= c.size()-r
	if !c.roomAt(e.size, front) {
		c = l.reserve(c, e.size, front)
		ns[ni] = c
	}
	c.insertAt(r, e, front)
	l.fix(ni)
}

// reserve returns c, or a larger copy of it, with k bytes free on one side, for an insert in the
// middle or a merge: a chunk moves within its buffer when that is amortized (or it is small),
// else grows to the size its entries need, with a quarter more once past packMax.
func (l *List) reserve(c *chunk, k int, front bool) *chunk {
	used, free := c.size(), int(c.cap)-c.size()
	need := used + k
	if free >= k && (need <= packMax || free-k >= used/4) {
		c.shift(k, front)
		return c
	}
	want := need
	if need > packMax {
		want = max(need, min(need+need/4, l.byteLimit()))
	}
	return c.moved(want, k, front)
}

// Find returns the index of the first element equal to v, or -1.
func (l *List) Find(v []byte) int {
	m := newMatcher(v)
	base := 0
	ns, lo, hi := l.nodes()
	for i := lo; i < hi; i++ {
		d := ns[i].data()
		for r, k := 0, 0; r < len(d); r, k = skip(d, r), k+1 {
			if m.at(d, r) {
				return base + k
			}
		}
		base += int(ns[i].n)
	}
	return -1
}

// locate returns the chunk holding element i and i's position in it, walking chunk counts from
// the nearer end of the list.
func (l *List) locate(i int) (ns []*chunk, ni int32, k int) {
	ns, lo, hi := l.nodes()
	count := l.Len()
	if d := l.d; d != nil && int(hi-lo) > prefixMin {
		// The walk's expected length in chunks, from the nearer end.
		if steps := min(i, count-1-i) * int(hi-lo) / count; steps > prefixMin {
			ni, k = d.find(i)
			return ns, ni, k
		}
	}
	if i < count/2 {
		for ni = lo; i >= int(ns[ni].n); ni++ {
			i -= int(ns[ni].n)
		}
		return ns, ni, i
	}
	j := count - 1 - i
	for ni = hi - 1; j >= int(ns[ni].n); ni-- {
		j -= int(ns[ni].n)
	}
	return ns, ni, int(ns[ni].n) - 1 - j
}

// fix splits chunk i in two, and the halves again, while they exceed the limits (after an insert
// or a replacement grew it).
func (l *List) fix(i int32) {
	for todo := 1; todo > 0; {
		ns, _, _ := l.nodes()
		c := ns[i]
		if !l.over(c) {
			i, todo = i+1, todo-1
			continue
		}
		d := c.data()
		half, r, k := len(d)/2, 0, 0
		for r < half || k == 0 {
			r, k = skip(d, r), k+1
		}
		if k == int(c.n) { // a huge last entry: split before it instead
			r, k = entryStart(d, len(d)), k-1
		}
		j := l.addNode(i + 1) // before the split: a one-chunk list's deque counts its entries
		l.d.ns[j] = c.splitAt(r, k)
		i, todo = j-1, todo+1
	}
}

// Clone returns a deep copy that shares no memory with l.
func (l *List) Clone() any {
	c := &List{fill: l.fill}
	ns, lo, hi := l.nodes()
	switch {
	case hi-lo == 1:
		c.one[0] = ns[lo].clone()
	case hi > lo:
		c.d = &deque{ns: make([]*chunk, hi-lo), hi: hi - lo, count: l.d.count}
		for i, ch := range ns[lo:hi] {
			c.d.ns[i] = ch.clone()
		}
	}
	return c
}
