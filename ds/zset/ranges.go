package zset

import "bytes"

// ScoreRange is a score interval, each end inclusive or exclusive (ZRANGEBYSCORE's "(1.5").
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

// ParseScoreRange parses the two ends as Redis's zslParseRange does.
func ParseScoreRange(min, max []byte) (ScoreRange, bool) {
	var r ScoreRange
	var ok1, ok2 bool
	r.Min, r.MinEx, ok1 = parseBound(min)
	r.Max, r.MaxEx, ok2 = parseBound(max)
	return r, ok1 && ok2
}

func (r *ScoreRange) GteMin(s float64) bool {
	if r.MinEx {
		return s > r.Min
	}
	return s >= r.Min
}

func (r *ScoreRange) LteMax(s float64) bool {
	if r.MaxEx {
		return s < r.Max
	}
	return s <= r.Max
}

// Contains reports whether s lies in r.
func (r *ScoreRange) Contains(s float64) bool { return r.GteMin(s) && r.LteMax(s) }

func (r *ScoreRange) empty() bool {
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx))
}

// LexRange is a member interval for the BYLEX commands. An end is a member bound, inclusive
// ('[') or exclusive ('('), or one of the infinite ends '-' and '+'.
type LexRange struct {
	Min, Max LexBound
}

// LexBound is one end of a LexRange.
type LexBound struct {
	B   []byte // the member (a view into the argument)
	Inf int8   // -1 for "-", +1 for "+", 0 for a member bound
	Ex  bool
}

// ParseLexRange parses the two ends as Redis's zslParseLexRange does.
func ParseLexRange(min, max []byte) (LexRange, bool) {
	a, ok1 := parseLexBound(min)
	b, ok2 := parseLexBound(max)
	return LexRange{a, b}, ok1 && ok2
}

func parseLexBound(b []byte) (LexBound, bool) {
	if len(b) == 0 {
		return LexBound{}, false
	}
	// '+' and '-' must stand alone as C strings, so a NUL may follow them.
	alone := len(b) == 1 || b[1] == 0
	switch b[0] {
	case '+':
		return LexBound{Inf: 1, Ex: true}, alone
	case '-':
		return LexBound{Inf: -1, Ex: true}, alone
	case '(':
		return LexBound{B: b[1:], Ex: true}, true
	case '[':
		return LexBound{B: b[1:]}, true
	}
	return LexBound{}, false
}

// cmpBound compares a member with a bound.
func cmpBound(m []byte, b *LexBound) int {
	switch b.Inf {
	case -1:
		return 1
	case 1:
		return -1
	}
	return bytes.Compare(m, b.B)
}

func (r *LexRange) GteMin(m []byte) bool {
	c := cmpBound(m, &r.Min)
	if r.Min.Ex {
		return c > 0
	}
	return c >= 0
}

func (r *LexRange) LteMax(m []byte) bool {
	c := cmpBound(m, &r.Max)
	if r.Max.Ex {
		return c < 0
	}
	return c <= 0
}

// empty follows Redis's sdscmplex: equal infinite ends compare equal (and are exclusive).
func (r *LexRange) empty() bool {
	a, b := &r.Min, &r.Max
	var c int
	switch {
	case a.Inf != 0 && a.Inf == b.Inf:
		c = 0
	case a.Inf == -1 || b.Inf == 1:
		c = -1
	case a.Inf == 1 || b.Inf == -1:
		c = 1
	default:
		c = bytes.Compare(a.B, b.B)
	}
	return c > 0 || (c == 0 && (a.Ex || b.Ex))
}

// FirstInScore returns the rank of the first member whose score lies in r, or -1.
func (z *ZSet) FirstInScore(r *ScoreRange) int {
	return z.firstIn(r.empty(), func(_ []byte, s float64) bool { return r.GteMin(s) },
		func(_ []byte, s float64) bool { return r.LteMax(s) })
}

// LastInScore returns the rank of the last member whose score lies in r, or -1.
func (z *ZSet) LastInScore(r *ScoreRange) int {
	return z.lastIn(r.empty(), func(_ []byte, s float64) bool { return r.GteMin(s) },
		func(_ []byte, s float64) bool { return r.LteMax(s) })
}

