package hash

// Iter walks a hash's fields: a small hash in insertion order, a large one in table order. The
// hash must not change during the walk. An Iter is meant to live on the caller's stack: a small
// hash's fields and values are rebuilt inside it.
type Iter struct {
	p    packedIter
	t    *table
	fb   flat
	slot int
	rec  record
	ttl  int64
}

// Iter returns an iterator positioned before the first field.
func (h *Hash) Iter() Iter {
	if t := h.table(); t != nil {
		return Iter{t: t, slot: -1}
	}
	if h.isFlat() {
		return Iter{fb: flat(h.buf()), slot: -1}
	}
	var it Iter
	it.p.init(h.buf())
	return it
}

// Next moves to the next field and reports whether there is one.
func (it *Iter) Next() bool {
	switch {
	case it.t != nil:
		for it.slot++; it.slot < len(it.t.slots); it.slot++ {
			if s := it.t.slots[it.slot]; s != 0 {
				ref := slotRef(s)
				it.rec = it.t.arena.record(ref)
				it.ttl = it.t.arena.ttl(ref, &it.rec)
				return true
			}
		}
		return false
	case it.fb != nil:
		for it.slot++; it.slot <= it.fb.mask(); it.slot++ {
			if s := it.fb.slot(it.slot); s != 0 {
				it.rec.field, it.rec.value, _ = it.fb.record(int(s >> 16))
				return true
			}
		}
		return false
	}
	return it.p.next()
}

// Field returns the current field, valid until Next.
func (it *Iter) Field() []byte {
	if it.t == nil && it.fb == nil {
		return it.p.f.bytes()
	}
	return it.rec.field
}

// Value returns the current value, valid until Next.
func (it *Iter) Value() []byte {
	if it.t == nil && it.fb == nil {
		return it.p.v.bytes()
	}
	return it.rec.value
}

// TTL returns the current field's expiry time (0: none).
func (it *Iter) TTL() int64 {
	if it.t == nil && it.fb == nil {
		return it.p.ttl
	}
	return it.ttl
}
