package zset

import (
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/internal/smallbench"
)

// Operations on a large set of 1,000,000 members (256-byte members in the member benchmarks,
// the size the design's probe measured with), and on a full listpack of 128.

func benchSet(b *testing.B, n, size int) (*ZSet, [][]byte) {
	b.Helper()
	rng := rand.New(rand.NewSource(1))
	members := make([][]byte, n)
	for i := range members {
		p := fmt.Sprint("member:", i, ":")
		members[i] = []byte(p + strings.Repeat("v", max(size-len(p), 0)))
	}
	lim := Limits{128, 64}
	z := New()
	for _, m := range members {
		z.Add(m, rng.Float64()*1e6, 0, lim)
	}
	return z, members
}

func BenchmarkLarge(b *testing.B) {
	z, members := benchSet(b, 1_000_000, 20)
	rng := rand.New(rand.NewSource(2))
	lim := Limits{128, 64}
	b.Run("Score", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			z.Score(members[i%len(members)])
		}
	})
	b.Run("Rank", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			z.Rank(members[i%len(members)])
		}
	})
	b.Run("UpdateScore", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			z.Add(members[i%len(members)], rng.Float64()*1e6, 0, lim)
		}
	})
	b.Run("RemoveAdd", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			m := members[i%len(members)]
			z.Remove(m)
			z.Add(m, rng.Float64()*1e6, 0, lim)
		}
	})
	b.Run("Range10", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			n := 0
			z.Walk(i%(len(members)-10), false, func([]byte, float64) bool { n++; return n < 10 })
		}
	})
	b.Run("CountInScore", func(b *testing.B) {
		b.ReportAllocs()
		r := ScoreRange{Min: 1000, Max: 5000}
		for b.Loop() {
			z.CountInScore(&r)
		}
	})
}

func BenchmarkLarge256(b *testing.B) {
	z, members := benchSet(b, 100_000, 256)
	rng := rand.New(rand.NewSource(2))
	lim := Limits{128, 64}
	b.Run("Score", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(256)
		for i := 0; b.Loop(); i++ {
			z.Score(members[i%len(members)])
		}
	})
	b.Run("RemoveAdd", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(256)
		for i := 0; b.Loop(); i++ {
			m := members[i%len(members)]
			z.Remove(m)
			z.Add(m, rng.Float64()*1e6, 0, lim)
		}
	})
}

func BenchmarkListpack(b *testing.B) {
	z, members := benchSet(b, 128, 20)
	rng := rand.New(rand.NewSource(2))
	lim := Limits{128, 64}
	b.Run("Score", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			z.Score(members[i%len(members)])
		}
	})
	b.Run("UpdateScore", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			z.Add(members[i%len(members)], rng.Float64()*1e6, 0, lim)
		}
	})
	b.Run("ReverseRange10", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			z.Walk(127, true, func([]byte, float64) bool { n++; return n < 10 })
		}
	})
}

// BenchmarkSmallCollections builds smallCount sets of n members of size random bytes, one ZADD's
// worth at a time and member-major (the first member of every set, then the second...), with
// random integer scores below 1,000,000, the way the server sees ZADD key score member, and
// reports the live heap bytes per set once they are built (B/zset), and the time per add (ns/add).
func BenchmarkSmallCollections(b *testing.B) {
	smallbench.Run(b, func(b *testing.B, n, size int) {
		var perSet, perAdd float64
		for b.Loop() {
			perSet, perAdd = buildSmallSets(n, size)
		}
		b.ReportMetric(perSet, "B/zset")
		b.ReportMetric(perAdd, "ns/add")
	})
}

const smallCount = 20_000

func buildSmallSets(n, size int) (perSet, perAdd float64) {
	lim := Limits{MaxEntries: 128, MaxValue: 64}
	rng := rand.New(rand.NewSource(1))
	zs := make([]*ZSet, smallCount)
	pool := make([]byte, 1<<16) // members are random windows of it, so they share no prefixes
	for k := range pool {
		pool[k] = 'a' + byte(rng.Intn(26))
	}
	before := smallbench.LiveHeap()
	start := time.Now()
	for range n {
		for i := range zs {
			off := rng.Intn(len(pool) - size)
			if zs[i] == nil {
				zs[i] = New()
			}
			zs[i].Add(pool[off:off+size], float64(rng.Intn(1_000_000)), 0, lim)
		}
	}
	elapsed := time.Since(start)
	after := smallbench.LiveHeap()
	runtime.KeepAlive(zs)
	return float64(after-before) / smallCount, float64(elapsed.Nanoseconds()) / float64(n*smallCount)
}
