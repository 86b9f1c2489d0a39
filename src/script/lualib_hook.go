package script

import lua "github.com/yuin/gopher-lua"

// openLualib is the one call site of the cjson, cmsgpack, bit and struct libraries
// (src/script/lualib, written apart: lualib.Open(L) sets those four globals). Until that package
// exists this opens nothing, and the four names are missing from the sandbox.
func openLualib(L *lua.LState, genv *lua.LTable) {
	saved := L.G.Global
	L.G.Global = genv
	defer func() { L.G.Global = saved }()
	// lualib.Open(L)
}
