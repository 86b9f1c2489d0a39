package main

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestUniformKeysStayInRange(t *testing.T) {
	src, err := newKeySource("uniform", 10, 0, nil, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seen [10]int
	for range 100_000 {
		k, ok := src.next()
		if !ok || k >= 10 {
			t.Fatalf("key %d (ok %v) outside [0, 10)", k, ok)
		}
		seen[k]++
	}
	for k, n := range seen {
		if n < 9_000 || n > 11_000 {
			t.Fatalf("key %d drawn %d times of 100000, want about 10000", k, n)
		}
	}
}

// Connections sharing a bounded sequence load every key exactly once between them.
func TestSequenceCoversEveryKeyOnce(t *testing.T) {
	const n = 10_000 + 17 // not a multiple of the chunk
	seq := &sequence{n: n}
	counts := make([]int, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			src := &seqKeys{seq: seq}
			var mine []uint64
			for k, ok := src.next(); ok; k, ok = src.next() {
				mine = append(mine, k)
			}
			mu.Lock()
			for _, k := range mine {
				counts[k]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	for k, c := range counts {
		if c != 1 {
			t.Fatalf("key %d loaded %d times", k, c)
		}
	}
}

func TestSequenceWraps(t *testing.T) {
	src := &seqKeys{seq: &sequence{n: 3, wrap: true}}
	for i := range 1000 {
		k, ok := src.next()
		if !ok || k != uint64(i%3) {
			t.Fatalf("draw %d gave %d (ok %v), want %d", i, k, ok, i%3)
		}
	}
}

// The sampler's frequencies match the exact Zipf probabilities, below, at and above s = 1.
func TestZipfFrequencies(t *testing.T) {
	const n, draws = 20, 400_000
	for _, s := range []float64{0.5, 0.99, 1, 1.5} {
		z, err := newZipf(n, s)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.NewPCG(7, 8)
		var counts [n + 1]int
		for range draws {
			k := z.sample(rng)
			if k < 1 || k > n {
				t.Fatalf("s=%v: rank %d outside [1, %d]", s, k, n)
			}
			counts[k]++
		}
		var norm float64
		for k := 1; k <= n; k++ {
			norm += math.Pow(float64(k), -s)
		}
		for k := 1; k <= n; k++ {
			want := draws * math.Pow(float64(k), -s) / norm
			if sd := math.Sqrt(want); math.Abs(float64(counts[k])-want) > 5*sd {
				t.Fatalf("s=%v: rank %d drawn %d times, want %.0f ± %.0f", s, k, counts[k], want, 5*sd)
			}
		}
	}
}

func TestZipfLargeRange(t *testing.T) {
	src, err := newKeySource("zipf", 5_000_000, 0.99, nil, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	hot := 0
	for range 100_000 {
		k, _ := src.next()
		if k >= 5_000_000 {
			t.Fatalf("key %d out of range", k)
		}
		if k == 0 {
			hot++
		}
	}
	// P(key 0) = 1/H(5e6, 0.99), about 1/15.7: the hottest key takes about 6% of draws.
	if hot < 5_000 || hot > 8_000 {
		t.Fatalf("the hottest key was drawn %d times of 100000", hot)
	}
}

func TestKeySourceErrors(t *testing.T) {
	if _, err := newKeySource("zipf", 10, 0, nil, 1, 0); err == nil {
		t.Fatal("zipf with s = 0 accepted")
	}
	if _, err := newKeySource("gaussian", 10, 0, nil, 1, 0); err == nil {
		t.Fatal("an unknown distribution accepted")
	}
}
