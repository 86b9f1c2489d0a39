package main

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// zipf samples ranks 1..n with P(k) proportional to 1/k^s for any s > 0, in constant expected time and
// without tables (so 5 million keys cost nothing to set up): the rejection-inversion method of Hörmann
// and Derflinger (1996), "Rejection-inversion to generate variates from monotone discrete
// distributions". math/rand's Zipf implements the same method but only for s > 1, while the skews
// benchmarks use (YCSB's 0.99) are below 1.
//
// The method inverts H, an integral of the hat function h(x) = x^-s, to turn a uniform number into a
// real x, rounds it to the rank k, and accepts k when the draw fell under the part of the hat that
// k's probability covers. The formulas for H and its inverse are written with log1p/expm1 helpers so
// they stay exact near s = 1, where (x^(1-s)-1)/(1-s) tends to log x.
type zipf struct {
	n, s            float64
	hX1, hN, accept float64
}

func newZipf(n uint64, s float64) (*zipf, error) {
	if n == 0 || !(s > 0) || math.IsInf(s, 0) {
		return nil, fmt.Errorf("zipf needs keys > 0 and --zipf-s > 0 (got %d, %g)", n, s)
	}
	z := &zipf{n: float64(n), s: s}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	// Ranks whose rounding distance is within accept are taken without the second test.
	z.accept = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z, nil
}

// sample returns a rank in [1, n].
func (z *zipf) sample(rng *rand.PCG) uint64 {
	for {
		u := z.hN + unitFloat(rng)*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		k = max(1, min(k, z.n))
		if k-x <= z.accept || u >= z.hIntegral(k+0.5)-z.h(k) {
			return uint64(k)
		}
	}
}

// unitFloat is a uniform float64 in [0, 1).
func unitFloat(rng *rand.PCG) float64 {
	return float64(rng.Uint64()>>11) * 0x1p-53
}

func (z *zipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegral is H(x) = (x^(1-s) - 1) / (1-s), log x at s = 1.
func (z *zipf) hIntegral(x float64) float64 {
	logX := math.Log(x)
	return expm1Over((1-z.s)*logX) * logX
}

func (z *zipf) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1 // rounding can step just past the domain's edge
	}
	return math.Exp(log1pOver(t) * x)
}

// log1pOver is log(1+x)/x, continuous at 0.
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1Over is (e^x - 1)/x, continuous at 0.
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}
