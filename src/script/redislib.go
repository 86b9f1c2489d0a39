package script

import (
	"errors"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// redisTable builds the redis global: Redis 7.0.15's API, names and constants.
func (st *state) redisTable() *lua.LTable {
	L := st.L
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return st.redisCall(L, true) },
		"pcall":              func(L *lua.LState) int { return st.redisCall(L, false) },
		"log":                st.redisLog,
		"setresp":            st.redisSetResp,
		"sha1hex":            redisSha1hex,
		"error_reply":        redisErrorReply,
		"status_reply":       redisStatusReply,
		"set_repl":           st.redisSetRepl,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
		"acl_check_cmd":      st.redisACLCheck,
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]float64{
		"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice, "LOG_WARNING": LogWarning,
		"REPL_NONE": float64(ReplNone), "REPL_AOF": float64(ReplAOF), "REPL_SLAVE": float64(ReplReplica),
		"REPL_REPLICA": float64(ReplReplica), "REPL_ALL": float64(ReplAll),
		"REDIS_VERSION_NUM": versionNum,
	} {
		t.RawSetString(name, lua.LNumber(v))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(versionString))
	return t
}

// redisCall is redis.call (raise true) and redis.pcall: build the arguments, check them as
// Redis's scriptCall does, run through the Host and convert the reply.
func (st *state) redisCall(L *lua.LState, raise bool) int {
	r := st.run
	if r == nil {
		return st.fail(L, raise, "-ERR redis.call/pcall can only be called inside a script invocation")
	}
	if !st.buildArgs(L) {
		if len(r.args) == 0 {
			return st.fail(L, raise, "-"+errNoArgs)
		}
		return st.fail(L, raise, "-"+errArgType)
	}
	cmd := r.host.Command(r.args)
	switch {
	case cmd&CommandKnown == 0:
		return st.fail(L, raise, "-"+errUnknownCommand)
	case cmd&CommandArityOK == 0:
		return st.fail(L, raise, "-"+errWrongArity)
	case cmd&CommandNoScript != 0:
		return st.fail(L, raise, "-"+errNoScriptCmd)
	case cmd&CommandWrite != 0 && r.readOnly:
		return st.fail(L, raise, "-"+errReadOnly)
	}
	if cmd&CommandWrite != 0 && !r.wrote {
		r.wrote = true
		st.slot.run.wrote.Store(true)
	}
	r.reply = st.hostCall(r)
	if len(r.reply) == 0 {
		return st.fail(L, raise, "-ERR the command gave no reply")
	}
	isErr := r.reply[0] == '-'
	if _, ok := st.pushReply(L, r.reply, 0); !ok {
		L.SetTop(0)
		return st.fail(L, raise, "-ERR malformed reply from the command")
	}
	if isErr && raise {
		L.Error(L.Get(-1), 1)
	}
	return 1
}

// hostCall runs the command through the Host. A panic in the Host is not the script's error:
// it is kept, the interpreter unwinds, and Run panics again with it once the state is given
// back, so the command layer's own panic handling (close the client, log) sees it.
func (st *state) hostCall(r *run) (reply []byte) {
	defer func() {
		if p := recover(); p != nil {
			st.hostPanic = p
			st.L.RaiseError("host panic")
		}
	}()
	return r.host.Call(r.args, r.proto, r.repl, r.reply[:0])
}

// buildArgs converts the Lua arguments into r.args (slices of r.argBuf): strings as they are,
// numbers in "%.17g" as Redis does. It is false when there are none or one is another type.
func (st *state) buildArgs(L *lua.LState) bool {
	r := st.run
	n := L.GetTop()
	r.args, r.argBuf = r.args[:0], r.argBuf[:0]
	if n == 0 {
		return false
	}
	var ends [16]int
	offs := ends[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			r.argBuf = append(r.argBuf, v...)
		case lua.LNumber:
			r.argBuf = appendNumber(r.argBuf, float64(v), 17)
		default:
			r.args = append(r.args, nil) // not empty: the type error, not "at least one"
			return false
		}
		offs = append(offs, len(r.argBuf))
	}
	start := 0
	for _, end := range offs {
		r.args = append(r.args, r.argBuf[start:end:end])
		start = end
	}
	return true
}

