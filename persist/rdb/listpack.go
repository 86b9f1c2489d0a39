package rdb

import (
	"encoding/binary"
	"math"
	"slices"
)

// Listpack builds a listpack (listpack.c): a 6-byte header (total bytes and
// element count, little-endian; 65535 when the count does not fit), the
// entries, and a 0xff terminator. Each entry is its encoding and data followed
// by its own length in 1-5 bytes read right to left. The zero value is empty.
type Listpack struct {
	b []byte // header, entries and terminator once Bytes has run; header and entries while building
	n int
}

const lpHeaderSize = 6

// Reset empties l, keeping its memory.
func (l *Listpack) Reset() {
	l.b = l.b[:0]
	l.n = 0
}

// Len is the number of elements appended.
func (l *Listpack) Len() int { return l.n }

// Size is the byte length Bytes will return.
func (l *Listpack) Size() int {
	if len(l.b) == 0 {
		return lpHeaderSize + 1
	}
	if l.b[len(l.b)-1] == 0xff && l.closed() {
		return len(l.b)
	}
	return len(l.b) + 1
}

// closed reports whether Bytes has terminated l.b since the last append: the
// header then holds l.b's own length.
func (l *Listpack) closed() bool {
	return int(binary.LittleEndian.Uint32(l.b)) == len(l.b)
}

func (l *Listpack) open() {
	if len(l.b) == 0 {
		l.b = append(l.b, 0, 0, 0, 0, 0, 0)
		return
	}
	if l.closed() && l.b[len(l.b)-1] == 0xff {
		l.b = l.b[:len(l.b)-1]
		binary.LittleEndian.PutUint32(l.b, 0)
	}
}

// Append adds b, in an integer encoding when b is a canonical int64 (as
// lpAppend does), else as a string.
func (l *Listpack) Append(b []byte) {
	if v, ok := parseInt(b); ok {
		l.AppendInt(v)
		return
	}
	l.open()
	start := len(l.b)
	switch n := len(b); {
	case n < 64:
		l.b = append(l.b, 0x80|byte(n))
	case n < 4096:
		l.b = append(l.b, 0xe0|byte(n>>8), byte(n))
	default:
		l.b = append(l.b, 0xf0)
		l.b = binary.LittleEndian.AppendUint32(l.b, uint32(n))
	}
	l.b = append(l.b, b...)
	l.b = appendBacklen(l.b, len(l.b)-start)
	l.n++
}

// AppendInt adds v in the smallest integer encoding that holds it.
func (l *Listpack) AppendInt(v int64) {
	l.open()
	start := len(l.b)
	switch {
	case v >= 0 && v <= 127:
		l.b = append(l.b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & 0x1fff
		l.b = append(l.b, 0xc0|byte(u>>8), byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		l.b = append(l.b, 0xf1, byte(v), byte(v>>8))
	case v >= -1<<23 && v < 1<<23:
		l.b = append(l.b, 0xf2, byte(v), byte(v>>8), byte(v>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		l.b = append(l.b, 0xf3)
		l.b = binary.LittleEndian.AppendUint32(l.b, uint32(v))
	default:
		l.b = append(l.b, 0xf4)
		l.b = binary.LittleEndian.AppendUint64(l.b, uint64(v))
	}
	l.b = appendBacklen(l.b, len(l.b)-start)
	l.n++
}

// Bytes returns the finished listpack. It stays valid until the next Append or Reset.
func (l *Listpack) Bytes() []byte {
	l.open()
	l.b = append(l.b, 0xff)
	binary.LittleEndian.PutUint32(l.b, uint32(len(l.b)))
	binary.LittleEndian.PutUint16(l.b[4:], uint16(min(l.n, 65535)))
	return l.b
}

// appendBacklen appends an entry's length as lpEncodeBacklen does: 7 bits a
// byte, the most significant first, every byte but the first flagged 0x80.
func appendBacklen(b []byte, n int) []byte {
	switch {
	case n <= 127:
		return append(b, byte(n))
	case n < 16383:
		return append(b, byte(n>>7), byte(n&127)|128)
	case n < 2097151:
		return append(b, byte(n>>14), byte(n>>7&127)|128, byte(n&127)|128)
	case n < 268435455:
		return append(b, byte(n>>21), byte(n>>14&127)|128, byte(n>>7&127)|128, byte(n&127)|128)
	default:
		return append(b, byte(n>>28), byte(n>>21&127)|128, byte(n>>14&127)|128, byte(n>>7&127)|128, byte(n&127)|128)
	}
}

// IntsetBytes returns the intset (intset.c) of vals: the width in bytes (2, 4
// or 8) and the count as uint32 little-endian, then the members sorted
// ascending without duplicates, each in that width, little-endian.
func IntsetBytes(vals []int64) []byte {
	return appendIntset(nil, slices.Clone(vals))
}

// appendIntset appends the intset of vals, sorting vals in place.
func appendIntset(dst []byte, vals []int64) []byte {
	slices.Sort(vals)
	vals = slices.Compact(vals)
	width := 2
	for _, v := range vals {
		if v < math.MinInt32 || v > math.MaxInt32 {
			width = 8
			break
		}
		if v < math.MinInt16 || v > math.MaxInt16 {
			width = 4
		}
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(width))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(vals)))
	for _, v := range vals {
		switch width {
		case 2:
			dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
		case 4:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		default:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		}
	}
	return dst
}
