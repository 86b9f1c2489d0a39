package strs

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkLCS runs the largest LCS the default proto-max-bulk-len admits (its (n+1)^2 uint32
// table just fits in 512 MB), the worst case a client can ask for.
func BenchmarkLCS(b *testing.B) {
	const n = 11584
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := make([]byte, n), make([]byte, n)
	for i := range x {
		x[i], y[i] = byte('a'+rng.IntN(4)), byte('a'+rng.IntN(4))
	}
	for _, o := range []struct {
		name string
		opt  LCSOptions
	}{{"LEN", LCSOptions{}}, {"IDX", LCSOptions{Matches: true}}} {
		b.Run(o.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := LCS(x, y, 512<<20, o.opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkIncrBy(b *testing.B) {
	buf := []byte("1000000")
	b.ReportAllocs()
	for b.Loop() {
		buf, _, _ = IncrBy(buf, buf, 1)
	}
}

func BenchmarkIncrByFloat(b *testing.B) {
	cur := []byte("10.5")
	b.ReportAllocs()
	for b.Loop() {
		cur, _ = IncrByFloat(cur, cur, []byte("0.1"))
	}
}

func BenchmarkGlob(b *testing.B) {
	p, s := []byte("user:*:session:[0-9]*"), []byte("user:12345:session:987654")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Glob(p, s, false)
	}
}
