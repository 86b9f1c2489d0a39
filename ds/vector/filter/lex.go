package filter

import "strings"

const opChars = "+-*%/!()<>=|&"

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
func isDigit(c byte) bool   { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isSelChar(c byte) bool { return isAlpha(c) || isDigit(c) || c == '_' || c == '-' }
func isOpChar(c byte) bool  { return strings.IndexByte(opChars, c) >= 0 }

// tokenize splits src into literals, selectors and operators. A token it cannot read is a
// syntax error at the position it stopped.
func tokenize(src []byte) ([]value, error) {
	var toks []value
	p := 0
	for {
		for p < len(src) && isSpace(src[p]) {
			p++
		}
		if p >= len(src) {
			return toks, nil
		}
		// A '-' starts a number at the start, or after an operator other than ')'.
		minusNum := len(toks) == 0 || toks[len(toks)-1].kind == kOp && toks[len(toks)-1].op != opCParen
		c := src[p]
		var t value
		ok := false
		start := p
		switch {
		case isDigit(c) || minusNum && c == '-' && p+1 < len(src) && isDigit(src[p+1]):
			t, p, ok = lexNumber(src, p)
		case c == '"' || c == '\'':
			t, p, ok = lexString(src, p)
		case c == '.' && p+1 < len(src) && isSelChar(src[p+1]):
			q := p + 1
			for q < len(src) && isSelChar(src[q]) {
				q++
			}
			t, p, ok = value{kind: kSel, str: src[p+1 : q]}, q, true
		case c == '[':
			t, p, ok = lexTuple(src, p)
		case isAlpha(c) || isOpChar(c):
			t, p, ok = lexWord(src, p)
		}
		if !ok {
			return nil, &SyntaxError{Pos: min(p, len(src))}
		}
		t.pos = start
		toks = append(toks, t)
	}
}

// lexNumber reads digits, '.', 'e', 'E' and a leading '-', which must be wholly a number.
func lexNumber(src []byte, p int) (value, int, bool) {
	start := p
	for p < len(src) && (isDigit(src[p]) || src[p] == '.' || src[p] == 'e' || src[p] == 'E' || p == start && src[p] == '-') {
		if p-start >= 255 {
			return value{}, p, false
		}
		p++
	}
	f, ok := parseNum(src[start:p])
	return value{kind: kNum, num: f}, p, ok
}

// lexString reads a quoted string; a backslash escapes the next byte.
func lexString(src []byte, p int) (value, int, bool) {
	q := src[p]
	p++
	start := p
	esc := false
	for p < len(src) {
		switch {
		case src[p] == '\\' && p+1 < len(src):
			esc = true
			p += 2
			continue
		case src[p] == q:
			s := src[start:p]
			if esc {
				s = unescape(s)
			}
			return value{kind: kStr, str: s}, p + 1, true
		}
		p++
	}
	return value{}, p, false
}

// unescape turns \n \r \t into their bytes and any other escaped byte into itself.
func unescape(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			default:
				c = s[i]
			}
		}
		out = append(out, c)
	}
	return out
}

// lexTuple reads [a, b, …] of numbers and strings.
func lexTuple(src []byte, p int) (value, int, bool) {
	t := value{kind: kTuple, tuple: []value{}}
	p++
	for {
		for p < len(src) && isSpace(src[p]) {
			p++
		}
		if p < len(src) && src[p] == ']' {
			return t, p + 1, true
		}
		var e value
		ok := false
		switch {
		case p < len(src) && (isDigit(src[p]) || src[p] == '-'):
			e, p, ok = lexNumber(src, p)
		case p < len(src) && (src[p] == '"' || src[p] == '\''):
			e, p, ok = lexString(src, p)
		}
		if !ok {
			return value{}, p, false
		}
		t.tuple = append(t.tuple, e)
		for p < len(src) && isSpace(src[p]) {
			p++
		}
		switch {
		case p < len(src) && src[p] == ']':
			return t, p + 1, true
		case p < len(src) && src[p] == ',':
			p++
		default:
			return value{}, p, false
		}
	}
}

// lexWord reads the literals null, true, false or the longest operator that prefixes the run
// of letters and operator characters at p.
func lexWord(src []byte, p int) (value, int, bool) {
	start := p
	for p < len(src) && (isAlpha(src[p]) || isOpChar(src[p])) {
		p++
	}
	w := string(src[start:p])
	// The literals end where their letters do, so "(.a == null)" reads.
	letters := start
	for letters < p && isAlpha(src[letters]) {
		letters++
	}
	switch string(src[start:letters]) {
	case "null":
		return value{kind: kNull}, letters, true
	case "true":
		return value{kind: kNum, num: 1}, letters, true
	case "false":
		return value{kind: kNum, num: 0}, letters, true
	}
	best := -1
	for i, o := range ops {
		if strings.HasPrefix(w, o.name) && (best < 0 || len(o.name) > len(ops[best].name)) {
			best = i
		}
	}
	if best < 0 {
		return value{}, p, false // the error quotes from after the run, as Redis's does
	}
	return value{kind: kOp, op: ops[best].code}, start + len(ops[best].name), true
}
