package list

import "slices"

// node is a run of entries packed in b[off:]. Free space before off and free capacity after
// len(b) let pushes and pops at either end work without moving the rest of the node; when one
// side runs out, the data is moved (or reallocated) so that both sides get room again if both
// have been used, which keeps a node fed at both ends amortized O(1) per push.
type node struct {
	b   []byte
	off int32
	n   int32 // entries
}

func (nd *node) data() []byte { return nd.b[nd.off:] }
func (nd *node) size() int    { return len(nd.b) - int(nd.off) }

// offsetOf returns the offset in data() of entry k, walking from the nearer end.
func (nd *node) offsetOf(k int) int {
	d := nd.data()
	if k <= int(nd.n)/2 {
		r := 0
		for ; k > 0; k-- {
			r = skip(d, r)
		}
		return r
	}
	r := len(d)
	for j := int(nd.n); j > k; j-- {
		r = entryStart(d, r)
	}
	return r
}

func (nd *node) pushBack(e *enc, limit int) {
	nd.makeRoom(e.size, false, limit)
	end := len(nd.b)
	nd.b = nd.b[:end+e.size]
	e.put(nd.b[end:])
	nd.n++
}

func (nd *node) pushFront(e *enc, limit int) {
	nd.makeRoom(e.size, true, limit)
	nd.off -= int32(e.size)
	e.put(nd.b[nd.off : int(nd.off)+e.size])
	nd.n++
}

// insertAt writes e at offset r of data(), moving the smaller part of the node aside.
func (nd *node) insertAt(r int, e *enc, limit int) {
	k := e.size
	if r <= nd.size()-r {
		nd.makeRoom(k, true, limit)
		off := int(nd.off)
		copy(nd.b[off-k:], nd.b[off:off+r])
		nd.off -= int32(k)
	} else {
		nd.makeRoom(k, false, limit)
		start, end := int(nd.off)+r, len(nd.b)
		nd.b = nd.b[:end+k]
		copy(nd.b[start+k:], nd.b[start:end])
	}
	at := int(nd.off) + r
	e.put(nd.b[at : at+k])
	nd.n++
}

// cut removes the k bytes at offset r of data() (whole entries; the caller fixes n), moving the
// smaller part of the node.
func (nd *node) cut(r, k int) {
	off, end := int(nd.off), len(nd.b)
	if r < end-off-r-k {
		copy(nd.b[off+k:], nd.b[off:off+r])
		nd.off += int32(k)
		return
	}
	copy(nd.b[off+r:], nd.b[off+r+k:end])
	nd.b = nd.b[:end-k]
}

// makeRoom ensures k free bytes before the data (front) or after it. It moves the data within
// the buffer when enough is free there, or reallocates; the side not asked for keeps half of
// the spare room when it has been used, so a node used at both ends stays balanced, while a
// node filled from one end gets all the room on that end.
func (nd *node) makeRoom(k int, front bool, limit int) {
	off, end, c := int(nd.off), len(nd.b), cap(nd.b)
	if front && off >= k || !front && c-end >= k {
		return
	}
	used := end - off
	free := c - used
	buf := nd.b[:c]
	if free < k || (c < limit && free-k < used/4) {
		want := growCap(used+k, limit)
		if used == 0 {
			// A node's first entry gets no slack: most lists of a big keyspace hold one or two
			// elements, and slack there doubled their memory (and the bytes the pushes touched).
			want = k
		}
		buf = slices.Grow([]byte(nil), want)
		buf = buf[:cap(buf)]
		free = len(buf) - used
	}
	other := 0
	if used > 0 && (front && end < c || !front && off > 0) {
		other = (free - k) / 2
	}
	newOff := other
	if front {
		newOff = free - other
	}
	copy(buf[newOff:], nd.b[off:end])
	nd.b, nd.off = buf[:newOff+used], int32(newOff)
}

// growCap is the capacity to reallocate a node to when it needs need bytes: doubling while small,
// a quarter more once larger, and never past the node's size limit unless need itself is.
func growCap(need, limit int) int {
	c := need * 2
	if need > 256 {
		c = need + need/4 + 64
	}
	return max(need, min(c, limit))
}

// splitAt moves the entries from offset r of data() (entry index k) into a new node, which it
// returns; the receiver keeps its buffer.
func (nd *node) splitAt(r, k int) node {
	d := nd.data()
	tail := node{b: slices.Clone(d[r:]), n: nd.n - int32(k)}
	nd.b = nd.b[:int(nd.off)+r]
	nd.n = int32(k)
	return tail
}
