package hash

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/internal/smallbench"
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

// Large hashes of 256-byte values: 3 fields (a flat table) and 64 (a paged table, about 17 KiB).
func BenchmarkHashLong(b *testing.B) {
	for _, n := range []int{3, 64} {
		h, fields := benchHash(n, 256)
		lim := Limits{MaxEntries: 512, MaxValue: 64}
		b.Run(fmt.Sprintf("%dx256/Get", n), func(b *testing.B) {
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
		b.Run(fmt.Sprintf("%dx256/Set-existing", n), func(b *testing.B) {
			b.ReportAllocs()
			v := []byte(strings.Repeat("w", 256))
			i := 0
			for b.Loop() {
				h.Set(fields[i%len(fields)], v, false, lim)
				i++
			}
		})
		b.Run(fmt.Sprintf("%dx256/Set-Delete", n), func(b *testing.B) {
			b.ReportAllocs()
			v := []byte(strings.Repeat("w", 256))
			f := []byte("new-field")
			for b.Loop() {
				h.Set(f, v, false, lim)
				h.Delete(f)
			}
		})
	}
}

// BenchmarkSmallCollections builds smallCount hashes of n fields "f:0".."f:<n-1>" with values of
// size random bytes, one HSET's worth at a time and field-major (the first field of every hash,
// then the second...), the way the server sees HSET key f:j v, and reports the live heap bytes per
// hash once they are built (B/hash), and the time per field set (ns/set).
func BenchmarkSmallCollections(b *testing.B) {
	smallbench.Run(b, func(b *testing.B, n, size int) {
		var perHash, perSet float64
		for b.Loop() {
			perHash, perSet = buildSmallHashes(n, size)
		}
		b.ReportMetric(perHash, "B/hash")
		b.ReportMetric(perSet, "ns/set")
	})
}

const smallCount = 20_000

func buildSmallHashes(n, size int) (perHash, perSet float64) {
	lim := Limits{MaxEntries: 128, MaxValue: 64}
	rng := rand.New(rand.NewPCG(1, 2))
	hs := make([]*Hash, smallCount)
	fields := make([][]byte, n)
	for j := range fields {
		fields[j] = fmt.Appendf(nil, "f:%d", j)
	}
	pool := make([]byte, 1<<16) // values are random windows of it, so they share no prefixes
	for k := range pool {
		pool[k] = 'a' + byte(rng.IntN(26))
	}
	before := smallbench.LiveHeap()
	start := time.Now()
	for j := range n {
		for i := range hs {
			off := rng.IntN(len(pool) - size)
			v := pool[off : off+size]
			args := [][]byte{fields[j], v}
			if hs[i] == nil {
				hs[i] = NewFor(lim, args) // as the command layer's createHash
			}
			hs[i].ConvertFor(lim, args)
			hs[i].Set(fields[j], v, false, lim)
		}
	}
	elapsed := time.Since(start)
	after := smallbench.LiveHeap()
	runtime.KeepAlive(hs)
	return float64(after-before) / smallCount, float64(elapsed.Nanoseconds()) / float64(n*smallCount)
}
