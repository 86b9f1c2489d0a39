package vector

import (
	"fmt"
	"slices"
)

// validate checks every structural invariant: links point to live nodes that reach the level, no
// self or duplicate links, counts within capacity, reverse links exactly mirror forward links, the
// name map matches, and the entry point is the highest node.
func (s *Set) validate() error {
	live, top := 0, -1
	want := map[uint32][]uint32{}
	for i, l := range s.level {
		id := uint32(i)
		if l == freeLevel {
			continue
		}
		live++
		top = max(top, int(l))
		if got, ok := s.byName[s.names[id]]; !ok || got != id {
			return fmt.Errorf("id %d: name %q maps to %d", id, s.names[id], got)
		}
		for lv := 0; lv <= int(l); lv++ {
			ls := s.links(id, lv)
			if len(ls) > s.capAt(lv) {
				return fmt.Errorf("id %d level %d: %d links", id, lv, len(ls))
			}
			for j, nb := range ls {
				if nb == id || !s.live(nb) || int(s.level[nb]) < lv || slices.Contains(ls[:j], nb) {
					return fmt.Errorf("id %d level %d: bad link %d", id, lv, nb)
				}
				want[nb] = append(want[nb], revEntry(lv, id))
			}
		}
	}
	for i := range s.level {
		id := uint32(i)
		got := slices.Clone(s.rev[id])
		w := want[id]
		slices.Sort(got)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			return fmt.Errorf("id %d: reverse links %v, forward say %v", id, got, w)
		}
	}
	// Every node is reachable at each of its levels: it has an in-link unless it is alone there.
	perLevel := make([]int, MaxLevel+1)
	for _, l := range s.level {
		if l != freeLevel {
			for lv := 0; lv <= int(l); lv++ {
				perLevel[lv]++
			}
		}
	}
	for i, l := range s.level {
		if l == freeLevel {
			continue
		}
		for lv := 0; lv <= int(l); lv++ {
			if perLevel[lv] > 1 && (!s.hasIn(uint32(i), lv) || len(s.links(uint32(i), lv)) == 0) {
				return fmt.Errorf("id %d level %d: no in-link or no out-link (%d nodes at that level): in %v out %v entry %d max %d", i, lv, perLevel[lv], s.rev[i], s.links(uint32(i), lv), s.entry, s.maxLevel)
			}
		}
	}
	heap := 0
	for i := range s.level {
		heap += len(s.names[i]) + cap(s.attrs[i]) + 4*(cap(s.upper[i])+cap(s.rev[i]))
	}
	if heap != s.heap {
		return fmt.Errorf("per-element bytes counted %d, held %d", s.heap, heap)
	}
	if live != s.count || len(s.byName) != s.count {
		return fmt.Errorf("count %d, live %d, names %d", s.count, live, len(s.byName))
	}
	if s.count > 0 && (!s.live(s.entry) || int(s.level[s.entry]) != s.maxLevel || top != s.maxLevel) {
		return fmt.Errorf("entry %d level %d, maxLevel %d, top %d", s.entry, s.level[s.entry], s.maxLevel, top)
	}
	return nil
}
