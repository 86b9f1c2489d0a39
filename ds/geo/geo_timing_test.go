package geo

import "testing"

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
