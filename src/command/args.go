package command

import (
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/ds/zset"
)

// Args parses a command's arguments after the name. The first failure latches: later calls
// return zero values and Err reports it, so a handler parses everything, then checks once.
// Option loops (LPOS, SCAN) are written with it, and every new family's are: a loop is
// `for a := NewArgs(argv, i); ; { switch { case !a.More(): return o, a.Err(); case a.Is("OPT"): … } }`.
type Args struct {
	argv [][]byte
	pos  int
	err  string
}

// NewArgs starts parsing argv at position pos.
func NewArgs(argv [][]byte, pos int) Args { return Args{argv: argv, pos: pos} }

// Err returns the first error as a wire error string, or "".
func (a *Args) Err() string { return a.err }

// Fail latches msg unless an error is already latched.
func (a *Args) Fail(msg string) {
	if a.err == "" {
		a.err = msg
	}
}

// Require latches msg when ok is false: a check of a value just parsed (a count that must be
// positive), which is skipped once an earlier error is latched.
func (a *Args) Require(ok bool, msg string) {
	if !ok {
		a.Fail(msg)
	}
}

// More reports whether arguments remain and no error is latched.
func (a *Args) More() bool { return a.err == "" && a.pos < len(a.argv) }

// Left returns how many arguments remain.
func (a *Args) Left() int { return len(a.argv) - a.pos }

// Next returns the next argument, or latches a syntax error.
func (a *Args) Next() []byte {
	if a.err != "" {
		return nil
	}
	if a.pos >= len(a.argv) {
		a.err = ErrSyntax
		return nil
	}
	a.pos++
	return a.argv[a.pos-1]
}

// Is consumes the next argument if it equals word case-insensitively (word is upper case).
func (a *Args) Is(word string) bool {
	if a.err != "" || a.pos >= len(a.argv) || !strs.EqualFold(a.argv[a.pos], word) {
		return false
	}
	a.pos++
	return true
}

// Int parses the next argument as a 64-bit integer, latching ErrNotInt.
func (a *Args) Int() int64 {
	b := a.Next()
	if a.err != "" {
		return 0
	}
	n, ok := ParseInt(b)
	if !ok {
		a.err = ErrNotInt
	}
	return n
}

// IntErr is Int with a custom error.
func (a *Args) IntErr(msg string) int64 {
	b := a.Next()
	if a.err != "" {
		return 0
	}
	n, ok := ParseInt(b)
	if !ok {
		a.err = msg
	}
	return n
}

// Float parses the next argument as a float like Redis's getDoubleFromObject, latching ErrNotFloat.
func (a *Args) Float() float64 {
	b := a.Next()
	if a.err != "" {
		return 0
	}
	f, ok := ParseFloat(b)
	if !ok {
		a.err = ErrNotFloat
	}
	return f
}

// ParseInt parses b like Redis's string2ll: optional '-', digits, no leading zeros or spaces, no
// '+', within int64.
func ParseInt(b []byte) (int64, bool) { return strs.ParseInt(b) }

// ParseFloat parses b like Redis's getDoubleFromObject (util.c string2d): strtod must read all
// of b, which must not start with a space; hex ("0x10"), "inf" and "infinity" are accepted; NaN,
// overflow to ±inf and underflow to zero are refused. Sorted sets' scores and weights are parsed
// by exactly this rule, so it is theirs. Arguments Redis reads as long double (INCRBYFLOAT,
// HINCRBYFLOAT, timeouts) use strs.ParseLongDouble, and score ranges zset.ParseScoreRange.
func ParseFloat(b []byte) (float64, bool) { return zset.ParseScore(b) }

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
