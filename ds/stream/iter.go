package stream

// Iter walks the live entries of a range, forward or backward. The stream must not change
// while it is used; the fields and values Next returns are valid until the next call.
type Iter struct {
	s          *Stream
	start, end ID
	rev        bool
	bi         int // current block
	cur        cursor
	offs       []int // reverse: the current block's entry offsets
	oi         int   // reverse: next offset to read, counting down
	fv         [][]byte
	e          entry
	done       bool
	sc         *Scratch // where fv and offs are kept for the next iterator, or nil
}

// Scratch holds an iterator's buffers (the fields and values Next returns, a reverse walk's
// offsets) from one iterator to the next, so that a warm walk allocates nothing. One Scratch
// serves one iterator at a time, and the fields a previous iterator returned are overwritten.
type Scratch struct {
	fv   [][]byte
	offs []int
}

// Range returns an iterator over the live entries with start <= ID <= end, in ID order or
// (rev) the reverse.
func (s *Stream) Range(start, end ID, rev bool) Iter { return s.RangeWith(start, end, rev, nil) }

// RangeWith is Range with its buffers taken from, and kept in, sc (nil: its own).
func (s *Stream) RangeWith(start, end ID, rev bool, sc *Scratch) Iter {
	it := Iter{s: s, start: start, end: end, rev: rev, bi: -1, sc: sc}
	if sc != nil {
		it.fv, it.offs = sc.fv[:0], sc.offs[:0]
	}
	if len(s.blocks) == 0 || end.Less(start) {
		it.done = true
		return it
	}
	if rev {
		it.bi = s.findBlock(end)
		it.loadRev()
	} else {
		it.bi = s.findBlock(start)
		if it.bi+1 < len(s.blocks) && s.blocks[it.bi].last.Less(start) {
			it.bi++ // all below start; the next block's master is above it
		}
		it.cur = cursor{b: s.blocks[it.bi]}
		it.cur.seek(start)
	}
	return it
}

func (it *Iter) loadRev() {
	it.offs = it.s.blocks[it.bi].offsets(it.offs[:0])
	it.oi = len(it.offs) - 1
	if it.sc != nil {
		it.sc.offs = it.offs
	}
}

// keep hands a grown fv back to the scratch.
func (it *Iter) keep() {
	if it.sc != nil && cap(it.fv) > cap(it.sc.fv) {
		it.sc.fv = it.fv
	}
}

// Next returns the next entry; ok false when the range is done.
func (it *Iter) Next() (id ID, fv [][]byte, ok bool) {
	if it.done {
		return ID{}, nil, false
	}
	if it.rev {
		return it.prev()
	}
	for {
		var more bool
		it.fv, more = it.cur.next(&it.e, it.fv)
		it.keep()
		if !more {
			it.bi++
			if it.bi >= len(it.s.blocks) {
				it.done = true
				return ID{}, nil, false
			}
			it.cur = cursor{b: it.s.blocks[it.bi]}
			continue
		}
		if it.e.flags&flagDeleted != 0 || it.e.id.Less(it.start) {
			continue
		}
		if it.end.Less(it.e.id) {
			it.done = true
			return ID{}, nil, false
		}
		return it.e.id, it.fv, true
	}
}

func (it *Iter) prev() (ID, [][]byte, bool) {
	for {
		if it.oi < 0 {
			it.bi--
			if it.bi < 0 {
				it.done = true
				return ID{}, nil, false
			}
			it.loadRev()
			continue
		}
		c := cursor{b: it.s.blocks[it.bi], off: it.offs[it.oi]}
		it.oi--
		it.fv, _ = c.next(&it.e, it.fv)
		it.keep()
		if it.e.flags&flagDeleted != 0 || it.end.Less(it.e.id) {
			continue
		}
		if it.e.id.Less(it.start) {
			it.done = true
			return ID{}, nil, false
		}
		return it.e.id, it.fv, true
	}
}

// RaxNodes is the node count Redis's radix tree of these block keys (16-byte big-endian
// master IDs) has in its compressed form (XINFO radix-tree-nodes).
func (s *Stream) RaxNodes() int {
	if len(s.blocks) == 0 {
		return 1
	}
	keys := make([][16]byte, len(s.blocks))
	for i, b := range s.blocks {
		putBE(keys[i][:8], b.master.Ms)
		putBE(keys[i][8:], b.master.Seq)
	}
	return raxCount(keys, 0)
}

func putBE(b []byte, v uint64) {
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

// raxCount counts the nodes under the node reached at depth by keys (sorted, distinct, all 16
// bytes): a compressed node runs to the next branching point or to the end, a branching node
// has a child node per next byte, and every key ends in a leaf node.
func raxCount(keys [][16]byte, depth int) int {
	if depth == 16 {
		return 1 // the leaf
	}
	if len(keys) == 1 {
		return 2 // a compressed node to the end, then the leaf
	}
	l := 0
	for depth+l < 16 && keys[0][depth+l] == keys[len(keys)-1][depth+l] {
		l++
	}
	n := 1 // this node: compressed (l > 0), then the branching node, or branching itself
	if l > 0 {
		n++
	}
	d := depth + l
	for i := 0; i < len(keys); {
		j := i
		for j < len(keys) && keys[j][d] == keys[i][d] {
			j++
		}
		n += raxCount(keys[i:j], d+1)
		i = j
	}
	return n
}
