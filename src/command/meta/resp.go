package meta

import (
	"errors"
	"strconv"
	"strings"
)

// value is one RESP3 reply parsed from the metadata file. raw is its exact encoding, a substring of
// the embedded data, so replies built from it copy Redis's bytes rather than re-encode them.
type value struct {
	kind  byte    // the type byte: '*', '~', '%', '$', '+', ':'
	str   string  // a string's payload, or an integer's text
	n     int64   // an integer's value, or an aggregate's element count (a map counts pairs)
	elems []value // an aggregate's elements; a map's keys and values alternate
	raw   string
}

var errMalformed = errors.New("meta: malformed RESP")

// parseValue parses the reply starting at s[pos:] and returns it with the position after it. Only
// the types COMMAND INFO and COMMAND DOCS use are accepted.
func parseValue(s string, pos int) (value, int, error) {
	line, next, ok := cutLine(s, pos)
	if !ok || len(line) < 2 {
		return value{}, 0, errMalformed
	}
	v := value{kind: line[0], str: line[1:]}
	switch v.kind {
	case '+':
	case ':':
		n, err := strconv.ParseInt(v.str, 10, 64)
		if err != nil {
			return value{}, 0, errMalformed
		}
		v.n = n
	case '$':
		n, err := strconv.Atoi(v.str)
		if err != nil || n < 0 || next+n+2 > len(s) || s[next+n:next+n+2] != "\r\n" {
			return value{}, 0, errMalformed
		}
		v.str, next = s[next:next+n], next+n+2
	case '*', '~', '%':
		return parseAggregate(s, pos, next, v)
	default:
		return value{}, 0, errMalformed
	}
	v.raw = s[pos:next]
	return v, next, nil
}

func parseAggregate(s string, pos, next int, v value) (value, int, error) {
	n, err := strconv.Atoi(v.str)
	if err != nil || n < 0 || n > len(s) {
		return value{}, 0, errMalformed
	}
	v.n, v.str = int64(n), ""
	count := n
	if v.kind == '%' {
		count *= 2
	}
	v.elems = make([]value, 0, count)
	for range count {
		var e value
		if e, next, err = parseValue(s, next); err != nil {
			return value{}, 0, err
		}
		v.elems = append(v.elems, e)
	}
	v.raw = s[pos:next]
	return v, next, nil
}

// cutLine returns the line at s[pos:] without its CRLF, and the position after the CRLF.
func cutLine(s string, pos int) (line string, next int, ok bool) {
	i := strings.Index(s[pos:], "\r\n")
	if i < 0 {
		return "", 0, false
	}
	return s[pos : pos+i], pos + i + 2, true
}

// field returns the value of key in a map (or a RESP2-style flat key-value array), or nil.
func (v *value) field(key string) *value {
	for i := 0; i+1 < len(v.elems); i += 2 {
		if v.elems[i].str == key {
			return &v.elems[i+1]
		}
	}
	return nil
}

// strs returns the payloads of an aggregate of strings.
func (v *value) strs() []string {
	out := make([]string, len(v.elems))
	for i := range v.elems {
		out[i] = v.elems[i].str
	}
	return out
}

// ToRESP2 converts Redis's RESP3 encoding of a COMMAND INFO or COMMAND DOCS reply to its RESP2
// encoding: a map becomes a flat array of its keys and values and a set an array, exactly as Redis
// encodes the same reply for a RESP2 client. Other RESP3 types never occur in those replies and are
// an error.
func ToRESP2(s string) (string, error) {
	var b strings.Builder
	b.Grow(len(s))
	for pos := 0; pos < len(s); {
		line, next, ok := cutLine(s, pos)
		if !ok || line == "" {
			return "", errMalformed
		}
		switch line[0] {
		case '+', ':', '-', '*':
			b.WriteString(s[pos:next])
		case '~':
			b.WriteString("*" + line[1:] + "\r\n")
		case '%':
			n, err := strconv.Atoi(line[1:])
			if err != nil {
				return "", errMalformed
			}
			b.WriteString("*" + strconv.Itoa(2*n) + "\r\n")
		case '$':
			n, err := strconv.Atoi(line[1:])
			if err != nil || n < 0 || next+n+2 > len(s) {
				return "", errMalformed
			}
			next += n + 2
			b.WriteString(s[pos:next])
		default:
			return "", errMalformed
		}
		pos = next
	}
	return b.String(), nil
}
