package ipset

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHas16 checks the branch-free search against slices.BinarySearch on random sorted slices
// of every length up to 200, for members, gaps and both ends.
func TestHas16(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 16))
	for n := 0; n <= 200; n++ {
		for range 20 {
			l := make([]uint16, 0, n)
			for range n {
				l = append(l, uint16(rng.Uint32()))
			}
			slices.Sort(l)
			l = slices.Compact(l)
			probe := []uint16{0, 1, 0xffff, 0xfffe, uint16(rng.Uint32())}
			for _, x := range l {
				probe = append(probe, x, x-1, x+1)
			}
			for _, x := range probe {
				_, want := slices.BinarySearch(l, x)
				if got := has16(l, x); got != want {
					t.Fatalf("has16(%v, %d) = %v, want %v", l, x, got, want)
				}
			}
		}
	}
}
