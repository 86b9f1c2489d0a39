package script

import (
	"context"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Interpreter limits. Lua 5.1 allows 20,000 nested Lua calls (LUAI_MAXCALLS) and says "stack
// overflow" beyond; here 10,000: when a script overflows, gopher-lua builds a stack trace by
// walking the frames from the top once per level (quadratic), 1.2 s of CPU at 20,000 frames and
// 0.3 s at 10,000. The value stack grows on demand up to maxRegistry slots (16 bytes each).
const (
	maxCallDepth = 10000
	maxRegistry  = 1 << 20
	initRegistry = 1024
	maxUnpack    = 7990 // Lua 5.1's lua_checkstack limit (LUAI_MAXCSTACK 8000) less its headroom
	// A coroutine is a state of its own in gopher-lua, with its own stacks: it gets 200 frames
	// (Lua 5.1's C-call bound LUAI_MAXCCALLS) so that a script's coroutines stay small.
	coCallDepth   = 200
	coRegistry    = 256
	coRegistryMax = 1 << 16
	// maxArrayIndex bounds the integer keys gopher-lua keeps in a table's array part. It
	// grows that array to any key below the bound, filling the gap with nils, where Lua 5.1
	// puts a sparse key in the hash part: with gopher-lua's default (2^26), t[2^24-1] = 1
	// allocated 256 MB (and #t said 1, Redis 0) in one step the memory cap could not stop.
	// Below 2^21 such a write costs at most 32 MB (64 MB while the array doubles); keys from
	// 2^21 on go to the hash part, as Lua's would. The price: # of a table holding more than
	// 2^21-1 consecutive elements (at least 48 MB of Lua values) stops at 2^21-1.
	maxArrayIndex = 1 << 21
)

// gopher-lua's bound is one of its package variables; this package is its only user.
func init() { lua.MaxArrayIndex = maxArrayIndex }

// state is one interpreter with its sandbox, used by one run at a time (see pool).
type state struct {
	e        *Engine
	L        *lua.LState
	slot     *slot
	genv     *lua.LTable                 // the real globals: KEYS and ARGV are set here
	proxy    map[*lua.LTable]*lua.LTable // read-only proxy -> the table it shows
	keys     *lua.LTable
	argv     *lua.LTable
	fns      map[*Script]*lua.LFunction // compiled functions bound to this state's globals
	fnGen    uint64
	errFn    *lua.LFunction
	coResume *lua.LFunction
	concatFn *lua.LFunction // (concat), concat.go
	// functions (functions_state.go)
	fenv, fnAPI, loadAPI *lua.LTable
	loading              *loading
	libFns               map[*Function]*lua.LFunction
	libGen               uint64
	run                  *run // the run in progress, nil between runs
	runBuf               run
	chunks               map[string]string // loadstring chunk names as shown -> as given (error suffixes)
	lastName             string
	rand                 lrand48
	ctx                  killCtx
	broken               bool // a Go panic escaped the interpreter: drop the state instead of reusing it
	hostPanic            any  // a panic of the Host inside redis.call, re-raised by Run (rethrow)
}

func newState(e *Engine, s *slot) *state {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:    true,
		CallStackSize:   maxCallDepth,
		RegistrySize:    initRegistry,
		RegistryMaxSize: maxRegistry,
		// A fixed call stack: gopher-lua's growing one never reports full (IsFull compares
		// the segment index with the segment count) and panics instead of raising "stack
		// overflow". 10,000 frames of 80 bytes, touched only as deep as a script recurses.
		MinimizeStackMemory: false,
	})
	st := &state{e: e, L: L, slot: s, proxy: map[*lua.LTable]*lua.LTable{}, fns: map[*Script]*lua.LFunction{}, chunks: map[string]string{}, libFns: map[*Function]*lua.LFunction{}}
	st.rand.seed(0)
	st.ctx.mark = &s.run
	L.SetContext(&st.ctx)
	st.openSandbox()
	return st
}

// function returns s bound to this state, compiling the proto into a closure once per state.
func (st *state) function(s *Script) *lua.LFunction {
	if g := st.e.gen.Load(); g != st.fnGen {
		clear(st.fns)
		st.fnGen = g
	}
	if fn, ok := st.fns[s]; ok {
		return fn
	}
	if len(st.fns) >= 4096 {
		clear(st.fns)
	}
	fn := st.instantiate(s.proto, st.L.Env)
	st.fns[s] = fn
	return fn
}

// killCtx is the context gopher-lua polls before every instruction. Done is nil (never ready)
// unless this slot's current run was marked killed, so the poll costs two atomic loads and no
// channel; a killed run sees a closed channel on every following instruction, so pcall cannot
// swallow the kill.
type killCtx struct {
	context.Context // nil: only Done and Err are called by gopher-lua
	mark            *runMark
}

var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *killCtx) Done() <-chan struct{} {
	if c.mark.killed() {
		return closedDone
	}
	return nil
}

func (c *killCtx) Err() error {
	if c.mark.killed() {
		return killError{}
	}
	return nil
}

func (c *killCtx) Value(any) any { return nil }

func (c *killCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

type killError struct{}

func (killError) Error() string { return "Script killed" }

// instantiate runs the concat wrapper of proto (concat.go) under env and returns the function it
// yields: the chunk itself, with (concat) as its upvalue.
func (st *state) instantiate(proto *lua.FunctionProto, env *lua.LTable) *lua.LFunction {
	L := st.L
	outer := L.NewFunctionFromProto(proto)
	outer.Env = env
	L.Push(outer)
	L.Push(st.concatFn)
	L.Call(1, 1)
	fn := L.Get(-1).(*lua.LFunction)
	L.Pop(1)
	return fn
}
