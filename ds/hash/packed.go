package hash

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// A small hash is one byte buffer in the spirit of Redis's listpack: pairs in insertion order,
// found by a linear scan. It is front coded to beat listpack's size, because a key's fixed
// overhead in HotKV (its keyspace entry) is larger than Redis's: each field shares a prefix with
// the previous field, each value with the previous value, so "field:1".."field:9" and
// "user:1000:name".. cost a few bytes each.
//
// Layout:
//
//	flags   1 byte; flagTTL: every pair carries a TTL and OBJECT ENCODING says "listpackex"
//	count   uvarint: the number of pairs
//	minTTL  uvarint, with flagTTL only: no pair expires before it (unix ms; 0: no pair has a
//	        TTL). It may be stale-low after a TTL was removed; expire recomputes it.
//	pairs   field element, value element, and with flagTTL a uvarint TTL (unix ms; 0: none)
//
// An element is uvarint(len(suffix)<<1 | shared>0), then uvarint(shared) when shared>0, then the
// suffix: the element's bytes are the first shared bytes of the previous element of its column,
// then the suffix. The first pair shares nothing.
const flagTTL = 1

// header is a packed buffer's header, decoded.
type header struct {
	flags  byte
	count  int
	minTTL int64
	size   int // encoded length
}

func (h *header) ttl() bool { return h.flags&flagTTL != 0 }

// readHeader decodes b's header; an empty b is an empty hash without one.
func readHeader(b []byte) header {
	if len(b) == 0 {
		return header{}
	}
	h := header{flags: b[0]}
	n, pos := readUvarint(b, 1)
	h.count = int(n)
	if h.ttl() {
		var m uint64
		m, pos = readUvarint(b, pos)
		h.minTTL = int64(m)
	}
	h.size = pos
	return h
}

func (h *header) encodedLen() int {
	n := 1 + uvarintLen(uint64(h.count))
	if h.ttl() {
		n += uvarintLen(uint64(h.minTTL))
	}
	return n
}

func (h *header) put(dst []byte) {
	dst[0] = h.flags
	n := 1 + binary.PutUvarint(dst[1:], uint64(h.count))
	if h.ttl() {
		binary.PutUvarint(dst[n:], uint64(h.minTTL))
	}
}

// writeHeader stores h at the front of b, moving the pairs when its length changed.
func writeHeader(b []byte, h header) []byte {
	old := readHeader(b).size
	n := h.encodedLen()
	if n != old {
		b = splice(b, 0, old, n)
	}
	h.size = n
	h.put(b)
	return b
}

func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

func readUvarint(b []byte, pos int) (uint64, int) {
	var x uint64
	for s := uint(0); ; s += 7 {
		c := b[pos]
		pos++
		x |= uint64(c&0x7f) << s
		if c < 0x80 {
			return x, pos
		}
	}
}

// readElem decodes the element at pos: the prefix it shares and its own suffix.
func readElem(b []byte, pos int) (shared int, suffix []byte, next int) {
	h, pos := readUvarint(b, pos)
	if h&1 != 0 {
		var s uint64
		s, pos = readUvarint(b, pos)
		shared = int(s)
	}
	next = pos + int(h>>1)
	return shared, b[pos:next], next
}

// readTTL reads a pair's TTL when the buffer has them.
func readTTL(b []byte, pos int, withTTL bool) (int64, int) {
	if !withTTL {
		return 0, pos
	}
	t, pos := readUvarint(b, pos)
	return int64(t), pos
}

func elemLen(shared, n int) int {
	if shared == 0 {
		return uvarintLen(uint64(n)<<1) + n
	}
	return uvarintLen(uint64(n)<<1|1) + uvarintLen(uint64(shared)) + n
}

func putElem(dst []byte, shared int, suffix []byte) int {
	h := uint64(len(suffix)) << 1
	if shared > 0 {
		h |= 1
	}
	n := binary.PutUvarint(dst, h)
	if shared > 0 {
		n += binary.PutUvarint(dst[n:], uint64(shared))
	}
	return n + copy(dst[n:], suffix)
}

