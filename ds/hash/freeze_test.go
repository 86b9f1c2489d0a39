package hash

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

func (m *model) clone() *model {
	return &model{order: slices.Clone(m.order), vals: maps.Clone(m.vals), ttls: maps.Clone(m.ttls)}
}

// step applies one random Set, Delete or SetTTL to h and m.
func (m *model) step(t *testing.T, r *rand.Rand, h *Hash, lim Limits) {
	t.Helper()
	f := randField(r)
	switch r.IntN(4) {
	case 0, 1:
		v, keep := randValue(r, true), r.IntN(3) == 0
		if got, want := h.Set([]byte(f), []byte(v), keep, lim), m.set(f, v, keep); got != want {
			t.Fatalf("Set(%q) added=%v, want %v", f, got, want)
		}
	case 2:
		if got, want := h.Delete([]byte(f)), m.del(f); got != want {
			t.Fatalf("Delete(%q)=%v, want %v", f, got, want)
		}
	default:
		_, exists := m.vals[f]
		at := int64(2_000_000_000_000 + r.IntN(1000))
		if h.SetTTL([]byte(f), at) != exists {
			t.Fatalf("SetTTL(%q) != %v", f, exists)
		}
		if exists {
			m.ttls[f] = at
		}
	}
}

// TestFreezeIndependent: a frozen copy holds the hash as of the call while the hash goes on
// changing, and is itself a valid hash that changes on its own, in every layout (packed, flat,
// paged with and without TTLs).
func TestFreezeIndependent(t *testing.T) {
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 11))
		lim := Limits{MaxEntries: []int{4, 512}[seed%2], MaxValue: 64}
		h, m := New(), newModel()
		encs := map[string]bool{}
		for i := range 2000 {
			m.step(t, r, h, lim)
			if i%250 != 249 && i != 3 && i != 40 {
				continue
			}
			f, fm := h.Freeze(), m.clone()
			encs[layout(f)] = true
			if f.Encoding() != h.Encoding() {
				t.Fatalf("frozen encoding %s, hash's %s", f.Encoding(), h.Encoding())
			}
			for range 200 {
				m.step(t, r, h, lim)
			}
			checkContents(t, f, fm)
			checkContents(t, h, m)
			for range 200 {
				fm.step(t, r, f, lim)
			}
			checkContents(t, f, fm)
			checkContents(t, h, m)
		}
		t.Logf("seed %d: layouts frozen %v", seed, encs)
		if !encs["paged"] {
			t.Errorf("seed %d froze no paged table", seed)
		}
	}
}

func layout(h *Hash) string {
	switch {
	case h.table() != nil:
		return "paged"
	case h.isFlat():
		return "flat"
	}
	return "packed"
}
