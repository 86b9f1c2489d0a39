package lualib

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// A typical small object of a script: a session or job record.
const benchJSON = `{"id":12345,"name":"alice","tags":["a","b","c"],"score":1.5,"active":true}`

func benchSetup(b *testing.B) (*lua.LState, lua.LValue) {
	L := lua.NewState()
	b.Cleanup(L.Close)
	Open(L)
	out, err := callLib(L, "cjson", "decode", lua.LString(benchJSON))
	if err != nil {
		b.Fatal(err)
	}
	return L, out[0]
}

func benchCall(b *testing.B, L *lua.LState, lib, fn string, arg lua.LValue) {
	f := L.GetField(L.GetGlobal(lib), fn)
	p := lua.P{Fn: f, NRet: 1, Protect: false}
	for i := 0; i < b.N; i++ {
		if err := L.CallByParam(p, arg); err != nil {
			b.Fatal(err)
		}
		L.Pop(1)
	}
}

func BenchmarkCJSONEncode(b *testing.B) {
	L, obj := benchSetup(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchJSON)))
	b.ResetTimer()
	benchCall(b, L, "cjson", "encode", obj)
}

func BenchmarkCJSONDecode(b *testing.B) {
	L, _ := benchSetup(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchJSON)))
	b.ResetTimer()
	benchCall(b, L, "cjson", "decode", lua.LString(benchJSON))
}

func BenchmarkCMsgpackPack(b *testing.B) {
	L, obj := benchSetup(b)
	b.ReportAllocs()
	b.ResetTimer()
	benchCall(b, L, "cmsgpack", "pack", obj)
}

func BenchmarkCMsgpackUnpack(b *testing.B) {
	L, obj := benchSetup(b)
	out, err := callLib(L, "cmsgpack", "pack", obj)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(out[0].String())))
	b.ResetTimer()
	benchCall(b, L, "cmsgpack", "unpack", out[0])
}

// BenchmarkLuaLoop runs the library calls from a Lua loop, as a script
// does, so its ns/op compare with the same loop timed in redis-server
// (EVAL of "for i = 1, N do local x = <op> end"; the empty loop costs
// about 40 ns there).
func BenchmarkLuaLoop(b *testing.B) {
	for _, op := range []string{"0", "cjson.encode(t)", "cjson.decode(j)", "cmsgpack.pack(t)", "cmsgpack.unpack(m)"} {
		b.Run(op, func(b *testing.B) {
			L := lua.NewState()
			defer L.Close()
			Open(L)
			L.SetGlobal("j", lua.LString(benchJSON))
			src := "local j = j local t = cjson.decode(j) local m = cmsgpack.pack(t) local n = ... for i = 1, n do local x = " + op + " end"
			fn, err := L.LoadString(src)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			L.Push(fn)
			L.Push(lua.LNumber(b.N))
			if err := L.PCall(1, 0, nil); err != nil {
				b.Fatal(err)
			}
		})
	}
}
