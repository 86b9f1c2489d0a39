package set

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/hotkv/hotkv/ds/internal/smallbench"
)

// Redis 7.0.15's used_memory per member of a one-key set of 1,000,000 members, measured on this
// machine: the integers 0..999999, and random 16-byte hex strings.
const (
	redisBytesPerInt   = 48.4
	redisBytesPerStr16 = 72.4
)

func memberBytes(gen func(i int) []byte) float64 {
	const n = 1_000_000
	before := smallbench.LiveHeap()
	s := New()
	for i := range n {
		s.Add(gen(i), &defaultLimits)
	}
	after := smallbench.LiveHeap()
	runtime.KeepAlive(s)
	return float64(after-before) / n
}

// TestMemoryBelowRedis holds the memory target: a million members cost less than in Redis.
func TestMemoryBelowRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a million members")
	}
	r := rand.New(rand.NewPCG(1, 1))
	var buf [8]byte
	cases := []struct {
		name  string
		gen   func(i int) []byte
		limit float64
	}{
		{"ints 0..1M", func(i int) []byte { return strconv.AppendInt(nil, int64(i), 10) }, redisBytesPerInt},
		{"random uint32", func(int) []byte { return strconv.AppendUint(nil, uint64(r.Uint32()), 10) }, redisBytesPerInt},
		{"random int64", func(int) []byte { return strconv.AppendInt(nil, r.Int64(), 10) }, redisBytesPerInt},
		{"16-byte strings", func(int) []byte {
			binaryRand(r, buf[:])
			return []byte(hex.EncodeToString(buf[:]))
		}, redisBytesPerStr16},
	}
	for _, c := range cases {
		got := memberBytes(c.gen)
		t.Logf("%s: %.1f bytes/member (Redis %.1f)", c.name, got, c.limit)
		if got > c.limit {
			t.Errorf("%s: %.1f bytes/member, Redis uses %.1f", c.name, got, c.limit)
		}
	}
}

func binaryRand(r *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

func benchMembers(n int, str bool) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		if str {
			out[i] = fmt.Appendf(nil, "member:%08d", i)
		} else {
			out[i] = strconv.AppendInt(nil, int64(i)*7, 10)
		}
	}
	return out
}

func BenchmarkSet(b *testing.B) {
	for _, kind := range []string{"ints", "strings"} {
		ms := benchMembers(1<<16, kind == "strings")
		full := New()
		for _, m := range ms {
			full.Add(m, &defaultLimits)
		}
		b.Run(kind+"/Has", func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				full.Has(ms[i&(len(ms)-1)])
			}
		})
		b.Run(kind+"/AddRemove", func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				m := ms[i&(len(ms)-1)]
				full.Remove(m)
				full.Add(m, &defaultLimits)
			}
		})
		b.Run(kind+"/Random", func(b *testing.B) {
			b.ReportAllocs()
			var buf [32]byte
			for i := range b.N {
				full.Random(uint64(i), buf[:0])
			}
		})
	}
	small := New()
	for _, m := range benchMembers(100, true) {
		small.Add(m, &defaultLimits)
	}
	b.Run("listpack/Has", func(b *testing.B) {
		b.ReportAllocs()
		m := []byte("member:00000050")
		for range b.N {
			small.Has(m)
		}
	})
}

// BenchmarkSmallCollections builds many small sets the way applications do, one SADD of a
// random member at a time and round robin over the sets (the first member of every set, then
// the second, ...), and reports the live bytes each set costs (B/set: the *Set and everything
// it holds, after a full collection, measured on the first round) and the time per Add.
func BenchmarkSmallCollections(b *testing.B) {
	smallbench.Run(b, func(b *testing.B, count, size int) { benchSmallSets(b, 20000, count, size) })
}

func benchSmallSets(b *testing.B, sets, count, size int) {
	r := rand.New(rand.NewPCG(uint64(count), uint64(size)))
	pool := make([][]byte, 4096)
	for i := range pool {
		pool[i] = make([]byte, size)
		binaryRand(r, pool[i])
	}
	out := make([]*Set, sets)
	build := func() {
		for i := range out {
			out[i] = New()
		}
		for j := range count {
			for i, s := range out {
				s.Add(pool[(i*count+j)&(len(pool)-1)], &defaultLimits)
			}
		}
	}
	before := smallbench.LiveHeap()
	build()
	perSet := float64(smallbench.LiveHeap()-before) / float64(sets)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		build()
	}
	b.ReportMetric(perSet, "B/set")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sets*count), "ns/add")
}
