package script

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The sandbox is Redis 7.0.15's global environment, checked name by name against redis-server
// (TestGlobalsMatchRedis): base functions without dofile, loadfile, print, require, module,
// getfenv, setfenv and newproxy; the string, table, math, coroutine, bit, cjson, cmsgpack and
// struct libraries and redis; no os, io, debug or package. Globals and library tables are
// read-only ("Attempt to modify a readonly table"), and reading a global that does not exist
// raises "Script attempted to access nonexistent global variable 'x'".
//
// gopher-lua has no read-only tables, so each protected table is an empty proxy whose metatable
// sends reads to the real table and refuses writes; rawset, rawget, next, pairs, setmetatable
// and getmetatable see through the proxies as Lua's read-only tables would.

var baseAllowed = []string{
	"assert", "collectgarbage", "error", "getmetatable", "ipairs", "load", "loadstring", "next",
	"pairs", "pcall", "rawequal", "rawget", "rawset", "select", "setmetatable", "tonumber",
	"tostring", "type", "unpack", "xpcall",
}

func (st *state) openSandbox() {
	L := st.L
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{"_G", lua.OpenBase}, {"table", lua.OpenTable}, {"string", lua.OpenString},
		{"math", lua.OpenMath}, {"coroutine", lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	full := L.G.Global
	genv := L.NewTable()
	for _, name := range baseAllowed {
		genv.RawSetString(name, full.RawGetString(name))
	}
	for _, name := range []string{"string", "table", "math", "coroutine"} {
		genv.RawSetString(name, full.RawGetString(name))
	}
	genv.RawSetString("_VERSION", lua.LString("Lua 5.1"))
	st.genv = genv
	st.overrideBase(genv)
	st.overrideLibs(genv)
	genv.RawSetString("redis", st.redisTable())
	openLualib(L, genv)
	st.errFn = L.NewFunction(st.errorHandler)
	st.concatFn = L.NewFunction(st.concat)
	genv.RawSetString("__redis__err__handler", st.errFn)

	for _, name := range []string{"string", "table", "math", "coroutine", "redis", "bit", "cjson", "cmsgpack", "struct"} {
		if t, ok := genv.RawGetString(name).(*lua.LTable); ok {
			genv.RawSetString(name, st.protect(t))
		}
	}
	strMeta := L.NewTable()
	strMeta.RawSetString("__index", genv.RawGetString("string"))
	strMeta.RawSetString("__metatable", lua.LFalse)
	L.G.Global = genv // string methods and GetGlobal now see the sandbox
	L.SetMetatable(lua.LString(""), strMeta)

	// The globals: a proxy over genv, whose own misses raise the nonexistent-global error.
	miss := L.NewTable()
	miss.RawSetString("__index", L.NewFunction(missingGlobal))
	miss.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(genv, miss)
	g := st.protect(genv)
	genv.RawSetString("_G", g)
	L.Env = g
	st.keys, st.argv = L.NewTable(), L.NewTable()
	genv.RawSetString("KEYS", st.keys) // the same two tables for every run: Run refills them
	genv.RawSetString("ARGV", st.argv)
	st.openFunctionEnv()
}

// protect returns a read-only proxy of t (and of the tables inside it), as Redis's
// luaSetTableProtectionRecursively makes every table reachable from the globals read-only.
func (st *state) protect(t *lua.LTable) *lua.LTable {
	var inner []lua.LValue
	t.ForEach(func(k, v lua.LValue) {
		if sub, ok := v.(*lua.LTable); ok && sub != t {
			if _, done := st.proxy[sub]; !done {
				inner = append(inner, k)
			}
		}
	})
	for _, k := range inner {
		t.RawSet(k, st.protect(t.RawGet(k).(*lua.LTable)))
	}
	p := st.L.NewTable()
	mt := st.L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", st.L.NewFunction(readonlyWrite))
	mt.RawSetString("__metatable", lua.LFalse)
	st.L.SetMetatable(p, mt)
	st.proxy[p] = t
	return p
}

// real returns the table a proxy shows, or t itself.
func (st *state) real(t *lua.LTable) *lua.LTable {
	if r, ok := st.proxy[t]; ok {
		return r
	}
	return t
}

func (st *state) readonly(t *lua.LTable) bool {
	if _, ok := st.proxy[t]; ok {
		return true
	}
	for _, r := range st.proxy {
		if r == t {
			return true
		}
	}
	return false
}

func readonlyWrite(L *lua.LState) int {
	L.RaiseError(errReadonlyTable)
	return 0
}

func missingGlobal(L *lua.LState) int {
	L.RaiseError(errNoGlobal, lua.LVAsString(L.Get(2)))
	return 0
}

// overrideBase replaces the base functions whose gopher-lua versions differ from Lua 5.1's in
// what a script can observe, or that could exhaust the process.
func (st *state) overrideBase(g *lua.LTable) {
	L := st.L
	set := func(name string, fn lua.LGFunction) { g.RawSetString(name, L.NewFunction(fn)) }
	set("tostring", baseToString)
	set("unpack", baseUnpack)
	set("collectgarbage", baseCollectGarbage)
	set("gcinfo", baseGCInfo)
	set("rawset", st.baseRawSet)
	set("rawget", st.baseRawGet)
	set("setmetatable", st.baseSetMetatable)
	set("getmetatable", baseGetMetatable)
	next := L.NewFunction(st.baseNext)
	g.RawSetString("next", next)
	g.RawSetString("pairs", L.NewClosure(st.basePairs, next))
	set("pcall", st.basePCall)
	set("error", baseError)
	set("tonumber", baseToNumber)
	set("loadstring", st.baseLoadString)
	g.RawSetString("load", lua.LNil)
	set("load", st.baseLoad)
}

func (st *state) overrideLibs(g *lua.LTable) {
	L := st.L
	str := g.RawGetString("string").(*lua.LTable)
	str.RawSetString("__index", lua.LNil) // gopher-lua's string metatable trick; not in Lua's
	str.RawSetString("rep", L.NewFunction(st.strRep))
	str.RawSetString("format", L.NewFunction(strFormat))
	for name, positions := range stringArgs {
		if fn, ok := str.RawGetString(name).(*lua.LFunction); ok && fn.IsG {
			str.RawSetString(name, L.NewFunction(luaNumbersAsStrings(fn, positions)))
		}
	}
	tab := g.RawGetString("table").(*lua.LTable)
	tab.RawSetString("concat", L.NewFunction(st.tabConcat))
	tab.RawSetString("setn", L.NewFunction(func(L *lua.LState) int { L.RaiseError("'setn' is obsolete"); return 0 }))
	tab.RawSetString("foreach", L.NewFunction(tabForeach))
	tab.RawSetString("foreachi", L.NewFunction(tabForeachi))
	m := g.RawGetString("math").(*lua.LTable)
	m.RawSetString("huge", lua.LNumber(math.Inf(1)))
	m.RawSetString("random", L.NewFunction(st.mathRandom))
	m.RawSetString("randomseed", L.NewFunction(st.mathRandomSeed))
	co := g.RawGetString("coroutine").(*lua.LTable)
	create := co.RawGetString("create").(*lua.LFunction)
	st.coResume = co.RawGetString("resume").(*lua.LFunction)
	co.RawSetString("create", L.NewFunction(st.coCreate(create)))
	co.RawSetString("wrap", L.NewFunction(st.coWrap(create)))
}

func baseToString(L *lua.LState) int {
	v := L.CheckAny(1)
	if n, ok := v.(lua.LNumber); ok {
		L.Push(lua.LString(formatNumber(float64(n))))
		return 1
	}
	L.Push(L.ToStringMeta(v))
	return 1
}

func baseUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := L.OptInt(2, 1)
	j := L.OptInt(3, t.Len())
	if i > j {
		return 0
	}
	n := int64(j) - int64(i) + 1
	if n >= maxUnpack {
		L.RaiseError("too many results to unpack")
	}
	for k := i; k <= j; k++ {
		L.Push(t.RawGetInt(k))
	}
	return int(n)
}

