package lualib

import (
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The helpers below give Lua 5.1's lauxlib behaviour (luaL_check*,
// luaL_argerror, lua_tonumber on strings) where gopher-lua's own differs:
// its messages do not quote the function name and its string-to-number
// rules are not Lua 5.1's.

// funcName is the name Lua 5.1 reports for the running Go function in an
// argument error: the name the caller used, or "?".
func funcName(L *lua.LState) string {
	dbg, ok := L.GetStack(0)
	if !ok {
		return "?"
	}
	if _, err := L.GetInfo("n", dbg, lua.LNil); err != nil {
		return "?"
	}
	name := dbg.Name
	if name == "" || strings.ContainsAny(name, "(<") || name == "main chunk" {
		return "?"
	}
	return name
}

// argError raises luaL_argerror's message.
func argError(L *lua.LState, n int, msg string) {
	raise(L, "bad argument #%d to '%s' (%s)", n, funcName(L), msg)
}

// raise is luaL_error: the message, after the position of the caller when
// the caller is a Lua function (luaL_where(L, 1)); called straight from
// pcall or another Go function there is none. gopher-lua's RaiseError would
// name the nearest Lua frame instead.
func raise(L *lua.LState, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.CurrentLine > 0 {
			msg = fmt.Sprintf("%s:%d: %s", dbg.Source, dbg.CurrentLine, msg)
		}
	}
	L.Error(lua.LString(msg), 0)
}

// typeError raises luaL_typerror's message.
func typeError(L *lua.LState, n int, want string) {
	argError(L, n, want+" expected, got "+argTypeName(L, n))
}

// argTypeName is luaL_typename: "no value" past the last argument.
func argTypeName(L *lua.LState, n int) string {
	if n > L.GetTop() {
		return "no value"
	}
	return typeName(L.Get(n))
}

// typeName is Lua 5.1's lua_typename; light and full userdata are both
// "userdata".
func typeName(v lua.LValue) string {
	switch v.Type() {
	case lua.LTNil:
		return "nil"
	case lua.LTBool:
		return "boolean"
	case lua.LTNumber:
		return "number"
	case lua.LTString:
		return "string"
	case lua.LTTable:
		return "table"
	case lua.LTFunction:
		return "function"
	case lua.LTUserData:
		return "userdata"
	case lua.LTThread:
		return "thread"
	}
	return v.Type().String()
}

// toNumber is lua_tonumber: numbers, and strings Lua 5.1 converts.
func toNumber(v lua.LValue) (float64, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		return str2d(string(x))
	}
	return 0, false
}

func checkNumber(L *lua.LState, n int) float64 {
	f, ok := toNumber(L.Get(n))
	if !ok {
		typeError(L, n, "number")
	}
	return f
}

// checkInteger is luaL_checkinteger: a number truncated to lua_Integer
// (64 bits), failing only when the argument is no number at all.
func checkInteger(L *lua.LState, n int) int64 {
	f, ok := toNumber(L.Get(n))
	if !ok {
		typeError(L, n, "number")
	}
	return toInteger(f)
}

func optInteger(L *lua.LState, n int, def int64) int64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkInteger(L, n)
}

// toInteger converts as x86-64's cvttsd2si does: truncation, and
// math.MinInt64 for NaN and values out of range.
func toInteger(f float64) int64 {
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// toInt32 converts to C int as x86-64's cvttsd2si does (32-bit form).
func toInt32(f float64) int32 {
	if f != f || f >= 2147483648.0 || f <= -2147483649.0 {
		return math.MinInt32
	}
	return int32(f)
}

// toUint64 converts as GCC's double-to-uint64 sequence on x86-64 does:
// values from 2^63 up go through a subtraction, so 2^64 and +Inf give 0
// and NaN gives 2^63.
func toUint64(f float64) uint64 {
	if !(f >= 9223372036854775808.0) {
		return uint64(toInteger(f))
	}
	return uint64(toInteger(f-9223372036854775808.0)) ^ (1 << 63)
}

// checkString is luaL_checklstring: strings, and numbers as "%.14g".
func checkString(L *lua.LState, n int) string {
	switch x := L.Get(n).(type) {
	case lua.LString:
		return string(x)
	case lua.LNumber:
		return fmtG(float64(x), 14)
	}
	typeError(L, n, "string")
	return ""
}

// checkOption is luaL_checkoption without a default.
func checkOption(L *lua.LState, n int, options []string) int {
	name := checkString(L, n)
	for i, o := range options {
		if o == name {
			return i
		}
	}
	argError(L, n, fmt.Sprintf("invalid option '%s'", name))
	return 0
}

// stackOverflow raises luaL_checkstack's message.
func stackOverflow(L *lua.LState, msg string) {
	raise(L, "stack overflow (%s)", msg)
}

// maxEncoded caps what an encoder builds (cjson.encode, cmsgpack.pack).
// Redis builds whatever a script asks for; here a table that holds itself
// a thousand times (cmsgpack packs 16 levels of it) or a sparse array of
// two billion nulls would take the process's memory, so past the cap the
// call fails with Lua's out-of-memory text.
var maxEncoded = 512 << 20

// encodeGuard is checked before each element an encoder writes: the
// output cap, and every 1024 elements the state's context, so that the
// engine's script kill reaches a long encode as it reaches the Lua VM.
type encodeGuard struct {
	L *lua.LState
	n int
}

func (g *encodeGuard) check(size int) {
	if size > maxEncoded {
		raise(g.L, "not enough memory")
	}
	g.n++
	if g.n&1023 != 0 {
		return
	}
	if ctx := g.L.Context(); ctx != nil && ctx.Err() != nil {
		g.L.RaiseError("%s", ctx.Err().Error())
	}
}
