package list

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/hotkv/hotkv/ds/strs"
)

// An entry is one element packed inside a node: a header, a payload, and a back-length.
//
//	0xxxxxxx                        the integer 0..127, held in the header itself
//	10llllll <l bytes>              a string of 0..63 bytes
//	1100llll llllllll <l bytes>     a string of 64..4095 bytes (12-bit length)
//	11010nnn <n+1 bytes>            an integer in n+1 little-endian two's-complement bytes
//	11011000 <uvarint l> <l bytes>  a string of any length
//	111vvvvv vvvvvvvv               an integer in -4096..4095 (13 bits, two's complement)
//
// The back-length is the size of header and payload, written so that it reads backwards from the
// entry's end (7 bits a byte, low bits last, the high bit set on every byte but the first): it
// lets a node be walked from its tail, so the back of a list is as cheap as its front.
//
// A string that is the canonical decimal form of an int64 (what Redis's string2ll accepts) is
// always stored as an integer: since the choice depends only on the bytes, two elements are equal
// exactly when their entries are. The sizes match Redis's listpack entry for entry, so a list
// costs no more memory than in Redis.
const (
	tagStr6   = 0x80
	tagStr12  = 0xC0
	tagInt    = 0xD0
	tagStrVar = 0xD8
	tagInt13  = 0xE0
)

// maxIntLen is the longest canonical int64 ("-9223372036854775808").
const maxIntLen = strs.MaxIntLen

// enc is one value measured and ready to be written as an entry.
type enc struct {
	v    []byte // the string, for string entries
	iv   int64  // the integer, for integer entries
	tag  byte   // the header's first byte
	hlen int    // header bytes (tag and any length)
	plen int    // payload bytes
	size int    // the whole entry, back-length included
}

func encode(v []byte) enc {
	var e enc
	switch iv, ok := strs.ParseInt(v); {
	case ok && iv >= 0 && iv < 128:
		e = enc{iv: iv, tag: byte(iv), hlen: 1}
	case ok && iv >= -4096 && iv < 4096:
		e = enc{iv: iv, tag: tagInt13 | byte(iv>>8)&0x1F, hlen: 2}
	case ok:
		n := intBytes(iv)
		e = enc{iv: iv, tag: tagInt | byte(n-1), hlen: 1, plen: n}
	case len(v) < 64:
		e = enc{v: v, tag: tagStr6 | byte(len(v)), hlen: 1, plen: len(v)}
	case len(v) < 4096:
		e = enc{v: v, tag: tagStr12 | byte(len(v)>>8), hlen: 2, plen: len(v)}
	default:
		e = enc{v: v, tag: tagStrVar, hlen: 1 + uvarintLen(uint64(len(v))), plen: len(v)}
	}
	body := e.hlen + e.plen
	e.size = body + backlenSize(body)
	return e
}

// put writes the entry into dst, which is exactly e.size bytes.
func (e *enc) put(dst []byte) {
	dst[0] = e.tag
	switch {
	case e.tag < tagStr6:
	case e.tag >= tagInt13:
		dst[1] = byte(e.iv)
	case e.tag >= tagInt && e.tag < tagStrVar:
		for i := range e.plen {
			dst[1+i] = byte(uint64(e.iv) >> (8 * i))
		}
	default:
		switch {
		case e.tag == tagStrVar:
			binary.PutUvarint(dst[1:], uint64(len(e.v)))
		case e.tag >= tagStr12:
			dst[1] = byte(len(e.v))
		}
		copy(dst[e.hlen:], e.v)
	}
	body := e.hlen + e.plen
	putBacklen(dst[body:e.size], body)
}

// decode returns the value of the entry at off and the offset of the next entry. A string value
// aliases b; an integer is formatted into sc (which should have room for 20 bytes).
func decode(b []byte, off int, sc []byte) (v []byte, next int) {
	h := b[off]
	var body int
	switch {
	case h < tagStr6:
		v, body = strconv.AppendInt(sc[:0], int64(h), 10), 1
	case h < tagStr12:
		n := int(h & 0x3F)
		v, body = b[off+1:off+1+n], 1+n
	case h < tagInt:
		n := int(h&0x0F)<<8 | int(b[off+1])
		v, body = b[off+2:off+2+n], 2+n
	case h < tagStrVar:
		n := int(h&0x07) + 1
		v, body = strconv.AppendInt(sc[:0], readInt(b[off+1:off+1+n]), 10), 1+n
	case h == tagStrVar:
		l, k := binary.Uvarint(b[off+1:])
		s := off + 1 + k
		v, body = b[s:s+int(l)], 1+k+int(l)
	default:
		v, body = strconv.AppendInt(sc[:0], int13(h, b[off+1]), 10), 2
	}
	return v, off + body + backlenSize(body)
}

