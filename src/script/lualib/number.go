package lualib

import (
	"math"
	"strconv"
	"strings"
)

// cNaN is the NaN glibc's strtod returns (the default quiet NaN, no
// payload); Go's math.NaN has a low bit set.
var cNaN = math.Float64frombits(0x7ff8000000000000)

// fmtG formats f as C's printf("%.<prec>g") does with glibc: Go's 'g'
// agrees on digits and exponent form; only infinities and NaN are spelled
// differently.
func fmtG(f float64, prec int) string {
	return string(AppendG(nil, f, prec))
}

// AppendG appends f as C's printf("%.<prec>g") with glibc (fmtG); the engine
// formats Lua's numbers with it too.
func AppendG(dst []byte, f float64, prec int) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f != f:
		if math.Signbit(f) {
			return append(dst, "-nan"...)
		}
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, f, 'g', prec, 64)
}

// str2d is Lua 5.1's luaO_str2d over a Lua string: glibc strtod (which
// takes leading space, hex, inf and nan), then strtoul for "0x" it left,
// then only trailing space. The C code sees the string up to its first NUL.
func str2d(s string) (float64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	v, n := strtod(s)
	if n == 0 {
		return 0, false
	}
	if n < len(s) && (s[n] == 'x' || s[n] == 'X') {
		v, n = strtoul16(s)
	}
	for n < len(s) && isSpace(s[n]) {
		n++
	}
	return v, n == len(s)
}

func isSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

// strtoul16 is strtoul(s, &end, 16) as far as luaO_str2d needs it: it is
// only reached when strtod stopped right before an 'x'; "0x" with no digit
// after it parses the 0.
func strtoul16(s string) (float64, int) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	if i+1 < len(s) && s[i] == '0' && (s[i+1]|0x20) == 'x' && i+2 < len(s) && isHex(s[i+2]) {
		i += 2
		start = i
	}
	var v uint64
	over := false
	for i < len(s) && isHex(s[i]) {
		d, _ := strconv.ParseUint(s[i:i+1], 16, 8)
		if v > (math.MaxUint64-d)/16 {
			over = true
		}
		v = v*16 + d
		i++
	}
	if i == start {
		return 0, 0
	}
	if over {
		v = math.MaxUint64
	}
	if neg {
		v = -v
	}
	return float64(v), i
}

// strtod parses the longest prefix of s that glibc's strtod accepts and
// returns its value and length (0: no number). Decimal values are
// correctly rounded, as glibc's are; overflow gives an infinity.
func strtod(s string) (float64, int) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	signAt := i
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if v, n := strtodSpecial(s[i:]); n > 0 {
		if neg {
			v = -v
		}
		return v, i + n
	}
	if i+1 < len(s) && s[i] == '0' && (s[i+1]|0x20) == 'x' {
		if v, n := strtodHex(s[i+2:]); n > 0 {
			if neg {
				v = -v
			}
			return v, i + 2 + n
		}
	}
	n := decimalPrefix(s[i:])
	if n == 0 {
		return 0, 0
	}
	v, err := strconv.ParseFloat(s[signAt:i+n], 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, 0
		}
	}
	return v, i + n
}

// strtodSpecial parses "inf", "infinity" and "nan" with an optional
// "(chars)" suffix, in any case.
func strtodSpecial(s string) (float64, int) {
	switch {
	case hasPrefixFold(s, "infinity"):
		return math.Inf(1), 8
	case hasPrefixFold(s, "inf"):
		return math.Inf(1), 3
	case hasPrefixFold(s, "nan"):
		n := 3
		if n < len(s) && s[n] == '(' {
			j := n + 1
			for j < len(s) && (isDigit(s[j]) || (s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z') || s[j] == '_') {
				j++
			}
			if j < len(s) && s[j] == ')' {
				return nanPayload(s[n+1 : j]), j + 1
			}
		}
		return cNaN, n
	}
	return 0, 0
}

// nanPayload is glibc's NaN for "nan(chars)": when chars are one whole
// strtoull(chars, 0) number, its low 51 bits become the payload of the
// quiet NaN.
func nanPayload(chars string) float64 {
	base, digits := 10, chars
	switch {
	case len(chars) > 2 && chars[0] == '0' && chars[1]|0x20 == 'x':
		base, digits = 16, chars[2:]
	case len(chars) > 1 && chars[0] == '0':
		base, digits = 8, chars[1:]
	}
	if chars == "" {
		return cNaN
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return cNaN
		}
		v = math.MaxUint64
	}
	return math.Float64frombits(0x7ff8000000000000 | v&(1<<51-1))
}

func hasPrefixFold(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

// decimalPrefix is the length of digits[.digits][e[+-]digits] at the start
// of s, with at least one mantissa digit; 0 if there is none.
func decimalPrefix(s string) int {
	i, digits := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i]|0x20) == 'e' {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

// strtodHex parses the part after "0x": hex digits[.hex digits][p[+-]digits].
func strtodHex(s string) (float64, int) {
	i, digits := 0, 0
	for i < len(s) && isHex(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isHex(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	mant := s[:i]
	exp := "p0"
	if i < len(s) && (s[i]|0x20) == 'p' {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			exp = s[i:j]
			i = j
		}
	}
	if mant[0] == '.' {
		mant = "0" + mant
	}
	v, err := strconv.ParseFloat("0x"+mant+exp, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, 0
		}
	}
	return v, i
}
