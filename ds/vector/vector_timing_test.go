package vector

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

func BenchmarkKernels(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const d = 784
	fa, fb := randVec(r, d), randVec(r, d)
	ia, ib := make([]int8, d), make([]int8, d)
	for i := range ia {
		ia[i], ib[i] = int8(r.IntN(255)-127), int8(r.IntN(255)-127)
	}
	for _, k := range []struct {
		name string
		k    kernel
	}{{"simd", newKernel()}, {"go", goKernel{}}} {
		b.Run("dot784/"+k.name, func(b *testing.B) {
			b.ReportAllocs()
			var s float32
			for range b.N {
				s += k.k.dot(fa, fb)
			}
			_ = s
		})
		b.Run("l2_784/"+k.name, func(b *testing.B) {
			b.ReportAllocs()
			var s float32
			for range b.N {
				s += k.k.l2(fa, fb)
			}
			_ = s
		})
		b.Run("dotI8_784/"+k.name, func(b *testing.B) {
			b.ReportAllocs()
			var s int32
			for range b.N {
				s += k.k.dotI8(ia, ib)
			}
			_ = s
		})
	}
}

func benchSet(b *testing.B, c Config, n int) (*Set, [][]float32) {
	b.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	data := clustered(r, n+200, c.Dim)
	s, _ := New(c)
	for i, v := range data[:n] {
		s.Add([]byte(fmt.Sprint(i)), v, 0)
	}
	return s, data[n:]
}

// BenchmarkSearch: one search (k 10, EF 100) on 10k generated 128-dim vectors; allocations are the
// result slice only. serial vs parallel at -cpu 1,2 is the two-thread speed-up of shared reads.
func BenchmarkSearch(b *testing.B) {
	for _, q := range []Quant{NoQuant, Q8, Bin} {
		b.Run(q.String(), func(b *testing.B) {
			c := Config{Dim: 128, Quant: q, Seed: 9}
			s, qs := benchSet(b, c, 10000)
			b.Run("serial", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for i := range b.N {
					s.Search(qs[i%len(qs)], 10, 100, nil, 0)
				}
			})
			b.Run("parallel", func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						s.Search(qs[i%len(qs)], 10, 100, nil, 0)
						i++
					}
				})
			})
		})
	}
}

// cpuPerOp reports the process's CPU time per op beside ns/op: on a shared machine two threads may
// not get two cores, and equal cpu-ns/op at -cpu 1 and 2 shows the searches themselves scale.
func cpuPerOp(b *testing.B) func() {
	var r0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	return func() {
		var r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, q := range []Quant{NoQuant, Q8} {
		b.Run(q.String(), func(b *testing.B) {
			c := Config{Dim: 128, Quant: q, Seed: 9}
			r := rand.New(rand.NewPCG(5, 6))
			data := clustered(r, 4096, c.Dim)
			s, _ := New(c)
			b.ReportAllocs()
			for i := range b.N {
				s.Add([]byte(fmt.Sprint(i)), data[i%len(data)], 0)
			}
		})
	}
}

var largeSet struct {
	s  *Set
	qs [][]float32
}

// BenchmarkSearchLarge: searches (k 10, EF 100) on 20k generated 784-dim FP32 vectors
// (63 MB of arena, past the caches, as Fashion-MNIST's 188 MB is), once per prefetchN (0: off),
// one after another in each run, so repeated runs interleave the A/B. The set is built once per process.
func BenchmarkSearchLarge(b *testing.B) {
	if largeSet.s == nil {
		largeSet.s, largeSet.qs = benchSet(b, Config{Dim: 784, Quant: NoQuant, Seed: 9}, 20000)
	}
	s, qs := largeSet.s, largeSet.qs
	defer func(n int) { prefetchN = n }(prefetchN)
	for _, n := range []int{0, 4, 8, 16} {
		b.Run(fmt.Sprintf("prefetch-lines%d", n), func(b *testing.B) {
			prefetchN = n
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for i := range b.N {
				s.Search(qs[i%len(qs)], 10, 100, nil, 0)
			}
		})
	}
}

// BenchmarkFreeze: what a snapshot's copy of a large set costs holding its shard (Freeze) against
// writing the set there (AppendBinary), on 10k generated 128-dim Q8 vectors.
func BenchmarkFreeze(b *testing.B) {
	s, _ := benchSet(b, Config{Dim: freezeDim, Quant: Q8, Seed: 9, EF: 40}, 10000)
	b.Run("freeze", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for range b.N {
			s.Freeze()
		}
	})
	b.Run("append-binary", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		var buf []byte
		for range b.N {
			buf = s.AppendBinary(buf[:0])
		}
	})
}

var freezeDim = 784
