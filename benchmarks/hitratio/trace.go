package main

import (
	"math"
	"math/rand/v2"
	"sort"
)

// A trace is an endless stream of key ids, a function of its seed: Redis and HotKV get the same
// requests. Zipf ids are below keys; scan ids are keys and up, each used once.
type trace interface {
	next() (id uint64, scan bool)
}

// zipf draws rank r (0-based) with probability proportional to 1/(r+1)^s by inverting the
// cumulative table (8 bytes a key). math/rand's Zipf needs s > 1; the traces use 0.8 and 0.99 too.
type zipf struct {
	cdf []float64
	rng *rand.Rand
}

func newZipf(keys int, s float64, seed uint64) *zipf {
	cdf := make([]float64, keys)
	sum := 0.0
	for i := range cdf {
		sum += math.Pow(float64(i+1), -s)
		cdf[i] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	return &zipf{cdf: cdf, rng: rand.New(rand.NewPCG(seed, 0x5eed))}
}

// rank draws the next rank.
func (z *zipf) rank() int {
	u := z.rng.Float64()
	r := sort.SearchFloat64s(z.cdf, u)
	if r >= len(z.cdf) {
		r = len(z.cdf) - 1
	}
	return r
}

// next is the rank itself: servers and models hash the names, so the hot keys being the first
// ids changes nothing.
func (z *zipf) next() (uint64, bool) { return uint64(z.rank()), false }

// scanned is Zipf requests interrupted by sequential scans of fresh keys: after every run of
// zipfRun Zipf requests, scanLen requests of ids never seen before, one after another, so the
// scans make scanLen/(scanLen+zipfRun) of all requests.
type scanned struct {
	z                *zipf
	zipfRun, scanLen int
	pos              int
	fresh            uint64
}

func newScanned(z *zipf, keys int, frac float64, scanLen int) *scanned {
	run := int(float64(scanLen) * (1 - frac) / frac)
	return &scanned{z: z, zipfRun: run, scanLen: scanLen, fresh: uint64(keys)}
}

func (t *scanned) next() (uint64, bool) {
	p := t.pos
	t.pos = (t.pos + 1) % (t.zipfRun + t.scanLen)
	if p < t.zipfRun {
		return t.z.next()
	}
	t.fresh++
	return t.fresh - 1, true
}
