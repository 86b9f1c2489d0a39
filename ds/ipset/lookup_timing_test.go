package ipset

import (
	"math/rand/v2"
	"testing"
)

// Lookups on sets of the benchmarks' shapes (benchmarks/ipsets), with random queries, so that
// most probes miss the CPU caches as they do in the server:
//
//	go test ./ds/ipset -run '^$' -bench 'Contains|Lookup' -benchtime 2s

// BenchmarkContainsHosts is Contains on 1M random IPv4 hosts (the flat host index), half hits.
func BenchmarkContainsHosts(b *testing.B) {
	s := New()
	rng := rand.New(rand.NewPCG(4, 4))
	hs := make([]uint32, 1_000_000)
	for i := range hs {
		hs[i] = rng.Uint32()
		a := U128{0, uint64(hs[i])}
		s.Add(Range{a, a, false}, Meta{}, false, false)
	}
	s.Compact()
	q := make([]U128, 1<<16)
	for i := range q {
		if i%2 == 0 {
			q[i] = U128{0, uint64(hs[rng.IntN(len(hs))])}
		} else {
			q[i] = U128{0, uint64(rng.Uint32())}
		}
	}
	benchHits(b, func(i int) bool { return s.Contains(q[i&(len(q)-1)], false, 1) })
}

// BenchmarkLookupRanges is Lookup on 380k labelled disjoint IPv4 ranges (Tor's geoip shape:
// contiguous ranges of random sizes with gaps), queries anywhere in the covered span.
func BenchmarkLookupRanges(b *testing.B) {
	s := New()
	rng := rand.New(rand.NewPCG(5, 5))
	cc := [][]byte{[]byte("US"), []byte("DE"), []byte("CN"), []byte("FR"), []byte("GB")}
	at := uint64(1 << 24)
	for range 380_000 {
		size := uint64(1) << (4 + rng.IntN(10))
		if rng.IntN(4) == 0 {
			at += size // a gap
		}
		r := Range{U128{0, at}, U128{0, at + size - 1}, false}
		s.Add(r, Meta{Label: cc[rng.IntN(len(cc))]}, false, false)
		at += size
	}
	s.Compact()
	q := make([]U128, 1<<16)
	for i := range q {
		q[i] = U128{0, 1<<24 + rng.Uint64N(at-1<<24)}
	}
	benchHits(b, func(i int) bool { _, ok := s.Lookup(q[i&(len(q)-1)], false, 1); return ok })
}

// prefixSet is n labelled IPv4 prefixes (/16../24, libloc's shape, as TestMemoryPerEntry), and
// queries: half inside an entry, half anywhere.
func prefixSet(n int) (*Set, []U128) {
	s := New()
	rng := rand.New(rand.NewPCG(6, 6))
	cc := [][]byte{[]byte("US"), []byte("DE"), []byte("CN"), []byte("FR"), []byte("GB")}
	var los []uint64
	for s.Len() < n {
		l := 16 + rng.IntN(9)
		lo, hm := mask(U128{0, uint64(rng.Uint32())}, l, 32)
		s.Add(Range{lo, U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}, false}, Meta{Label: cc[rng.IntN(len(cc))]}, false, false)
		los = append(los, lo.Lo|rng.Uint64N(hm.Lo+1))
	}
	s.Compact()
	q := make([]U128, 1<<16)
	for i := range q {
		if i%2 == 0 {
			q[i] = U128{0, los[rng.IntN(len(los))]}
		} else {
			q[i] = U128{0, uint64(rng.Uint32())}
		}
	}
	return s, q
}

// BenchmarkLookupPrefixes is Lookup (IPSET.MATCH's work) on 1M labelled IPv4 prefixes.
func BenchmarkLookupPrefixes(b *testing.B) {
	s, q := prefixSet(1_000_000)
	benchHits(b, func(i int) bool { _, ok := s.Lookup(q[i&(len(q)-1)], false, 1); return ok })
}

// BenchmarkContainsPrefixes is a batch of 100 Contains (IPSET.MCONTAINS of 100's work) on 1M
// labelled IPv4 prefixes; ns/op is per batch.
func BenchmarkContainsPrefixes(b *testing.B) {
	s, q := prefixSet(1_000_000)
	benchHits(b, func(i int) bool {
		hit := false
		for j := range 100 {
			hit = s.Contains(q[(i*100+j)&(len(q)-1)], false, 1) || hit
		}
		return hit
	})
}

// benchHits runs op(i) for i in [0, b.N) with allocations reported and the process's CPU time
// per op as cpu-ns/op, and fails when no op hit (a set or queries built wrong).
func benchHits(b *testing.B, op func(i int) bool) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuNs()
	defer func() { b.ReportMetric(float64(cpuNs()-cpu0)/float64(b.N), "cpu-ns/op") }()
	n := 0
	for i := 0; i < b.N; i++ {
		if op(i) {
			n++
		}
	}
	if n == 0 {
		b.Fatal("no hit")
	}
}

// BenchmarkLookupPrefixes6 is Lookup on 1M labelled IPv6 prefixes (/29../48, as
// TestMemoryPerEntry's; an n6 index), queries half inside an entry, half anywhere in 2000::/4.
func BenchmarkLookupPrefixes6(b *testing.B) {
	s := New()
	rng := rand.New(rand.NewPCG(6, 6))
	cc := [][]byte{[]byte("US"), []byte("DE"), []byte("CN"), []byte("FR"), []byte("GB")}
	var ins []U128
	for s.Len() < 1_000_000 {
		l := 29 + rng.IntN(20)
		lo, hm := mask(U128{0x2000<<48 | rng.Uint64N(1<<60), 0}, l, 128)
		s.Add(Range{lo, U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}, true}, Meta{Label: cc[rng.IntN(len(cc))]}, false, false)
		ins = append(ins, U128{lo.Hi | rng.Uint64()&hm.Hi, rng.Uint64()})
	}
	s.Compact()
	q := make([]U128, 1<<16)
	for i := range q {
		if i%2 == 0 {
			q[i] = ins[rng.IntN(len(ins))]
		} else {
			q[i] = U128{0x2000<<48 | rng.Uint64N(1<<60), rng.Uint64()}
		}
	}
	benchHits(b, func(i int) bool { _, ok := s.Lookup(q[i&(len(q)-1)], true, 1); return ok })
}
