package keyspace

// SlotIndex lists a keyspace's entries by cluster hash slot, for cluster mode's COUNTKEYSINSLOT,
// GETKEYSINSLOT and the key checks of SETSLOT NODE, CLUSTER RESET and -ASK, none of which may
// scan the table. The keyspace keeps it in insert and unlink (set Keyspace.Slots before the first
// key, or call Reindex). It costs one pointer per key plus, for a slot holding more than
// slotMapAt keys (hash tags), a position map so that removal stays O(1); a slot's entries are in
// no particular order. Only the owning shard's goroutine (the token holder) touches it.
type SlotIndex struct {
	slot  func(key string) int // the key's hash slot, 0 ≤ slot < len(slots)
	slots []*slotKeys          // by slot; nil while the slot holds no key (but a small emptied one)
}

// slotMapAt is the size above which a slot keeps a position map instead of being searched.
const slotMapAt = 64

type slotKeys struct {
	ents []*Entry
	pos  map[*Entry]int32 // index in ents; nil while len(ents) <= slotMapAt
}

// NewSlotIndex returns an empty index of n slots, slot giving each key's slot.
func NewSlotIndex(n int, slot func(key string) int) *SlotIndex {
	return &SlotIndex{slot: slot, slots: make([]*slotKeys, n)}
}

// Count returns the number of entries (expired ones not yet reclaimed included, as Redis counts
// its dict) in slot.
func (x *SlotIndex) Count(slot int) int {
	if s := x.slots[slot]; s != nil {
		return len(s.ents)
	}
	return 0
}

// Keys calls fn for up to max entries of slot (all when max < 0) and returns how many it called.
// fn must not add or remove entries.
func (x *SlotIndex) Keys(slot, max int, fn func(e *Entry)) int {
	s := x.slots[slot]
	if s == nil {
		return 0
	}
	n := len(s.ents)
	if max >= 0 && max < n {
		n = max
	}
	for _, e := range s.ents[:n] {
		fn(e)
	}
	return n
}

func (x *SlotIndex) add(e *Entry) {
	slot := x.slot(e.Key())
	s := x.slots[slot]
	if s == nil {
		s = &slotKeys{}
		x.slots[slot] = s
	}
	if s.pos != nil {
		s.pos[e] = int32(len(s.ents))
	} else if len(s.ents) == slotMapAt {
		s.pos = make(map[*Entry]int32, 2*slotMapAt)
		for i, o := range s.ents {
			s.pos[o] = int32(i)
		}
		s.pos[e] = int32(len(s.ents))
	}
	s.ents = append(s.ents, e)
}

func (x *SlotIndex) remove(e *Entry) {
	s := x.slots[x.slot(e.Key())]
	if s == nil {
		panic("BUG: removing an entry the slot index does not hold")
	}
	i := -1
	if s.pos != nil {
		if p, ok := s.pos[e]; ok {
			i = int(p)
		}
		delete(s.pos, e)
	} else {
		for j := len(s.ents) - 1; j >= 0; j-- {
			if s.ents[j] == e {
				i = j
				break
			}
		}
	}
	if i < 0 {
		panic("BUG: removing an entry the slot index does not hold")
	}
	last := len(s.ents) - 1
	if i != last {
		moved := s.ents[last]
		s.ents[i] = moved
		if s.pos != nil {
			s.pos[moved] = int32(i)
		}
	}
	s.ents[last] = nil
	s.ents = s.ents[:last]
	// An emptied slot that grew a position map or a large array gives its memory back; a small
	// one is kept for the slot's next key, which a write that creates and deletes keys (a lock
	// key, a counter that expires) would otherwise pay two allocations for each time.
	if last == 0 && (s.pos != nil || cap(s.ents) > slotMapAt) {
		x.slots[x.slot(e.Key())] = nil
	}
}

// clear empties the index (the keyspace was cleared).
func (x *SlotIndex) clear() { clear(x.slots) }

// Reindex makes x the keyspace's slot index, adding every entry it holds (expired ones too): for
// a keyspace that had keys before cluster mode was set up. nil removes the index.
func (ks *Keyspace) Reindex(x *SlotIndex) {
	ks.Slots = x
	if x == nil {
		return
	}
	x.clear()
	ks.each(x.add)
}
