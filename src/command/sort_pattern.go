package command

import (
	"bytes"
	"math"
	"math/big"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/zset"
)

// sortPattern is a parsed BY or GET pattern. Redis scans patterns as C strings (up to the first
// NUL) for '#', '*' and "->", but cuts the parts by the argument's full length, and so does this.
type sortPattern struct {
	self  bool   // "#": the element itself
	star  int    // index of the first '*'; -1: the pattern names no key
	pre   []byte // before the '*'
	post  []byte // after the '*', up to "->" when there is a field
	field []byte // the hash field after "->"; nil: the key holds a string
}

// parsePattern splits p. A "->" counts only after the '*' and with a field after it.
func parsePattern(p []byte) sortPattern {
	s := cstr(p)
	if len(s) == 1 && s[0] == '#' {
		return sortPattern{self: true}
	}
	star := bytes.IndexByte(s, '*')
	if star < 0 {
		return sortPattern{star: -1}
	}
	sp := sortPattern{star: star, pre: p[:star], post: p[star+1:]}
	if f := bytes.Index(s[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(s) {
		f += star + 1
		sp.post, sp.field = p[star+1:f], p[f+2:]
	}
	return sp
}

// lookup returns the value p names for elem: the element for "#"; else the string at the key
// with the first '*' replaced by elem, or the field of the hash there. A pattern without '*',
// a missing key or field, and a key of another type name nothing. The value stays valid until
// the keyspace or the sorter's scratch changes.
func (st *sorter) lookup(c *Ctx, p *sortPattern, elem []byte) ([]byte, bool) {
	if p.self {
		return elem, true
	}
	if p.star < 0 {
		return nil, false
	}
	st.key = append(append(append(st.key[:0], p.pre...), elem...), p.post...)
	e := c.FindRead(st.key)
	switch {
	case e == nil:
		return nil, false
	case p.field == nil && e.Kind == keyspace.KindString:
		return strCopy(e), true
	case p.field == nil || e.Kind != keyspace.KindHash:
		return nil, false
	}
	h, hide, _ := hashForFields(c, st.key, e) // reclaims expired fields, or hides them, as HGET does
	return hashGetLive(h, hide, p.field, st.scratch[:0])
}

// sortWeight reads a numeric weight as SORT does with C's strtod: white space, then a number
// that ends with the C string (an empty string reads 0); overflow, NaN and any ERANGE are
// errors. glibc's strtod also sets ERANGE for a subnormal result that is inexact, which
// ParseScore (string2d) accepts, so that case is checked here.
func sortWeight(b []byte) (float64, bool) {
	b = cstr(b)
	if len(b) == 0 {
		return 0, true
	}
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	f, ok := zset.ParseScore(b[i:])
	if !ok {
		return 0, false
	}
	if f != 0 && math.Abs(f) < 0x1p-1022 && !exactly(b[i:], f) {
		return 0, false
	}
	return f, true
}

// exactly reports whether the number written s is exactly f.
func exactly(s []byte, f float64) bool {
	r, ok := new(big.Rat).SetString(string(s))
	return ok && r.Cmp(new(big.Rat).SetFloat64(f)) == 0
}
