package zset

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
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
