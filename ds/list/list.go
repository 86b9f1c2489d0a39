// Package list is the list value: a sequence of byte strings kept, like Redis's quicklist, as a
// deque of nodes that each pack many elements into one buffer (see entry.go for the layout).
// Pushes and pops at either end are O(1); reaching the middle walks node counts from the nearer
// end, then one node's entries. Nodes are limited by list-max-listpack-size as in Redis 7.0: a
// negative value caps a node's bytes, a positive one its entries (with a safety cap on bytes).
//
// A List is touched only by the holder of its shard's token; it has no locks and knows nothing
// of RESP. Values returned by its methods alias its memory (or the caller's scratch buffer for
// elements stored as integers) and are valid until the list is next changed.
package list

import "slices"

// Node size limits of list-max-listpack-size -1..-5, and the byte cap of count-limited nodes.
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

// List is a list value. The zero value is not usable; call New.
type List struct {
	ns     []node // ns[lo:hi] hold the elements in order; the rest is room for nodes at either end
	lo, hi int32
	fill   int32
	count  int
	first  [1]node // the node slot of a one-node list, so ns needs no allocation of its own
}

// New returns an empty list whose nodes follow the list-max-listpack-size value fill.
func New(fill int) *List {
	fill = min(max(fill, -len(sizeLimits)), fillMax)
	return &List{fill: int32(fill)}
}

// Len returns the number of elements.
func (l *List) Len() int { return l.count }

// Encoding names the representation as Redis 7.0's OBJECT ENCODING does: every list is a
// quicklist there (the "listpack" list encoding arrived in Redis 7.2).
func (l *List) Encoding() string { return "quicklist" }

// byteLimit is the size a node's buffer may grow to.
func (l *List) byteLimit() int {
	if l.fill < 0 {
		return sizeLimits[-l.fill-1]
	}
	return safetyLimit
}

// countLimit is the number of entries a node may hold.
func (l *List) countLimit() int {
	if l.fill < 0 {
		return 1 << 30
	}
	return max(int(l.fill), 1)
}

// room reports whether nd may take one more entry of add bytes. An empty node takes anything, so
// an element larger than the limit sits in a node of its own.
func (l *List) room(nd *node, add int) bool {
	return nd.n == 0 || nd.size()+add <= l.byteLimit() && int(nd.n) < l.countLimit()
}

// over reports whether nd must be split: it holds more than one entry and exceeds a limit.
func (l *List) over(nd *node) bool {
	return nd.n > 1 && (nd.size() > l.byteLimit() || int(nd.n) > l.countLimit())
}

// PushFront adds v at the head.
func (l *List) PushFront(v []byte) {
	e := encode(v)
	if l.lo == l.hi || !l.room(&l.ns[l.lo], e.size) {
		l.addNode(l.lo)
	}
	l.ns[l.lo].pushFront(&e, l.byteLimit())
	l.count++
}

// PushBack adds v at the tail.
func (l *List) PushBack(v []byte) {
	e := encode(v)
	if l.lo == l.hi || !l.room(&l.ns[l.hi-1], e.size) {
		l.addNode(l.hi)
	}
	l.ns[l.hi-1].pushBack(&e, l.byteLimit())
	l.count++
}

// PopFront removes and returns the head element; ok is false when the list is empty. sc is
// scratch space for an element stored as an integer (20 bytes suffice).
func (l *List) PopFront(sc []byte) (v []byte, ok bool) {
	if l.count == 0 {
		return nil, false
	}
	nd := &l.ns[l.lo]
	v, next := decode(nd.data(), 0, sc)
	nd.off += int32(next)
	l.dropped(nd, l.lo)
	return v, true
}

// PopBack removes and returns the tail element, as PopFront.
func (l *List) PopBack(sc []byte) (v []byte, ok bool) {
	if l.count == 0 {
		return nil, false
	}
	nd := &l.ns[l.hi-1]
	start := entryStart(nd.data(), nd.size())
	v, _ = decode(nd.data(), start, sc)
	nd.b = nd.b[:int(nd.off)+start]
	l.dropped(nd, l.hi-1)
	return v, true
}

// dropped accounts for one entry removed from node i, removing the node once empty.
func (l *List) dropped(nd *node, i int32) {
	nd.n--
	l.count--
	if nd.n == 0 {
		l.removeNode(i)
	}
}

// Index returns element i (0 <= i < Len()).
func (l *List) Index(i int, sc []byte) []byte {
	ni, k := l.locate(i)
	nd := &l.ns[ni]
	v, _ := decode(nd.data(), nd.offsetOf(k), sc)
	return v
}

// Set replaces element i (0 <= i < Len()) with v.
func (l *List) Set(i int, v []byte) {
	ni, k := l.locate(i)
	nd := &l.ns[ni]
	r := nd.offsetOf(k)
	e := encode(v)
	old := skip(nd.data(), r) - r
	if old == e.size {
		e.put(nd.data()[r : r+old])
		return
	}
	nd.cut(r, old)
	nd.n--
	nd.insertAt(r, &e, l.byteLimit())
	l.fix(ni)
}

// Insert adds v so that it becomes element i (0 <= i <= Len()).
func (l *List) Insert(i int, v []byte) {
	switch i {
	case 0:
		l.PushFront(v)
		return
	case l.count:
		l.PushBack(v)
		return
	}
	ni, k := l.locate(i)
	nd := &l.ns[ni]
	e := encode(v)
	nd.insertAt(nd.offsetOf(k), &e, l.byteLimit())
	l.count++
	l.fix(ni)
}

// Find returns the index of the first element equal to v, or -1.
func (l *List) Find(v []byte) int {
	m := newMatcher(v)
	base := 0
	for i := l.lo; i < l.hi; i++ {
		d := l.ns[i].data()
		for r, k := 0, 0; r < len(d); r, k = skip(d, r), k+1 {
			if m.at(d, r) {
				return base + k
			}
		}
		base += int(l.ns[i].n)
	}
	return -1
}

// locate returns the node holding element i and i's position in it, walking node counts from
// the nearer end of the list.
func (l *List) locate(i int) (ni int32, k int) {
	if i < l.count/2 {
		for ni = l.lo; i >= int(l.ns[ni].n); ni++ {
			i -= int(l.ns[ni].n)
		}
		return ni, i
	}
	j := l.count - 1 - i
	for ni = l.hi - 1; j >= int(l.ns[ni].n); ni-- {
		j -= int(l.ns[ni].n)
	}
	return ni, int(l.ns[ni].n) - 1 - j
}

// fix splits node i in two, and the halves again, while they exceed the limits (after an
// insert or a replacement grew it).
func (l *List) fix(i int32) {
	for todo := 1; todo > 0; {
		nd := &l.ns[i]
		if !l.over(nd) {
			i, todo = i+1, todo-1
			continue
		}
		d := nd.data()
		half, r, k := len(d)/2, 0, 0
		for r < half || k == 0 {
			r, k = skip(d, r), k+1
		}
		if k == int(nd.n) { // a huge last entry: split before it instead
			r, k = entryStart(d, len(d)), k-1
		}
		tail := nd.splitAt(r, k)
		j := l.addNode(i + 1)
		l.ns[j] = tail
		i, todo = j-1, todo+1
	}
}

// Clone returns a deep copy that shares no memory with l.
func (l *List) Clone() any {
	c := &List{fill: l.fill, count: l.count, ns: make([]node, l.hi-l.lo)}
	c.hi = int32(len(c.ns))
	for i, nd := range l.ns[l.lo:l.hi] {
		c.ns[i] = node{b: slices.Clone(nd.data()), n: nd.n}
	}
	return c
}