// sharedPrefix returns how many leading bytes cur takes from prev when front coded: their
// common prefix when that saves bytes (two or more), else 0.
func sharedPrefix(prev, cur []byte) int {
	if n := commonPrefix(prev, cur); n >= 2 {
		return n
	}
	return 0
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && binary.LittleEndian.Uint64(a[i:]) == binary.LittleEndian.Uint64(b[i:]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// pairLen is the encoded size of pair (f, v, ttl) after the pair (pf, pv).
func pairLen(pf, pv, f, v []byte, ttl int64, withTTL bool) int {
	fs, vs := sharedPrefix(pf, f), sharedPrefix(pv, v)
	n := elemLen(fs, len(f)-fs) + elemLen(vs, len(v)-vs)
	if withTTL {
		n += uvarintLen(uint64(ttl))
	}
	return n
}

// putPair writes pair (f, v, ttl) front coded after (pf, pv); dst has room for it.
func putPair(dst, pf, pv, f, v []byte, ttl int64, withTTL bool) int {
	fs, vs := sharedPrefix(pf, f), sharedPrefix(pv, v)
	n := putElem(dst, fs, f[fs:])
	n += putElem(dst[n:], vs, v[vs:])
	if withTTL {
		n += binary.PutUvarint(dst[n:], uint64(ttl))
	}
	return n
}

// splice replaces b[from:to] with n bytes of room (their contents unspecified) and returns the
// buffer, reallocated when it must grow, or when it shrinks and would waste much of its capacity
// (a growing edit keeps room that Hash.Reserve made).
func splice(b []byte, from, to, n int) []byte {
	oldLen := len(b)
	newLen := oldLen - (to - from) + n
	if newLen > cap(b) || newLen < oldLen && cap(b) > newLen+newLen/4+32 {
		nb := alloc(newLen)
		copy(nb, b[:from])
		copy(nb[from+n:], b[to:])
		return nb
	}
	if newLen > oldLen {
		b = b[:newLen]
		copy(b[from+n:], b[to:oldLen])
		return b
	}
	copy(b[from+n:], b[to:])
	return b[:newLen]
}

// alloc returns a buffer of length n whose capacity is the allocator's size class for n: the
// memory is spent anyway, and later growth within it needs no copy.
func alloc(n int) []byte { return slices.Grow([]byte(nil), n)[:n] }

// packedFirst returns a small hash holding the pair (f, v), allocated at its size.
func packedFirst(f, v []byte) []byte {
	hd := header{count: 1}
	hd.size = hd.encodedLen()
	b := alloc(hd.size + pairLen(nil, nil, f, v, 0, false))
	hd.put(b)
	putPair(b[hd.size:], nil, nil, f, v, 0, false)
	return b
}

// column rebuilds one column's front-coded elements in order: each element is the previous
// one's prefix plus a suffix. Elements up to inlineLen bytes live in the column itself, so a
// column on the stack decodes without allocating.
type column struct {
	n   int
	big []byte // used instead of buf once an element did not fit
	buf [inlineLen]byte
}

// inlineLen covers hash-max-listpack-value's default (64): longer elements only occur when that
// setting was raised.
const inlineLen = 64

func (c *column) bytes() []byte {
	if c.big != nil {
		return c.big[:c.n]
	}
	return c.buf[:c.n]
}

// push makes the column hold its current element's first shared bytes followed by suffix.
func (c *column) push(shared int, suffix []byte) {
	n := shared + len(suffix)
	if c.big == nil {
		if n <= inlineLen {
			copy(c.buf[shared:], suffix)
			c.n = n
			return
		}
		c.big = make([]byte, shared, 2*n)
		copy(c.big, c.buf[:shared])
	}
	c.big = append(c.big[:shared], suffix...)
	c.n = n
}

// set makes the column hold a followed by b.
func (c *column) set(a, b []byte) {
	c.push(0, a)
	c.push(len(a), b)
}

// packedLookup finds field p; ok is false when there is no such field. With wantValue it also
// rebuilds the value into dst[:0], growing dst if it is too small.
func packedLookup(b, p, dst []byte, wantValue bool) (val []byte, ttl int64, ok bool) {
	h := readHeader(b)
	withTTL := h.ttl()
	pos := h.size
	m := 0         // common prefix of the previous field and p
	restart := pos // the last pair whose value shares nothing: rebuilding starts there
	for range h.count {
		start := pos
		s, suf, next := readElem(b, pos)
		match := false
		// A field sharing more than m bytes with the previous one differs from p where that
		// one did; otherwise compare its suffix with p past the shared part.
		if s <= m {
			m = s + commonPrefix(suf, p[s:])
			match = m == len(p) && s+len(suf) == len(p)
		}
		vs, _, vnext := readElem(b, next)
		if vs == 0 {
			restart = start
		}
		ttl, pos = readTTL(b, vnext, withTTL)
		if match {
			if wantValue {
				dst = rebuildValue(b, restart, start, dst[:0], withTTL)
			}
			return dst, ttl, true
		}
	}
	return nil, 0, false
}

// rebuildValue rebuilds the value of the pair at `at` by applying the values of the pairs from
// `from` (whose value shares nothing) onwards, in dst.
func rebuildValue(b []byte, from, at int, dst []byte, withTTL bool) []byte {
	pos := from
	for {
		_, _, next := readElem(b, pos)
		vs, suf, vnext := readElem(b, next)
		dst = append(dst[:vs], suf...)
		if pos == at {
			return dst
		}
		_, pos = readTTL(b, vnext, withTTL)
	}
}
