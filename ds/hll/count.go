package hll

import (
	"encoding/binary"
	"math"
)

// alphaInf is 0.5/ln(2), the estimator's constant.
const alphaInf = 0.721347520444481703680

// histogram counts registers by value; values above 63 cannot occur.
type histogram [64]int

// Count returns the estimated cardinality of b (which passed Check), ignoring the cache; ok is
// false when a sparse body does not cover exactly Registers registers.
func Count(b []byte) (uint64, bool) {
	var h histogram
	if b[4] == Dense {
		body := b[HeaderSize:DenseSize]
		for j := 0; j+3 <= len(body); j += 3 {
			r := unpack4(body[j], body[j+1], body[j+2])
			h[r[0]]++
			h[r[1]]++
			h[r[2]]++
			h[r[3]]++
		}
		return h.estimate(), true
	}
	n := 0
	for p := HeaderSize; p < len(b); {
		o, size := opAt(b, p)
		h[o.val] += o.run
		n += o.run
		p += size
	}
	return h.estimate(), n == Registers
}

// CountRegisters returns the estimated cardinality of a set of raw registers (a union).
func CountRegisters(regs *[Registers]uint8) uint64 {
	var h histogram
	for i := 0; i < Registers; i += 8 {
		if binary.LittleEndian.Uint64(regs[i:]) == 0 { // most registers of a small union are zero
			h[0] += 8
			continue
		}
		for _, v := range regs[i : i+8] {
			h[v&63]++
		}
	}
	return h.estimate()
}

// estimate is Ertl's improved raw estimator ("New cardinality estimation algorithms for
// HyperLogLog sketches", arXiv:1702.01284), as Redis 7 computes it in double precision.
func (h *histogram) estimate() uint64 {
	const m = float64(Registers)
	z := m * tau((m-float64(h[Q+1]))/m)
	for j := Q; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += m * sigma(float64(h[0])/m)
	return uint64(math.Round(alphaInf * m * m / z))
}

func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += float64(x * y) // no fused multiply-add: Redis rounds each step
		y += y
		if z == prev {
			return z
		}
	}
}

func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if z == prev {
			return z / 3
		}
	}
}
