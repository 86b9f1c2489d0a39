package zset

import (
	"hash/maphash"
	"math/bits"
)

// The member index of a large set is an open-addressing table with linear probing. A slot is
// hash<<32 | (id+1), zero when empty; the low 32 bits of the member's hash pick its home slot,
// so resizing never rehashes a member. Deletion shifts later entries back (no tombstones), which
// keeps every entry in the run of occupied slots that starts at its home: that is what lets
// ZSCAN walk home slots with Redis's reverse-binary cursor and never miss a member.

var seed = maphash.MakeSeed()

func hashOf(member []byte) uint32 { return uint32(maphash.Bytes(seed, member)) }

const minSlots = 2 // a one-member set needs no more at 3/4 full

func slotID(s uint64) uint32   { return uint32(s) - 1 }
func slotHash(s uint64) uint32 { return uint32(s >> 32) }

// idxFind returns the slot holding member, or -1.
func (z *big) idxFind(member []byte, h uint32) int {
	mask := len(z.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := z.slots[i]
		if s == 0 {
			return -1
		}
		if slotHash(s) == h && string(z.arena.get(z.item(slotID(s)).ref)) == string(member) {
			return i
		}
	}
}

// idxSlotOf returns the slot of id, whose member hashes to h.
func (z *big) idxSlotOf(id uint32, h uint32) int {
	mask := len(z.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := z.slots[i]
		if s == 0 {
			panic("BUG: zset index lost a member")
		}
		if slotID(s) == id {
			return i
		}
	}
}

// idxInsert adds id (absent, and already counted in z.n) with hash h, growing the table first if
// it would pass 3/4 full.
func (z *big) idxInsert(id uint32, h uint32) {
	if z.n*4 > len(z.slots)*3 {
		z.idxResize(len(z.slots) * 2)
	}
	placeSlot(z.slots, uint64(h)<<32|uint64(id)+1)
}

func placeSlot(slots []uint64, s uint64) {
	mask := len(slots) - 1
	i := int(slotHash(s)) & mask
	for slots[i] != 0 {
		i = (i + 1) & mask
	}
	slots[i] = s
}

// idxDelete empties slot i and shifts back the entries after it that may move closer to home.
func (z *big) idxDelete(i int) {
	mask := len(z.slots) - 1
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := z.slots[j]
		if s == 0 {
			break
		}
		home := int(slotHash(s)) & mask
		if (j-home)&mask >= (j-i)&mask {
			z.slots[i] = s
			i = j
		}
	}
	z.slots[i] = 0
}

// idxShrink halves the table while it is under 1/8 full.
func (z *big) idxShrink() {
	size := len(z.slots)
	for size > minSlots && z.n*8 < size {
		size /= 2
	}
	if size != len(z.slots) {
		z.idxResize(size)
	}
}

func (z *big) idxResize(size int) {
	old := z.slots
	z.slots = make([]uint64, size)
	for _, s := range old {
		if s != 0 {
			placeSlot(z.slots, s)
		}
	}
}

// idxSlotsFor returns a table size that holds n members under 3/4 full.
func idxSlotsFor(n int) int {
	size := minSlots
	for n*4 > size*3 {
		size *= 2
	}
	return size
}

// scanBucket calls fn with every member whose home slot is cursor's, and returns the next
// cursor in Redis's reverse-binary order (0 when the walk is complete).
func (z *big) scanBucket(cursor uint64, fn func(id uint32)) uint64 {
	mask := uint64(len(z.slots) - 1)
	v := cursor & mask
	for j := v; ; j = (j + 1) & mask {
		s := z.slots[j]
		if s == 0 {
			break
		}
		if uint64(slotHash(s))&mask == v {
			fn(slotID(s))
		}
	}
	cursor |= ^mask
	cursor = bits.Reverse64(cursor)
	cursor++
	return bits.Reverse64(cursor)
}
