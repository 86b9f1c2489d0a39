package zset

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
)

// The "listpack" encoding keeps a small set in one buffer: its records in (score, member)
// order, then the member count (2 bytes, little endian; 0xFFFF means "count the records", as
// Redis's listpack header does past 65534). A record is
//
//	score  uvarint h: even h is an integer (zigzag(v) << 1); h == 1 is followed by 8 bytes of
//	       IEEE 754 bits, little endian
//	length uvarint, then the member's bytes
//
// Integral scores take 1-8 bytes like Redis's listpack integers, and -0 is stored as the
// integer 0, as Redis's listpack stores it (ZSCORE answers "0" where a skiplist answers "-0").
// Records have no back length: a reverse walk first collects the offsets it will visit, which
// for a set of listpack size costs less than the byte a record would spend on one.

const (
	countSize    = 2
	countUnknown = 0xFFFF
)

// maxExactInt bounds the integers stored in the short form: every integer below 2^53 is an
// exact float64, so decoding gives back the same float.
const maxExactInt = 1 << 53

func appendScore(dst []byte, s float64) []byte {
	if s == math.Trunc(s) && math.Abs(s) < maxExactInt {
		v := int64(s)
		zz := uint64(v<<1) ^ uint64(v>>63)
		return binary.AppendUvarint(dst, zz<<1)
	}
	dst = append(dst, 1)
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(s))
}

// readScore decodes the score at b[off:] and returns it with the offset after it.
func readScore(b []byte, off int) (float64, int) {
	h, k := binary.Uvarint(b[off:])
	off += k
	if h&1 == 0 {
		zz := h >> 1
		v := int64(zz>>1) ^ -int64(zz&1)
		return float64(v), off
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b[off:])), off + 8
}

func appendRecord(dst, member []byte, score float64) []byte {
	dst = appendScore(dst, score)
	dst = binary.AppendUvarint(dst, uint64(len(member)))
	return append(dst, member...)
}

// recordAt decodes the record at off: its member (a view into b), score and the next offset.
func recordAt(b []byte, off int) (member []byte, score float64, next int) {
	score, p := readScore(b, off)
	l, k := binary.Uvarint(b[p:])
	p += k
	return b[p : p+int(l)], score, p + int(l)
}

// lpRecords returns the records of a listpack buffer.
func lpRecords(b []byte) []byte {
	if len(b) < countSize {
		return nil
	}
	return b[:len(b)-countSize]
}

// lpLen returns the member count of a listpack buffer.
func lpLen(b []byte) int {
	if len(b) < countSize {
		return 0
	}
	if n := binary.LittleEndian.Uint16(b[len(b)-countSize:]); n != countUnknown {
		return int(n)
	}
	recs, n := lpRecords(b), 0
	for off := 0; off < len(recs); n++ {
		_, _, off = recordAt(recs, off)
	}
	return n
}

func lpSetLen(b []byte, n int) {
	binary.LittleEndian.PutUint16(b[len(b)-countSize:], uint16(min(n, countUnknown)))
}

// compare orders (s1, m1) against (s2, m2) the way sorted sets order members.
func compare(s1 float64, m1 []byte, s2 float64, m2 []byte) int {
	switch {
	case s1 < s2:
		return -1
	case s1 > s2:
		return 1
	}
	return bytes.Compare(m1, m2)
}

// lpFind returns the offset and score of member's record, or ok false.
func lpFind(b []byte, member []byte) (off int, score float64, ok bool) {
	for off < len(b) {
		m, s, next := recordAt(b, off)
		if bytes.Equal(m, member) {
			return off, s, true
		}
		off = next
	}
	return 0, 0, false
}

// lpInsertOffset returns where a member known to be absent goes in the records b.
func lpInsertOffset(b []byte, member []byte, score float64) int {
	off := 0
	for off < len(b) {
		m, s, next := recordAt(b, off)
		if compare(score, member, s, m) < 0 {
			break
		}
		off = next
	}
	return off
}

// lpAdd inserts a member known to be absent into the buffer b (nil for an empty set) and
// returns the buffer.
func lpAdd(b []byte, member []byte, score float64) []byte {
	n := lpLen(b)
	var rec [96]byte
	r := appendRecord(rec[:0], member, score)
	if b == nil { // allocated once, at its size
		b = sized[byte](len(r) + countSize)[:countSize]
	}
	b = insertBytes(b, lpInsertOffset(lpRecords(b), member, score), r)
	lpSetLen(b, n+1)
	return b
}

// insertBytes inserts r at off. A full buffer grows to the allocator's size class for the new
// length, not by doubling: small sets are many, and Redis's listpacks are reallocated to fit
// too, so the slack stays within a size class.
func insertBytes(b []byte, off int, r []byte) []byte {
	n := len(b)
	if cap(b) < n+len(r) {
		nb := slices.Grow([]byte(nil), n+len(r))[:n+len(r)]
		copy(nb, b[:off])
		copy(nb[off+len(r):], b[off:])
		copy(nb[off:], r)
		return nb
	}
	b = b[:n+len(r)]
	copy(b[off+len(r):], b[off:n])
	copy(b[off:], r)
	return b
}

// lpRemove removes count records from offset off of buffer b and returns the buffer.
func lpRemove(b []byte, off, count int) []byte {
	n, recs := lpLen(b), lpRecords(b)
	end := off
	for range count {
		_, _, end = recordAt(recs, end)
	}
	b = append(b[:off], b[end:]...)
	lpSetLen(b, n-count)
	if cap(b) > 2*len(b)+64 {
		b = append([]byte(nil), b...) // a listpack is reallocated to fit after deletions
	}
	return b
}

// lpOffset returns the offset of the record of rank r in the records b.
func lpOffset(b []byte, r int) int {
	off := 0
	for ; r > 0; r-- {
		_, _, off = recordAt(b, off)
	}
	return off
}

// lpWalk calls fn for the records b from rank r towards the end (or the start when rev) until
// fn returns false.
func lpWalk(b []byte, r int, rev bool, fn func(member []byte, score float64) bool) {
	if !rev {
		for off := lpOffset(b, r); off < len(b); {
			m, s, next := recordAt(b, off)
			if !fn(m, s) {
				return
			}
			off = next
		}
		return
	}
	var small [leafCap + 1]int32
	offs := small[:0]
	for off, i := 0, 0; i <= r; i++ {
		offs = append(offs, int32(off))
		_, _, off = recordAt(b, off)
	}
	for i := len(offs) - 1; i >= 0; i-- {
		m, s, _ := recordAt(b, int(offs[i]))
		if !fn(m, s) {
			return
		}
	}
}
