package script

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/hotkv/hotkv/src/script/lualib"
)

// openLualib opens the cjson, cmsgpack, bit and struct libraries (src/script/lualib) into the
// sandbox's globals; openSandbox then protects their tables like the others.
func openLualib(L *lua.LState, genv *lua.LTable) {
	saved := L.G.Global
	L.G.Global = genv
	defer func() { L.G.Global = saved }()
	lualib.Open(L)
}
