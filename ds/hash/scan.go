package hash

import "math/bits"

// Scan calls fn for the fields of one HSCAN step from cursor and returns the next cursor (0
// when the scan is complete). A small hash is returned whole with cursor 0, as Redis returns a
// listpack. A large one is walked by home slot in reverse-binary order, the cursor order of
// Redis's dictScan, so a field present for the whole scan is returned at least once even when
// the table grows or shrinks between calls, or turns from flat to paged: both take a field's
// home slot from the low bits of the same hash. A step ends once the returned fields and
// values reach count, or after 10*count home slots, as Redis's scanGenericCommand bounds its
// work.
func (h *Hash) Scan(cursor uint64, count int, fn func(field, value []byte)) uint64 {
	if t := h.table(); t != nil {
		return scanSlots(t, cursor, count, fn)
	}
	if h.isFlat() {
		return scanSlots(flat(h.buf()), cursor, count, fn)
	}
	for it := h.Iter(); it.Next(); {
		fn(it.Field(), it.Value())
	}
	return 0
}

// slotted is a large hash's slots, for the walks HSCAN and HRANDFIELD make of them: *table and
// flat.
type slotted interface {
	slotCount() uint64                   // a power of two
	homeOf(i uint64) (uint64, bool)      // the home slot of slot i's entry; false when i is empty
	pair(i uint64) (field, value []byte) // slot i's entry, which must be there
}

func scanSlots[S slotted](x S, cursor uint64, count int, fn func(field, value []byte)) uint64 {
	m := x.slotCount() - 1
	seen := 0
	for steps := 0; ; steps++ {
		home := cursor & m
		// An entry with this home sits in the run of occupied slots starting at it.
		for i := home; ; i = (i + 1) & m {
			hi, ok := x.homeOf(i)
			if !ok {
				break
			}
			if hi == home {
				fn(x.pair(i))
				seen++
			}
		}
		cursor = nextCursor(cursor, m)
		if cursor == 0 || 2*seen >= count || steps >= 10*count {
			return cursor
		}
	}
}

// nextCursor increments the bits of cursor under mask m in reverse order.
func nextCursor(cursor, m uint64) uint64 {
	cursor |= ^m
	cursor = bits.Reverse64(cursor)
	cursor++
	return bits.Reverse64(cursor)
}
