package main

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
)

// seqChunk is how many consecutive keys a connection takes from a shared sequence at a time, so that
// connections touch the shared counter once per chunk instead of once per key.
const seqChunk = 256

// uniformKeys draws keys uniformly from [0, n) with a per-connection generator.
type uniformKeys struct {
	rng rand.PCG
	n   uint64
}

func (u *uniformKeys) next() (uint64, bool) {
	hi, _ := bits.Mul64(u.rng.Uint64(), u.n) // multiply-shift (Lemire): bias at most n/2^64
	return hi, true
}

// sequence is the counter that sequential connections share; wrap makes it endless (the run phase),
// otherwise it ends after n keys (the prefill, which must load every key exactly once).
type sequence struct {
	at   atomic.Uint64
	n    uint64
	wrap bool
}

// seqKeys hands out its connection's current chunk of the shared sequence.
type seqKeys struct {
	seq      *sequence
	cur, end uint64
}

func (s *seqKeys) next() (uint64, bool) {
	if s.cur == s.end {
		start := s.seq.at.Add(seqChunk) - seqChunk
		if !s.seq.wrap {
			if start >= s.seq.n {
				return 0, false
			}
			s.cur, s.end = start, min(start+seqChunk, s.seq.n)
		} else {
			s.cur, s.end = start, start+seqChunk
		}
	}
	k := s.cur
	s.cur++
	if s.seq.wrap {
		k %= s.seq.n
	}
	return k, true
}

// zipfKeys draws key k (0-based) with probability proportional to 1/(k+1)^s: key 0 is the hottest.
type zipfKeys struct {
	rng rand.PCG
	z   *zipf
}

func (z *zipfKeys) next() (uint64, bool) {
	return z.z.sample(&z.rng) - 1, true
}

// newKeySource builds connection i's source for a distribution.
func newKeySource(dist string, n uint64, s float64, seq *sequence, seed uint64, i int) (keySource, error) {
	rng := rand.NewPCG(seed, uint64(i)*0x9E3779B97F4A7C15+1)
	switch dist {
	case "uniform":
		return &uniformKeys{rng: *rng, n: n}, nil
	case "sequential":
		return &seqKeys{seq: seq}, nil
	case "zipf":
		z, err := newZipf(n, s)
		if err != nil {
			return nil, err
		}
		return &zipfKeys{rng: *rng, z: z}, nil
	}
	return nil, fmt.Errorf("unknown --distribution %q (uniform, sequential or zipf)", dist)
}
