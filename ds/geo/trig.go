package geo

import (
	"math"
	"math/big"
)

// Correctly rounded sin, cos and asin: the pure-Go stand-ins for the C library's when cgo is off
// (libm_nocgo.go). Redis calls glibc's, which are nearly always correctly rounded; Go's math.Sin,
// Cos and Asin are not (measured against glibc 2.36 on random arguments of the ranges distances
// use: 20% of sines, 26% of cosines and 32% of arcsines differed in the last bit), and a last bit
// moves a distance's last digit or a point across a search's edge. These evaluate in
// double-double arithmetic, to about 2^-70, and round once; glibc's own results are one unit off
// the correctly rounded one for about 0.03% of arguments, where only calling glibc (libm_cgo.go)
// agrees with Redis.

// dd is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (a dd) add(b dd) dd {
	s := twoSum(a.hi, b.hi)
	return quickTwoSum(s.hi, s.lo+(a.lo+b.lo))
}

func (a dd) mul(b dd) dd {
	p := twoProd(a.hi, b.hi)
	return quickTwoSum(p.hi, p.lo+(float64(a.hi*b.lo)+float64(a.lo*b.hi)))
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

// Constants, computed once from decimal digits in 300-bit arithmetic: π/2 in three parts, and the
// Taylor coefficients the double-double steps use.
var (
	pio2    [3]float64
	sinDD   [3]dd      // -1/3!, 1/5!, -1/7!
	cosDD   [3]dd      // 1/4!, -1/6!, 1/8!
	sinTail [8]float64 // 1/9!, -1/11!, … -1/23!
	cosTail [8]float64 // -1/10!, 1/12!, … 1/24!
)

const piDigits = "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798214808651"

func init() {
	const prec = 300
	x, _, _ := big.ParseFloat(piDigits, 10, prec, big.ToNearestEven)
	x.Quo(x, big.NewFloat(2).SetPrec(prec))
	for i := range pio2 {
		pio2[i], _ = x.Float64()
		x.Sub(x, new(big.Float).SetPrec(prec).SetFloat64(pio2[i]))
	}
	inv := func(n int) *big.Float { // (-1)^? handled by the caller: 1/n!
		f := new(big.Float).SetPrec(prec).SetInt64(1)
		for i := 2; i <= n; i++ {
			f.Quo(f, new(big.Float).SetPrec(prec).SetInt64(int64(i)))
		}
		return f
	}
	split := func(f *big.Float, sign float64) dd {
		hi, _ := f.Float64()
		rest := new(big.Float).SetPrec(prec).Sub(f, new(big.Float).SetPrec(prec).SetFloat64(hi))
		lo, _ := rest.Float64()
		return dd{sign * hi, sign * lo}
	}
	sign := func(k int) float64 { return float64(1 - 2*(k&1)) }
	for k := range 3 {
		sinDD[k] = split(inv(2*k+3), sign(k+1))
		cosDD[k] = split(inv(2*k+4), sign(k))
	}
	for k := range 8 {
		sinTail[k] = split(inv(2*k+9), sign(k)).hi
		cosTail[k] = split(inv(2*k+10), sign(k+1)).hi
	}
}

// reduce returns x - k·π/2 in double-double and k mod 4, for |x| <= 8.
func reduce(x float64) (dd, int) {
	k := math.RoundToEven(x * (2 / math.Pi))
	p := twoProd(k, pio2[0])
	r := twoSum(x-p.hi, -p.lo) // x - p.hi is exact: they are within a factor of two, or k is 0
	t := twoProd(k, pio2[1])
	r = r.add(dd{-t.hi, -(t.lo + k*pio2[2])})
	return r, int(k) & 3
}

// sinR is sin(r) for |r| <= about π/4.
func sinR(r dd) dd {
	r2 := r.mul(r)
	q := 0.0
	for i := len(sinTail) - 1; i >= 0; i-- {
		q = sinTail[i] + r2.hi*q
	}
	acc := dd{q, 0}
	for i := len(sinDD) - 1; i >= 0; i-- {
		acc = acc.mul(r2).add(sinDD[i])
	}
	return acc.mul(r2).add(dd{1, 0}).mul(r)
}

// cosR is cos(r) for |r| <= about π/4.
func cosR(r dd) dd {
	r2 := r.mul(r)
	q := 0.0
	for i := len(cosTail) - 1; i >= 0; i-- {
		q = cosTail[i] + r2.hi*q
	}
	acc := dd{q, 0}
	for i := len(cosDD) - 1; i >= 0; i-- {
		acc = acc.mul(r2).add(cosDD[i])
	}
	return acc.mul(r2).add(dd{-0.5, 0}).mul(r2).add(dd{1, 0})
}

// sinDD is sin(x) in double-double, for |x| <= 8.
func sinDDx(x float64) dd {
	r, q := reduce(x)
	switch q {
	case 0:
		return sinR(r)
	case 1:
		return cosR(r)
	case 2:
		return sinR(r).neg()
	}
	return cosR(r).neg()
}

func cosDDx(x float64) dd {
	r, q := reduce(x)
	switch q {
	case 0:
		return cosR(r)
	case 1:
		return sinR(r).neg()
	case 2:
		return cosR(r).neg()
	}
	return sinR(r)
}

// sinCR is sin(x) correctly rounded (bar rare ties within 2^-70).
func sinCR(x float64) float64 {
	if !(math.Abs(x) <= 8) {
		return math.Sin(x)
	}
	s := sinDDx(x)
	return s.hi + s.lo
}

// cosCR is cos(x) correctly rounded.
func cosCR(x float64) float64 {
	if !(math.Abs(x) <= 8) {
		return math.Cos(x)
	}
	c := cosDDx(x)
	return c.hi + c.lo
}

// asinCR is asin(a) correctly rounded: one Newton step from Go's estimate, with the sine of the
// estimate in double-double.
func asinCR(a float64) float64 {
	y := math.Asin(a)
	if a == 0 || y != y {
		return y
	}
	s := sinDDx(y)
	d := dd{a, 0}.add(s.neg())
	// The step only corrects the last bits, so cos(y) = sqrt(1-a²) need not be exact.
	c := math.Sqrt((1 - a) * (1 + a))
	if c == 0 {
		return y
	}
	return y + (d.hi+d.lo)/c
}
