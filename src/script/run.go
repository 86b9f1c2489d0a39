package script

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// run is the state of one script invocation, reused by its state from run to run.
type run struct {
	host     Host
	name     string // the SHA1 for EVAL, the function's name for FCALL: the error suffix
	proto    int    // redis.setresp: the protocol of redis.call replies
	repl     Repl
	readOnly bool
	wrote    bool
	args     [][]byte
	argBuf   []byte
	reply    []byte
}

// Run runs s with keys and args and appends its reply (or error reply) for the caller to dst.
// A read-only run (opts.ReadOnly, or the script's no-writes flag) refuses write commands. The
// command layer checks what depends on server state before calling Run: OOM without
// allow-oom, stale replicas without allow-stale, cluster flags.
func (e *Engine) Run(dst []byte, h Host, s *Script, keys, args [][]byte, opts RunOptions) []byte {
	if opts.ReadOnly && s.Flags&FlagShebang != 0 && s.Flags&FlagNoWrites == 0 {
		return appendErrorLine(dst, errWriteFlagRO)
	}
	sl := e.pool.acquire()
	defer e.pool.release(sl)
	st := sl.st
	defer st.rethrow()
	st.setArray(st.keys, keys)
	st.setArray(st.argv, args)
	fn := st.function(s)
	sl.run.script.Store(s)
	dst = st.call(dst, h, s.SHA, fn, 0, opts, s.Flags, false)
	st.keys = st.scrub(st.keys, "KEYS", len(keys))
	st.argv = st.scrub(st.argv, "ARGV", len(args))
	return dst
}

// scrub returns t if the script left it as Run filled it (n entries at 1..n, no metatable),
// else a fresh table in its place: KEYS and ARGV are reused, and nothing a script adds to them
// (KEYS[100] = x, KEYS.k = x, a metatable) may reach the next script.
func (st *state) scrub(t *lua.LTable, name string, n int) *lua.LTable {
	// Entries past n: Next from key n (a key boxed once, so the check allocates nothing).
	var after lua.LValue = lua.LNil
	if n > 0 {
		after = boxedInt(n)
	}
	if next, _ := t.Next(after); next == lua.LNil && t.Metatable == lua.LNil && t.Len() == n {
		return t
	}
	fresh := st.L.NewTable()
	st.genv.RawSetString(name, fresh)
	return fresh
}

// setArray fills t with vals as Lua strings, reusing t (Redis makes a new table per call; a
// script cannot keep one past its run, so reuse is not observable).
func (st *state) setArray(t *lua.LTable, vals [][]byte) {
	n := t.Len()
	for i, v := range vals {
		if old, ok := t.RawGetInt(i + 1).(lua.LString); ok && string(old) == string(v) {
			continue // the same key as last run: keep its string, allocate nothing
		}
		t.RawSetInt(i+1, lua.LString(v))
	}
	for i := len(vals) + 1; i <= n; i++ {
		t.RawSetInt(i, lua.LNil)
	}
}

// call runs fn (already on no stack) with nargs arguments pushed after it by the caller.
func (st *state) call(dst []byte, h Host, name string, fn *lua.LFunction, nargs int, opts RunOptions, flags Flags, function bool) []byte {
	L := st.L
	r := &st.runBuf
	*r = run{host: h, name: name, proto: 2, repl: ReplAll, readOnly: opts.ReadOnly || flags&FlagNoWrites != 0,
		args: r.args[:0], argBuf: r.argBuf[:0], reply: r.reply[:0]}
	st.run = r
	st.lastName = name
	mark := &st.slot.run
	kind := kindEval
	if function {
		kind = kindFunction
	}
	seq := mark.begin(kind, st.e)
	L.Insert(fn, L.GetTop()-nargs+1)
	err := L.PCall(nargs, 1, st.errFn)
	killed := mark.killCause(seq)
	if opts.Busy != nil {
		*opts.Busy = mark.busy.Load()
	}
	if opts.Stopped != nil {
		*opts.Stopped = killed == killedByShutdown
	}
	mark.end()
	st.run = nil
	if err != nil {
		dst = st.appendError(dst, err, killed)
	} else {
		dst = st.appendReply(dst, L.Get(-1), opts.Proto, r.proto, 0)
	}
	L.SetTop(0)
	return dst
}

