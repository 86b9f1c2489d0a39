package script

import (
	"bytes"
	"math"
	"strconv"

	"github.com/hotkv/hotkv/net/resp"
	lua "github.com/yuin/gopher-lua"
)

// maxDepth bounds the nesting of replies converted either way. Redis has no explicit bound
// (Lua's stack ends it with "reached lua stack limit"); a self-containing table must not
// recurse forever here.
const maxDepth = 1000

// pushReply converts one RESP reply at the start of b into a Lua value on L's stack, as Redis's
// redisProtocolToLuaType does, and returns the bytes after it. ok is false for malformed input.
//
//	+s -> {ok=s}      -s -> {err=s}      :n -> n          $s -> s, $-1 -> false
//	*a -> {a...}, *-1 -> false          %m -> {map={k=v}} ~s -> {set={m=true}}
//	_  -> nil         #t -> true/false   ,d -> {double=d}
//	(n -> {big_number="n"}              =txt:s -> {verbatim_string={format="txt", string=s}}
//	|attributes are skipped
func (st *state) pushReply(L *lua.LState, b []byte, depth int) ([]byte, bool) {
	if len(b) == 0 || depth > maxDepth {
		return nil, false
	}
	line, rest, ok := cutLine(b[1:])
	if !ok {
		return nil, false
	}
	switch b[0] {
	case '+':
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(line))
		L.Push(t)
	case '-':
		L.Push(errorTable(L, "-"+string(line)))
	case ':':
		n, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil {
			return nil, false
		}
		L.Push(lua.LNumber(n))
	case '$', '=':
		return pushBulk(L, b[0], line, rest)
	case '*', '~', '>', '%', '|':
		return st.pushAggregate(L, b[0], line, rest, depth)
	case '_':
		L.Push(lua.LNil)
	case '#':
		L.Push(lua.LBool(len(line) == 1 && line[0] == 't'))
	case ',':
		t := L.NewTable()
		t.RawSetString("double", lua.LNumber(parseDouble(line)))
		L.Push(t)
	case '(':
		t := L.NewTable()
		t.RawSetString("big_number", lua.LString(line))
		L.Push(t)
	default:
		return nil, false
	}
	return rest, true
}

func pushBulk(L *lua.LState, kind byte, line, rest []byte) ([]byte, bool) {
	n, err := strconv.Atoi(string(line))
	if err != nil || n < -1 {
		return nil, false
	}
	if n == -1 {
		L.Push(lua.LFalse)
		return rest, true
	}
	if len(rest) < n+2 {
		return nil, false
	}
	body := rest[:n]
	if kind == '$' {
		L.Push(lua.LString(body))
		return rest[n+2:], true
	}
	if n < 4 {
		return nil, false
	}
	inner := L.NewTable()
	inner.RawSetString("format", lua.LString(body[:3]))
	inner.RawSetString("string", lua.LString(body[4:]))
	t := L.NewTable()
	t.RawSetString("verbatim_string", inner)
	L.Push(t)
	return rest[n+2:], true
}

func (st *state) pushAggregate(L *lua.LState, kind byte, line, rest []byte, depth int) ([]byte, bool) {
	n, err := strconv.Atoi(string(line))
	if err != nil || n < -1 || n > len(rest) {
		return nil, false
	}
	if n == -1 {
		L.Push(lua.LFalse)
		return rest, true
	}
	ok := true
	switch kind {
	case '|': // attributes: parse and drop, then the reply they describe
		for i := 0; i < 2*n && ok; i++ {
			if rest, ok = st.pushReply(L, rest, depth+1); ok {
				L.Pop(1)
			}
		}
		if !ok {
			return nil, false
		}
		return st.pushReply(L, rest, depth)
	case '%':
		m := L.NewTable()
		for i := 0; i < n && ok; i++ {
			if rest, ok = st.pushReply(L, rest, depth+1); ok {
				rest, ok = st.pushReply(L, rest, depth+1)
			}
			if ok {
				k, v := L.Get(-2), L.Get(-1)
				L.Pop(2)
				setField(m, k, v)
			}
		}
		t := L.NewTable()
		t.RawSetString("map", m)
		L.Push(t)
	case '~':
		s := L.NewTable()
		for i := 0; i < n && ok; i++ {
			if rest, ok = st.pushReply(L, rest, depth+1); ok {
				setField(s, L.Get(-1), lua.LTrue)
				L.Pop(1)
			}
		}
		t := L.NewTable()
		t.RawSetString("set", s)
		L.Push(t)
	default:
		a := L.CreateTable(min(n, 1024), 0)
		for i := 1; i <= n && ok; i++ {
			if rest, ok = st.pushReply(L, rest, depth+1); ok {
				a.RawSetInt(i, L.Get(-1))
				L.Pop(1)
			}
		}
		L.Push(a)
	}
	return rest, ok
}

