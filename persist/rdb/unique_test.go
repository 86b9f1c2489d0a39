package rdb

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// distinct agrees with a map on random member lists of every size around the pairwise limit
// and the table's growth, with and without one duplicate planted anywhere.
func TestDistinctAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var slots []uint32
	for _, n := range []int{0, 1, 2, pairwiseMax, pairwiseMax + 1, 20, 100, 1000, 5000} {
		for round := range 50 {
			elems := make([][]byte, n)
			for i := range elems {
				elems[i] = []byte(strconv.Itoa(r.IntN(4*n + 1))) // collisions happen by chance
			}
			if round%2 == 1 && n > 1 { // and on purpose
				i, j := r.IntN(n), r.IntN(n)
				elems[i] = elems[j]
			}
			seen := map[string]bool{}
			want := true
			for _, e := range elems {
				if seen[string(e)] {
					want = false
				}
				seen[string(e)] = true
			}
			if got := distinct(elems, &slots); got != want {
				t.Fatalf("n %d round %d: distinct %v, map says %v", n, round, got, want)
			}
		}
	}
}
