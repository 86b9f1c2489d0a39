package strs

import (
	"math"
	"math/big"
)

// INCRBYFLOAT computes in C's long double, which on amd64 (Redis's reference platform, and the
// machine the transcripts are recorded on) is the x87 80-bit extended format: a 64-bit
// significand, normal exponents down to 2^-16382 and subnormals on a grid of 2^-16445. Redis
// parses both operands with strtold, adds, and prints the sum with "%.17Lf" minus trailing zeros,
// so "10.5" + "0.1" is "10.6" where float64 would give "10.59999999999999964". The values here
// are emulated exactly with math/big; INCRBYFLOAT is not a hot command, so its few allocations
// are accepted.

const (
	extPrec   = 64     // significand bits
	extMaxExp = 16384  // finite values are below 2^extMaxExp
	extSubExp = -16381 // values below 2^(extSubExp) round on the subnormal grid
	extGrid   = 16445  // the subnormal grid is 2^-extGrid
	// maxFloatChars is Redis's MAX_LONG_DOUBLE_CHARS: longer operands are rejected.
	maxFloatChars = 5 * 1024
)

// ext is one long double value: f holds a finite value exactly (precision 64, sign included,
// -0 too); inf marks an infinity.
type ext struct {
	f   *big.Float
	inf bool
}

func newExt() *big.Float { return new(big.Float).SetPrec(extPrec).SetMode(big.ToNearestEven) }

// IncrByFloat adds incr to cur as Redis's INCRBYFLOAT does and writes the sum's text into
// dst[:0] (dst may be cur itself). It fails with ErrNotFloat when either operand is not a number
// strtold accepts in full (or it overflows, or underflows to zero), and with ErrNaNInf when the
// sum is not finite; dst is then returned untouched.
func IncrByFloat(dst, cur, incr []byte) ([]byte, error) {
	a, ok := parseExt(cur)
	if !ok {
		return dst, ErrNotFloat
	}
	b, ok := parseExt(incr)
	if !ok {
		return dst, ErrNotFloat
	}
	if a.inf || b.inf {
		return dst, ErrNaNInf // inf+x is inf, inf-inf is NaN: both refused
	}
	sum := newExt().Add(a.f, b.f)
	// A sum of two values on the subnormal grid is on that grid, so only overflow needs a check.
	if sum.MantExp(nil) > extMaxExp {
		return dst, ErrNaNInf
	}
	return appendHuman(dst[:0], sum), nil
}

// appendHuman appends f as Redis's ld2string in LD_STR_HUMAN mode: "%.17Lf", then trailing zeros
// and a trailing '.' removed, and "-0" written "0". big.Float prints the exact binary value
// rounded half to even, as glibc's printf does.
func appendHuman(dst []byte, f *big.Float) []byte {
	start := len(dst)
	dst = f.Append(dst, 'f', 17)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}

// parseExt parses b as Redis's string2ld: strtold must consume all of b, b must not start with a
// space, and NaN, overflow and underflow to zero are refused.
func parseExt(b []byte) (ext, bool) {
	if len(b) == 0 || len(b) >= maxFloatChars || isSpace(b[0]) {
		return ext{}, false
	}
	neg, s := false, b
	if s[0] == '+' || s[0] == '-' {
		neg, s = s[0] == '-', s[1:]
	}
	if isInf(s) {
		return ext{f: newExt(), inf: true}, true
	}
	var r *big.Rat
	var ok bool
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		r, ok = parseHex(s[2:])
	} else {
		r, ok = parseDec(s)
	}
	if !ok {
		return ext{}, false
	}
	f := newExt()
	if r != nil && r.Sign() != 0 {
		if f, ok = roundExt(r); !ok {
			return ext{}, false
		}
	}
	if neg {
		f.Neg(f)
	}
	return ext{f: f}, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// isInf matches strtold's "inf" and "infinity", ignoring case.
func isInf(s []byte) bool {
	const word = "infinity"
	if len(s) != 3 && len(s) != len(word) {
		return false
	}
	for i, c := range s {
		if c|0x20 != word[i] {
			return false
		}
	}
	return true
}

// roundExt rounds the positive exact value r to the nearest long double, ties to even. It
// returns false when r overflows or underflows to zero (strtold's ERANGE cases Redis refuses).
func roundExt(r *big.Rat) (*big.Float, bool) {
	f := newExt().SetRat(r)
	exp := f.MantExp(nil)
	if exp > extMaxExp {
		return nil, false
	}
	if exp > extSubExp {
		return f, true
	}
	// Below 2^-16381 the spacing of long doubles is 2^-16445 whether normal or subnormal, so
	// rounding to a multiple of it is exact rounding there.
	num := new(big.Int).Lsh(r.Num(), extGrid)
	q, rem := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	if c := rem.Lsh(rem, 1).Cmp(r.Denom()); c > 0 || (c == 0 && q.Bit(0) == 1) {
		q.Add(q, big.NewInt(1))
	}
	if q.Sign() == 0 {
		return nil, false
	}
	f.SetInt(q)
	return f.SetMantExp(f, -extGrid), true
}

// ParseLongDouble parses b as Redis's string2ld (strtold, whole input, no leading space, hex and
// inf accepted, NaN and overflow refused) and returns it rounded to a float64, with ±Inf for
// infinities. Timeouts and other arguments Redis reads as long double use it.
func ParseLongDouble(b []byte) (float64, bool) {
	x, ok := parseExt(b)
	if !ok {
		return 0, false
	}
	if x.inf {
		if b[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	f, _ := x.f.Float64()
	return f, true
}
