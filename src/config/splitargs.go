package config

import (
	"strings"

	"github.com/hotkv/hotkv/ds/strs"
)

// SplitArgs splits a configuration line into arguments the way Redis's
// sdssplitargs does (redis.conf lines, inline commands, redis-cli input):
// blanks separate arguments; "double quotes" understand \n \r \t \b \a \xHH
// and \<any>; 'single quotes' understand only \'; a closing quote must be
// followed by a blank or the end. ok is false on unbalanced quotes or a
// closing quote glued to more text. A NUL byte ends the line, as in C.
func SplitArgs(line string) (args []string, ok bool) {
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	args = []string{}
	p := 0
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p == len(line) {
			return args, true
		}
		var arg []byte
		arg, p, ok = splitOne(line, p)
		if !ok {
			return nil, false
		}
		args = append(args, string(arg))
	}
}

// splitOne reads the argument starting at line[p] and returns it with the
// index just past it.
func splitOne(line string, p int) ([]byte, int, bool) {
	at := func(i int) byte {
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	cur := []byte{}
	inq, insq := false, false
	for {
		c := at(p)
		switch {
		case inq:
			switch {
			case c == '\\' && at(p+1) == 'x' && isHex(at(p+2)) && isHex(at(p+3)):
				cur = append(cur, unhex(at(p+2))<<4|unhex(at(p+3)))
				p += 3
			case c == '\\' && at(p+1) != 0:
				p++
				cur = append(cur, unescape(line[p]))
			case c == '"':
				if n := at(p + 1); n != 0 && !isSpace(n) {
					return nil, p, false
				}
				return cur, p + 1, true
			case c == 0:
				return nil, p, false
			default:
				cur = append(cur, c)
			}
		case insq:
			switch {
			case c == '\\' && at(p+1) == '\'':
				p++
				cur = append(cur, '\'')
			case c == '\'':
				if n := at(p + 1); n != 0 && !isSpace(n) {
					return nil, p, false
				}
				return cur, p + 1, true
			case c == 0:
				return nil, p, false
			default:
				cur = append(cur, c)
			}
		default:
			switch c {
			case ' ', '\n', '\r', '\t', 0:
				if c != 0 {
					p++
				}
				return cur, p, true
			case '"':
				inq = true
			case '\'':
				insq = true
			default:
				cur = append(cur, c)
			}
		}
		p++
	}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// Repr quotes s as Redis's sdscatrepr does: the form CONFIG REWRITE writes
// string values in, and the one SplitArgs reads back to the same bytes.
func Repr(s string) string { return string(strs.AppendRepr(make([]byte, 0, len(s)+2), s)) }
