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

// AppendDistance appends a distance as Redis replies it: printf's "%.4f".
func AppendDistance(dst []byte, d float64) []byte {
	return appendC(dst, d, 4)
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
