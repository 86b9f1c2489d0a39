package set

import (
	"encoding/binary"
	"slices"
)

// listpack holds a small set as one buffer of entries in insertion order. Every operation is a
// linear walk, which for the few members the thresholds allow is faster than hashing.
//
// An entry starts with uvarint(len<<1 | out). A member of at most Limits.ListpackValue bytes
// (out = 0) follows inline, costing a byte or two beyond itself. A longer one, which Redis 7.2
// would make a hash table for, is kept out of line (out = 1): the entry holds a 16-bit tag from
// the member's hash, so a lookup rejects it without touching the member, and the member is its
// own allocation in ext, in the order of the out-of-line entries (the k'th such entry is
// (*ext)[k]). Out of line, a long member is never copied as the set grows, where one buffer of
// long members is copied and left to the collector at each growth: 200,000 sets of 20 random
// 256-byte members, built one SADD at a time, cost 8,461 bytes a key by used_memory and 11,714
// by RSS right after the load packed in one buffer grown to need, and 6,477 and 6,832 out of
// line (Redis 7.0.15: 7,562 and 7,654). The price is one pointer-free object per long member,
// as Redis's sds per member, which lpExtMax bounds.
//
// It is a view of the set's small storage (n, b and ext).
type listpack small

// lpExtMax bounds the out-of-line members of a listpack; one more makes the set big, whose
// arena packs members with no object each, so the collector's work stays bounded.
const lpExtMax = 32

const tagLen = 2

// packs reports whether a listpack of n members, out of them long ones longer than
// lim.ListpackValue, stays a listpack.
func (lim *Limits) packs(n, long int) bool { return n <= lim.Listpack && long <= lpExtMax }

func (lp *listpack) extLen() int {
	if lp.ext == nil {
		return 0
	}
	return len(*lp.ext)
}

// header decodes the entry header at off: the member's length, whether it is out of line, and
// the offset of the entry's body. A one-byte header (an inline member shorter than 64 bytes) is
// read without a varint call.
func (lp *listpack) header(off int) (l int, out bool, body int) {
	if h := lp.b[off]; h < 0x80 {
		return int(h >> 1), h&1 == 1, off + 1
	}
	return lp.longHeader(off)
}

// varintHeader decodes the header value at off, of three bytes or more.
func varintHeader(b []byte, off int) (h, body int) {
	v, n := binary.Uvarint(b[off:])
	return int(v), off + n
}

// longHeader is header for a header of two bytes or more (kept apart so header inlines).
func (lp *listpack) longHeader(off int) (l int, out bool, body int) {
	v, k := binary.Uvarint(lp.b[off:])
	return int(v >> 1), v&1 == 1, off + k
}

// entry decodes the entry at off, the k'th out-of-line one if out: its member, the offset of the
// next entry and the ext index of the next out-of-line entry.
func (lp *listpack) entry(off, k int) (m []byte, next, nextK int) {
	l, out, body := lp.header(off)
	if out {
		return (*lp.ext)[k], body + tagLen, k + 1
	}
	return lp.b[body : body+l], body + l, k
}

// find returns the offset of m's entry and its ext index (the count of out-of-line entries
// before it), or -1. Lengths are compared first; m's hash is computed only when an out-of-line
// entry of its length comes up.
func (lp *listpack) find(m []byte) (off, k int) {
	if lp.ext == nil {
		return lp.findInline(m), 0
	}
	return lp.findTag(m, 0, false)
}

// findTag is find with m's tag, when hashed says it is computed already. It decodes headers
// itself: header does not inline, and a call per entry cost a third of a lookup.
func (lp *listpack) findTag(m []byte, tag uint16, hashed bool) (off, k int) {
	if lp.ext == nil {
		return lp.findInline(m), 0
	}
	b := lp.b
	for off < len(b) {
		h, body := int(b[off]), off+1
		if h >= 0x80 { // two bytes (every member up to 8 KiB) without a varint call
			if c := int(b[body]); c < 0x80 {
				h, body = h&0x7f|c<<7, body+1
			} else {
				h, body = varintHeader(b, off)
			}
		}
		l := h >> 1
		if h&1 == 0 {
			if l == len(m) && string(b[body:body+l]) == string(m) {
				return off, k
			}
			off = body + l
			continue
		}
		if l == len(m) {
			if !hashed {
				tag, hashed = tagOf(m), true
			}
			if binary.LittleEndian.Uint16(b[body:]) == tag && string((*lp.ext)[k]) == string(m) {
				return off, k
			}
		}
		off, k = body+tagLen, k+1
	}
	return -1, 0
}