// fail answers a redis.call/pcall failure: pcall returns the error table, call raises it.
func (st *state) fail(L *lua.LState, raise bool, text string) int {
	t := errorTable(L, text)
	t.RawSetString("ignore_error_stats_update", lua.LTrue)
	if raise {
		L.Error(t, 1)
	}
	L.Push(t)
	return 1
}

// errorTable is Redis's luaPushErrorBuff: "-CODE msg" keeps its code, text without a leading
// '-' gets "ERR"; CR and LF are trimmed from the message's ends.
func errorTable(L *lua.LState, text string) *lua.LTable {
	code, msg := "ERR", text
	if strings.HasPrefix(text, "-") {
		if c, m, ok := strings.Cut(text[1:], " "); ok {
			code, msg = c, m
		} else {
			msg = text[1:]
		}
	}
	t := L.NewTable()
	t.RawSetString("err", lua.LString(code+" "+strings.Trim(msg, "\r\n")))
	return t
}

func redisErrorReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	text := string(s)
	if !strings.HasPrefix(text, "-") {
		text = "-" + text
	}
	L.Push(errorTable(L, text))
	return 1
}

func redisStatusReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.NewTable()
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

func redisSha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.Error(errorTable(L, "wrong number of arguments"), 1)
	}
	s, _ := luaString(L.Get(1))
	L.Push(lua.LString(sha1Hex([]byte(s))))
	return 1
}

func (st *state) redisLog(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		L.Error(errorTable(L, "redis.log() requires two arguments or more."), 1)
	}
	lv, ok := luaNumber(L.Get(1))
	if !ok {
		L.Error(errorTable(L, "First argument must be a number (log level)."), 1)
	}
	level := int(lv)
	if level < LogDebug || level > LogWarning {
		L.Error(errorTable(L, "Invalid debug level."), 1)
	}
	var b strings.Builder
	for i := 2; i <= n; i++ {
		if s, ok := luaString(L.Get(i)); ok {
			if i != 2 {
				b.WriteByte(' ')
			}
			b.WriteString(s)
		}
	}
	if st.run != nil && st.run.host != nil {
		st.run.host.Log(level, b.String())
	}
	return 0
}

// luaNumber is lua_isnumber/lua_tonumber: numbers, and strings that read as numbers.
func luaNumber(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		return strToNumber(string(v))
	}
	return 0, false
}

// strToNumber is Lua 5.1's luaO_str2d: strtod, or a 0x hexadecimal integer, with surrounding
// white space.
func strToNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return f, !strings.ContainsAny(s, "_pPxX")
	}
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		if n, err := strconv.ParseUint(h, 16, 64); err == nil {
			return float64(n), true
		}
	}
	return 0, false
}

func (st *state) redisSetResp(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.Error(errorTable(L, "redis.setresp() requires one argument."), 1)
	}
	n, _ := luaNumber(L.Get(1))
	if int(n) != 2 && int(n) != 3 {
		L.Error(errorTable(L, "RESP version must be 2 or 3."), 1)
	}
	if st.run != nil {
		st.run.proto = int(n)
	}
	return 0
}

func (st *state) redisSetRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.Error(errorTable(L, "redis.set_repl() requires two arguments."), 1)
	}
	n, _ := luaNumber(L.Get(1))
	flags := int(n)
	if flags&^int(ReplAll) != 0 {
		L.Error(errorTable(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."), 1)
	}
	if st.run != nil {
		st.run.repl = Repl(flags)
	}
	return 0
}

func (st *state) redisACLCheck(L *lua.LState) int {
	r := st.run
	if r == nil {
		L.Error(errorTable(L, "redis.acl_check_cmd can only be called inside a script invocation"), 1)
	}
	if !st.buildArgs(L) {
		if len(r.args) == 0 {
			L.Error(errorTable(L, "-"+errNoArgs), 1)
		}
		L.Error(errorTable(L, "-"+errArgType), 1)
	}
	if r.host.Command(r.args)&CommandKnown == 0 {
		L.Error(errorTable(L, "-"+errBadACLCommand), 1)
	}
	L.Push(lua.LBool(r.host.Allowed(r.args)))
	return 1
}
