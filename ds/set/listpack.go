package set

import "encoding/binary"

// listpack holds a small set as one buffer of entries, each a uvarint length and the member's
// bytes, in insertion order. Every operation is a linear walk, which for the few short members
// the thresholds allow is faster than hashing and costs a byte or two per member beyond the
// member itself.
// It is a view of the set's small storage (n and b).
type listpack small

// entry decodes the entry at off: its member and the offset of the next entry.
func (lp *listpack) entry(off int) (m []byte, next int) {
	l, k := binary.Uvarint(lp.b[off:])
	start := off + k
	return lp.b[start : start+int(l)], start + int(l)
}

// find returns the offset of m's entry, or -1. Lengths are compared before bytes, and a
// one-byte length (every member the default limits allow) is read without a varint call.
func (lp *listpack) find(m []byte) int {
	b := lp.b
	for off := 0; off < len(b); {
		l, start := int(b[off]), off+1
		if l >= 0x80 {
			v, k := binary.Uvarint(b[off:])
			l, start = int(v), off+k
		}
		if l == len(m) && string(b[start:start+l]) == string(m) {
			return off
		}
		off = start + l
	}
	return -1
}

// push appends m, which the caller knows is absent.
func (lp *listpack) push(m []byte) {
	lp.b = binary.AppendUvarint(lp.b, uint64(len(m)))
	lp.b = append(lp.b, m...)
	lp.n++
}

// removeAt deletes the entry at off.
func (lp *listpack) removeAt(off int) {
	_, next := lp.entry(off)
	lp.b = trim(append(lp.b[:off], lp.b[next:]...))
	lp.n--
}

// at returns the i'th member in insertion order.
func (lp *listpack) at(i int) []byte {
	off := 0
	for ; i > 0; i-- {
		_, off = lp.entry(off)
	}
	m, _ := lp.entry(off)
	return m
}

// each calls fn with every member until fn returns false.
func (lp *listpack) each(fn func(m []byte) bool) bool {
	for off := 0; off < len(lp.b); {
		m, next := lp.entry(off)
		if !fn(m) {
			return false
		}
		off = next
	}
	return true
}
