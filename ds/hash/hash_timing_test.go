package hash

import (
	"fmt"
	"strings"
	"testing"
)

// Operations on a small hash of 10 fields (40-byte values, front coded) and a large one of
// 10,000 fields with 256-byte values, the value size the design's probe measured with.

func benchHash(n, vlen int) (*Hash, [][]byte) {
	lim := Limits{MaxEntries: 512, MaxValue: 64}
	h := New()
	var fields [][]byte
	for i := range n {
		f := fmt.Appendf(nil, "field:%d", i)
		fields = append(fields, f)
		h.Set(f, []byte(strings.Repeat("v", vlen-5)+fmt.Sprintf("%05d", i)), false, lim)
	}
	return h, fields
}

func BenchmarkHash(b *testing.B) {
	for _, c := range []struct {
		name    string
		n, vlen int
	}{{"listpack", 10, 40}, {"hashtable", 10_000, 256}} {
		h, fields := benchHash(c.n, c.vlen)
		lim := Limits{MaxEntries: 512, MaxValue: 64}
		b.Run(c.name+"/Get", func(b *testing.B) {
			b.ReportAllocs()
			var buf [64]byte
			i := 0
			for b.Loop() {
				if _, ok := h.Get(fields[i%len(fields)], buf[:0]); !ok {
					b.Fatal("missing")
				}
				i++
			}
		})
		b.Run(c.name+"/Set-existing", func(b *testing.B) {
			b.ReportAllocs()
			v := []byte(strings.Repeat("w", c.vlen))
			i := 0
			for b.Loop() {
				h.Set(fields[i%len(fields)], v, false, lim)
				i++
			}
		})
		b.Run(c.name+"/Set-Delete", func(b *testing.B) {
			b.ReportAllocs()
			v := []byte(strings.Repeat("w", 40))
			f := []byte("new-field")
			for b.Loop() {
				h.Set(f, v, false, lim)
				h.Delete(f)
			}
		})
		b.Run(c.name+"/Iter", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for it := h.Iter(); it.Next(); {
					_ = it.Value()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.n), "ns/field")
		})
	}
}
