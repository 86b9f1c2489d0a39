package geo

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
)

// The per-point costs of a search: the correctly rounded distance (five double-double
// evaluations), the rough one on Go's math library that rules most candidates out, and decoding.
func BenchmarkDistance(b *testing.B) {
	b.ReportAllocs()
	var sink float64
	for i := range b.N {
		sink += Distance(13.361389, 38.115556, 15.087269+float64(i&7)*1e-3, 37.502669)
	}
	_ = sink
}

func BenchmarkRoughDistance(b *testing.B) {
	b.ReportAllocs()
	var sink float64
	for i := range b.N {
		sink += roughDistance(13.361389, 38.115556, 15.087269+float64(i&7)*1e-3, 37.502669)
	}
	_ = sink
}

func BenchmarkDecode(b *testing.B) {
	b.ReportAllocs()
	var sink float64
	for i := range b.N {
		lon, lat := Decode(float64(3479099956230698 + i&1023))
		sink += lon + lat
	}
	_ = sink
}

func BenchmarkAppendDistance(b *testing.B) {
	b.ReportAllocs()
	var buf [32]byte
	d := 14576551.806850001
	for i := 0; i < b.N; i++ {
		_ = AppendDistance(buf[:0], d+float64(i&1023))
	}
}

// BenchmarkWithin is a search's per-candidate test as src/command's BenchmarkGeoHotPath meets
// it: 10,000 points on a 2x2 degree patch, the candidates of a 5 km circle's or a 10x10 km box's
// geohash boxes, with and without the distances (NoDist). ns/op is per candidate; cpu-ns/op the
// process's CPU time per candidate, steadier than wall time on a shared machine.
func BenchmarkWithin(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	var scores []float64
	for range 10000 {
		s, _ := Encode(13+2*r.Float64(), 37+2*r.Float64())
		scores = append(scores, float64(s))
	}
	slices.Sort(scores)
	for _, c := range []struct {
		name string
		s    Shape
	}{
		{"radius", Shape{Lon: 14, Lat: 38, Radius: 5, Conv: 1000, NoDist: true}},
		{"radius-dist", Shape{Lon: 14, Lat: 38, Radius: 5, Conv: 1000}},
		{"box", Shape{Lon: 14, Lat: 38, Box: true, Width: 10, Height: 10, Conv: 1000, NoDist: true}},
		{"box-dist", Shape{Lon: 14, Lat: 38, Box: true, Width: 10, Height: 10, Conv: 1000}},
	} {
		var boxes [9]ScoreRange
		var cand []float64
		for _, bx := range c.s.Boxes(&boxes) {
			for _, sc := range scores {
				if sc >= float64(bx.Min) && sc < float64(bx.Max) {
					cand = append(cand, sc)
				}
			}
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			in := 0
			t0 := cpuNanos()
			for i := range b.N {
				if _, _, _, ok := c.s.Within(cand[i%len(cand)]); ok {
					in++
				}
			}
			b.ReportMetric(float64(cpuNanos()-t0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(cand)), "candidates")
			_ = in
		})
	}
}

func cpuNanos() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
