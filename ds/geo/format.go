package geo

import (
	"math"
	"strconv"
)

// Unit returns the metres in one unit named m, km, ft or mi (any case), and false for any other
// name.
func Unit(name []byte) (float64, bool) {
	if len(name) > 2 {
		return 0, false
	}
	var b [2]byte
	n := copy(b[:], name)
	for i := range n {
		b[i] |= 0x20 // ASCII letters to lower case; no other byte can then match
	}
	switch string(b[:n]) {
	case "m":
		return 1, true
	case "km":
		return 1000, true
	case "ft":
		return 0.3048, true
	case "mi":
		return 1609.34, true
	}
	return 0, false
}

// AppendDistance appends a distance with four decimals as Redis 7.0.15 replies it (GEODIST and
// every WITHDIST): not printf's "%.4f", which rounds the exact binary value, but a fixed-point
// conversion that rounds d*10000 to a double first and then to an integer, ties to even, as C's
// llrint in the default rounding mode. The two disagree when d lies within a rounding of a
// half-unit in the fourth decimal: 14576551.806850001 (0x1.bcd74f9d1b718p+23) is "…8069" for
// printf and "…8068" for Redis, since d*10000 rounds to 145765518068.5 exactly, and that ties to
// the even 145765518068. Zero (either sign) is "0.0000", and so is a negative d that rounds to 0;
// a product past the int64 range, or NaN, becomes math.MinInt64 as x86-64's llrint makes it
// (distances never get there).
func AppendDistance(dst []byte, d float64) []byte {
	if d == 0 {
		return append(dst, "0.0000"...)
	}
	const scale = 1e4
	r := math.RoundToEven(d * scale)
	var v uint64
	switch {
	case !(r > -1<<63 && r < 1<<63): // NaN, or out of range
		v = 1 << 63
		dst = append(dst, '-')
	case r < 0:
		v = uint64(-r)
		dst = append(dst, '-')
	default:
		v = uint64(r)
	}
	dst = strconv.AppendUint(dst, v/scale, 10)
	frac := v % scale
	return append(dst, '.', byte('0'+frac/1000), byte('0'+frac/100%10), byte('0'+frac/10%10), byte('0'+frac%10))
}

// AppendCoord appends a coordinate as Redis's human long double format does: "%.17Lf" of the
// double (a long double holds it exactly) with trailing zeros and a bare point trimmed, and
// "-0" written "0".
func AppendCoord(dst []byte, c float64) []byte {
	start := len(dst)
	dst = appendC(dst, c, 17)
	if math.IsInf(c, 0) || c != c {
		return dst
	}
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

// AppendFixed appends f as C's "%.<prec>f" does: infinities and NaN as inf, -inf, nan, -nan.
func AppendFixed(dst []byte, f float64, prec int) []byte { return appendC(dst, f, prec) }

func appendC(dst []byte, f float64, prec int) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f != f && math.Signbit(f):
		return append(dst, "-nan"...)
	case f != f:
		return append(dst, "nan"...)
	}
	// Go's 'f' rounds the exact binary value to prec digits, ties to even, as glibc's printf.
	return strconv.AppendFloat(dst, f, 'f', prec, 64)
}
