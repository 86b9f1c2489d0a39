package zset

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/hotkv/hotkv/ds/strs"
)

// Scores are parsed the way Redis parses them, which is C's strtod with two different wrappers:
// ZADD, ZINCRBY and WEIGHTS use string2d (the whole argument, no leading space, no overflow and
// no underflow to zero), score ranges use strtod directly (leading spaces, an empty string reads
// 0, overflow reads ±inf, a NUL byte ends the number). Go's ParseFloat differs from strtod on hex
// without a 'p' exponent ("0x10") and on underflow, so the syntax is recognised here and only
// the digits are handed to ParseFloat, which rounds like glibc.

// ParseScore parses a score argument like Redis's string2d.
func ParseScore(b []byte) (float64, bool) {
	if len(b) == 0 || isSpace(b[0]) {
		return 0, false
	}
	f, n, rangeErr := strtod(b)
	if n != len(b) || rangeErr || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// parseBound parses one end of a score range: an optional '(' for an exclusive bound, then a
// number strtod reads up to the end of the C string.
func parseBound(b []byte) (f float64, ex bool, ok bool) {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) > 0 && b[0] == '(' {
		ex, b = true, b[1:]
	}
	f, n, _ := strtod(b)
	if n != len(b) || math.IsNaN(f) {
		return 0, false, false
	}
	return f, ex, true
}

// strtod returns the value of the longest prefix of b that C's strtod reads, the prefix's
// length (0 when there is no number), and whether errno would be ERANGE with a zero or infinite
// result (overflow, or a non-zero number that underflows to zero).
func strtod(b []byte) (f float64, n int, rangeErr bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	rest := b[i:]
	var m int
	switch {
	case strs.HasPrefixFold(rest, "inf"):
		m = 3
		if strs.HasPrefixFold(rest, "infinity") {
			m = 8
		}
		f = math.Inf(1)
	case strs.HasPrefixFold(rest, "nan"):
		m = nanLen(rest)
		f = math.NaN()
	case len(rest) >= 2 && rest[0] == '0' && rest[1]|0x20 == 'x':
		f, m, rangeErr = parseHexFloat(rest)
	default:
		f, m, rangeErr = parseDecFloat(rest)
	}
	if m == 0 {
		return 0, 0, false
	}
	if neg {
		f = -f
	}
	return f, i + m, rangeErr
}

// nanLen is the length of "nan" or "nan(chars)" at the start of b.
func nanLen(b []byte) int {
	if len(b) > 3 && b[3] == '(' {
		for j := 4; j < len(b); j++ {
			c := b[j]
			if c == ')' {
				return j + 1
			}
			if !isAlnum(c) && c != '_' {
				break
			}
		}
	}
	return 3
}

// parseDecFloat reads digits [. digits] [e [sign] digits] from the start of b.
func parseDecFloat(b []byte) (float64, int, bool) {
	i, digits, nonzero := 0, 0, false
	for ; i < len(b) && isDigit(b[i]); i++ {
		digits++
		nonzero = nonzero || b[i] != '0'
	}
	if i < len(b) && b[i] == '.' {
		j := i + 1
		for ; j < len(b) && isDigit(b[j]); j++ {
			digits++
			nonzero = nonzero || b[j] != '0'
		}
		if digits > 0 {
			i = j
		}
	}
	if digits == 0 {
		return 0, 0, false
	}
	i += exponentLen(b[i:], 'e')
	f, err := strconv.ParseFloat(unsafe.String(&b[0], i), 64)
	return f, i, rangeErr(f, err, nonzero)
}

// parseHexFloat reads 0x hexdigits [. hexdigits] [p [sign] digits]; "0x" without digits is the
// number 0 followed by an 'x'.
func parseHexFloat(b []byte) (float64, int, bool) {
	i, digits, nonzero := 2, 0, false
	for ; i < len(b) && isHex(b[i]); i++ {
		digits++
		nonzero = nonzero || b[i] != '0'
	}
	if i < len(b) && b[i] == '.' {
		j := i + 1
		for ; j < len(b) && isHex(b[j]); j++ {
			digits++
			nonzero = nonzero || b[j] != '0'
		}
		if digits > 0 {
			i = j
		}
	}
	if digits == 0 {
		return 0, 1, false
	}
	mant := i
	i += exponentLen(b[i:], 'p')
	s := string(b[:i])
	if i == mant {
		s += "p0" // Go requires the binary exponent
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, i, rangeErr(f, err, nonzero)
}

// rangeErr reports strtod's ERANGE with a zero or infinite result: ParseFloat returns ±Inf
// with an error on overflow, and zero without one when a non-zero number underflows.
func rangeErr(f float64, err error, nonzero bool) bool {
	return (err != nil && math.IsInf(f, 0)) || (f == 0 && nonzero)
}

// exponentLen is the length of an exponent (letter, optional sign, at least one digit) at the
// start of b, or 0.
func exponentLen(b []byte, letter byte) int {
	if len(b) < 2 || b[0]|0x20 != letter {
		return 0
	}
	i := 1
	if b[i] == '+' || b[i] == '-' {
		i++
	}
	j := i
	for j < len(b) && isDigit(b[j]) {
		j++
	}
	if j == i {
		return 0
	}
	return j
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f') }
func isAlnum(c byte) bool { return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'z') }
