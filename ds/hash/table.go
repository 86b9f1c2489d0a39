package hash

import (
	"bytes"
	"hash/maphash"
)

// table is a large hash: open addressing with linear probing over 8-byte slots that refer to
// records in an arena. A slot is 0 when empty, else (ref+1)<<tagBits | hash&tagMask: the low
// hash bits filter out most non-matching records without reading them, and as long as the table
// has at most 2^tagBits slots they are also the home index, so growing and deleting need no
// rehash. A deletion shifts the entries after it back into the hole (no tombstones), which keeps
// probes short under churn.
type table struct {
	slots []uint64
	count int
	arena arena
	ttl   ttlIndex
}

const (
	tagBits  = 24
	tagMask  = 1<<tagBits - 1
	minSlots = 4
)

var seed = maphash.MakeSeed()

func hashOf(f []byte) uint64 { return maphash.Bytes(seed, f) }

// newTable returns a table sized for n fields.
func newTable(n int) *table {
	size := minSlots
	for size*3 < (n+1)*4 {
		size *= 2
	}
	return &table{slots: make([]uint64, size)}
}

func (t *table) mask() uint64 { return uint64(len(t.slots) - 1) }

func slotRef(s uint64) uint64 { return s>>tagBits - 1 }

func makeSlot(ref, h uint64) uint64 { return (ref+1)<<tagBits | h&tagMask }

// home returns the home index of the entry in slot s.
func (t *table) home(s uint64) uint64 {
	m := t.mask()
	if m <= tagMask {
		return s & m
	}
	return hashOf(t.arena.field(slotRef(s))) & m
}

// find returns the slot holding field f (hash h), or the empty slot where it would go.
func (t *table) find(f []byte, h uint64) (uint64, bool) {
	m := t.mask()
	tag := h & tagMask
	for i := h & m; ; i = (i + 1) & m {
		s := t.slots[i]
		if s == 0 {
			return i, false
		}
		if s&tagMask == tag && bytes.Equal(t.arena.field(slotRef(s)), f) {
			return i, true
		}
	}
}

// lookup returns field f's record and reference.
func (t *table) lookup(f []byte) (record, uint64, bool) {
	i, ok := t.find(f, hashOf(f))
	if !ok {
		return record{}, 0, false
	}
	ref := slotRef(t.slots[i])
	return t.arena.record(ref), ref, true
}

// set sets f to v and reports whether f was added; see Hash.Set for keepTTL.
func (t *table) set(f, v []byte, keepTTL bool) bool {
	h := hashOf(f)
	i, ok := t.find(f, h)
	if !ok {
		t.insertAt(i, f, v, 0, h)
		return true
	}
	ref := slotRef(t.slots[i])
	r := t.arena.record(ref)
	ttl := t.arena.ttl(ref, &r)
	if ttl != 0 && !keepTTL {
		t.ttl.n-- // its heap entry is stale now
		ttl = 0
	}
	if len(r.value) == len(v) { // same size: overwrite in place
		copy(r.value, v)
		if r.ttlAt >= 0 {
			t.arena.setTTL(ref, &r, ttl)
		}
		return false
	}
	t.replace(i, t.arena.add(f, v, ttl, false), r.size)
	return false
}

// insertAt adds a field known to be absent, whose empty slot is i.
func (t *table) insertAt(i uint64, f, v []byte, ttl int64, h uint64) {
	if (t.count+1)*4 > len(t.slots)*3 {
		t.resize(2 * len(t.slots))
		i, _ = t.find(f, h)
	}
	t.slots[i] = makeSlot(t.arena.add(f, v, ttl, false), h)
	t.count++
	if ttl != 0 {
		t.ttl.n++
		t.ttl.push(ttl, f, t)
	}
}

// replace points slot i at a new record, freeing the old one.
func (t *table) replace(i, ref uint64, oldSize int) {
	old := slotRef(t.slots[i])
	t.slots[i] = makeSlot(ref, t.slots[i])
	t.arena.free(old, oldSize)
	if t.arena.wasteful() {
		t.compact()
	}
}

// del removes field f and reports whether it was there.
func (t *table) del(f []byte) bool {
	i, ok := t.find(f, hashOf(f))
	if ok {
		t.removeAt(i)
	}
	return ok
}

// removeAt removes the entry in slot i and shifts the entries after it that may move back.
func (t *table) removeAt(i uint64) {
	ref := slotRef(t.slots[i])
	r := t.arena.record(ref)
	if t.arena.ttl(ref, &r) != 0 {
		t.ttl.n--
	}
	t.arena.free(ref, r.size)
	m := t.mask()
	for j := (i + 1) & m; t.slots[j] != 0; j = (j + 1) & m {
		// The entry at j may fill the hole at i unless its home lies after i (cyclically),
		// in which case a lookup starting there would not pass i.
		if (j-t.home(t.slots[j]))&m >= (j-i)&m {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = 0
	t.count--
	if len(t.slots) > minSlots && t.count*8 < len(t.slots) {
		t.resize(len(t.slots) / 2)
	}
	if t.arena.wasteful() {
		t.compact()
	}
}

// resize rehomes every entry into n slots (a power of two).
func (t *table) resize(n int) {
	old := t.slots
	t.slots = make([]uint64, n)
	m := t.mask()
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := t.home(s)
		for t.slots[i] != 0 {
			i = (i + 1) & m
		}
		t.slots[i] = s
	}
}

// compact copies the live records into a fresh arena, dropping dead ones.
func (t *table) compact() {
	old := t.arena
	t.arena = arena{hint: old.live}
	t.copyRecords(&old)
}

// copyRecords re-adds the records of src referenced by the slots into t's arena.
func (t *table) copyRecords(src *arena) {
	for i, s := range t.slots {
		if s == 0 {
			continue
		}
		ref := slotRef(s)
		r := src.record(ref)
		t.slots[i] = makeSlot(t.arena.add(r.field, r.value, src.ttl(ref, &r), false), s)
	}
}

func (t *table) clone() *table {
	c := &table{slots: append([]uint64(nil), t.slots...), count: t.count}
	c.arena.hint = t.arena.live
	c.copyRecords(&t.arena)
	c.ttl.heap = append([]Deadline(nil), t.ttl.heap...)
	c.ttl.n = t.ttl.n
	return c
}

// The slot walks of HSCAN and HRANDFIELD (scan.go, random.go) for a paged table.

func (t *table) slotCount() uint64 { return uint64(len(t.slots)) }

func (t *table) homeOf(i uint64) (uint64, bool) {
	s := t.slots[i]
	if s == 0 {
		return 0, false
	}
	return t.home(s), true
}

// pair returns the field and value in slot i.
func (t *table) pair(i uint64) ([]byte, []byte) {
	r := t.arena.record(slotRef(t.slots[i]))
	return r.field, r.value
}
