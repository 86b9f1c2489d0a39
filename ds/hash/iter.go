package hash

// Iter walks a hash's fields: a small hash in insertion order, a large one in table order. The
// hash must not change during the walk. An Iter is meant to live on the caller's stack: a small
// hash's fields and values are rebuilt inside it.
type Iter struct {
	p    packedIter
	t    *table
	slot int
	rec  record
	ttl  int64
}

// Iter returns an iterator positioned before the first field.
func (h *Hash) Iter() Iter {
	if h.t != nil {
		return Iter{t: h.t, slot: -1}
	}
	var it Iter
	it.p.init(h.lp)
	return it
}

// Next moves to the next field and reports whether there is one.
func (it *Iter) Next() bool {
	if it.t == nil {
		return it.p.next()
	}
	for it.slot++; it.slot < len(it.t.slots); it.slot++ {
		if s := it.t.slots[it.slot]; s != 0 {
			ref := slotRef(s)
			it.rec = it.t.arena.record(ref)
			it.ttl = it.t.arena.ttl(ref, &it.rec)
			return true
		}
	}
	return false
}

// Field returns the current field, valid until Next.
func (it *Iter) Field() []byte {
	if it.t == nil {
		return it.p.f.bytes()
	}
	return it.rec.field
}

// Value returns the current value, valid until Next.
func (it *Iter) Value() []byte {
	if it.t == nil {
		return it.p.v.bytes()
	}
	return it.rec.value
}

// TTL returns the current field's expiry time (0: none).
func (it *Iter) TTL() int64 {
	if it.t == nil {
		return it.p.ttl
	}
	return it.ttl
}