// bodyLen returns the header and payload size of the entry at off.
func bodyLen(b []byte, off int) int {
	switch h := b[off]; {
	case h < tagStr6:
		return 1
	case h < tagStr12:
		return 1 + int(h&0x3F)
	case h < tagInt:
		return 2 + (int(h&0x0F)<<8 | int(b[off+1]))
	case h < tagStrVar:
		return 2 + int(h&0x07)
	case h == tagStrVar:
		l, k := binary.Uvarint(b[off+1:])
		return 1 + k + int(l)
	}
	return 2
}

// skip returns the offset of the entry after the one at off. The common entries are decoded
// here, small enough to inline; entries of 127 bytes or less have a one-byte back-length.
func skip(b []byte, off int) int {
	switch h := b[off]; {
	case h < tagStr6:
		return off + 2
	case h < tagStr12:
		return off + int(h&0x3F) + 2
	case h >= tagInt13:
		return off + 3
	}
	body := bodyLen(b, off)
	return off + body + backlenSize(body)
}

// entryStart returns the offset of the entry that ends at end.
func entryStart(b []byte, end int) int {
	p := end - 1
	body := int(b[p] & 0x7F)
	for shift := 7; b[p]&0x80 != 0; shift += 7 {
		p--
		body |= int(b[p]&0x7F) << shift
	}
	return p - body
}

func backlenSize(body int) int {
	n := 1
	for body >= 128 {
		body >>= 7
		n++
	}
	return n
}

func putBacklen(dst []byte, body int) {
	for i := len(dst) - 1; i >= 0; i-- {
		c := byte(body & 0x7F)
		body >>= 7
		if i > 0 {
			c |= 0x80
		}
		dst[i] = c
	}
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// intBytes returns how many two's-complement bytes hold iv.
func intBytes(iv int64) int {
	for n := 1; n < 8; n++ {
		if lim := int64(1) << (8*n - 1); iv >= -lim && iv < lim {
			return n
		}
	}
	return 8
}

func readInt(p []byte) int64 {
	var u uint64
	for i := len(p) - 1; i >= 0; i-- {
		u = u<<8 | uint64(p[i])
	}
	shift := 64 - 8*len(p)
	return int64(u<<shift) >> shift
}

// int13 decodes a 13-bit integer entry from its two header bytes.
func int13(h, lo byte) int64 { return int64(int16(uint16(h&0x1F)<<11|uint16(lo)<<3) >> 3) }

// matcher compares entries with one value without decoding them: the encoding is canonical, so
// an integer value can only equal an integer entry and a string only a string entry.
type matcher struct {
	isInt bool
	iv    int64
	v     []byte
}

func newMatcher(v []byte) matcher {
	iv, ok := strs.ParseInt(v)
	return matcher{isInt: ok, iv: iv, v: v}
}

// at reports whether the entry at off equals the value.
func (m *matcher) at(b []byte, off int) bool {
	h := b[off]
	var v []byte
	switch {
	case h < tagStr6:
		return m.isInt && m.iv == int64(h)
	case h >= tagInt13:
		return m.isInt && m.iv == int13(h, b[off+1])
	case h >= tagInt && h < tagStrVar:
		n := int(h&0x07) + 1
		return m.isInt && m.iv == readInt(b[off+1:off+1+n])
	case m.isInt:
		return false
	case h < tagStr12:
		n := int(h & 0x3F)
		v = b[off+1 : off+1+n]
	case h < tagInt:
		n := int(h&0x0F)<<8 | int(b[off+1])
		v = b[off+2 : off+2+n]
	default:
		l, k := binary.Uvarint(b[off+1:])
		v = b[off+1+k : off+1+k+int(l)]
	}
	return bytes.Equal(v, m.v)
}
