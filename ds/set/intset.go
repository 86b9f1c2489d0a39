package set

import (
	"encoding/binary"
	"math"
)

// intset is Redis's intset: the members as one sorted array of little-endian integers, all of
// the width of the widest member (2, 4 or 8 bytes). It grows in place and never narrows, as in
// Redis, so its memory is Redis's to the byte.
// It is a view of the set's small storage (width and b; a width of 0 acts as 2).
type intset small

func widthOf(v int64) uint8 {
	switch {
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 4
	}
	return 8
}

func (is *intset) w() int { return max(int(is.width), 2) }

func (is *intset) len() int { return len(is.b) / is.w() }

// at returns the i'th smallest member.
func (is *intset) at(i int) int64 { return readInt(is.b[i*is.w():], is.w()) }

func readInt(b []byte, w int) int64 {
	switch w {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	}
	return int64(binary.LittleEndian.Uint64(b))
}

func writeInt(b []byte, w int, v int64) {
	switch w {
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, uint64(v))
	}
}

// search returns v's index, or the index where it would be inserted and false.
func (is *intset) search(v int64) (int, bool) {
	lo, hi := 0, is.len()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch x := is.at(mid); {
		case x == v:
			return mid, true
		case x < v:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return lo, false
}

func (is *intset) has(v int64) bool {
	if widthOf(v) > uint8(is.w()) {
		return false
	}
	_, ok := is.search(v)
	return ok
}

// add inserts v and reports whether it was absent.
func (is *intset) add(v int64) bool {
	if nw := widthOf(v); int(nw) > is.w() {
		is.widen(nw)
	}
	i, ok := is.search(v)
	if ok {
		return false
	}
	w := is.w()
	is.b = append(grow(is.b, w), make([]byte, w)...)
	copy(is.b[(i+1)*w:], is.b[i*w:len(is.b)-w])
	writeInt(is.b[i*w:], w, v)
	return true
}

// widen rewrites every member at width nw.
func (is *intset) widen(nw uint8) {
	n, w := is.len(), is.w()
	nb := make([]byte, n*int(nw), (n+1)*int(nw))
	for i := range n {
		writeInt(nb[i*int(nw):], int(nw), readInt(is.b[i*w:], w))
	}
	is.b, is.width = nb, nw
}

// remove deletes v and reports whether it was present.
func (is *intset) remove(v int64) bool {
	if widthOf(v) > uint8(is.w()) {
		return false
	}
	i, ok := is.search(v)
	if !ok {
		return false
	}
	w := is.w()
	copy(is.b[i*w:], is.b[(i+1)*w:])
	is.b = trim(is.b[:len(is.b)-w])
	return true
}

// trim returns b in a right-sized buffer when it uses less than half of its capacity, so a
// shrinking small set gives its memory back as Redis's realloc does.
func trim(b []byte) []byte {
	if cap(b) > 2*len(b)+64 {
		return append([]byte(nil), b...)
	}
	return b
}
