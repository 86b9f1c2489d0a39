// Package bitmap holds Redis's bit operations on string values (bitops.c): single bits, counts
// and searches over byte or bit ranges, BITOP, and BITFIELD's integers with their overflow rules.
// A bitmap is a plain byte string, bit 0 being the most significant bit of byte 0. Functions know
// nothing of RESP or keyspaces; reads past the end of a string see zero bits.
package bitmap

import (
	"encoding/binary"
	"math/bits"
)

// Grow returns b extended with zero bytes to at least n bytes, reusing its storage when it fits.
// Growing reserves like append does, so SETBIT at rising offsets costs amortized O(1) a byte.
func Grow(b []byte, n int) []byte {
	if n <= len(b) {
		return b
	}
	if n <= cap(b) {
		old := len(b)
		b = b[:n]
		clear(b[old:])
		return b
	}
	if len(b) == 0 {
		return make([]byte, n) // a first SETBIT far out: exactly what it needs
	}
	return append(b, make([]byte, n-len(b))...)
}

// Bit returns bit off of b (0 past its end).
func Bit(b []byte, off uint64) int {
	i := off >> 3
	if i >= uint64(len(b)) {
		return 0
	}
	return int(b[i]>>(7-off&7)) & 1
}

// SetBit sets bit off of b, which must hold it, to on, and returns the bit's previous value.
func SetBit(b []byte, off uint64, on int) int {
	i, sh := off>>3, 7-off&7
	old := int(b[i]>>sh) & 1
	b[i] = b[i]&^(1<<sh) | byte(on&1)<<sh
	return old
}

// Popcount counts the set bits of b, eight bytes at a time.
func Popcount(b []byte) int64 {
	var n int
	for len(b) >= 32 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b)) +
			bits.OnesCount64(binary.LittleEndian.Uint64(b[8:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(b[16:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(b[24:]))
		b = b[32:]
	}
	for len(b) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for _, c := range b {
		n += bits.OnesCount8(c)
	}
	return int64(n)
}

// Span is a range of bits, both ends included, already inside its string.
type Span struct{ First, Last int64 }

// Empty reports whether the span holds no bit.
func (s Span) Empty() bool { return s.First > s.Last }

// Normalize turns BITCOUNT's and BITPOS's start and end (in bytes, or in bits when inBits) into a
// span of bits of a string of size bytes, as Redis does: negative values count from the end, then
// both are clamped into the string. A span may come out empty.
func Normalize(size, start, end int64, inBits bool) Span {
	total := size
	if inBits {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if start > end {
		return Span{0, -1}
	}
	if inBits {
		return Span{start, end}
	}
	return Span{start << 3, end<<3 | 7}
}

// Count counts the set bits of b inside s.
func Count(b []byte, s Span) int64 {
	if s.Empty() {
		return 0
	}
	fb, lb := s.First>>3, s.Last>>3
	n := Popcount(b[fb : lb+1])
	n -= int64(bits.OnesCount8(b[fb] &^ (0xff >> (s.First & 7))))
	n -= int64(bits.OnesCount8(b[lb] & (0xff >> (s.Last&7 + 1))))
	return n
}

// Pos returns the position of the first bit equal to bit inside s, or -1.
func Pos(b []byte, bit int, s Span) int64 {
	if s.Empty() {
		return -1
	}
	var flip byte // searching a 0 is searching a 1 in the complement
	if bit == 0 {
		flip = 0xff
	}
	fb, lb := s.First>>3, s.Last>>3
	for i := fb; i <= lb; {
		if i+8 <= lb && (i > fb || s.First&7 == 0) { // a whole word inside the span
			w := binary.BigEndian.Uint64(b[i:])
			if bit == 0 {
				w = ^w
			}
			if w == 0 {
				i += 8
				continue
			}
			return i<<3 + int64(bits.LeadingZeros64(w))
		}
		c := b[i] ^ flip
		if i == fb {
			c &= 0xff >> (s.First & 7)
		}
		if i == lb {
			c &^= 0xff >> (s.Last&7 + 1)
		}
		if c != 0 {
			return i<<3 + int64(bits.LeadingZeros8(c))
		}
		i++
	}
	return -1
}
