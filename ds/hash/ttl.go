package hash

import "unsafe"

// Per-field expiry of a large hash. Each field's TTL is in its record; the table also keeps a
// min-heap of (time, field) so that expiring is proportional to what expires, not to the hash.
// Heap entries are not removed when a TTL changes or its field goes: an entry whose field no
// longer has that TTL is stale and skipped when it surfaces, and the heap is rebuilt from the
// records when stale entries outnumber live ones.

type ttlIndex struct {
	Deadlines     // (time, field) of every TTL set, stale ones included
	n         int // fields that have a TTL
}

// push records that field f expires at at. t rebuilds the heap when it is mostly stale.
func (x *ttlIndex) push(at int64, f []byte, t *table) {
	if x.Len() > 2*x.n+32 {
		x.rebuild(t)
		if x.has(at, f) {
			return // the rebuild picked up f's new TTL already
		}
	}
	x.Push(at, string(f))
}

func (x *ttlIndex) has(at int64, f []byte) bool {
	for _, e := range x.heap {
		if e.At == at && e.Name == string(f) {
			return true
		}
	}
	return false
}

// min returns the earliest time in the heap, which may be stale-early.
func (x *ttlIndex) min() (int64, bool) {
	e, ok := x.Min()
	return e.At, ok
}

// rebuild refills the heap from the records' TTLs.
func (x *ttlIndex) rebuild(t *table) {
	x.heap = x.heap[:0]
	n := x.n
	x.n = 0
	for _, s := range t.slots {
		if s == 0 {
			continue
		}
		ref := slotRef(s)
		r := t.arena.record(ref)
		if at := t.arena.ttl(ref, &r); at != 0 {
			x.n++
			x.push(at, r.field, t)
		}
	}
	if x.n != n {
		panic("BUG: hash: TTL count out of step with the records")
	}
}

// ttlOf returns field f's TTL (0: none) and whether f exists.
func (t *table) ttlOf(f []byte) (int64, bool) {
	r, ref, ok := t.lookup(f)
	if !ok {
		return 0, false
	}
	return t.arena.ttl(ref, &r), true
}

// setTTL sets field f's TTL (unix ms; 0 removes it) and reports whether f exists.
func (t *table) setTTL(f []byte, at int64) bool {
	i, ok := t.find(f, hashOf(f))
	if !ok {
		return false
	}
	ref := slotRef(t.slots[i])
	r := t.arena.record(ref)
	old := t.arena.ttl(ref, &r)
	switch {
	case r.ttlAt >= 0:
		t.arena.setTTL(ref, &r, at)
	case at != 0: // the record has no room for a TTL: write a new one
		t.replace(i, t.arena.add(r.field, r.value, at, true), r.size)
	}
	switch {
	case old == 0 && at != 0:
		t.ttl.n++
	case old != 0 && at == 0:
		t.ttl.n--
	}
	if at != 0 {
		t.ttl.push(at, f, t)
	}
	return true
}

// expire removes at most max of the fields whose TTL is at or before now (unix ms) and
// returns how many it removed.
func (t *table) expire(now int64, max int) int {
	n := 0
	for n < max {
		at, ok := t.ttl.min()
		if !ok || at > now {
			return n
		}
		e := t.ttl.Pop()
		f := unsafe.Slice(unsafe.StringData(e.Name), len(e.Name)) // read only
		i, found := t.find(f, hashOf(f))
		if !found {
			continue
		}
		ref := slotRef(t.slots[i])
		r := t.arena.record(ref)
		if t.arena.ttl(ref, &r) == e.At {
			t.removeAt(i)
			n++
		}
	}
	return n
}

// nextExpiry returns a time at or before the earliest field TTL (0: none).
func (t *table) nextExpiry() int64 {
	if t.ttl.n == 0 {
		return 0
	}
	at, _ := t.ttl.min()
	return at
}
