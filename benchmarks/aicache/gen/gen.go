// Package gen makes the vectors of benchmarks/aicache's GET benchmarks, so the socket driver
// (benchmarks/aicache/net) and the in-process benchmark (get_timing_test.go) see the same entries
// and queries from the same seed.
//
// Three kinds of data:
//   - random: unit vectors of independent Gaussian components, HNSW's hardest case (no
//     structure: every other entry at cosine about 0, the nearest at about 0.2);
//   - base vectors (a file of float32, as benchmarks/aicache/data/mock.f32 of USE embeddings):
//     entry j is base j mod len plus Gaussian noise of sd 0.02 a component;
//   - Gaussian clusters: the same with k random unit centres as the bases, a stand-in for
//     embeddings of a cache's users' prompts, which fall into topics.
package gen

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
)

// Gen draws vectors of one data kind. Not safe for concurrent use.
type Gen struct {
	Dim   int
	R     *rand.Rand
	Bases [][]float32 // nil: random vectors
}

// New returns a generator of random vectors with the drivers' fixed seed.
func New(dim int) *Gen { return &Gen{Dim: dim, R: rand.New(rand.NewPCG(3, 4))} }

// Clusters makes k random unit centres the bases (from their own seed, so the entries drawn
// after them are the same whatever k is).
func (g *Gen) Clusters(k int) {
	cr := rand.New(rand.NewPCG(11, uint64(k)))
	g.Bases = make([][]float32, k)
	for i := range g.Bases {
		v := make([]float32, g.Dim)
		for j := range v {
			v[j] = float32(cr.NormFloat64())
		}
		g.Bases[i] = Unit(v)
	}
}

// LoadBases reads float32 vectors of g.Dim (little endian) from path as the bases.
func (g *Gen) LoadBases(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	g.Bases = nil
	for o := 0; o+4*g.Dim <= len(raw); o += 4 * g.Dim {
		v := make([]float32, g.Dim)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[o+4*i:]))
		}
		g.Bases = append(g.Bases, v)
	}
	return nil
}

// Unit scales v to unit length in place and returns it.
func Unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// Random is a random unit vector.
func (g *Gen) Random() []float32 {
	v := make([]float32, g.Dim)
	for i := range v {
		v[i] = float32(g.R.NormFloat64())
	}
	return Unit(v)
}

// Around is base j mod len plus Gaussian noise of sd a component, unit length.
func (g *Gen) Around(j int, sd float64) []float32 {
	v := make([]float32, g.Dim)
	for i, x := range g.Bases[j%len(g.Bases)] {
		v[i] = x + float32(sd*g.R.NormFloat64())
	}
	return Unit(v)
}

// Entries are the n cached vectors: random ones, or each base's neighbourhood in turn.
func (g *Gen) Entries(n int) [][]float32 {
	out := make([][]float32, n)
	for j := range out {
		if g.Bases != nil {
			out[j] = g.Around(j, 0.02)
		} else {
			out[j] = g.Random()
		}
	}
	return out
}

// Near is a paraphrase's vector: v plus Gaussian noise of norm about noise, unit length (cosine
// about 1-noise²/2 to v); v itself when noise is 0.
func (g *Gen) Near(v []float32, noise float64) []float32 {
	if noise == 0 {
		return v
	}
	out := make([]float32, g.Dim)
	sd := noise / math.Sqrt(float64(g.Dim))
	for i, x := range v {
		out[i] = x + float32(sd*g.R.NormFloat64())
	}
	return Unit(out)
}

// Miss is a query no entry should answer: a fresh random vector, or a base plus noise of sd 0.06
// a component (cosine about 0.5 to that base's entries).
func (g *Gen) Miss() []float32 {
	if g.Bases != nil {
		return g.Around(g.R.IntN(len(g.Bases)), 0.06)
	}
	return g.Random()
}

// Blob is v as LLMCACHE's VECTOR FP32 argument.
func Blob(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}
