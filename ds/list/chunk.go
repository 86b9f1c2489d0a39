package list

import (
	"math"
	"slices"
	"unsafe"
)

// chunk is one node of a list: a run of entries and its header in a single pointer-free
// allocation, the header first, then cap bytes of which [off, end) hold the entries. Free space
// before off and after end lets pushes and pops at either end work without moving the rest;
// when one side runs out, the data is moved within the buffer or copied to a larger chunk
// (growth policy: List.grow), and if both sides have been used the spare room is shared between
// them, which keeps a chunk fed at both ends amortized O(1) per push.
//
// A *chunk points at the start of a []byte allocation made by newChunk: the collector keeps the
// allocation alive through it and never scans it, and the header costs 16 bytes where a slice
// in a node slot would cost 24 plus the counts. The 32-bit fields limit one chunk to 4 GB.
type chunk struct {
	cap uint32 // bytes after the header
	off uint32 // start of the entries
	end uint32 // end of the entries
	n   uint32 // entries
}

const hdrSize = int(unsafe.Sizeof(chunk{}))

// maxChunk is the most bytes of entries one chunk holds.
const maxChunk = math.MaxUint32 - hdrSize

// newChunk returns an empty chunk with room for at least want bytes of entries: the allocation
// is rounded up to the allocator's size class, and all of it is usable. Its entries will start
// at the end of the buffer when front (it is to be filled from the front), else at its start.
func newChunk(want int, front bool) *chunk {
	if want > maxChunk || want < 1 {
		panic("list: element too large for a list node")
	}
	b := slices.Grow([]byte(nil), hdrSize+want)
	c := (*chunk)(unsafe.Pointer(unsafe.SliceData(b)))
	c.cap = uint32(cap(b) - hdrSize)
	if front {
		c.off, c.end = c.cap, c.cap
	}
	return c
}

// buf returns the chunk's bytes after the header.
func (c *chunk) buf() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(c)), hdrSize+int(c.cap))[hdrSize:]
}

func (c *chunk) data() []byte { return c.buf()[c.off:c.end] }
func (c *chunk) size() int    { return int(c.end - c.off) }

// roomAt reports whether k bytes are free before the entries (front) or after them.
func (c *chunk) roomAt(k int, front bool) bool {
	if front {
		return int(c.off) >= k
	}
	return int(c.cap-c.end) >= k
}

// offsetOf returns the offset in data() of entry k, walking from the nearer end.
func (c *chunk) offsetOf(k int) int {
	d := c.data()
	if k <= int(c.n)/2 {
		r := 0
		for ; k > 0; k-- {
			r = skip(d, r)
		}
		return r
	}
	r := len(d)
	for j := int(c.n); j > k; j-- {
		r = entryStart(d, r)
	}
	return r
}

// putBack and putFront write e after or before the entries; the room must be there (roomAt).
func (c *chunk) putBack(e *enc) {
	e.put(c.buf()[c.end : int(c.end)+e.size])
	c.end += uint32(e.size)
	c.n++
}

func (c *chunk) putFront(e *enc) {
	c.off -= uint32(e.size)
	e.put(c.buf()[c.off : int(c.off)+e.size])
	c.n++
}

// insertAt writes e at offset r of data(), moving the part of the entries before r towards the
// front (front) or the part after it towards the back; the room must be there on that side.
func (c *chunk) insertAt(r int, e *enc, front bool) {
	b, k := c.buf(), e.size
	off, end := int(c.off), int(c.end)
	if front {
		copy(b[off-k:], b[off:off+r])
		c.off -= uint32(k)
	} else {
		copy(b[off+r+k:], b[off+r:end])
		c.end += uint32(k)
	}
	at := int(c.off) + r
	e.put(b[at : at+k])
	c.n++
}

// cut removes the k bytes at offset r of data() (whole entries; the caller fixes n), moving the
// smaller part of the chunk.
func (c *chunk) cut(r, k int) {
	b, off, end := c.buf(), int(c.off), int(c.end)
	if r < end-off-r-k {
		copy(b[off+k:], b[off:off+r])
		c.off += uint32(k)
		return
	}
	copy(b[off+r:], b[off+r+k:end])
	c.end -= uint32(k)
}

// place returns where the entries of c start in a buffer of capacity to that must leave k free
// bytes on one side: all the spare room goes to that side, unless the other side has been used
// (it has free space left), in which case it keeps half.
func (c *chunk) place(to, k int, front bool) int {
	used := c.size()
	free := to - used
	other := 0
	if used > 0 && (front && c.end < c.cap || !front && c.off > 0) {
		other = (free - k) / 2
	}
	if front {
		return free - other
	}
	return other
}

// shift moves the entries within the buffer so that k bytes are free on one side; the chunk
// must have k free bytes in all.
func (c *chunk) shift(k int, front bool) {
	off := c.place(int(c.cap), k, front)
	used := c.size()
	b := c.buf()
	copy(b[off:], b[c.off:c.end])
	c.off, c.end = uint32(off), uint32(off+used)
}

// moved returns a copy of c in a new chunk with room for at least want bytes of entries and k
// bytes free on one side (want >= c.size()+k).
func (c *chunk) moved(want, k int, front bool) *chunk {
	m := newChunk(want, false)
	off := c.place(int(m.cap), k, front)
	used := copy(m.buf()[off:], c.data())
	m.off, m.end, m.n = uint32(off), uint32(off+used), c.n
	return m
}

// clone returns a copy of c of the size its entries need.
func (c *chunk) clone() *chunk {
	return c.moved(max(c.size(), 1), 0, false)
}

// splitAt moves the entries from offset r of data() (entry index k) into a new chunk of the
// size they need, which it returns; the receiver keeps its buffer.
func (c *chunk) splitAt(r, k int) *chunk {
	d := c.data()
	t := newChunk(len(d)-r, false)
	t.end = uint32(copy(t.buf(), d[r:]))
	t.n = c.n - uint32(k)
	c.end = c.off + uint32(r)
	c.n = uint32(k)
	return t
}
