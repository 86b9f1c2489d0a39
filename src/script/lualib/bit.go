package lualib

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// NewBit returns a bit table: LuaBitOp 1.0.2, whose operations work on
// 32-bit integers and return signed results as numbers.
func NewBit(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	fns := []struct {
		name string
		fn   lua.LGFunction
	}{
		{"tobit", bitToBit}, {"bnot", bitNot},
		{"band", bitFold(func(a, b uint32) uint32 { return a & b })},
		{"bor", bitFold(func(a, b uint32) uint32 { return a | b })},
		{"bxor", bitFold(func(a, b uint32) uint32 { return a ^ b })},
		{"lshift", bitShift(func(b, n uint32) uint32 { return b << n })},
		{"rshift", bitShift(func(b, n uint32) uint32 { return b >> n })},
		{"arshift", bitShift(func(b, n uint32) uint32 { return uint32(int32(b) >> n) })},
		{"rol", bitShift(func(b, n uint32) uint32 { return b<<n | b>>((32-n)&31) })},
		{"ror", bitShift(func(b, n uint32) uint32 { return b<<((32-n)&31) | b>>n })},
		{"bswap", bitSwap}, {"tohex", bitToHex},
	}
	for _, f := range fns {
		t.RawSetString(f.name, L.NewFunction(f.fn))
	}
	return t
}

// bitArg is LuaBitOp's barg: the number plus 2^52+2^51, whose low 32
// mantissa bits are then the integer rounded to nearest, modulo 2^32.
// Anything lua_tonumber cannot convert is 0, an error only if it is no
// number at all. NaN gives 0: C's NaNs have no low mantissa bits set, Go's
// math.NaN does.
func bitArg(L *lua.LState, n int) uint32 {
	f, ok := toNumber(L.Get(n))
	if !ok {
		f = 0
	}
	var b uint32
	if f == f {
		b = uint32(math.Float64bits(f + 6755399441055744.0))
	}
	if b == 0 && !ok {
		typeError(L, n, "number")
	}
	return b
}

func bitRet(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

// tobit(x)
func bitToBit(L *lua.LState) int { return bitRet(L, bitArg(L, 1)) }

// bnot(x)
func bitNot(L *lua.LState) int { return bitRet(L, ^bitArg(L, 1)) }

// band|bor|bxor(x1 [, x2...]): the arguments after the first are taken
// from the last one down, so that is the order their errors come in.
func bitFold(op func(a, b uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := bitArg(L, 1)
		for i := L.GetTop(); i > 1; i-- {
			b = op(b, bitArg(L, i))
		}
		return bitRet(L, b)
	}
}

// lshift|rshift|arshift|rol|ror(x, n): n modulo 32.
func bitShift(op func(b, n uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := bitArg(L, 1)
		n := bitArg(L, 2) & 31
		return bitRet(L, op(b, n))
	}
}

// bswap(x)
func bitSwap(L *lua.LState) int {
	b := bitArg(L, 1)
	return bitRet(L, b>>24|(b>>8)&0xff00|(b&0xff00)<<8|b<<24)
}

// tohex(x [, n]): n digits (8 by default, at most 8), upper case when n is
// negative. Redis's copy treats -2^31 as -(2^31-1).
func bitToHex(L *lua.LState) int {
	b := bitArg(L, 1)
	n := int32(8)
	if L.GetTop() >= 2 {
		n = int32(bitArg(L, 2))
	}
	digits := "0123456789abcdef"
	if n == math.MinInt32 {
		n++
	}
	if n < 0 {
		n = -n
		digits = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	buf := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}
