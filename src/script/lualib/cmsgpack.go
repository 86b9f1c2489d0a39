package lualib

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// NewCMsgpack returns a cmsgpack table: lua-cmsgpack 0.4.0 as Redis 7.0
// carries it.
func NewCMsgpack(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(mpPack))
	t.RawSetString("unpack", L.NewFunction(mpUnpack))
	t.RawSetString("unpack_one", L.NewFunction(mpUnpackOne))
	t.RawSetString("unpack_limit", L.NewFunction(mpUnpackLimit))
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

// mpMaxNesting is LUACMSGPACK_MAX_NESTING: tables deeper than this pack
// as nil, which also stops cycles.
const mpMaxNesting = 16

// pack(v1 [, v2...]): the encodings of the arguments, concatenated.
func mpPack(L *lua.LState) int {
	nargs := L.GetTop()
	if nargs == 0 {
		argError(L, 0, "MessagePack pack needs input.")
	}
	if nargs+nargs > maxCStack {
		argError(L, 0, "Too many arguments for MessagePack pack.")
	}
	// Each argument's encoding stays on the C stack until the final
	// concat, so the stack a value is encoded at grows with i.
	e := &mpEncoder{guard: encodeGuard{L: L}}
	for i := 1; i <= nargs; i++ {
		e.encode(L.Get(i), 0, nargs+i)
	}
	buf := e.buf
	L.Push(lua.LString(buf))
	return 1
}

type mpEncoder struct {
	buf   []byte
	guard encodeGuard
}

// encode appends v's encoding; top is the Lua stack height the C encoder
// would have with v on top, for its luaL_checkstack calls.
func (e *mpEncoder) encode(v lua.LValue, level, top int) {
	e.buf = e.value(e.buf, v, level, top)
}

func (e *mpEncoder) value(buf []byte, v lua.LValue, level, top int) []byte {
	L := e.guard.L
	switch x := v.(type) {
	case lua.LString:
		return mpAppendBytes(buf, string(x))
	case lua.LBool:
		if x {
			return append(buf, 0xc3)
		}
		return append(buf, 0xc2)
	case lua.LNumber:
		return mpAppendNumber(buf, float64(x))
	case *lua.LTable:
		if level == mpMaxNesting {
			return append(buf, 0xc0)
		}
		mpCheckStack(L, top, 2, "in function table_is_an_array")
		if n, ok := mpArrayLen(x); ok {
			mpCheckStack(L, top, 1, "in function mp_encode_lua_table_as_array")
			buf = mpAppendHeader(buf, 0x90, 0xdc, uint64(n))
			for j := 1; j <= n; j++ {
				e.guard.check(len(buf))
				buf = e.value(buf, x.RawGetInt(j), level+1, top+1)
			}
			return buf
		}
		mpCheckStack(L, top, 3, "in function mp_encode_lua_table_as_map")
		n := 0
		for k, _ := x.Next(lua.LNil); k != lua.LNil; k, _ = x.Next(k) {
			n++
		}
		buf = mpAppendHeader(buf, 0x80, 0xde, uint64(n))
		for k, val := x.Next(lua.LNil); k != lua.LNil; k, val = x.Next(k) {
			e.guard.check(len(buf))
			buf = e.value(buf, k, level+1, top+3)
			buf = e.value(buf, val, level+1, top+2)
		}
		return buf
	}
	return append(buf, 0xc0)
}

func mpCheckStack(L *lua.LState, top, n int, msg string) {
	if top+n > maxCStack {
		stackOverflow(L, msg)
	}
}

// mpArrayLen is table_is_an_array: every key a positive number that is
// an int, and the largest equal to the count (so keys are 1..n).
func mpArrayLen(t *lua.LTable) (int, bool) {
	count, max := 0, int32(0)
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		if !ok || n <= 0 || math.IsInf(float64(n), 0) || float64(toInt32(float64(n))) != float64(n) {
			return 0, false
		}
		if int32(n) > max {
			max = int32(n)
		}
		count++
	}
	return count, int(max) == count
}

func mpAppendBytes(buf []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		buf = append(buf, 0xa0|byte(n))
	case n <= 0xff:
		buf = append(buf, 0xd9, byte(n))
	case n <= 0xffff:
		buf = append(buf, 0xda, byte(n>>8), byte(n))
	default:
		buf = append(buf, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(buf, s...)
}

// mpAppendNumber: integers (doubles equal to their int64) take the
// smallest integer form; others a float when the float32 is exact, else a
// double.
func mpAppendNumber(buf []byte, d float64) []byte {
	if !math.IsInf(d, 0) && d == d && d >= -9223372036854775808.0 && d < 9223372036854775808.0 && float64(int64(d)) == d {
		return mpAppendInt(buf, int64(d))
	}
	if f := float32(d); float64(f) == d {
		buf = append(buf, 0xca)
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(f))
	}
	buf = append(buf, 0xcb)
	return binary.BigEndian.AppendUint64(buf, math.Float64bits(d))
}

func mpAppendInt(buf []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= 127:
		return append(buf, byte(n))
	case n >= 0 && n <= 0xff:
		return append(buf, 0xcc, byte(n))
	case n >= 0 && n <= 0xffff:
		return append(buf, 0xcd, byte(n>>8), byte(n))
	case n >= 0 && n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(buf, 0xce), uint32(n))
	case n >= 0:
		return binary.BigEndian.AppendUint64(append(buf, 0xcf), uint64(n))
	case n >= -32:
		return append(buf, byte(n))
	case n >= -128:
		return append(buf, 0xd0, byte(n))
	case n >= -32768:
		return append(buf, 0xd1, byte(n>>8), byte(n))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(buf, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(buf, 0xd3), uint64(n))
}

// mpAppendHeader writes an array or map header: fix form, 16 or 32 bits.
func mpAppendHeader(buf []byte, fix, b16 byte, n uint64) []byte {
	switch {
	case n <= 15:
		return append(buf, fix|byte(n))
	case n <= 0xffff:
		return append(buf, b16, byte(n>>8), byte(n))
	}
	return binary.BigEndian.AppendUint32(append(buf, b16+1), uint32(n))
}
