package ipset

import (
	"math/rand/v2"
	"syscall"
	"testing"
)

// cpuNs is the process's CPU time (user and system), which the shared machine's load does not
// inflate as it does wall time.
func cpuNs() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkLoadPrefixes is a bulk load of 200k labelled IPv4 prefixes (/16../24, libloc's shape)
// into an empty set, one Add each, then Compact: the writer's cost of the pending merges.
func BenchmarkLoadPrefixes(b *testing.B) {
	const n = 200_000
	cc := [][]byte{[]byte("US"), []byte("DE"), []byte("CN"), []byte("FR"), []byte("GB")}
	rng := rand.New(rand.NewPCG(1, 2))
	rs := make([]Range, n)
	for i := range rs {
		l := 16 + rng.IntN(9)
		lo, hm := mask(U128{0, uint64(rng.Uint32())}, l, 32)
		rs[i] = Range{lo, U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}, false}
	}
	cpu0 := cpuNs()
	b.ResetTimer()
	for range b.N {
		s := New()
		for i, r := range rs {
			s.Add(r, Meta{Label: cc[i%len(cc)]}, false, false)
		}
		s.Compact()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
	b.ReportMetric(float64(cpuNs()-cpu0)/float64(b.N*n), "cpu-ns/entry")
}

// BenchmarkLoadHosts is a bulk load of 1M random plain IPv4 hosts, one Add each, then Compact.
func BenchmarkLoadHosts(b *testing.B) {
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	rs := make([]Range, n)
	for i := range rs {
		a := U128{0, uint64(rng.Uint32())}
		rs[i] = Range{a, a, false}
	}
	cpu0 := cpuNs()
	b.ResetTimer()
	for range b.N {
		s := New()
		for _, r := range rs {
			s.Add(r, Meta{}, false, false)
		}
		s.Compact()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
	b.ReportMetric(float64(cpuNs()-cpu0)/float64(b.N*n), "cpu-ns/entry")
}