// setField is lua_settable on a fresh table: a nil key is skipped (Lua would raise), a nil
// value leaves the key unset.
func setField(t *lua.LTable, k, v lua.LValue) {
	if k == lua.LNil {
		return
	}
	if n, ok := k.(lua.LNumber); ok && math.IsNaN(float64(n)) {
		return
	}
	t.RawSet(k, v)
}

func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+2:], true
}

func parseDouble(b []byte) float64 {
	switch string(b) {
	case "inf":
		return math.Inf(1)
	case "-inf":
		return math.Inf(-1)
	case "nan", "-nan":
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(string(b), 64)
	return f
}

// appendReply encodes the script's result v for the caller, as Redis's luaReplyToRedisReply:
// proto is the caller's protocol, scriptProto the one the script chose with redis.setresp
// (it decides what booleans become).
func (st *state) appendReply(dst []byte, v lua.LValue, proto, scriptProto, depth int) []byte {
	if depth > maxDepth {
		return appendErrorLine(dst, "ERR reached lua stack limit")
	}
	switch v := v.(type) {
	case lua.LString:
		return resp.AppendBulkString(dst, string(v))
	case lua.LBool:
		if scriptProto == 2 {
			if v {
				return resp.AppendInt(dst, 1)
			}
			return resp.AppendNull(dst, proto)
		}
		return resp.AppendBool(dst, proto, bool(v))
	case lua.LNumber:
		return resp.AppendInt(dst, toInteger(float64(v)))
	case *lua.LTable:
		return st.appendTable(dst, v, proto, scriptProto, depth)
	}
	return resp.AppendNull(dst, proto)
}

// toInteger is C's (long long) cast as x86-64 does it: truncation, and the "integer
// indefinite" value (INT64_MIN) for NaN and out-of-range values.
func toInteger(f float64) int64 {
	if math.IsNaN(f) || f >= 0x1p63 || f < -0x1p63 {
		return math.MinInt64
	}
	return int64(f)
}

func (st *state) appendTable(dst []byte, t *lua.LTable, proto, scriptProto, depth int) []byte {
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		return appendErrorLine(dst, string(s))
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		return resp.AppendSimple(dst, string(s))
	}
	if n, ok := t.RawGetString("double").(lua.LNumber); ok {
		return resp.AppendDouble(dst, proto, float64(n))
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		return resp.AppendBigNumber(dst, proto, oneLineString(string(s)))
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		f, okf := vt.RawGetString("format").(lua.LString)
		s, oks := vt.RawGetString("string").(lua.LString)
		if okf && oks {
			return resp.AppendVerbatim(dst, proto, string(f), []byte(s))
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		return st.appendMap(dst, m, proto, scriptProto, depth)
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		return st.appendSet(dst, s, proto, scriptProto, depth)
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	dst = appendHeader(dst, '*', n)
	for i := 1; i <= n; i++ {
		dst = st.appendReply(dst, t.RawGetInt(i), proto, scriptProto, depth+1)
	}
	return dst
}

func (st *state) appendMap(dst []byte, m *lua.LTable, proto, scriptProto, depth int) []byte {
	n := 0
	m.ForEach(func(lua.LValue, lua.LValue) { n++ })
	if proto >= 3 {
		dst = appendHeader(dst, '%', n)
	} else {
		dst = appendHeader(dst, '*', 2*n)
	}
	m.ForEach(func(k, v lua.LValue) {
		dst = st.appendReply(dst, k, proto, scriptProto, depth+1)
		dst = st.appendReply(dst, v, proto, scriptProto, depth+1)
	})
	return dst
}

func (st *state) appendSet(dst []byte, s *lua.LTable, proto, scriptProto, depth int) []byte {
	n := 0
	s.ForEach(func(lua.LValue, lua.LValue) { n++ })
	kind := byte('*')
	if proto >= 3 {
		kind = '~'
	}
	dst = appendHeader(dst, kind, n)
	s.ForEach(func(k, _ lua.LValue) {
		dst = st.appendReply(dst, k, proto, scriptProto, depth+1)
	})
	return dst
}

func appendHeader(dst []byte, kind byte, n int) []byte {
	dst = append(dst, kind)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

func oneLineString(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// appendErrorLine appends "-" msg CRLF with CR and LF inside msg turned into spaces, as Redis's
// addReplyErrorFormat leaves an error it was given with its code.
func appendErrorLine(dst []byte, msg string) []byte {
	dst = append(dst, '-')
	at := len(dst)
	dst = append(dst, msg...)
	for i := at; i < len(dst); i++ {
		if dst[i] == '\r' || dst[i] == '\n' {
			dst[i] = ' '
		}
	}
	return append(dst, '\r', '\n')
}
