package script

import (
	"math"
	"runtime/metrics"
	"strings"

	"github.com/hotkv/hotkv/src/script/lualib"
	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1 prints numbers with "%.14g" (LUAI_NUMFFORMAT); gopher-lua prints integral values as
// integers and others with Go's shortest form, so tostring(1/3) would read 0.3333333333333333
// and tostring(1e15) 1000000000000000 where Redis says 0.33333333333333 and 1e+15. The sandbox
// formats numbers as Lua does wherever a library function converts them: tostring,
// string.format's %s, table.concat, redis.log, the string library's string arguments; the ..
// operator is rewritten before compilation to do the same (concat.go).
// Numbers given to redis.call become "%.17g" as Redis does (argString).

// formatNumber is C's "%.14g" with glibc's spellings of the infinities and NaNs.
func formatNumber(f float64) string {
	return string(appendNumber(nil, f, 14))
}

// appendNumber is C's "%.<prec>g", as the libraries format numbers (lualib.AppendG).
func appendNumber(dst []byte, f float64, prec int) []byte { return lualib.AppendG(dst, f, prec) }

// luaString is Lua's lua_tolstring for strings and numbers; ok is false for other types.
func luaString(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return formatNumber(float64(v)), true
	}
	return "", false
}

// strFormat is string.format with Lua 5.1's texts where gopher-lua's differ: a number given to
// %s is formatted "%.14g", and %q quotes as Lua does (a newline becomes backslash-newline).
func strFormat(L *lua.LState) int {
	f := L.CheckString(1)
	var rebuilt []byte // f with each %q turned into %s, when there is one
	arg := 1
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		for i < len(f) && strings.IndexByte("-+ #0123456789.", f[i]) >= 0 {
			i++
		}
		arg++
		if i >= len(f) {
			break
		}
		if arg > L.GetTop() {
			L.ArgError(arg, "no value")
		}
		switch f[i] {
		case 'd', 'i', 'o', 'u', 'x', 'X', 'e', 'E', 'f', 'g', 'G', 'c':
			// Lua converts a numeric string (luaL_checknumber); gopher-lua hands it to Go's fmt.
			switch v := L.Get(arg).(type) {
			case lua.LNumber:
			case lua.LString:
				n, ok := strToNumber(string(v))
				if !ok {
					L.ArgError(arg, "number expected, got string")
				}
				L.Replace(arg, lua.LNumber(n))
			default:
				L.ArgError(arg, "number expected, got "+v.Type().String())
			}
		case 's':
			if n, ok := L.Get(arg).(lua.LNumber); ok {
				L.Replace(arg, lua.LString(formatNumber(float64(n))))
			}
		case 'q':
			s, _ := luaString(L.Get(arg))
			L.Replace(arg, lua.LString(quoteLua(s)))
			if rebuilt == nil {
				rebuilt = []byte(f)
			}
			rebuilt[i] = 's'
		}
	}
	if rebuilt != nil {
		L.Replace(1, lua.LString(rebuilt))
	}
	return stringFormat(L)
}

// quoteLua is Lua 5.1's addquoted (string.format's %q).
func quoteLua(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b = append(b, '\\', c)
		case '\r':
			b = append(b, '\\', 'r')
		case 0:
			b = append(b, '\\', '0', '0', '0')
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}

var stringFormat lua.LGFunction

func init() {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	L.Push(L.NewFunction(lua.OpenString))
	L.Push(lua.LString("string"))
	L.Call(1, 1)
	stringFormat = L.Get(-1).(*lua.LTable).RawGetString("format").(*lua.LFunction).GFunction
	L.Push(L.NewFunction(lua.OpenBase))
	L.Push(lua.LString("_G"))
	L.Call(1, 0)
	goToNumber = L.G.Global.RawGetString("tonumber").(*lua.LFunction).GFunction
}

// strRep is string.rep bounded by lua-max-memory: a crafted count fails with Lua's memory error
// instead of asking Go for gigabytes at once.
func (st *state) strRep(L *lua.LState) int {
	if n, ok := L.Get(1).(lua.LNumber); ok {
		L.Replace(1, lua.LString(formatNumber(float64(n))))
	}
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || len(s) == 0 {
		L.Push(lua.LString(""))
		return 1
	}
	if int64(len(s))*int64(n) > st.e.memCap() {
		L.RaiseError("not enough memory")
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// tabConcat is table.concat with Lua's number formatting and the same memory bound, checked on
// the total before anything is built.
func (st *state) tabConcat(L *lua.LState) int {
	t := L.CheckTable(1)
	sep := L.OptString(2, "")
	i := L.OptInt(3, 1)
	j := L.OptInt(4, t.Len())
	total := int64(0)
	for k := i; k <= j; k++ {
		s, ok := luaString(t.RawGetInt(k))
		if !ok {
			L.RaiseError("invalid value (at index %d) in table for 'concat'", k)
		}
		if total += int64(len(s) + len(sep)); total > st.e.memCap() {
			L.RaiseError("not enough memory")
		}
	}
	b := make([]byte, 0, max(total-int64(len(sep)), 0))
	for k := i; k <= j; k++ {
		s, _ := luaString(t.RawGetInt(k))
		b = append(b, s...)
		if k < j {
			b = append(b, sep...)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

func (e *Engine) memCap() int64 {
	if n := e.maxMem.Load(); n > 0 {
		return n
	}
	return math.MaxInt64
}

// lrand48 is Redis's redisLrand48 (the 48-bit generator of POSIX lrand48), so math.random
// follows one sequence on every platform as Redis's does.
type lrand48 struct{ x uint64 }

const (
	lrandA    = 0x5DEECE66D
	lrandC    = 0xB
	lrandMask = 1<<48 - 1
	lrandMax  = math.MaxInt32
)

func (r *lrand48) seed(s int32) { r.x = (uint64(uint32(s))<<16 | 0x330E) & lrandMask }

func (r *lrand48) next() int64 {
	r.x = (lrandA*r.x + lrandC) & lrandMask
	return int64(r.x >> 17)
}

func (st *state) mathRandom(L *lua.LState) int {
	r := float64(st.rand.next()%lrandMax) / float64(lrandMax)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (st *state) mathRandomSeed(L *lua.LState) int {
	st.rand.seed(int32(L.CheckInt(1)))
	return 0
}

// heapBytes reads the Go heap's object bytes without stopping the world.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
