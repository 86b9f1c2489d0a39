package hash

// RandomPairs calls fn with count fields picked at random and their values: distinct fields when
// unique (count must not exceed Len), otherwise picked independently, so that some may repeat.
// rnd returns random numbers.
func (h *Hash) RandomPairs(count int, unique bool, rnd func() uint64, fn func(field, value []byte)) {
	if t := h.table(); t != nil {
		randomSlots(t, t.count, count, unique, rnd, fn)
		return
	}
	if h.isFlat() {
		b := flat(h.buf())
		randomSlots(b, b.count(), count, unique, rnd, fn)
		return
	}
	var all pairList
	for it := h.Iter(); it.Next(); {
		all.add(it.Field(), it.Value())
	}
	n := all.len()
	if !unique {
		for range count {
			fn(all.pair(int(rnd() % uint64(n))))
		}
		return
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for i := range count { // the first count steps of a Fisher-Yates shuffle
		j := i + int(rnd()%uint64(n-i))
		idx[i], idx[j] = idx[j], idx[i]
		fn(all.pair(idx[i]))
	}
}

// pairList holds copies of pairs in one buffer.
type pairList struct {
	buf  []byte
	ends []int // the end of each field, then of its value
}

func (l *pairList) add(f, v []byte) {
	l.buf = append(l.buf, f...)
	l.ends = append(l.ends, len(l.buf))
	l.buf = append(l.buf, v...)
	l.ends = append(l.ends, len(l.buf))
}

func (l *pairList) len() int { return len(l.ends) / 2 }

func (l *pairList) pair(i int) ([]byte, []byte) {
	start := 0
	if i > 0 {
		start = l.ends[2*i-1]
	}
	mid, end := l.ends[2*i], l.ends[2*i+1]
	return l.buf[start:mid], l.buf[mid:end]
}

// randomSlots is RandomPairs for a large hash of n fields. Picking distinct fields follows
// Redis's HRANDFIELD: when count is close to the size, drop random fields from the whole set;
// otherwise pick random slots until count distinct ones came up.
func randomSlots[S slotted](x S, n, count int, unique bool, rnd func() uint64, fn func(f, v []byte)) {
	switch {
	case !unique:
		for range count {
			fn(x.pair(randomSlot(x, rnd)))
		}
	case count*3 > n:
		slots := make([]uint64, 0, n)
		for i := range x.slotCount() {
			if _, ok := x.homeOf(i); ok {
				slots = append(slots, i)
			}
		}
		for len(slots) > count {
			j := rnd() % uint64(len(slots))
			slots[j] = slots[len(slots)-1]
			slots = slots[:len(slots)-1]
		}
		for _, i := range slots {
			fn(x.pair(i))
		}
	default:
		seen := make(map[uint64]struct{}, count)
		for len(seen) < count {
			i := randomSlot(x, rnd)
			if _, dup := seen[i]; !dup {
				seen[i] = struct{}{}
				fn(x.pair(i))
			}
		}
	}
}

// randomSlot returns a random occupied slot; the table must not be empty.
func randomSlot[S slotted](x S, rnd func() uint64) uint64 {
	m := x.slotCount() - 1
	for {
		i := rnd() & m
		if _, ok := x.homeOf(i); ok {
			return i
		}
	}
}
