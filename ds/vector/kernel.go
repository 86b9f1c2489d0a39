package vector

import (
	"math"
	"math/bits"

	"github.com/viterin/vek/vek32"
)

// kernel is every inner loop of the index: the distances spend nearly all of a search's time here.
// simdKernel uses github.com/viterin/vek (AVX2) for float32 and assembly for int8 where the CPU has
// AVX2; goKernel is the portable reference a test holds the other equal to.
type kernel interface {
	dot(a, b []float32) float32
	l2(a, b []float32) float32 // Euclidean distance
	dotI8(a, b []int8) int32
	dotF32I8(a []float32, b []int8) float32 // a float query against int8 components
	hamming(a, b []uint64) int
}

var kern kernel = newKernel()

type goKernel struct{}

func (goKernel) dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func (goKernel) l2(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return float32(math.Sqrt(float64((s0 + s1) + (s2 + s3))))
}

func (goKernel) dotI8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

func (goKernel) dotF32I8(a []float32, b []int8) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * float32(b[i])
		s1 += a[i+1] * float32(b[i+1])
		s2 += a[i+2] * float32(b[i+2])
		s3 += a[i+3] * float32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float32(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

func (goKernel) hamming(a, b []uint64) int {
	b = b[:len(a)]
	n := 0
	for i := range a {
		n += bits.OnesCount64(a[i] ^ b[i])
	}
	return n
}

// simdKernel: vek's AVX2 float32 loops (vek falls back to Go itself without AVX2).
type simdKernel struct{ goKernel }

func (simdKernel) dot(a, b []float32) float32 { return vek32.Dot(a, b) }

// l2 of short vectors goes through the Go loop: vek's Distance rounds by the CPU's vector width
// (on an AVX-512 host |(3,0)-(0,0)| came out 2.9999998, so scores differed by host), and below
// 16 components it gains nothing.
func (k simdKernel) l2(a, b []float32) float32 {
	if len(a) < 16 {
		return k.goKernel.l2(a, b)
	}
	return vek32.Distance(a, b)
}

func newKernel() kernel { return simdKernel{} }
