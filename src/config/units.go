package config

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"syscall"

	"github.com/hotkv/hotkv/ds/strs"
)

// parseLL is Redis's string2ll: an optional '-', no '+', no blanks, no
// leading zeros, no overflow. It is what integer directives accept.
func parseLL(s string) (int64, bool) {
	if s == "" || s[0] == '+' || (len(s) > 1 && s[0] == '0') || strings.HasPrefix(s, "-0") {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// memToULL is Redis's memtoull: digits followed by an optional unit, b, k
// (1000), kb (1024), m, mb, g or gb, case-insensitive. Its C quirks are kept
// because they decide what CONFIG SET accepts: no digits at all reads as 0
// ("" and "kb" are valid), too many digits saturate at 2^64-1 and the unit
// multiplication then wraps around.
func memToULL(s string) (uint64, bool) {
	if strings.HasPrefix(s, "-") {
		return 0, false
	}
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	var mul uint64
	switch asciiLower(s[n:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if n >= 128 {
		return 0, false
	}
	v, err := strconv.ParseUint(s[:n], 10, 64)
	if err != nil {
		v = 0
		if n > 0 {
			v = math.MaxUint64
		}
	}
	return v * mul, true
}

// asciiLower folds only A-Z, as C's tolower does in the "C" locale.
func asciiLower(s string) string { return string(strs.AppendLower(nil, []byte(s))) }

// strtoll mimics C's strtoll(s, &end, base): end reports whether the
// conversion stopped at the end of s and erange whether it overflowed (the
// value then saturates). Leading blanks and a sign are allowed, and a string
// without digits converts to 0 with end pointing at its start (so "" is
// accepted and " " is not).
func strtoll(s string, base int) (v int64, end, erange bool) {
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
	var u uint64
	over := false
	for ; i < len(s); i++ {
		d := uint64(s[i]) - '0'
		if d >= uint64(base) {
			break
		}
		if u > (math.MaxUint64-d)/uint64(base) {
			over = true
		} else {
			u = u*uint64(base) + d
		}
	}
	if i == start {
		return 0, s == "", false
	}
	end = i == len(s)
	switch {
	case neg && (over || u > 1<<63):
		return math.MinInt64, end, true
	case neg:
		return -int64(u), end, false
	case over || u > math.MaxInt64:
		return math.MaxInt64, end, true
	}
	return int64(u), end, false
}

// formatMemory is how CONFIG REWRITE writes byte counts: the largest of gb,
// mb, kb that divides the value. Like Redis it works on the signed value.
func formatMemory(v int64) string {
	const kb, mb, gb = 1024, 1024 * 1024, 1024 * 1024 * 1024
	switch {
	case v != 0 && v%gb == 0:
		return strconv.FormatInt(v/gb, 10) + "gb"
	case v != 0 && v%mb == 0:
		return strconv.FormatInt(v/mb, 10) + "mb"
	case v != 0 && v%kb == 0:
		return strconv.FormatInt(v/kb, 10) + "kb"
	}
	return strconv.FormatInt(v, 10)
}

// strerror renders err as C's strerror would for the errno inside it, which
// is what Redis puts in its messages ("No such file or directory"). Go's
// texts are glibc's with a lower-case first letter.
func strerror(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	msg := errno.Error()
	if msg != "" && msg[0] >= 'a' && msg[0] <= 'z' {
		msg = string(msg[0]-'a'+'A') + msg[1:]
	}
	return msg
}
