package aicache

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hotkv/hotkv/ds/vector"
)

// BenchmarkRandomSearch is the semantic lookup's index search alone on the random index
// TestRandomSearch built and saved in data/ (it skips without it), for a CPU profile:
//
//	HOTKV_AICACHE_QUANT=Q8 HOTKV_AICACHE_EF=128 go test -run X -bench RandomSearch -cpuprofile /tmp/cpu.prof .
func BenchmarkRandomSearch(b *testing.B) {
	n, dim := 100000, 512
	if s := os.Getenv("HOTKV_AICACHE_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	quant := vector.NoQuant
	if os.Getenv("HOTKV_AICACHE_QUANT") == "Q8" {
		quant = vector.Q8
	}
	ef := 128
	if s := os.Getenv("HOTKV_AICACHE_EF"); s != "" {
		ef, _ = strconv.Atoi(s)
	}
	path := filepath.Join("data", fmt.Sprintf("random-%d-%d-%v.hnsw", n, dim, quant))
	if _, err := os.Stat(path); err != nil {
		b.Skipf("no saved index (run TestRandomSearch): %v", err)
	}
	s, vecs := randomSet(b, n, dim, quant)
	r := rand.New(rand.NewPCG(9, 9))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Search(vecs[r.IntN(n)], 8, ef, nil, 0)
	}
}
