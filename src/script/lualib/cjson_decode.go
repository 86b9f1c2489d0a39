package lualib

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

type jsonToken int

const (
	tObjBegin jsonToken = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

var jsonTokenName = [...]string{
	"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END",
	"T_WHITESPACE", "T_ERROR", "T_UNKNOWN",
}

// jsonChar is cjson's ch2token: what a byte can start.
var jsonChar = func() [256]jsonToken {
	var t [256]jsonToken
	for i := range t {
		t[i] = tError
	}
	t['{'], t['}'], t['['], t[']'], t[','], t[':'] = tObjBegin, tObjEnd, tArrBegin, tArrEnd, tComma, tColon
	t[0] = tEnd
	t[' '], t['\t'], t['\n'], t['\r'] = tWhitespace, tWhitespace, tWhitespace, tWhitespace
	for _, c := range "fiInNt\"+-0123456789" {
		t[c] = tUnknown
	}
	return t
}()

// jsonUnescape is cjson's escape2char; 'u' asks for a \uXXXX escape.
var jsonUnescape = [256]byte{
	'"': '"', '\\': '\\', '/': '/', 'b': '\b', 't': '\t',
	'n': '\n', 'f': '\f', 'r': '\r', 'u': 'u',
}

type token struct {
	typ   jsonToken
	index int    // 0-based offset of the token (or the error)
	err   string // for tError
	str   string
	num   float64
	b     bool
}

// jsonDecoder parses data, which ends at its first NUL as the C string
// does. top counts the Lua stack slots the C parser would hold.
type jsonDecoder struct {
	L     *lua.LState
	cfg   *jsonConfig
	null  *lua.LUserData
	data  string
	p     int
	depth int
	tmp   []byte
	// scratch holds the members of the containers being parsed, so that
	// each table is created at its final size (gopher-lua's default table
	// reserves 32 slots per part); it never outgrows the input.
	scratch []lua.LValue
}

func (d *jsonDecoder) at(i int) byte {
	if i < len(d.data) {
		return d.data[i]
	}
	return 0
}

// decode(json)
func jsonDecode(L *lua.LState, cfg *jsonConfig) int {
	if L.GetTop() != 1 {
		argError(L, 1, "expected 1 argument")
	}
	s := checkString(L, 1)
	if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
		raise(L, "JSON parser does not support UTF-16 or UTF-32")
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	d := &jsonDecoder{L: L, cfg: cfg, null: Null(L), data: s}
	var tok token
	d.next(&tok)
	v := d.value(&tok, 1)
	d.next(&tok)
	if tok.typ != tEnd {
		d.throw("the end", &tok)
	}
	L.Push(v)
	return 1
}

func (d *jsonDecoder) throw(expected string, tok *token) {
	found := jsonTokenName[tok.typ]
	if tok.typ == tError {
		found = tok.err
	}
	raise(d.L, "Expected %s but found %s at character %d", expected, found, tok.index+1)
}

func (d *jsonDecoder) setError(tok *token, msg string) {
	tok.typ, tok.index, tok.err = tError, d.p, msg
}

// descend is json_decode_descend: one level deeper, within the depth limit
// and the slots Lua would have.
func (d *jsonDecoder) descend(top, slots int) {
	d.depth++
	if d.depth <= d.cfg.decodeMaxDepth && top+slots <= maxCStack {
		return
	}
	raise(d.L, "Found too many nested data structures (%d) at character %d", d.depth, d.p)
}

// value is json_process_value for the token just read; top is the stack
// height the value would be pushed at, less one.
func (d *jsonDecoder) value(tok *token, top int) lua.LValue {
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.b)
	case tObjBegin:
		return d.object(top)
	case tArrBegin:
		return d.array(top)
	case tNull:
		return d.null
	}
	d.throw("value", tok)
	return nil
}

func (d *jsonDecoder) object(top int) lua.LValue {
	d.descend(top, 3)
	mark := len(d.scratch)
	var tok token
	d.next(&tok)
	if tok.typ != tObjEnd {
		for {
			if tok.typ != tString {
				d.throw("object key string", &tok)
			}
			key := lua.LString(tok.str)
			d.next(&tok)
			if tok.typ != tColon {
				d.throw("colon", &tok)
			}
			d.next(&tok)
			v := d.value(&tok, top+2)
			d.scratch = append(d.scratch, key, v)
			d.next(&tok)
			if tok.typ == tObjEnd {
				break
			}
			if tok.typ != tComma {
				d.throw("comma or object end", &tok)
			}
			d.next(&tok)
		}
	}
	d.depth--
	members := d.scratch[mark:]
	t := d.L.CreateTable(0, len(members)/2)
	for i := 0; i < len(members); i += 2 {
		t.RawSetString(string(members[i].(lua.LString)), members[i+1])
	}
	clear(members)
	d.scratch = d.scratch[:mark]
	return t
}

func (d *jsonDecoder) array(top int) lua.LValue {
	d.descend(top, 2)
	mark := len(d.scratch)
	var tok token
	d.next(&tok)
	if tok.typ != tArrEnd {
		for {
			v := d.value(&tok, top+1)
			d.scratch = append(d.scratch, v)
			d.next(&tok)
			if tok.typ == tArrEnd {
				break
			}
			if tok.typ != tComma {
				d.throw("comma or array end", &tok)
			}
			d.next(&tok)
		}
	}
	d.depth--
	return d.arrayFrom(mark)
}

