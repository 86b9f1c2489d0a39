// Package sparsebits holds a sparse bitmap: a string of zero bytes with a few bits set, kept as
// the sorted offsets of its set bits instead of its bytes, so SETBIT key 4000000000 1 costs a
// few bytes instead of 500 MB. The form is one flat, pointer-free buffer (a string value's
// storage in the keyspace), edited in place:
//
//	[0:4] the string's length in bytes, little-endian (what STRLEN answers)
//	[4]   Tag
//	[5:]  the offsets of the set bits, ascending, 4 bytes each, little-endian
//
// Bit 0 is the most significant bit of byte 0, as in ds/bitmap; every bit not listed is zero,
// up to the length. The first five bytes are laid out as a packed string's header
// (ds/keyspace, ds/compress), whose algorithm byte never equals Tag, so the keyspace's packed-
// string seam carries the form and its length. Functions trust a form only after Valid.
package sparsebits

import (
	"encoding/binary"
	"sort"
)

// Tag marks the sparse form in byte 4 (ds/compress uses 1 and 2 there).
const Tag = 'S'

// HeaderLen is the size of the header before the offsets.
const HeaderLen = 5

// MinLen is the shortest string kept sparse: below it a plain string costs little anyway.
const MinLen = 64 << 10

// MaxBits is the most set bits a sparse form holds. Past it inserting in the middle moves too
// much (up to 64 KiB, about 2 µs) for a SETBIT, so the value becomes dense.
const MaxBits = 1 << 14

// Fits reports whether a string of length bytes with count set bits is kept sparse: long enough
// (MinLen), at most MaxBits bits, and the offsets at most a sixteenth of the dense bytes. A
// bit write that breaks it converts the value to the dense string (Dense).
func Fits(length int64, count int) bool {
	return length >= MinLen && count <= MaxBits && int64(HeaderLen+4*count) <= length/16
}

// New returns the form of a string of length zero bytes.
func New(length uint32) []byte {
	p := make([]byte, HeaderLen, HeaderLen+16)
	binary.LittleEndian.PutUint32(p, length)
	p[4] = Tag
	return p
}

// Valid reports whether p is a well-formed sparse form: the tag, whole offsets, ascending and
// inside the length.
func Valid(p []byte) bool {
	if len(p) < HeaderLen || p[4] != Tag || (len(p)-HeaderLen)%4 != 0 {
		return false
	}
	n, bits := Count(p), uint64(Len(p))*8
	prev := int64(-1)
	for i := range n {
		o := at(p, i)
		if int64(o) <= prev || uint64(o) >= bits {
			return false
		}
		prev = int64(o)
	}
	return true
}

// Is reports whether p carries the sparse tag (a packed string that is this form).
func Is(p []byte) bool { return len(p) >= HeaderLen && p[4] == Tag }

// Len returns the string's length in bytes.
func Len(p []byte) int { return int(binary.LittleEndian.Uint32(p)) }

// Count returns the number of set bits.
func Count(p []byte) int { return (len(p) - HeaderLen) / 4 }

func at(p []byte, i int) uint32 { return binary.LittleEndian.Uint32(p[HeaderLen+4*i:]) }

// search returns the index of the first offset >= off.
func search(p []byte, off uint64) int {
	if off > 0xffffffff {
		return Count(p)
	}
	return sort.Search(Count(p), func(i int) bool { return uint64(at(p, i)) >= off })
}

// Bit returns bit off (0 past the end).
func Bit(p []byte, off uint64) int {
	i := search(p, off)
	if i < Count(p) && uint64(at(p, i)) == off {
		return 1
	}
	return 0
}

// Grow returns p lengthened to at least n bytes (zero bytes); it never shortens. n must fit 32
// bits.
func Grow(p []byte, n int) []byte {
	if n > Len(p) {
		binary.LittleEndian.PutUint32(p, uint32(n))
	}
	return p
}

// SetBit sets bit off, which must be inside the length, to on, and returns the form (moved when
// it grew) and the bit's previous value.
func SetBit(p []byte, off uint64, on int) ([]byte, int) {
	i := search(p, off)
	n := Count(p)
	was := i < n && uint64(at(p, i)) == off
	pos := HeaderLen + 4*i
	switch {
	case was && on == 0:
		p = append(p[:pos], p[pos+4:]...)
	case !was && on != 0:
		p = append(p, 0, 0, 0, 0)
		copy(p[pos+4:], p[pos:len(p)-4])
		binary.LittleEndian.PutUint32(p[pos:], uint32(off))
	}
	if was {
		return p, 1
	}
	return p, 0
}

// CountRange counts the set bits from bit first to bit last, both included.
func CountRange(p []byte, first, last int64) int64 {
	if first > last || last < 0 {
		return 0
	}
	return int64(search(p, uint64(last)+1) - search(p, uint64(max(first, 0))))
}

// Pos returns the first bit equal to bit from bit first to bit last (both included, inside the
// string), or -1.
func Pos(p []byte, bit int, first, last int64) int64 {
	if first > last || last < 0 {
		return -1
	}
	first = max(first, 0)
	i := search(p, uint64(first))
	if bit == 1 {
		if i < Count(p) && int64(at(p, i)) <= last {
			return int64(at(p, i))
		}
		return -1
	}
	for pos := first; pos <= last; pos++ { // a run of set bits from first is skipped bit by bit
		if i >= Count(p) || int64(at(p, i)) != pos {
			return pos
		}
		i++
	}
	return -1
}

// Window returns n bytes of the string from byte from (zero past the end), appended to dst.
func Window(dst, p []byte, from, n int) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	w := dst[start:]
	lo, hi := uint64(from)*8, uint64(from+n)*8
	for i := search(p, lo); i < Count(p); i++ {
		o := uint64(at(p, i))
		if o >= hi {
			break
		}
		o -= lo
		w[o>>3] |= 0x80 >> (o & 7)
	}
	return dst
}

// Dense returns the string's bytes, in dst's storage when it is large enough.
func Dense(dst, p []byte) []byte {
	n := Len(p)
	if cap(dst) < n {
		dst = make([]byte, n)
	} else {
		dst = dst[:n]
		clear(dst)
	}
	for i := range Count(p) {
		o := at(p, i)
		dst[o>>3] |= 0x80 >> (o & 7)
	}
	return dst
}
