package list

// The nodes of a list sit in l.ns[l.lo:l.hi] with free slots on both sides, so a node is added
// or removed at either end in O(1) and in the middle by moving the nodes of the shorter side.
//
// A node emptied at an end of a list that keeps at least spareMinNodes nodes leaves its buffer,
// as a spare, in the free slot just past that end (l.lo-1 or l.hi); the next node added at
// either end reuses it, so a list used as a queue allocates nothing in steady state. At most one
// spare exists, and every other free slot is a zero node. Short lists keep no spare: it could
// double their memory.
const spareMinNodes = 3

// takeSpare removes the spare buffer from its slot and returns it (emptied), or nil.
func (l *List) takeSpare() []byte {
	for _, s := range [2]int32{l.lo - 1, l.hi} {
		if s >= 0 && int(s) < len(l.ns) && l.ns[s].b != nil {
			b := l.ns[s].b[:0]
			l.ns[s] = node{}
			return b
		}
	}
	return nil
}

// addNode inserts an empty node before absolute position at (l.lo <= at <= l.hi) and returns
// the new node's position; the nodes before it may have moved one slot down.
func (l *List) addNode(at int32) int32 {
	atEnd := at == l.lo || at == l.hi
	spare := l.takeSpare()
	canLeft, canRight := l.lo > 0, int(l.hi) < len(l.ns)
	if at == l.lo && !canLeft || at == l.hi && !canRight || !canLeft && !canRight {
		at = l.relayout(at)
		canLeft, canRight = l.lo > 0, int(l.hi) < len(l.ns)
	}
	if canLeft && (at-l.lo <= l.hi-at || !canRight) {
		copy(l.ns[l.lo-1:], l.ns[l.lo:at])
		l.lo--
		at--
	} else {
		copy(l.ns[at+1:], l.ns[at:l.hi])
		l.hi++
	}
	l.ns[at] = node{}
	if atEnd {
		l.ns[at].b = spare
	}
	return at
}

// relayout centres the nodes in l.ns, first growing it by a quarter when less than an eighth of
// it would be free after one more node: node slots cost 32 bytes each, so the slack stays small
// next to Redis's separately allocated nodes, while a relayout (O(nodes)) still comes only
// every size/16 additions or more. It returns position at translated to the new layout.
func (l *List) relayout(at int32) int32 {
	n := int(l.hi - l.lo)
	ns, inPlace := l.ns, true
	if size := len(ns); size-n-1 < size/8 || size-n-1 < 2 {
		inPlace = false
		size = n + n/4 + 4
		if n == 0 {
			ns = l.first[:] // most lists stay in one node: no allocation of its own
		} else {
			ns = make([]node, size)
		}
	}
	lo := (len(ns) - n) / 2
	copy(ns[lo:], l.ns[l.lo:l.hi])
	if inPlace { // moved in place: drop the stale copies so their buffers can be freed
		clear(ns[:lo])
		clear(ns[lo+n:])
	} else if len(l.ns) > 0 && &l.ns[0] == &l.first[0] {
		l.first = [1]node{} // nor may the inline slot keep a moved node's buffer alive
	}
	at += int32(lo) - l.lo
	l.ns, l.lo, l.hi = ns, int32(lo), int32(lo+n)
	return at
}

// removeNode deletes the node at absolute position i, moving the nodes of the shorter side, and
// keeps its buffer as the spare when the list is long enough.
func (l *List) removeNode(i int32) {
	b := l.ns[i].b
	l.takeSpare()
	var freed int32
	if i-l.lo < l.hi-1-i {
		copy(l.ns[l.lo+1:], l.ns[l.lo:i])
		freed = l.lo
		l.lo++
	} else {
		copy(l.ns[i:], l.ns[i+1:l.hi])
		l.hi--
		freed = l.hi
	}
	l.ns[freed] = node{}
	if l.hi-l.lo >= spareMinNodes {
		l.ns[freed].b = b[:0]
	}
}
