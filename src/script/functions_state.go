package script

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// loadedFn is one function a library's code registered in a state.
type loadedFn struct {
	info *Function
	fn   *lua.LFunction
}

// loading is the library load in progress in a state: what register_function collected.
type loading struct {
	fns []loadedFn
	err string // the first register_function error, for the load's reply
}

// openFunctionEnv builds the functions' environment (see functions.go): fenv, a read-only
// table whose reads go to fnAPI while functions run and to loadAPI while library code loads.
func (st *state) openFunctionEnv() {
	L := st.L
	fnAPI := L.NewTable()
	st.genv.ForEach(func(k, v lua.LValue) {
		switch k.String() {
		case "KEYS", "ARGV", "__redis__err__handler", "redis", "_G":
			return
		}
		fnAPI.RawSet(k, v)
	})
	full := st.real(st.genv.RawGetString("redis").(*lua.LTable))
	fnRedis := L.NewTable()
	full.ForEach(func(k, v lua.LValue) {
		switch k.String() {
		case "breakpoint", "debug", "replicate_commands":
			return
		}
		fnRedis.RawSet(k, v)
	})
	fnAPI.RawSetString("redis", st.protect(fnRedis))

	loadRedis := L.NewTable()
	for _, name := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		loadRedis.RawSetString(name, full.RawGetString(name))
	}
	loadRedis.RawSetString("register_function", L.NewFunction(st.registerFunction))
	loadAPI := L.NewTable()
	loadAPI.RawSetString("redis", st.protect(loadRedis))

	// Missing names raise, in both environments and (only while loading) in redis too.
	miss := L.NewTable()
	miss.RawSetString("__index", L.NewFunction(missingGlobal))
	miss.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(fnAPI, miss)
	L.SetMetatable(loadAPI, miss)
	L.SetMetatable(loadRedis, miss)

	st.fenv = st.protect(fnAPI)
	fnAPI.RawSetString("_G", st.fenv)
	st.fnAPI, st.loadAPI = fnAPI, loadAPI
}

// fnMode points the functions' environment at the load API (true) or the run API.
func (st *state) fnMode(load bool) {
	api := st.fnAPI
	if load {
		api = st.loadAPI
	}
	mt := st.fenv.Metatable.(*lua.LTable) // raw: GetMetatable answers __metatable
	mt.RawSetString("__index", api)
	st.proxy[st.fenv] = api
}

// loadLibrary runs lib's code in this state and returns the functions it registered, or the
// load's error reply. h gets the code's redis.log lines (nil: silent).
func (st *state) loadLibrary(lib *Library, h Host) ([]loadedFn, string) {
	L := st.L
	ld := &loading{}
	st.loading = ld
	st.fnMode(true)
	defer func() {
		st.loading = nil
		st.fnMode(false)
	}()
	fn := st.instantiate(lib.proto, st.fenv)
	r := &st.runBuf
	*r = run{host: h, name: lib.Name, proto: 2, args: r.args[:0], argBuf: r.argBuf[:0], reply: r.reply[:0]}
	st.run = r
	mark := &st.slot.run
	seq := mark.begin(kindLoad, st.e)
	L.Push(fn)
	err := L.PCall(0, 0, nil)
	killed := mark.killCause(seq)
	mark.end()
	st.run = nil
	L.SetTop(0)
	switch {
	case killed != notKilled:
		return nil, errRegistering + errLoadTimeout
	case err != nil:
		return nil, errRegistering + loadErrorText(err)
	}
	return ld.fns, ""
}

// loadErrorText is the message of an error raised while library code loaded: an error table's
// err field, or "ERR " and the error's text.
func loadErrorText(err error) string {
	obj := errObject(err)
	if t, ok := obj.(*lua.LTable); ok {
		if s, ok := luaString(t.RawGetString("err")); ok {
			return s
		}
	}
	s, ok := luaString(obj)
	if !ok {
		s = obj.String()
	}
	return "ERR " + s
}

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=, callback=, flags=, description=}.
func (st *state) registerFunction(L *lua.LState) int {
	ld := st.loading
	if ld == nil {
		L.Error(errorTable(L, "redis.register_function can only be called on FUNCTION LOAD command"), 0)
	}
	f := &Function{}
	var cb *lua.LFunction
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			regFail(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		cb = registerNamed(L, t, f)
	case 2:
		name, ok := luaString(L.Get(1))
		if !ok {
			regFail(L, "first argument to redis.register_function must be a string")
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			regFail(L, "second argument to redis.register_function must be a function")
		}
		f.Name, cb = name, fn
	default:
		regFail(L, "wrong number of arguments to redis.register_function")
	}
	if !validName(f.Name) {
		regFail(L, strings.TrimPrefix(errLibBadName, "ERR "))
	}
	for _, have := range ld.fns {
		if strings.EqualFold(have.info.Name, f.Name) {
			regFail(L, "Function already exists in the library")
		}
	}
	ld.fns = append(ld.fns, loadedFn{info: f, fn: cb})
	return 0
}

func regFail(L *lua.LState, msg string) {
	L.Error(errorTable(L, msg), 0)
}

// registerNamed reads register_function's table form into f and returns the callback.
func registerNamed(L *lua.LState, t *lua.LTable, f *Function) *lua.LFunction {
	var cb *lua.LFunction
	hasName := false
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		key, _ := k.(lua.LString) // a positional entry is an unknown argument too
		switch key {
		case "function_name":
			s, ok := luaString(v)
			if !ok {
				regFail(L, "function_name argument given to redis.register_function must be a string")
			}
			f.Name, hasName = s, true
		case "description":
			s, ok := luaString(v)
			if !ok {
				regFail(L, "description argument given to redis.register_function must be a string")
			}
			f.Description, f.HasDescription = s, true
		case "callback":
			fn, ok := v.(*lua.LFunction)
			if !ok {
				regFail(L, "callback argument given to redis.register_function must be a function")
			}
			cb = fn
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				regFail(L, "flags argument to redis.register_function must be a table representing function flags")
			}
			for fk, fv := ft.Next(lua.LNil); fk != lua.LNil; fk, fv = ft.Next(fk) {
				s, ok := luaString(fv)
				flag, known := flagByName(s)
				if !ok || !known {
					regFail(L, "unknown flag given")
				}
				f.Flags |= flag
			}
		default:
			regFail(L, "unknown argument given to redis.register_function")
		}
	}
	if !hasName {
		regFail(L, "redis.register_function must get a function name argument")
	}
	if cb == nil {
		regFail(L, "redis.register_function must get a callback argument")
	}
	return cb
}

// functionFor returns f's closure in this state, loading its library here first if needed.
func (st *state) functionFor(f *Function) (*lua.LFunction, string) {
	if g := st.e.libs.gen.Load(); g != st.libGen {
		clear(st.libFns)
		st.libGen = g
	}
	if fn, ok := st.libFns[f]; ok {
		return fn, ""
	}
	fns, errReply := st.loadLibrary(f.Library, nil)
	if errReply != "" {
		return nil, errReply
	}
	for _, lf := range fns {
		for _, info := range f.Library.Functions {
			if info.Name == lf.info.Name {
				st.libFns[info] = lf.fn
			}
		}
	}
	fn, ok := st.libFns[f]
	if !ok {
		panic("BUG: library " + f.Library.Name + " did not register " + f.Name + " again")
	}
	return fn, ""
}