func baseCollectGarbage(L *lua.LState) int {
	switch L.OptString(1, "collect") {
	case "count":
		L.Push(lua.LNumber(float64(heapBytes()) / 1024))
	case "step":
		L.Push(lua.LFalse)
	case "collect", "stop", "restart", "setpause", "setstepmul":
		L.Push(lua.LNumber(0))
	default:
		L.ArgError(1, "invalid option '"+L.CheckString(1)+"'")
	}
	return 1
}

func baseGCInfo(L *lua.LState) int {
	L.Push(lua.LNumber(heapBytes() / 1024))
	return 1
}

func (st *state) baseRawSet(L *lua.LState) int {
	t := L.CheckTable(1)
	if st.readonly(t) {
		L.Error(lua.LString(errReadonlyTable), 0)
	}
	L.CheckAny(2)
	L.CheckAny(3)
	t.RawSet(L.Get(2), L.Get(3))
	L.SetTop(1)
	return 1
}

func (st *state) baseRawGet(L *lua.LState) int {
	t := st.real(L.CheckTable(1))
	L.Push(t.RawGet(L.CheckAny(2)))
	return 1
}

func (st *state) baseSetMetatable(L *lua.LState) int {
	L.CheckTypes(2, lua.LTNil, lua.LTTable)
	if t, ok := L.Get(1).(*lua.LTable); ok && st.readonly(t) {
		L.Error(lua.LString(errReadonlyTable), 0)
	}
	if mt, ok := L.GetMetatable(L.Get(1)).(*lua.LTable); ok && mt.RawGetString("__metatable") != lua.LNil {
		L.RaiseError("cannot change a protected metatable")
	}
	L.SetMetatable(L.Get(1), L.Get(2))
	L.SetTop(1)
	return 1
}

