package lualib

import (
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// jsonConfig is one cjson table's settings (json_config_t), shared by the
// closures of that table; cjson.new makes a table with its own.
type jsonConfig struct {
	sparseConvert  int
	sparseRatio    int
	sparseSafe     int
	encodeMaxDepth int
	decodeMaxDepth int
	encodeInvalid  int // 0 off, 1 on, 2 null
	decodeInvalid  int
	keepBuffer     int
	precision      int
	buf            []byte // reused by encode while keepBuffer is on
}

func newJSONConfig() *jsonConfig {
	return &jsonConfig{
		sparseRatio: 2, sparseSafe: 10,
		encodeMaxDepth: 1000, decodeMaxDepth: 1000,
		decodeInvalid: 1, keepBuffer: 1, precision: 14,
	}
}

// nullKey is where an LState keeps its cjson.null, so that every cjson
// table of a state (cjson.new included) shares one, as Lua's NULL
// lightuserdata compares equal to itself everywhere.
const nullKey = "hotkv.cjson.null"

// Null returns L's cjson.null, creating it on first use. The engine
// converts it to a RESP null like Redis's NULL lightuserdata.
func Null(L *lua.LState) *lua.LUserData {
	reg := L.Get(lua.RegistryIndex).(*lua.LTable)
	if ud, ok := reg.RawGetString(nullKey).(*lua.LUserData); ok {
		return ud
	}
	ud := L.NewUserData()
	reg.RawSetString(nullKey, ud)
	return ud
}

// IsNull reports whether v is L's cjson.null.
func IsNull(L *lua.LState, v lua.LValue) bool {
	ud, ok := v.(*lua.LUserData)
	return ok && ud == Null(L)
}

// NewCJSON returns a cjson table with default settings.
func NewCJSON(L *lua.LState) *lua.LTable {
	cfg := newJSONConfig()
	t := L.NewTable()
	fns := []struct {
		name string
		fn   func(*lua.LState, *jsonConfig) int
	}{
		{"encode", jsonEncode}, {"decode", jsonDecode},
		{"encode_sparse_array", jsonCfgSparse},
		{"encode_max_depth", intOption(1, func(c *jsonConfig) *int { return &c.encodeMaxDepth }, 1, math.MaxInt32)},
		{"decode_max_depth", intOption(1, func(c *jsonConfig) *int { return &c.decodeMaxDepth }, 1, math.MaxInt32)},
		{"encode_number_precision", intOption(1, func(c *jsonConfig) *int { return &c.precision }, 1, 14)},
		{"encode_keep_buffer", jsonCfgKeepBuffer},
		{"encode_invalid_numbers", jsonCfgEncodeInvalid},
		{"decode_invalid_numbers", jsonCfgDecodeInvalid},
	}
	for _, f := range fns {
		fn := f.fn
		t.RawSetString(f.name, L.NewFunction(func(L *lua.LState) int { return fn(L, cfg) }))
	}
	t.RawSetString("new", L.NewFunction(func(L *lua.LState) int {
		L.Push(NewCJSON(L))
		return 1
	}))
	t.RawSetString("null", Null(L))
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// argInit is json_arg_init: at most n arguments, missing ones nil.
func argInit(L *lua.LState, n int) {
	if L.GetTop() > n {
		argError(L, n+1, "found too many arguments")
	}
	for L.GetTop() < n {
		L.Push(lua.LNil)
	}
}

// integerOption is json_integer_option. Its range error names argument 1
// whichever argument it checks, as the C code does.
func integerOption(L *lua.LState, idx int, setting *int, min, max int) {
	if L.Get(idx) != lua.LNil {
		v := int(int32(checkInteger(L, idx)))
		if v < min || v > max {
			argError(L, 1, fmt.Sprintf("expected integer between %d and %d", min, max))
		}
		*setting = v
	}
	L.Push(lua.LNumber(*setting))
}

func intOption(_ int, field func(*jsonConfig) *int, min, max int) func(*lua.LState, *jsonConfig) int {
	return func(L *lua.LState, cfg *jsonConfig) int {
		argInit(L, 1)
		integerOption(L, 1, field(cfg), min, max)
		return 1
	}
}

var onOff = []string{"off", "on"}

// enumOption is json_enum_option: a boolean (true meaning boolTrue) or one
// of options by name; it answers a boolean for 0 and boolTrue, else the
// option's name.
func enumOption(L *lua.LState, idx int, setting *int, options []string, boolTrue int) {
	if options == nil {
		options, boolTrue = onOff, 1
	}
	v := L.Get(idx)
	if v != lua.LNil {
		if b, ok := v.(lua.LBool); ok && boolTrue != 0 {
			*setting = 0
			if b {
				*setting = boolTrue
			}
		} else {
			*setting = checkOption(L, idx, options)
		}
	}
	if boolTrue != 0 && (*setting == 0 || *setting == boolTrue) {
		L.Push(lua.LBool(*setting != 0))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
}

// encode_sparse_array([convert [, ratio [, safe]]])
func jsonCfgSparse(L *lua.LState, cfg *jsonConfig) int {
	argInit(L, 3)
	enumOption(L, 1, &cfg.sparseConvert, nil, 1)
	integerOption(L, 2, &cfg.sparseRatio, 0, math.MaxInt32)
	integerOption(L, 3, &cfg.sparseSafe, 0, math.MaxInt32)
	return 3
}

// encode_keep_buffer([keep])
func jsonCfgKeepBuffer(L *lua.LState, cfg *jsonConfig) int {
	argInit(L, 1)
	enumOption(L, 1, &cfg.keepBuffer, nil, 1)
	if cfg.keepBuffer == 0 {
		cfg.buf = nil
	}
	return 1
}

// encode_invalid_numbers([setting]): off, on ("nan", "inf") or null.
func jsonCfgEncodeInvalid(L *lua.LState, cfg *jsonConfig) int {
	argInit(L, 1)
	enumOption(L, 1, &cfg.encodeInvalid, []string{"off", "on", "null"}, 1)
	return 1
}

// decode_invalid_numbers([setting])
func jsonCfgDecodeInvalid(L *lua.LState, cfg *jsonConfig) int {
	argInit(L, 1)
	enumOption(L, 1, &cfg.decodeInvalid, nil, 1)
	return 1
}
