// Package lualib gives gopher-lua the four C libraries Redis 7.0 opens for
// scripts: cjson (lua-cjson 2.1.0 with Redis's patches), cmsgpack
// (lua-cmsgpack 0.4.0), bit (LuaBitOp 1.0.2) and struct (Roberto's struct
// 0.2 with Redis's bounds fixes). Encodings, numbers and error texts are
// those of Redis 7.0.15; the differential test in this package checks them
// against a live redis-server.
//
// What the package promises its caller (the scripting engine):
//
//  1. Open sets the globals cjson, cmsgpack, bit and struct to plain
//     tables, for a sandbox that makes every table reachable from its
//     globals read-only as Redis 7.0 does (src/script protects them with
//     proxies that pairs and rawget see through). OpenReadOnly sets
//     self-protected views instead, for a state with no such sandbox: an
//     assignment raises Redis's "Attempt to modify a readonly table", but
//     gopher-lua has no read-only flag, so a view is an empty table whose
//     metatable reads through, and pairs, next and rawset see the empty
//     table unless the caller resolves views with Unwrap.
//  2. No call allocates more than the bytes its input holds (plus the
//     values it builds): a length or count declared in a msgpack header or
//     a struct format is checked against the bytes present first.
//  3. Recursion is bounded: every decoder and encoder counts the Lua stack
//     slots the C library would use and stops where Lua 5.1's limit of
//     8000 slots for a C function (LUAI_MAXCSTACK) stops it, with the same
//     error, so a deeply nested input cannot exhaust the Go stack.
//  4. Functions hold no state outside their LState: cjson's settings live
//     in the closure of each cjson table (cjson.new makes another).
//  5. The caller's gopher-lua options must give a Go function room for
//     Lua 5.1's results: RegistrySize (or RegistryMaxSize) well above
//     8000, or cmsgpack.unpack and struct.unpack of thousands of values
//     stop with gopher-lua's "registry overflow" before Redis's limit.
//
// Known differences from Redis, none in the libraries' own output: a
// table's pairs order is gopher-lua's (insertion order) where Lua 5.1's is
// its hash order, so cjson objects and cmsgpack maps with several keys
// list them in another order; tostring(cjson.null) is gopher-lua's
// "userdata: 0x..." where Redis prints "userdata: (nil)"; getmetatable on
// an OpenReadOnly view answers false where Redis answers nil.
package lualib

import (
	lua "github.com/yuin/gopher-lua"
)

// maxCStack is Lua 5.1's LUAI_MAXCSTACK: the most stack slots one C
// function may use. The libraries fail where lua_checkstack would.
const maxCStack = 8000

// Open sets the globals cjson, cmsgpack, bit and struct in L.
func Open(L *lua.LState) {
	OpenCJSON(L)
	OpenCMsgpack(L)
	OpenBit(L)
	OpenStruct(L)
}

// OpenReadOnly sets the four globals to read-only views (ReadOnly).
func OpenReadOnly(L *lua.LState) {
	for _, name := range []string{"cjson", "cmsgpack", "bit", "struct"} {
		Open1(L, name)
		L.SetGlobal(name, ReadOnly(L, L.GetGlobal(name).(*lua.LTable)))
	}
}

// Open1 sets the one library called name ("cjson", "cmsgpack", "bit" or
// "struct") and returns its table, or nil for another name.
func Open1(L *lua.LState, name string) *lua.LTable {
	switch name {
	case "cjson":
		return OpenCJSON(L)
	case "cmsgpack":
		return OpenCMsgpack(L)
	case "bit":
		return OpenBit(L)
	case "struct":
		return OpenStruct(L)
	}
	return nil
}

// OpenCJSON sets the global cjson to a new cjson table and returns it.
func OpenCJSON(L *lua.LState) *lua.LTable { return setGlobal(L, "cjson", NewCJSON(L)) }

// OpenCMsgpack sets the global cmsgpack and returns it.
func OpenCMsgpack(L *lua.LState) *lua.LTable {
	return setGlobal(L, "cmsgpack", NewCMsgpack(L))
}

// OpenBit sets the global bit and returns it.
func OpenBit(L *lua.LState) *lua.LTable { return setGlobal(L, "bit", NewBit(L)) }

// OpenStruct sets the global struct and returns it.
func OpenStruct(L *lua.LState) *lua.LTable { return setGlobal(L, "struct", NewStruct(L)) }

func setGlobal(L *lua.LState, name string, lib *lua.LTable) *lua.LTable {
	L.SetGlobal(name, lib)
	return lib
}

// readonlyMsg is the error Redis 7.0's Lua raises on a write to a
// read-only table.
const readonlyMsg = "Attempt to modify a readonly table"

// ReadOnly returns a view of t that reads through to t and raises Redis's
// "Attempt to modify a readonly table" on assignment. getmetatable on the
// view answers false, so a script cannot reach t through it.
func ReadOnly(L *lua.LState, t *lua.LTable) *lua.LTable {
	view := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(readonlyMsg)
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	mt.RawSetString(viewKey, t)
	view.Metatable = mt
	return view
}

// viewKey marks the metatable of a ReadOnly view; its value is the table
// behind the view.
const viewKey = "__hotkv_readonly"

// Unwrap returns the table behind a ReadOnly view, or v itself. An engine
// that gives scripts pairs, next or rawget over library tables resolves
// views with it (and refuses rawset on them).
func Unwrap(v lua.LValue) (lua.LValue, bool) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return v, false
	}
	mt, ok := t.Metatable.(*lua.LTable)
	if !ok {
		return v, false
	}
	if inner, ok := mt.RawGetString(viewKey).(*lua.LTable); ok {
		return inner, true
	}
	return v, false
}
