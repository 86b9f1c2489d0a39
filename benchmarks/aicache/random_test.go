package aicache

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/vector"
)

// TestRandomSearch measures the vector index an LLMCACHE namespace uses on random unit vectors
// (HNSW's hardest case: no clusters, every other entry at cosine about 0): for each search EF,
// how often an entry's own vector finds the entry first (recall@1 of a semantic self-hit) and the
// search's p50/p99, single goroutine, in-process. The index is built once (HOTKV_AICACHE_N
// entries, default 100,000, of 512 dims) and kept in data/ (git-ignored) for later runs.
//
//	HOTKV_AICACHE_RANDOM=1 flock /tmp/h/bench.lock go test -run TestRandomSearch -v .
func TestRandomSearch(t *testing.T) {
	if os.Getenv("HOTKV_AICACHE_RANDOM") == "" {
		t.Skip("set HOTKV_AICACHE_RANDOM=1")
	}
	n, dim := 100000, 512
	if s := os.Getenv("HOTKV_AICACHE_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for _, quant := range []vector.Quant{vector.NoQuant, vector.Q8} {
		s, vecs := randomSet(t, n, dim, quant)
		r := rand.New(rand.NewPCG(9, 9))
		for _, ef := range []int{64, 128, 256, 512} {
			lat := make([]time.Duration, 0, 2000)
			self := 0
			for range 2000 {
				j := r.IntN(n)
				t0 := time.Now()
				res := s.Search(vecs[j], 8, ef, nil, 0)
				lat = append(lat, time.Since(t0))
				if len(res) > 0 && string(s.Name(res[0].ID)) == strconv.Itoa(j) {
					self++
				}
			}
			sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
			t.Logf("quant %v EF %d: self-hit %.3f, p50 %v p99 %v", quant, ef, float64(self)/2000,
				lat[len(lat)/2], lat[len(lat)*99/100])
		}
	}
}

func randomSet(t testing.TB, n, dim int, quant vector.Quant) (*vector.Set, [][]float32) {
	r := rand.New(rand.NewPCG(3, 4))
	vecs := make([][]float32, n)
	for i := range vecs {
		v := make([]float32, dim)
		var s float64
		for k := range v {
			v[k] = float32(r.NormFloat64())
			s += float64(v[k]) * float64(v[k])
		}
		for k := range v {
			v[k] /= float32(math.Sqrt(s))
		}
		vecs[i] = v
	}
	path := filepath.Join("data", fmt.Sprintf("random-%d-%d-%v.hnsw", n, dim, quant))
	if b, err := os.ReadFile(path); err == nil {
		if s, err := vector.Decode(b); err == nil {
			return s, vecs
		}
	}
	s, err := vector.New(vector.Config{Dim: dim, Metric: vector.Cosine, Quant: quant, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i, v := range vecs {
		if _, err := s.Add([]byte(strconv.Itoa(i)), v, 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("built %d x %d %v in %v", n, dim, quant, time.Since(start).Round(time.Millisecond))
	os.MkdirAll("data", 0o755)
	os.WriteFile(path, s.AppendBinary(nil), 0o644)
	return s, vecs
}