// CountInScore returns the number of members whose score lies in r.
func (z *ZSet) CountInScore(r *ScoreRange) int {
	return z.countIn(r.empty(), func(_ []byte, s float64) bool { return r.GteMin(s) },
		func(_ []byte, s float64) bool { return r.LteMax(s) })
}

// FirstInLex returns the rank of the first member in r, or -1. Like Redis, lex ranges assume
// every member has the same score; otherwise the answer is well defined but arbitrary.
func (z *ZSet) FirstInLex(r *LexRange) int {
	return z.firstIn(r.empty(), func(m []byte, _ float64) bool { return r.GteMin(m) },
		func(m []byte, _ float64) bool { return r.LteMax(m) })
}

// LastInLex returns the rank of the last member in r, or -1.
func (z *ZSet) LastInLex(r *LexRange) int {
	return z.lastIn(r.empty(), func(m []byte, _ float64) bool { return r.GteMin(m) },
		func(m []byte, _ float64) bool { return r.LteMax(m) })
}

// CountInLex returns the number of members in r.
func (z *ZSet) CountInLex(r *LexRange) int {
	return z.countIn(r.empty(), func(m []byte, _ float64) bool { return r.GteMin(m) },
		func(m []byte, _ float64) bool { return r.LteMax(m) })
}

// bound tests a member against one end of a range.
type bound func(m []byte, s float64) bool

// inRange is Redis's zzlIsInRange/zslIsInRange: a quick rejection by the set's two ends.
func (z *ZSet) inRange(empty bool, gteMin, lteMax bound) bool {
	n := z.Len()
	if empty || n == 0 {
		return false
	}
	if m, s := z.At(n - 1); !gteMin(m, s) {
		return false
	}
	m, s := z.At(0)
	return lteMax(m, s)
}

// firstIn finds the first member not below the range and checks it is not above it. A packed
// set is scanned from the start like Redis's listpack, so even a lex range over members of
// mixed scores answers exactly what Redis answers.
func (z *ZSet) firstIn(empty bool, gteMin, lteMax bound) int {
	if !z.inRange(empty, gteMin, lteMax) {
		return -1
	}
	var rank int
	if b := z.large(); b != nil {
		rank = b.seek(func(id uint32) bool { it := b.item(id); return gteMin(b.arena.get(it.ref), it.score) })
	} else {
		rank = -1
		i := 0
		lpWalk(lpRecords(z.buf()), 0, false, func(m []byte, s float64) bool {
			if gteMin(m, s) {
				rank = i
				return false
			}
			i++
			return true
		})
	}
	if rank < 0 || rank >= z.Len() {
		return -1
	}
	if m, s := z.At(rank); !lteMax(m, s) {
		return -1
	}
	return rank
}

// lastIn finds the last member not above the range and checks it is not below it.
func (z *ZSet) lastIn(empty bool, gteMin, lteMax bound) int {
	if !z.inRange(empty, gteMin, lteMax) {
		return -1
	}
	var rank int
	if b := z.large(); b != nil {
		rank = b.seek(func(id uint32) bool { it := b.item(id); return !lteMax(b.arena.get(it.ref), it.score) }) - 1
	} else {
		rank = -1
		n := z.Len()
		i := n - 1
		lpWalk(lpRecords(z.buf()), n-1, true, func(m []byte, s float64) bool {
			if lteMax(m, s) {
				rank = i
				return false
			}
			i--
			return true
		})
	}
	if rank < 0 {
		return -1
	}
	if m, s := z.At(rank); !gteMin(m, s) {
		return -1
	}
	return rank
}

// countIn counts from the first member in range while members stay below the top, as Redis's
// listpack does; for the large encoding that is the distance between the first and the last.
func (z *ZSet) countIn(empty bool, gteMin, lteMax bound) int {
	first := z.firstIn(empty, gteMin, lteMax)
	if first < 0 {
		return 0
	}
	if z.large() != nil {
		return max(z.lastIn(empty, gteMin, lteMax)-first+1, 0)
	}
	count := 0
	z.Walk(first, false, func(m []byte, s float64) bool {
		if !lteMax(m, s) {
			return false
		}
		count++
		return true
	})
	return count
}
