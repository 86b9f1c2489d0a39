package set

import (
	"bytes"
	"hash/maphash"
	"math/bits"
)

// table is a hash set of byte strings: Robin Hood linear probing over one array of 8-byte slots,
// the members themselves packed in an arena. A slot holds the entry's probe distance from its
// home bucket (8 bits), a 16-bit tag from the top of its hash (so most mismatches are rejected
// without touching the member) and its 40-bit arena ref; 0 is an empty slot.
//
// A member's home bucket is hash & mask, and a slot's home is its position less its distance, so
// SCAN can visit home buckets in Redis's reverse-binary order: a member present for a whole scan
// is returned at least once whatever resizes happen between calls.
type table struct {
	slots []uint64
	n     int
	mem   arena
}

const (
	distShift = 56
	tagShift  = 40
	tagMask   = 0xFFFF
	distOne   = uint64(1) << distShift
	maxDist   = 255
	minSlots  = 2 // one member's table; it doubles as members come
)

var seed = maphash.MakeSeed()

func hashOf(m []byte) uint64 { return maphash.Bytes(seed, m) }

func slotOf(ref, h uint64) uint64       { return (h>>48)<<tagShift | ref }
func slotRef(s uint64) uint64           { return s & refMax }
func slotDist(s uint64) uint64          { return s >> distShift }
func tagMatches(s, h uint64) bool       { return (s>>tagShift)&tagMask == h>>48 }
func (t *table) mask() uint64           { return uint64(len(t.slots) - 1) }
func (t *table) member(s uint64) []byte { return t.mem.get(slotRef(s)) }

// find returns the position of m's slot, or false.
func (t *table) find(m []byte, h uint64) (uint64, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := t.mask()
	pos := h & mask
	for d := uint64(0); ; d++ {
		s := t.slots[pos]
		if s == 0 || slotDist(s) < d {
			return 0, false // Robin Hood: m would have been placed before a richer entry
		}
		if tagMatches(s, h) && bytes.Equal(t.member(s), m) {
			return pos, true
		}
		pos = (pos + 1) & mask
	}
}

func (t *table) has(m []byte) bool {
	_, ok := t.find(m, hashOf(m))
	return ok
}

// add inserts m and reports whether it was absent.
func (t *table) add(m []byte) bool {
	h := hashOf(m)
	if _, ok := t.find(m, h); ok {
		return false
	}
	if (t.n+1)*5 > len(t.slots)*4 {
		t.rebuild(max(2*len(t.slots), minSlots))
	}
	t.n++
	if !t.place(slotOf(t.mem.alloc(m), h), h&t.mask()) {
		t.rebuild(2 * len(t.slots)) // the arena holds every member, the displaced one included
	}
	return true
}

// reserve sizes an empty table for n members whose arena entries take size bytes, for a
// conversion that knows them, so that it neither rebuilds nor regrows its arena on the way.
func (t *table) reserve(n, size int) {
	slots := minSlots
	for n*5 > slots*4 {
		slots *= 2
	}
	t.slots = make([]uint64, slots)
	t.mem.reserve(size)
}

// place puts slot s (distance 0 from home) at or after pos, displacing poorer entries forward.
// It fails when a distance would overflow; the table must then be rebuilt.
func (t *table) place(s, pos uint64) bool {
	mask := t.mask()
	for {
		cur := t.slots[pos]
		if cur == 0 {
			t.slots[pos] = s
			return true
		}
		if slotDist(cur) < slotDist(s) {
			t.slots[pos], s = s, cur
		}
		if slotDist(s) == maxDist {
			return false
		}
		s += distOne
		pos = (pos + 1) & mask
	}
}

// rebuild re-places every member in a table of n slots (a power of two), from the arena, which
// is read in order and knows each member even when slots were lost to a failed place.
func (t *table) rebuild(n int) {
	for {
		t.slots = make([]uint64, n)
		ok := true
		mask := t.mask()
		for c := uint32(1); ok && int(c) < len(t.mem.chunks); c++ {
			t.mem.eachIn(c, func(ref uint64, m []byte) {
				h := hashOf(m)
				ok = ok && t.place(slotOf(ref, h), h&mask)
			})
		}
		if ok {
			return
		}
		n *= 2
	}
}

// remove deletes m and reports whether it was present.
func (t *table) remove(m []byte) bool {
	pos, ok := t.find(m, hashOf(m))
	if ok {
		t.removeAt(pos)
	}
	return ok
}

// removeAt deletes the entry at pos, shifting the entries after it back towards their homes.
func (t *table) removeAt(pos uint64) {
	ref := slotRef(t.slots[pos])
	mask := t.mask()
	for {
		next := (pos + 1) & mask
		s := t.slots[next]
		if s == 0 || slotDist(s) == 0 {
			t.slots[pos] = 0
			break
		}
		t.slots[pos] = s - distOne
		pos = next
	}
	t.n--
	if c := t.mem.kill(ref); c != 0 {
		t.compact(c)
	}
	if len(t.slots) > minSlots && t.n*10 < len(t.slots) {
		t.rebuild(max(minSlots, 1<<bits.Len(uint(t.n*2))))
	}
}

// compact moves chunk c's live entries to the arena's tail and releases c.
func (t *table) compact(c uint32) {
	t.mem.eachIn(c, func(ref uint64, m []byte) {
		h := hashOf(m)
		pos := h & t.mask()
		for slotRef(t.slots[pos]) != ref {
			pos = (pos + 1) & t.mask()
		}
		t.slots[pos] = t.slots[pos]&^refMax | t.mem.alloc(m)
	})
	t.mem.release(c)
}

// random returns the slot position of a uniformly chosen member; the table must not be empty.
// Removal shrinks the table below a tenth full, so few probes are needed.
func (t *table) random(r *rng) uint64 {
	for {
		if pos := r.below(uint64(len(t.slots))); t.slots[pos] != 0 {
			return pos
		}
	}
}

// scan visits home buckets from cursor in reverse-binary order until count members were
// returned or ten times count buckets were visited, and returns the next cursor (0 at the end).
func (t *table) scan(cursor uint64, count int, fn func(m []byte)) uint64 {
	if t.n == 0 {
		return 0
	}
	mask := t.mask()
	seen := 0
	for visits := count * 10; ; visits-- {
		seen += t.scanBucket(cursor&mask, fn)
		cursor |= ^mask
		cursor = bits.Reverse64(bits.Reverse64(cursor) + 1)
		if cursor == 0 || seen >= count || visits <= 1 {
			return cursor
		}
	}
}

// scanBucket calls fn with the members whose home is bucket h: they sit in the run of slots
// from h, where an entry at offset k from h has distance k; an entry of smaller distance has a
// later home, so the run ends there.
func (t *table) scanBucket(h uint64, fn func(m []byte)) int {
	mask, found := t.mask(), 0
	for k := uint64(0); k <= maxDist; k++ {
		s := t.slots[(h+k)&mask]
		if s == 0 || slotDist(s) < k {
			break
		}
		if slotDist(s) == k {
			fn(t.member(s))
			found++
		}
	}
	return found
}

func (t *table) clone() *table {
	return &table{slots: append([]uint64(nil), t.slots...), n: t.n, mem: t.mem.clone()}
}
