package strs

// maxGlobStars is the number of '*' groups Redis lets a pattern reach before it
// gives up (its recursion limit in stringmatchlen): a match that needs to get
// past the 1001st star fails, whatever the string.
const maxGlobStars = 1000

// Glob reports whether s matches pattern with the semantics of Redis 7.0.15's
// stringmatchlen: '*' any run of bytes, '?' one byte, "[abc]", "[^abc]",
// "[a-z]" classes, '\' escapes the next byte; nocase folds ASCII letters.
//
// Quirks kept on purpose, because KEYS, SCAN MATCH, PSUBSCRIBE and CONFIG GET
// must answer exactly like Redis:
//   - an empty s matches only an empty pattern, so Glob("*", "") is false.
//     Redis's KEYS and SCAN special-case the pattern "*" before matching;
//     callers that want that behaviour must do the same.
//   - an unterminated class ("[abc") runs to the end of the pattern.
//   - inside a class, "\x" compares x case-sensitively even with nocase.
//
// The matcher is iterative: on a mismatch it only retries the most recent
// '*' one byte further on. A failure after a later star can never be rescued
// by an earlier star, so the work is bounded by len(pattern)*len(s) and no
// pattern can recurse or run for exponential time.
func Glob(pattern, s []byte, nocase bool) bool {
	m := globMatcher{p: pattern, s: s, nocase: nocase, star: -1}
	return m.run()
}

type globMatcher struct {
	p, s   []byte
	nocase bool
	// star is the pattern index just after the latest '*' group (-1: none yet)
	// and starS the string index that star's match currently starts at.
	star, starS int
	stars       int
}

// at returns p[i], or 0 past the end: Redis's patterns are NUL-terminated
// strings and its matcher peeks one byte past the end in a few places.
func (m *globMatcher) at(i int) byte {
	if i < len(m.p) {
		return m.p[i]
	}
	return 0
}

func (m *globMatcher) run() bool {
	pi, si := 0, 0
	for {
		if pi == len(m.p) || si == len(m.s) {
			if pi == len(m.p) && si == len(m.s) {
				return true
			}
			// Pattern used up with string left over (or an empty string):
			// only a longer star match can help.
			var ok bool
			if pi, si, ok = m.backtrack(); !ok {
				return false
			}
			continue
		}
		ok := true
		switch m.p[pi] {
		case '*':
			for pi+1 < len(m.p) && m.p[pi+1] == '*' {
				pi++
			}
			if pi == len(m.p)-1 {
				return true // a trailing star takes the rest
			}
			m.stars++
			if m.stars > maxGlobStars {
				return false
			}
			m.star, m.starS = pi+1, si
			pi++
			continue
		case '?':
			si++
		case '[':
			pi, ok = m.class(pi, si)
			si++
		case '\\':
			if pi+1 < len(m.p) {
				pi++
			}
			ok = m.same(m.p[pi], m.s[si])
			si++
		default:
			ok = m.same(m.p[pi], m.s[si])
			si++
		}
		pi++
		if ok && si == len(m.s) {
			// The string is used up: only stars may remain in the pattern.
			for pi < len(m.p) && m.p[pi] == '*' {
				pi++
			}
			ok = pi == len(m.p)
		}
		if !ok {
			if pi, si, ok = m.backtrack(); !ok {
				return false
			}
		}
	}
}

// backtrack lets the latest star swallow one more byte and resumes matching
// just after it. Redis never lets a non-trailing star swallow the last byte
// of the string, hence the bound.
func (m *globMatcher) backtrack() (pi, si int, ok bool) {
	if m.star < 0 {
		return 0, 0, false
	}
	m.starS++
	if m.starS >= len(m.s) {
		return 0, 0, false
	}
	return m.star, m.starS, true
}

func (m *globMatcher) same(a, b byte) bool {
	if m.nocase {
		return Lower(a) == Lower(b)
	}
	return a == b
}

// class matches s[si] against the class opening at p[open] and returns the
// index of the class's closing byte (or the pattern's last byte when the
// class is unterminated) with the verdict.
func (m *globMatcher) class(open, si int) (int, bool) {
	c := m.s[si]
	pi := open + 1
	not := m.at(pi) == '^'
	if not {
		pi++
	}
	match := false
	for {
		rest := len(m.p) - pi
		switch {
		case m.at(pi) == '\\' && rest >= 2:
			pi++
			if m.p[pi] == c {
				match = true
			}
		case m.at(pi) == ']':
			return pi, match != not
		case rest <= 0:
			return pi - 1, match != not
		case rest >= 3 && m.p[pi+1] == '-':
			if m.inRange(m.p[pi], m.p[pi+2], c) {
				match = true
			}
			pi += 2
		default:
			if m.same(m.p[pi], c) {
				match = true
			}
		}
		pi++
	}
}

// inRange compares as C's signed char does on the platforms Redis ships for,
// so ranges that involve bytes >= 0x80 answer as they do there.
func (m *globMatcher) inRange(start, end, c byte) bool {
	lo, hi, x := int(int8(start)), int(int8(end)), int(int8(c))
	if lo > hi {
		lo, hi = hi, lo
	}
	if m.nocase {
		lo, hi, x = int(int8(Lower(byte(lo)))), int(int8(Lower(byte(hi)))), int(int8(Lower(byte(x))))
	}
	return x >= lo && x <= hi
}
