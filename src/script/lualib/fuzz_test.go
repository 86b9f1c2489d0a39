package lualib

import (
	"errors"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Fuzz targets for the three decoders of client-controlled bytes. Each
// input must end in a value or a Lua error (never a Go panic, which
// gopher-lua reports as ApiErrorPanic), quickly, and what decodes must
// survive re-encoding. Seeds are in testdata/fuzz/<name>/ and below.

func fuzzState() *lua.LState {
	L := lua.NewState(lua.Options{RegistrySize: 1024 * 20, RegistryMaxSize: 1024 * 1024})
	Open(L)
	return L
}

// fuzzCall calls lib.fn and fails the target on a Go panic or a slow call.
func fuzzCall(t *testing.T, L *lua.LState, lib, fn string, args ...lua.LValue) ([]lua.LValue, bool) {
	start := time.Now()
	var out []lua.LValue
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s.%s panicked: %v", lib, fn, r)
			}
		}()
		out, err = callLib(L, lib, fn, args...)
	}()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("%s.%s took %v", lib, fn, d)
	}
	var ae *lua.ApiError
	if err != nil && (!errors.As(err, &ae) || ae.Type != lua.ApiErrorRun) {
		t.Fatalf("%s.%s: %v", lib, fn, err)
	}
	return out, err == nil
}

func FuzzCJSONDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `[1e400,-0,"\ud83d\ude00"]`, `"\u0000\/"`, `[[[[[[`, `0x1p3`, `{"a":1,}`, "[1]\x00x", `-Infinity`} {
		f.Add(s)
	}
	L := fuzzState()
	f.Fuzz(func(t *testing.T, s string) {
		L.SetTop(0)
		out, ok := fuzzCall(t, L, "cjson", "decode", lua.LString(s))
		if !ok {
			return
		}
		// What decodes encodes (bar NaN and Inf, refused by default, and
		// sparse arrays of nulls) and decodes again.
		enc, ok := fuzzCall(t, L, "cjson", "encode", out[0])
		if ok {
			fuzzCall(t, L, "cjson", "decode", enc[0])
		}
	})
}

func FuzzCMsgpackUnpack(f *testing.F) {
	for _, s := range []string{"\x93\x01\xa1a\xc3", "\x81\xa1k\x92\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00\xc0", "\xdd\xff\xff\xff\xff", "\xdb\x7f\xff\xff\xff", "\x81\xc0\x01", "\xc1", "\xcf\xff\xff\xff\xff\xff\xff\xff\xff"} {
		f.Add(s)
	}
	L := fuzzState()
	f.Fuzz(func(t *testing.T, s string) {
		L.SetTop(0)
		out, ok := fuzzCall(t, L, "cmsgpack", "unpack", lua.LString(s))
		if !ok || len(out) == 0 {
			return
		}
		packed, ok := fuzzCall(t, L, "cmsgpack", "pack", out...)
		if !ok {
			t.Fatalf("pack of what unpack gave failed")
		}
		again, ok := fuzzCall(t, L, "cmsgpack", "unpack", packed[0])
		if !ok || len(again) != len(out) {
			t.Fatalf("unpack(pack(unpack(s))) gave %d values for %d", len(again), len(out))
		}
		fuzzCall(t, L, "cmsgpack", "unpack_limit", lua.LString(s), lua.LNumber(2), lua.LNumber(1))
	})
}

func FuzzStructUnpack(f *testing.F) {
	f.Add(">i4 c0 !8 d s", "\x00\x00\x00\x02ab\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00x\x00")
	f.Add("c999999999999", "x")
	f.Add("bc0", "\xffab")
	f.Add("<I32i9", string(make([]byte, 41)))
	L := fuzzState()
	f.Fuzz(func(t *testing.T, format, data string) {
		L.SetTop(0)
		fuzzCall(t, L, "struct", "unpack", lua.LString(format), lua.LString(data))
		fuzzCall(t, L, "struct", "size", lua.LString(format))
	})
}
