package hash

import "slices"

// Freeze returns an independent copy of h for a snapshot to read while h goes on changing. A
// paged table is copied as it is: its slots and pages byte for byte, dead records included, so
// the copy costs a memcpy of what h holds and no work per field (Clone re-adds every field,
// which for a million fields took longer than writing them to an RDB). Other layouts are one
// buffer, copied as Clone does. The copy is a valid hash in the same encoding.
func (h *Hash) Freeze() *Hash {
	t := h.table()
	if t == nil {
		return h.Clone().(*Hash)
	}
	c := &Hash{}
	c.setTable(t.freeze())
	return c
}

func (t *table) freeze() *table {
	c := &table{slots: slices.Clone(t.slots), count: t.count, arena: t.arena.freeze()}
	c.ttl.heap = slices.Clone(t.ttl.heap)
	c.ttl.n = t.ttl.n
	return c
}

// freeze copies every page with its length and capacity, so references stay valid.
func (a *arena) freeze() arena {
	c := arena{pages: make([][]byte, len(a.pages), cap(a.pages)), total: a.total, live: a.live, hint: a.hint}
	for i, p := range a.pages {
		np := slices0(cap(p))[:len(p)]
		copy(np, p)
		c.pages[i] = np
	}
	return c
}
