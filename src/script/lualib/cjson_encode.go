package lualib

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// jsonEscape is cjson's char2escape: control bytes as \u00XX (with the
// short forms for \b \t \n \f \r), the quote, backslash, '/' and DEL.
var jsonEscape = func() [256]string {
	var e [256]string
	const hex = "0123456789abcdef"
	for c := 0; c < 32; c++ {
		e[c] = `\u00` + string(hex[c>>4]) + string(hex[c&15])
	}
	e['\b'], e['\t'], e['\n'], e['\f'], e['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	e['"'], e['\\'], e['/'], e[127] = `\"`, `\\`, `\/`, `\u007f`
	return e
}()

// maxKeptBuffer bounds the buffer encode_keep_buffer keeps between calls:
// the C library keeps its largest, which in a state reused for every
// script would hold one huge encoding's memory for good.
const maxKeptBuffer = 64 << 10

// jsonEncoder serialises one value. top counts the Lua stack slots the C
// encoder would hold (the argument, and a key and value or a value per
// level) for its lua_checkstack.
type jsonEncoder struct {
	L     *lua.LState
	cfg   *jsonConfig
	null  *lua.LUserData
	buf   []byte
	guard encodeGuard
}

// encode(value)
func jsonEncode(L *lua.LState, cfg *jsonConfig) int {
	if L.GetTop() != 1 {
		argError(L, 1, "expected 1 argument")
	}
	e := &jsonEncoder{L: L, cfg: cfg, null: Null(L), guard: encodeGuard{L: L}}
	if cfg.keepBuffer != 0 {
		e.buf = cfg.buf[:0]
	}
	e.value(L.Get(1), 0, 1)
	if cfg.keepBuffer != 0 && cap(e.buf) <= maxKeptBuffer {
		cfg.buf = e.buf
	}
	L.Push(lua.LString(e.buf))
	return 1
}

func (e *jsonEncoder) fail(v lua.LValue, reason string) {
	raise(e.L, "Cannot serialise %s: %s", typeName(v), reason)
}

func (e *jsonEncoder) value(v lua.LValue, depth, top int) {
	switch x := v.(type) {
	case lua.LString:
		e.appendString(string(x))
	case lua.LNumber:
		e.appendNumber(float64(x))
	case lua.LBool:
		if x {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case *lua.LTable:
		depth++
		if depth > e.cfg.encodeMaxDepth || top+3 > maxCStack {
			raise(e.L, "Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := e.arrayLength(x); n > 0 {
			e.array(x, n, depth, top)
		} else {
			e.object(x, depth, top)
		}
	case *lua.LNilType:
		e.buf = append(e.buf, "null"...)
	default:
		if x == e.null {
			e.buf = append(e.buf, "null"...)
			return
		}
		e.fail(v, "type not supported")
	}
}

func (e *jsonEncoder) appendString(s string) {
	e.buf = append(e.buf, '"')
	for i := 0; i < len(s); i++ {
		if esc := jsonEscape[s[i]]; esc != "" {
			e.buf = append(e.buf, esc...)
		} else {
			e.buf = append(e.buf, s[i])
		}
	}
	e.buf = append(e.buf, '"')
}

func (e *jsonEncoder) appendNumber(f float64) {
	bad := math.IsInf(f, 0) || f != f
	switch {
	case e.cfg.encodeInvalid == 0 && bad:
		e.fail(lua.LNumber(f), "must not be NaN or Inf")
	case e.cfg.encodeInvalid == 1 && f != f:
		e.buf = append(e.buf, "nan"...)
		return
	case e.cfg.encodeInvalid == 2 && bad:
		e.buf = append(e.buf, "null"...)
		return
	}
	e.buf = AppendG(e.buf, f, e.cfg.precision)
}

// arrayLength is lua_array_length: the largest key when every key is a
// positive integer, -1 otherwise. max is a C int: keys past INT_MAX turn
// it to INT_MIN as x86 does, and such a table encodes as an object.
func (e *jsonEncoder) arrayLength(t *lua.LTable) int32 {
	var max, items int32
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		f := float64(n)
		if !ok || f == 0 || math.Floor(f) != f || f < 1 {
			return -1
		}
		if f > float64(max) {
			max = toInt32(f)
		}
		items++
	}
	c := e.cfg
	if c.sparseRatio > 0 && max > items*int32(c.sparseRatio) && max > int32(c.sparseSafe) {
		if c.sparseConvert == 0 {
			e.fail(t, "excessively sparse array")
		}
		return -1
	}
	return max
}

func (e *jsonEncoder) array(t *lua.LTable, n int32, depth, top int) {
	e.buf = append(e.buf, '[')
	for i := int32(1); i <= n; i++ {
		if i > 1 {
			e.buf = append(e.buf, ',')
		}
		e.guard.check(len(e.buf))
		e.value(t.RawGetInt(int(i)), depth, top+1)
	}
	e.buf = append(e.buf, ']')
}

func (e *jsonEncoder) object(t *lua.LTable, depth, top int) {
	e.buf = append(e.buf, '{')
	first := true
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		e.guard.check(len(e.buf))
		switch kk := k.(type) {
		case lua.LNumber:
			e.buf = append(e.buf, '"')
			e.appendNumber(float64(kk))
			e.buf = append(e.buf, '"', ':')
		case lua.LString:
			e.appendString(string(kk))
			e.buf = append(e.buf, ':')
		default:
			e.fail(k, "table key must be a number or string")
		}
		e.value(v, depth, top+2)
	}
	e.buf = append(e.buf, '}')
}