// arrayFrom makes a table of the scratch values from mark on, and drops them.
func (d *jsonDecoder) arrayFrom(mark int) *lua.LTable {
	elems := d.scratch[mark:]
	t := d.L.CreateTable(len(elems), 0)
	for i, v := range elems {
		t.RawSetInt(i+1, v)
	}
	clear(elems)
	d.scratch = d.scratch[:mark]
	return t
}

// next is json_next_token.
func (d *jsonDecoder) next(tok *token) {
	for jsonChar[d.at(d.p)] == tWhitespace {
		d.p++
	}
	ch := d.at(d.p)
	tok.typ, tok.index = jsonChar[ch], d.p
	switch tok.typ {
	case tError:
		d.setError(tok, "invalid token")
		return
	case tEnd:
		return
	case tUnknown:
	default:
		d.p++
		return
	}
	rest := d.data[d.p:]
	switch {
	case ch == '"':
		d.string(tok)
	case ch == '-' || isDigit(ch):
		if d.cfg.decodeInvalid == 0 && invalidNumber(rest) {
			d.setError(tok, "invalid number")
			return
		}
		d.number(tok)
	case strings.HasPrefix(rest, "true"):
		tok.typ, tok.b = tBoolean, true
		d.p += 4
	case strings.HasPrefix(rest, "false"):
		tok.typ, tok.b = tBoolean, false
		d.p += 5
	case strings.HasPrefix(rest, "null"):
		tok.typ = tNull
		d.p += 4
	case d.cfg.decodeInvalid != 0 && invalidNumber(rest):
		d.number(tok)
	default:
		d.setError(tok, "invalid token")
	}
}

// invalidNumber is json_is_invalid_number: what strtod takes but JSON
// does not (a leading '+', hex, leading zeros, inf, nan).
func invalidNumber(s string) bool {
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	p := 0
	if at(p) == '+' {
		return true
	}
	if at(p) == '-' {
		p++
	}
	if at(p) == '0' {
		c := at(p + 1)
		return c|0x20 == 'x' || isDigit(c)
	}
	if at(p) <= '9' {
		return false
	}
	return hasPrefixFold(s[p:], "inf") || hasPrefixFold(s[p:], "nan")
}

func (d *jsonDecoder) number(tok *token) {
	v, n := strtod(d.data[d.p:])
	if n == 0 {
		d.setError(tok, "invalid number")
		return
	}
	tok.typ, tok.num = tNumber, v
	d.p += n
}

// string is json_next_string_token: raw bytes pass through, escapes are
// translated, a NUL or the end of input is an unterminated string.
func (d *jsonDecoder) string(tok *token) {
	d.p++
	d.tmp = d.tmp[:0]
	for {
		ch := d.at(d.p)
		if ch == '"' {
			break
		}
		if ch == 0 {
			d.setError(tok, "unexpected end of string")
			return
		}
		if ch == '\\' {
			ch = jsonUnescape[d.at(d.p+1)]
			if ch == 'u' {
				if d.unicodeEscape() {
					continue
				}
				d.setError(tok, "invalid unicode escape code")
				return
			}
			if ch == 0 {
				d.setError(tok, "invalid escape code")
				return
			}
			d.p++
		}
		d.tmp = append(d.tmp, ch)
		d.p++
	}
	d.p++
	tok.typ, tok.str = tString, string(d.tmp)
}

func (d *jsonDecoder) hex4(at int) int {
	v := 0
	for i := 0; i < 4; i++ {
		c := d.at(at + i)
		var n int
		switch {
		case isDigit(c):
			n = int(c - '0')
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			n = int(c|0x20-'a') + 10
		default:
			return -1
		}
		v = v<<4 | n
	}
	return v
}

// unicodeEscape translates the \uXXXX (or surrogate pair) at d.p to
// UTF-8; false leaves d.p at the backslash for the error.
func (d *jsonDecoder) unicodeEscape() bool {
	cp := d.hex4(d.p + 2)
	if cp < 0 {
		return false
	}
	n := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 {
			return false
		}
		if d.at(d.p+6) != '\\' || d.at(d.p+7) != 'u' {
			return false
		}
		low := d.hex4(d.p + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = ((cp&0x3FF)<<10 | low&0x3FF) + 0x10000
		n = 12
	}
	d.tmp = appendUTF8(d.tmp, cp)
	d.p += n
	return true
}

// appendUTF8 encodes as cjson's codepoint_to_utf8, which takes any value
// up to 0x1FFFFF (surrogates never reach it).
func appendUTF8(b []byte, cp int) []byte {
	switch {
	case cp <= 0x7F:
		return append(b, byte(cp))
	case cp <= 0x7FF:
		return append(b, byte(cp>>6|0xC0), byte(cp&0x3F|0x80))
	case cp <= 0xFFFF:
		return append(b, byte(cp>>12|0xE0), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	}
	return append(b, byte(cp>>18|0xF0), byte(cp>>12&0x3F|0x80), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
}