// findInline is find for a listpack with every member inline: the loop keeps few enough values
// live that none is spilled around the comparison (the general loop's spills cost a fifth of
// a lookup of 100 short members).
func (lp *listpack) findInline(m []byte) int {
	b := lp.b
	for off := 0; off < len(b); {
		h, body := int(b[off]), off+1
		if h >= 0x80 { // two bytes (every member up to 8 KiB) without a varint call
			if c := int(b[body]); c < 0x80 {
				h, body = h&0x7f|c<<7, body+1
			} else {
				h, body = varintHeader(b, off)
			}
		}
		if l := h >> 1; l == len(m) && string(b[body:body+l]) == string(m) {
			return off
		} else {
			off = body + l
		}
	}
	return -1
}

func tagOf(m []byte) uint16 { return uint16(hashOf(m) >> 48) }

// push appends a copy of m, which the caller knows is absent: out of line when it is longer
// than lim.ListpackValue.
func (lp *listpack) push(m []byte, lim *Limits) {
	if len(m) <= lim.ListpackValue {
		lp.pushShort(m)
	} else {
		lp.pushLong(append([]byte(nil), m...), tagOf(m))
	}
}

// pushShort appends m inline.
func (lp *listpack) pushShort(m []byte) {
	lp.b = binary.AppendUvarint(lp.b, uint64(len(m))<<1) // grows as grow does
	lp.b = append(lp.b, m...)
	lp.n++
}

// pushLong appends an out-of-line entry for m, whose tag is tag, and keeps m itself (not a
// copy) in ext.
func (lp *listpack) pushLong(m []byte, tag uint16) {
	lp.b = grow(lp.b, uvarintLen(uint64(len(m))<<1|1)+tagLen)
	lp.b = binary.AppendUvarint(lp.b, uint64(len(m))<<1|1)
	lp.b = binary.LittleEndian.AppendUint16(lp.b, tag)
	if lp.ext == nil {
		lp.ext = new([][]byte)
	}
	*lp.ext = append(*lp.ext, m)
	lp.n++
}

// own replaces every out-of-line member with a copy of its own, for a builder whose members
// were borrowed, and fits the buffer to its length.
func (lp *listpack) own() {
	lp.b = fit(lp.b)
	if lp.ext != nil {
		for i, m := range *lp.ext {
			(*lp.ext)[i] = append([]byte(nil), m...)
		}
	}
}

// removeAt deletes the entry at off, whose ext index is k.
func (lp *listpack) removeAt(off, k int) {
	_, next, nextK := lp.entry(off, k)
	if nextK > k {
		e := *lp.ext
		*lp.ext = slices.Delete(e, k, k+1) // clears the vacated element for the collector
		if len(*lp.ext) == 0 {
			lp.ext = nil
		}
	}
	lp.b = trim(append(lp.b[:off], lp.b[next:]...))
	lp.n--
}

// at returns the i'th member in insertion order.
func (lp *listpack) at(i int) []byte {
	off, k := 0, 0
	for ; i > 0; i-- {
		_, off, k = lp.entry(off, k)
	}
	m, _, _ := lp.entry(off, k)
	return m
}

// each calls fn with every member until fn returns false. It decodes headers itself, as
// findTag does.
func (lp *listpack) each(fn func(m []byte) bool) bool {
	b := lp.b
	for off, k := 0, 0; off < len(b); {
		h, body := int(b[off]), off+1
		if h >= 0x80 { // two bytes (every member up to 8 KiB) without a varint call
			if c := int(b[body]); c < 0x80 {
				h, body = h&0x7f|c<<7, body+1
			} else {
				h, body = varintHeader(b, off)
			}
		}
		var m []byte
		if l := h >> 1; h&1 == 0 {
			m, off = b[body:body+l], body+l
		} else {
			m, off, k = (*lp.ext)[k], body+tagLen, k+1
		}
		if !fn(m) {
			return false
		}
	}
	return true
}

// clone returns a copy that shares no storage with lp.
func (lp *listpack) clone() small {
	out := small(*lp)
	out.b = append([]byte(nil), lp.b...)
	if lp.ext != nil {
		e := make([][]byte, len(*lp.ext))
		for i, m := range *lp.ext {
			e[i] = append([]byte(nil), m...)
		}
		out.ext = &e
	}
	return out
}
