package filter

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTagsAgainstMaps checks the index against map[uint32]map[string]bool over random sets,
// removals and ANY/ALL matches.
func TestTagsAgainstMaps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	names := [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d")}
	idx := NewTags()
	ref := map[uint32]map[string]bool{}
	for i := 0; i < 20000; i++ {
		id := uint32(r.IntN(300))
		switch r.IntN(3) {
		case 0:
			idx.RemoveID(id)
			delete(ref, id)
		default:
			var tags [][]byte
			m := map[string]bool{}
			for _, n := range names {
				if r.IntN(3) == 0 {
					tags = append(tags, n, n) // duplicates are ignored
					m[string(n)] = true
				}
			}
			idx.Set(id, tags)
			delete(ref, id)
			if len(m) > 0 {
				ref[id] = m
			}
		}
		if i%500 != 0 {
			continue
		}
		q := names[:1+r.IntN(3)]
		for _, all := range []bool{false, true} {
			var want []uint32
			for id, m := range ref {
				hit := all
				for _, n := range q {
					if all {
						hit = hit && m[string(n)]
					} else {
						hit = hit || m[string(n)]
					}
				}
				if hit {
					want = append(want, id)
				}
			}
			slices.Sort(want)
			got := idx.Match(q, all).ToArray()
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("Match(%q, all=%v) = %v, want %v", q, all, got, want)
			}
		}
		if idx.Len() != len(ref) {
			t.Fatalf("Len %d, want %d", idx.Len(), len(ref))
		}
	}
	c := idx.Clone()
	idx.RemoveID(0)
	for id := range ref {
		if len(c.Of(id)) != len(ref[id]) {
			t.Fatalf("clone lost id %d's tags", id)
		}
	}
}
