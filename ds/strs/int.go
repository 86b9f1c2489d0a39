// Package strs holds the operations on string values that are more than a few lines: integer and
// long-double increments with Redis's exact formatting, range reads and writes, and the longest
// common subsequence. Functions are pure: they know nothing of RESP or keyspaces, take and return
// byte slices, and report failures as the sentinel errors below, which the command layer maps to
// Redis's wire errors.
package strs

import (
	"errors"
	"math"
	"strconv"
)

// Errors of string operations.
var (
	ErrNotInt   = errors.New("value is not an integer or out of range")
	ErrOverflow = errors.New("increment or decrement would overflow")
	ErrNotFloat = errors.New("value is not a valid float")
	ErrNaNInf   = errors.New("increment would produce NaN or Infinity")
	ErrTooBig   = errors.New("string exceeds maximum allowed size")
)

// MaxIntLen is the longest string that can hold a 64-bit integer ("-9223372036854775808").
const MaxIntLen = 20

// ParseInt parses b as Redis's string2ll does: an optional '-', then digits with no leading zero
// (except "0" itself), no '+', no spaces, within int64.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > MaxIntLen {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' || v > (math.MaxUint64-9)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	switch {
	case neg && v <= 1<<63:
		return int64(-v), true // -v wraps to MinInt64 for v == 1<<63, as intended
	case !neg && v <= math.MaxInt64:
		return int64(v), true
	}
	return 0, false
}

// IsInt reports whether b is the canonical decimal form of an int64, the test Redis uses to keep
// a string with the "int" encoding.
func IsInt(b []byte) bool {
	_, ok := ParseInt(b)
	return ok
}

// IncrBy parses cur as an integer, adds delta and writes the sum's decimal form into dst[:0],
// reusing its storage (dst may be cur itself). It fails with ErrNotInt when cur is not an integer
// and ErrOverflow when the sum leaves int64; dst is then returned untouched.
func IncrBy(dst, cur []byte, delta int64) ([]byte, int64, error) {
	v, ok := ParseInt(cur)
	if !ok {
		return dst, 0, ErrNotInt
	}
	if (delta < 0 && v < 0 && delta < math.MinInt64-v) || (delta > 0 && v > 0 && delta > math.MaxInt64-v) {
		return dst, 0, ErrOverflow
	}
	v += delta
	return strconv.AppendInt(dst[:0], v, 10), v, nil
}
