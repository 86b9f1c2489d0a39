package vector

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestSearchNarrow: on random vectors (no structure, so a query's own vector is its only
// neighbour above a high score), SearchNarrow finds the same best result as Search for queries
// with a result above minScore, with fewer distances; for queries with none it returns exactly
// Search's results with exactly its distances. Q8 and FP32, cosine and L2, filtered and not.
func TestSearchNarrow(t *testing.T) {
	const n, dim, ef = 3000, 64, 64
	var cnt int64
	old := kern
	kern = countKernel{old, &cnt}
	defer func() { kern = old }()
	for _, c := range []Config{{Dim: dim, Quant: Q8}, {Dim: dim, Quant: NoQuant}, {Dim: dim, Metric: L2, Quant: Q8}} {
		c.Seed = 7
		s, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		vecs := make([][]float32, n)
		for i := range vecs {
			vecs[i] = randVec(r, dim)
			if _, err := s.Add([]byte(strconv.Itoa(i)), vecs[i], 0); err != nil {
				t.Fatal(err)
			}
		}
		odd := func(id uint32) bool { return id%2 == 1 }
		for _, filter := range []func(uint32) bool{nil, odd} {
			var wide, narrow int64
			for i := range 200 {
				j := 2*r.IntN(n/2) + 1 // odd: the filter keeps it
				self := vecs[j]
				// A score the own vector reaches (Q8 stores it approximately) and no other does.
				minScore := s.SearchExact(self, 1, nil)[0].Score * 0.999
				cnt = 0
				a := s.Search(self, 8, ef, filter, 0)
				wide += cnt
				cnt = 0
				b := s.SearchNarrow(self, 8, ef, minScore, filter, 0)
				narrow += cnt
				if len(a) == 0 || len(b) == 0 || a[0] != b[0] {
					t.Fatalf("%+v query %d: Search's best %v, SearchNarrow's %v", c, i, a, b)
				}
				// A miss: nothing scores 2 (cosine) or above the best possible L2 score.
				miss := randVec(r, dim)
				cnt = 0
				a = s.Search(miss, 8, ef, filter, 0)
				wa := cnt
				cnt = 0
				b = s.SearchNarrow(miss, 8, ef, 1.5, filter, 0)
				if !slices.Equal(a, b) || cnt != wa {
					t.Fatalf("%+v miss %d: Search %v (%d distances), SearchNarrow %v (%d)", c, i, a, wa, b, cnt)
				}
			}
			t.Logf("%+v filtered %v: %d distances a self-query wide, %d narrowed", c, filter != nil, wide/200, narrow/200)
			if narrow >= wide*9/10 {
				t.Errorf("%+v: SearchNarrow computed %d distances, Search %d: not narrowed", c, narrow, wide)
			}
		}
	}
}