// rethrow panics with the Host's panic, if redis.call caught one; the state is dropped.
func (st *state) rethrow() {
	if p := st.hostPanic; p != nil {
		st.hostPanic = nil
		st.broken = true
		panic(p)
	}
}

// errorHandler is __redis__err__handler: it turns what a script raised into Redis's error
// table {err=..., source=..., line=...}, with the position of the Lua code that raised it.
func (st *state) errorHandler(L *lua.LState) int {
	v := L.Get(1)
	t, ok := v.(*lua.LTable)
	if !ok {
		s := "nil"
		if v != lua.LNil {
			s, _ = luaString(v)
			if s == "" && v.Type() != lua.LTString {
				s = v.String()
			}
		}
		if _, isStr := v.(lua.LString); isStr {
			s = luaMessage(s)
		}
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+s))
	}
	for level := 1; level < 4; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 {
			continue
		}
		source, ok := st.chunks[dbg.Source]
		if !ok {
			source = "@" + dbg.Source
		}
		t.RawSetString("source", lua.LString(source))
		t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
		break
	}
	L.Push(t)
	return 1
}

// appendError builds Redis's reply for a failed run: "-<err> script: <name>, on <source>:<line>."
func (st *state) appendError(dst []byte, err error, killed killReason) []byte {
	ae, ok := err.(*lua.ApiError)
	if !ok || ae.Type == lua.ApiErrorPanic {
		st.broken = ae != nil && ae.Type == lua.ApiErrorPanic
		return appendErrorLine(dst, "ERR Error running script "+st.lastName+", "+clip(oneLineString(err.Error()), 100))
	}
	t, ok := ae.Object.(*lua.LTable)
	if !ok {
		// The handler itself failed: the call stack was full ("stack overflow"). The message
		// still starts with its position, which gives the suffix.
		s, _ := luaString(ae.Object)
		t = st.L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+s))
		if chunk, line, ok := positionOf(s); ok {
			t.RawSetString("source", lua.LString("@"+chunk))
			t.RawSetString("line", lua.LString(line))
		}
	}
	msg, hasMsg := luaString(t.RawGetString("err"))
	switch killed {
	case killedByUser:
		msg, hasMsg = errKilled, true
	case killedOverMemory:
		msg, hasMsg = errOutOfMemory, true
	case killedByShutdown:
		msg, hasMsg = errStopped, true
	}
	if !hasMsg {
		msg = "ERR unknown error" // Redis 7.0.15 crashes on error({}); we answer instead
	}
	source, okS := luaString(t.RawGetString("source"))
	line, okL := luaString(t.RawGetString("line"))
	if okS && okL {
		msg += " script: " + st.lastName + ", on " + source + ":" + line + "."
	}
	return appendErrorLine(dst, msg)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// positionOf splits "chunk:LINE: message" into chunk and line.
func positionOf(s string) (chunk, line string, ok bool) {
	i := strings.Index(s, ": ")
	if i < 0 {
		return "", "", false
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j <= 0 || j+1 >= i {
		return "", "", false
	}
	for _, c := range s[j+1 : i] {
		if c < '0' || c > '9' {
			return "", "", false
		}
	}
	return s[:j], s[j+1 : i], true
}

var boxedInts = func() (b [64]lua.LValue) {
	for i := range b {
		b[i] = lua.LNumber(i)
	}
	return b
}()

// boxedInt is lua.LNumber(i) as an LValue, without allocating for small i.
func boxedInt(i int) lua.LValue {
	if i < len(boxedInts) {
		return boxedInts[i]
	}
	return lua.LNumber(i)
}
