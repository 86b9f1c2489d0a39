package rdb

import (
	"bytes"
	"hash/maphash"
)

// The duplicate check of a loaded set, hash or sorted set (Redis's loader refuses a value with
// two equal members). It used to sort the members' indexes: for a 1,000,000-field hash that was
// a third of the whole load's CPU (a million bytes.Compare calls of cache-missing members).
// Now a few members are compared pairwise, and more are placed in an open-addressing table of
// their indexes keyed by their hash: one hash and about one probe a member. The table is
// scratch kept across values, sized by members already read (never by a declared length).

// pairwiseMax is the most members checked pairwise (n(n-1)/2 compares, no hashing).
const pairwiseMax = 12

var uniqueSeed = maphash.MakeSeed()

// unique fails when two of elems are equal, as Redis's loader refuses such a value; what names
// them in the error.
func (d *Decoder) unique(at int64, v *Value, elems [][]byte, what string) error {
	if !distinct(elems, &d.slots) {
		return d.rd.corrupt(at, "duplicate %s detected", what)
	}
	return nil
}

// distinct reports whether no two of elems are equal; slots is scratch.
func distinct(elems [][]byte, slots *[]uint32) bool {
	n := len(elems)
	if n <= pairwiseMax {
		for i := 1; i < n; i++ {
			for j := range i {
				if bytes.Equal(elems[i], elems[j]) {
					return false
				}
			}
		}
		return true
	}
	size := 1
	for size < 2*n {
		size <<= 1
	}
	if cap(*slots) < size {
		*slots = make([]uint32, size)
	}
	t := (*slots)[:size]
	clear(t)
	mask := uint64(size - 1)
	for i, e := range elems {
		for h := maphash.Bytes(uniqueSeed, e) & mask; ; h = (h + 1) & mask {
			s := t[h]
			if s == 0 {
				t[h] = uint32(i) + 1
				break
			}
			if bytes.Equal(elems[s-1], e) {
				return false
			}
		}
	}
	return true
}
