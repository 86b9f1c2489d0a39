package zset

import (
	"maps"
	"math/rand"
	"testing"
)

// TestFreezeIndependent: a frozen copy holds the set as of the call while the set goes on
// changing, and is itself a valid set that changes on its own (both checked against a model
// each, structure included).
func TestFreezeIndependent(t *testing.T) {
	for seed := range 8 {
		rng := rand.New(rand.NewSource(int64(seed)))
		lim := []Limits{{MaxEntries: 0, MaxValue: 0}, {MaxEntries: 16, MaxValue: 64}}[seed%2]
		space := []int{60, 3000}[seed/2%2]
		z, m := New(), model{}
		for step := range 3000 {
			randomOp(t, rng, z, m, lim, space)
			if step%500 != 499 {
				continue
			}
			f, fm := z.Freeze(), maps.Clone(m)
			if f.Encoding() != z.Encoding() {
				t.Fatalf("frozen encoding %s, set's %s", f.Encoding(), z.Encoding())
			}
			for range 300 { // the original changes: the copy does not
				randomOp(t, rng, z, m, lim, space)
			}
			checkAgainst(t, f, fm)
			checkAgainst(t, z, m)
			for range 300 { // the copy changes: the original does not
				randomOp(t, rng, f, fm, lim, space)
			}
			checkAgainst(t, f, fm)
			checkAgainst(t, z, m)
		}
	}
}