func baseGetMetatable(L *lua.LState) int {
	mt := L.GetMetatable(L.CheckAny(1))
	if t, ok := mt.(*lua.LTable); ok {
		if p := t.RawGetString("__metatable"); p != lua.LNil {
			mt = p
		}
	}
	L.Push(mt)
	return 1
}

func (st *state) baseNext(L *lua.LState) int {
	t := st.real(L.CheckTable(1))
	k, v := t.Next(L.Get(2))
	if k == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

func (st *state) basePairs(L *lua.LState) int {
	t := L.CheckTable(1)
	L.Push(L.Get(lua.UpvalueIndex(1)))
	L.Push(t)
	L.Push(lua.LNil)
	return 3
}

// basePCall is Redis's pcall: an error raised as a table with an err field (redis.call's)
// comes back as that field's string, as Redis 6 scripts expect.
func (st *state) basePCall(L *lua.LState) int {
	v := L.CheckAny(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	if err := L.PCall(L.GetTop()-1, lua.MultRet, nil); err != nil {
		obj := errObject(err)
		if t, ok := obj.(*lua.LTable); ok {
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		} else if s, ok := obj.(lua.LString); ok {
			obj = lua.LString(luaMessage(string(s)))
		}
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

func errObject(err error) lua.LValue {
	if ae, ok := err.(*lua.ApiError); ok {
		return ae.Object
	}
	return lua.LString(err.Error())
}

// coCreate gives each coroutine this state's kill context, which gopher-lua's NewThread does
// not pass on (it derives a context whose Done our killCtx never closes), and small stacks.
func (st *state) coCreate(create *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		fn := L.CheckFunction(1)
		saved := L.Options
		L.Options.CallStackSize, L.Options.RegistrySize, L.Options.RegistryMaxSize = coCallDepth, coRegistry, coRegistryMax
		L.Push(create)
		L.Push(fn)
		err := L.PCall(1, 1, nil)
		L.Options = saved
		if err != nil {
			L.Error(errObject(err), 0)
		}
		if co, ok := L.Get(-1).(*lua.LState); ok {
			co.SetContext(&st.ctx)
		}
		return 1
	}
}

// coWrap is coroutine.wrap over coCreate and coroutine.resume: a resume error propagates.
func (st *state) coWrap(create *lua.LFunction) lua.LGFunction {
	mk := st.coCreate(create)
	return func(L *lua.LState) int {
		L.CheckFunction(1)
		mk(L)
		co := L.Get(-1)
		resume := L.NewFunction(func(L *lua.LState) int {
			n := L.GetTop()
			L.Push(st.coResume)
			L.Push(co)
			for i := 1; i <= n; i++ {
				L.Push(L.Get(i))
			}
			L.Call(n+1, lua.MultRet)
			if L.Get(n+1) != lua.LTrue {
				msg := L.Get(n + 2)
				if s, ok := msg.(lua.LString); ok {
					msg = lua.LString(where(L, 1) + string(s))
				}
				L.Error(msg, 0)
			}
			return L.GetTop() - n - 1
		})
		L.Push(resume)
		return 1
	}
}

// where is Lua 5.1's luaL_where: "chunk:line: " of the function level levels up, empty for a
// Go function.
func where(L *lua.LState, level int) string {
	dbg, ok := L.GetStack(level)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.CurrentLine <= 0 {
		return ""
	}
	return dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ": "
}

// baseError is Lua 5.1's error: the message (a string or a number) gets the position of the
// function level levels up (1, the caller, by default), none when that is a Go function such as
// pcall; any other value is raised as it is.
func baseError(L *lua.LState) int {
	v := L.Get(1)
	level := L.OptInt(2, 1)
	if s, ok := luaString(v); ok && level > 0 {
		v = lua.LString(where(L, level) + s)
	}
	L.Error(v, 0)
	return 0
}

// baseToNumber is tonumber with Lua 5.1's decimal reading (gopher-lua refuses "1e2").
func baseToNumber(L *lua.LState) int {
	if L.Get(2) == lua.LNil {
		v := L.CheckAny(1)
		if n, ok := luaNumber(v); ok {
			L.Push(lua.LNumber(n))
		} else {
			L.Push(lua.LNil)
		}
		return 1
	}
	return goToNumber(L)
}

// baseLoadString is loadstring with Lua 5.1's chunk names: [string "first line..."] in error
// positions, the source itself in the error reply's "on <source>:<line>" suffix.
func (st *state) baseLoadString(L *lua.LState) int {
	src := L.CheckString(1)
	chunk := L.OptString(2, src)
	display := chunkID(chunk)
	proto, errReply := compileLua([]byte(src), display)
	if errReply != "" {
		L.Push(lua.LNil)
		L.Push(lua.LString(strings.TrimPrefix(errReply, errCompilePrefix)))
		return 2
	}
	if len(st.chunks) > 1024 {
		clear(st.chunks)
	}
	st.chunks[display] = chunk
	L.Push(st.instantiate(proto, L.Env))
	return 1
}

// baseLoad is Lua 5.1's load(func [, chunkname]): the pieces func returns, compiled.
func (st *state) baseLoad(L *lua.LState) int {
	fn := L.CheckFunction(1)
	chunk := L.OptString(2, "=(load)")
	var src []byte
	for {
		L.Push(fn)
		L.Call(0, 1)
		piece := L.Get(-1)
		L.Pop(1)
		s, ok := piece.(lua.LString)
		if !ok || s == "" {
			if piece != lua.LNil && !ok {
				L.Push(lua.LNil)
				L.Push(lua.LString("reader function must return a string"))
				return 2
			}
			break
		}
		if int64(len(src)+len(s)) > st.e.memCap() {
			L.RaiseError("not enough memory")
		}
		src = append(src, s...)
	}
	L.SetTop(0)
	L.Push(lua.LString(src))
	L.Push(lua.LString(chunk))
	return st.baseLoadString(L)
}

// chunkID is Lua 5.1's luaO_chunkid for a chunk name (LUA_IDSIZE 60).
func chunkID(name string) string {
	switch {
	case strings.HasPrefix(name, "="), strings.HasPrefix(name, "@"):
		return name[1:]
	}
	n := strings.IndexAny(name, "\r\n")
	if n < 0 {
		n = len(name)
	}
	const room = 60 - 17
	if n > room {
		n = room
	}
	if n < len(name) {
		return `[string "` + name[:n] + `..."]`
	}
	return `[string "` + name + `"]`
}

func tabForeach(L *lua.LState) int {
	t := L.CheckTable(1)
	f := L.CheckFunction(2)
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		L.Push(f)
		L.Push(k)
		L.Push(v)
		L.Call(2, 1)
		if r := L.Get(-1); r != lua.LNil {
			return 1
		}
		L.Pop(1)
	}
	return 0
}

func tabForeachi(L *lua.LState) int {
	t := L.CheckTable(1)
	f := L.CheckFunction(2)
	for i, n := 1, t.Len(); i <= n; i++ {
		L.Push(f)
		L.Push(lua.LNumber(i))
		L.Push(t.RawGetInt(i))
		L.Call(2, 1)
		if r := L.Get(-1); r != lua.LNil {
			return 1
		}
		L.Pop(1)
	}
	return 0
}

// goToNumber is gopher-lua's tonumber, kept for the bases other than 10 (set in init).
var goToNumber lua.LGFunction

// stringArgs are the string library's string parameters (1-based): a number given there is
// converted by Lua with "%.14g", by gopher-lua with Go's formatting, so the sandbox converts it
// first. string.rep and string.format convert themselves.
var stringArgs = map[string][]int{
	"byte": {1}, "find": {1, 2}, "gmatch": {1, 2}, "gsub": {1, 2, 3}, "len": {1}, "lower": {1},
	"match": {1, 2}, "reverse": {1}, "sub": {1}, "upper": {1},
}

// luaNumbersAsStrings wraps fn (called as a function: gmatch is a closure with upvalues).
func luaNumbersAsStrings(fn *lua.LFunction, positions []int) lua.LGFunction {
	return func(L *lua.LState) int {
		for _, i := range positions {
			if n, ok := L.Get(i).(lua.LNumber); ok {
				L.Replace(i, lua.LString(formatNumber(float64(n))))
			}
		}
		if len(fn.Upvalues) == 0 {
			return fn.GFunction(L) // in this frame: its errors name the function as called
		}
		top := L.GetTop()
		L.Insert(fn, 1)
		L.Call(top, lua.MultRet)
		return L.GetTop()
	}
}
