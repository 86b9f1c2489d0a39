package filter

// extractField finds the top-level field name in json (an object) and returns its value: a
// string, number, boolean (as 1 or 0), null, or a flat array of those. Anything else (a nested
// object, a malformed document, a missing field) is not found. Nothing is allocated unless the
// value is an array or a string with escapes.
func extractField(json, name []byte) (value, bool) {
	if len(name) == 0 {
		return value{}, false
	}
	p := skipWS(json, 0)
	if p >= len(json) || json[p] != '{' {
		return value{}, false
	}
	p++
	for {
		p = skipWS(json, p)
		if p >= len(json) || json[p] != '"' {
			return value{}, false
		}
		ks := p + 1
		q, ok := skipString(json, p)
		if !ok {
			return value{}, false
		}
		match := string(json[ks:q-1]) == string(name)
		p = skipWS(json, q)
		if p >= len(json) || json[p] != ':' {
			return value{}, false
		}
		p = skipWS(json, p+1)
		if p >= len(json) {
			return value{}, false
		}
		if match {
			v, _, ok := parseValue(json, p)
			return v, ok
		}
		if p, ok = skipValue(json, p); !ok {
			return value{}, false
		}
		p = skipWS(json, p)
		if p >= len(json) || json[p] != ',' {
			return value{}, false
		}
		p++
	}
}

func skipWS(b []byte, p int) int {
	for p < len(b) && isSpace(b[p]) {
		p++
	}
	return p
}

// skipString returns the position after the string that starts at p.
func skipString(b []byte, p int) (int, bool) {
	p++
	for p < len(b) {
		switch b[p] {
		case '\\':
			p += 2
			continue
		case '"':
			return p + 1, true
		}
		p++
	}
	return p, false
}

func isNumChar(c byte) bool {
	return isDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func skipValue(b []byte, p int) (int, bool) {
	switch b[p] {
	case '"':
		return skipString(b, p)
	case '{', '[':
		open, close := b[p], byte('}')
		if open == '[' {
			close = ']'
		}
		depth := 1
		p++
		for p < len(b) && depth > 0 {
			switch c := b[p]; {
			case c == '"':
				var ok bool
				if p, ok = skipString(b, p); !ok {
					return p, false
				}
				continue
			case c == open:
				depth++
			case c == close:
				depth--
			}
			p++
		}
		return p, depth == 0
	case 't':
		return skipLit(b, p, "true")
	case 'f':
		return skipLit(b, p, "false")
	case 'n':
		return skipLit(b, p, "null")
	}
	q := p
	for q < len(b) && isNumChar(b[q]) {
		q++
	}
	return q, q > p
}

func skipLit(b []byte, p int, lit string) (int, bool) {
	if len(b)-p >= len(lit) && string(b[p:p+len(lit)]) == lit {
		return p + len(lit), true
	}
	return p, false
}

// parseValue converts the JSON value at p.
func parseValue(b []byte, p int) (value, int, bool) {
	p = skipWS(b, p)
	if p >= len(b) {
		return value{}, p, false
	}
	switch b[p] {
	case '"':
		q, ok := skipString(b, p)
		if !ok {
			return value{}, p, false
		}
		s := b[p+1 : q-1]
		for _, c := range s {
			if c == '\\' {
				s = unescape(s)
				break
			}
		}
		return value{kind: kStr, str: s}, q, true
	case '[':
		return parseArray(b, p)
	case 't':
		return parseLit(b, p, "true", value{kind: kNum, num: 1})
	case 'f':
		return parseLit(b, p, "false", value{kind: kNum, num: 0})
	case 'n':
		return parseLit(b, p, "null", value{kind: kNull})
	}
	if c := b[p]; !isDigit(c) && c != '-' && c != '+' {
		return value{}, p, false
	}
	q := p
	for q < len(b) && q-p < 255 && isNumChar(b[q]) {
		q++
	}
	f, ok := parseNum(b[p:q])
	return value{kind: kNum, num: f}, q, ok
}

// parseLit accepts lit only when a delimiter (space, ',', ']', '}' or the end) follows it.
func parseLit(b []byte, p int, lit string, v value) (value, int, bool) {
	q, ok := skipLit(b, p, lit)
	if !ok {
		return value{}, p, false
	}
	if q < len(b) && !isSpace(b[q]) && b[q] != ',' && b[q] != ']' && b[q] != '}' {
		return value{}, p, false
	}
	return v, q, true
}

// parseArray reads a flat array; a nested array or object in it makes the value unsupported.
func parseArray(b []byte, p int) (value, int, bool) {
	t := value{kind: kTuple, tuple: []value{}}
	p = skipWS(b, p+1)
	if p < len(b) && b[p] == ']' {
		return t, p + 1, true
	}
	for {
		if p < len(b) && (b[p] == '[' || b[p] == '{') {
			return value{}, p, false
		}
		e, q, ok := parseValue(b, p)
		if !ok {
			return value{}, p, false
		}
		t.tuple = append(t.tuple, e)
		p = skipWS(b, q)
		switch {
		case p >= len(b):
			return value{}, p, false
		case b[p] == ',':
			p = skipWS(b, p+1)
		case b[p] == ']':
			return t, p + 1, true
		default:
			return value{}, p, false
		}
	}
}
