package evict

import (
	"sync/atomic"
	"testing"
)

// Benchmarks at the sizes a cache would use: 100,000 keys (1 MB of counters, in L2/L3) and
// 1,000,000 (8 MB, mostly a cache miss per call).
func benchSizes(b *testing.B, f func(b *testing.B, s *Sketch)) {
	for _, c := range []struct {
		name string
		n    int
	}{{"100k", 100_000}, {"1M", 1_000_000}} {
		b.Run(c.name, func(b *testing.B) {
			s := NewSketch(c.n)
			b.ReportAllocs()
			f(b, s)
		})
	}
}

func BenchmarkTouch(b *testing.B) {
	benchSizes(b, func(b *testing.B, s *Sketch) {
		var h uint64
		for b.Loop() {
			h += 0x9e3779b97f4a7c15
			s.Touch(h & (1<<40 - 1)) // a million or so distinct hashes, repeating
		}
	})
}

func BenchmarkEstimate(b *testing.B) {
	benchSizes(b, func(b *testing.B, s *Sketch) {
		var h uint64
		for b.Loop() {
			h += 0x9e3779b97f4a7c15
			_ = s.Estimate(h)
		}
	})
}

// BenchmarkTouchParallel: every core touching the same sketch, as shared GETs do.
func BenchmarkTouchParallel(b *testing.B) {
	benchSizes(b, func(b *testing.B, s *Sketch) {
		var seed atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			h := seed.Add(1) << 32
			for pb.Next() {
				h += 0x9e3779b97f4a7c15
				s.Touch(h)
			}
		})
	})
}

// BenchmarkTouchHotKey: one key touched by every core: its counters saturate and its doorkeeper
// bits are set, so Touch only loads (and bumps the shared touch count).
func BenchmarkTouchHotKey(b *testing.B) {
	s := NewSketch(100_000)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.Touch(42)
		}
	})
}
