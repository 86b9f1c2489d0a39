package script

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"

	"github.com/hotkv/hotkv/ds/strs"
)

// Functions (FUNCTION LOAD/DELETE/FLUSH/LIST, FCALL, FCALL_RO): a library is Lua code whose
// first line is "#!lua name=<lib>" and which, when loaded, calls redis.register_function for
// each of its functions. The registry is an immutable snapshot behind an atomic pointer,
// replaced whole on every change (changes are rare, FCALL reads it lock-free). Each interpreter
// state loads a library's code the first time it runs one of its functions, with redis.log
// silent then; the load the client asked for ran first, in some state, and decided success.
//
// The environments, as Redis 7.0.15's: library code runs with only
// redis.register_function, redis.log, redis.LOG_* and redis.REDIS_VERSION[_NUM] visible; the
// functions then run with the EVAL globals minus KEYS, ARGV and __redis__err__handler, and a
// redis table without breakpoint, debug and replicate_commands. Both environments are one
// read-only table whose lookups go to one of the two, as Redis swaps its globals' __index.

// Library is one loaded library. It is immutable once registered.
type Library struct {
	Name      string
	Code      []byte      // as loaded: FUNCTION LIST WITHCODE, FUNCTION DUMP
	Functions []*Function // sorted by name
	proto     *lua.FunctionProto
}

// Function is one registered function.
type Function struct {
	Name           string
	Description    string
	HasDescription bool // FUNCTION LIST shows a null description without one
	Flags          Flags
	Library        *Library
	// Hint is the command layer's, as Script.Hint (a reloaded library starts it at zero).
	Hint atomic.Int32
}

// libSet is one snapshot of the registry.
type libSet struct {
	libs  map[string]*Library  // by name, case-sensitive as Redis
	funcs map[string]*Function // by lower-case name: FCALL finds functions in any case
}

type libraries struct {
	cur atomic.Pointer[libSet]
	gen atomic.Uint64 // bumped on every change; states drop their loaded functions then
	mu  sync.Mutex    // serializes changes
}

func (l *libraries) init() {
	l.cur.Store(&libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}})
}

const (
	libChunk         = "user_function"
	errLibMissing    = "ERR Missing library metadata"
	errLibInvalid    = "ERR Invalid library metadata"
	errLibNoName     = "ERR Library name was not given"
	errLibBadName    = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
	errLibNameTwice  = "ERR Invalid metadata value, name argument was given multiple times"
	errLibNoFuncs    = "ERR No functions registered"
	errLibNotFound   = "ERR Library not found"
	errFuncNotFound  = "ERR Function not found"
	errLoadTimeout   = "ERR FUNCTION LOAD timeout"
	errRegistering   = "ERR Error registering functions: "
	errCompilingFunc = "ERR Error compiling function: "
	errWriteFlagRO   = "ERR Can not execute a script with write flag using *_ro command."
	loadTimeoutTicks = 500 // ms, Redis's LOAD_TIMEOUT_MS
)

// parseLibraryHeader reads "#!<engine> name=<lib>".
func parseLibraryHeader(code []byte) (name string, errReply string) {
	if !bytes.HasPrefix(code, []byte("#!")) {
		return "", errLibMissing
	}
	nl := bytes.IndexByte(code, '\n')
	if nl < 0 {
		return "", errLibInvalid
	}
	parts := strings.Fields(string(code[2:nl]))
	if len(parts) == 0 {
		return "", "ERR Engine '' not found"
	}
	if !strings.EqualFold(parts[0], "lua") {
		return "", "ERR Engine '" + parts[0] + "' not found"
	}
	seen := false
	for _, opt := range parts[1:] {
		v, ok := strings.CutPrefix(opt, "name=")
		if !ok {
			return "", "ERR Invalid metadata value given: " + opt
		}
		if seen {
			return "", errLibNameTwice
		}
		name, seen = v, true
	}
	if !seen {
		return "", errLibNoName
	}
	if !validName(name) {
		return "", errLibBadName
	}
	return name, ""
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// FunctionLoad is FUNCTION LOAD [REPLACE]: it compiles and runs the library code, registers
// its functions and returns the library's name, or Redis's error text. h receives the load's
// redis.log lines; it may be nil.
func (e *Engine) FunctionLoad(h Host, code []byte, replace bool) (name string, errReply string) {
	name, errReply = parseLibraryHeader(code)
	if errReply != "" {
		return "", errReply
	}
	if _, exists := e.libs.cur.Load().libs[name]; exists && !replace {
		return "", "ERR Library '" + name + "' already exists"
	}
	lib, errReply := e.compileLibrary(h, code)
	if errReply != "" {
		return "", errReply
	}
	return name, e.libs.register(lib, replace)
}

// compileLibrary compiles and runs library code (in some state) and returns the library with
// its functions, not yet registered.
func (e *Engine) compileLibrary(h Host, code []byte) (*Library, string) {
	name, errReply := parseLibraryHeader(code)
	if errReply != "" {
		return nil, errReply
	}
	src := append([]byte("--"), code[2:]...) // the header becomes a comment; lines stay
	proto, errReply := compileLua(src, libChunk)
	if errReply != "" {
		return nil, errCompilingFunc + strings.TrimPrefix(errReply, errCompilePrefix)
	}
	lib := &Library{Name: name, Code: bytes.Clone(code), proto: proto}
	sl := e.pool.acquire()
	fns, errReply := sl.st.loadLibrary(lib, h)
	e.pool.release(sl)
	if errReply != "" {
		return nil, errReply
	}
	if len(fns) == 0 {
		return nil, errLibNoFuncs
	}
	for _, f := range fns {
		lib.Functions = append(lib.Functions, f.info)
	}
	slices.SortFunc(lib.Functions, func(a, b *Function) int { return strings.Compare(a.Name, b.Name) })
	return lib, ""
}

// register adds lib, replacing the library of the same name when replace is set; a function
// name another library holds fails the whole load.
func (l *libraries) register(lib *Library, replace bool) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.cur.Load()
	prev, exists := old.libs[lib.Name]
	if exists && !replace {
		return "ERR Library '" + lib.Name + "' already exists"
	}
	for _, f := range lib.Functions {
		if have, ok := old.funcs[strings.ToLower(f.Name)]; ok && have.Library != prev {
			return "ERR Function " + f.Name + " already exists"
		}
	}
	next := old.clone()
	if exists {
		next.remove(prev)
	}
	next.libs[lib.Name] = lib
	for _, f := range lib.Functions {
		f.Library = lib
		next.funcs[strings.ToLower(f.Name)] = f
	}
	l.cur.Store(next)
	l.gen.Add(1)
	return ""
}

func (s *libSet) clone() *libSet {
	n := &libSet{libs: make(map[string]*Library, len(s.libs)+1), funcs: make(map[string]*Function, len(s.funcs)+1)}
	for k, v := range s.libs {
		n.libs[k] = v
	}
	for k, v := range s.funcs {
		n.funcs[k] = v
	}
	return n
}

func (s *libSet) remove(lib *Library) {
	delete(s.libs, lib.Name)
	for _, f := range lib.Functions {
		delete(s.funcs, strings.ToLower(f.Name))
	}
}

// FunctionDelete is FUNCTION DELETE.
func (e *Engine) FunctionDelete(name []byte) string {
	l := &e.libs
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.cur.Load()
	lib, ok := old.libs[string(name)]
	if !ok {
		return errLibNotFound
	}
	next := old.clone()
	next.remove(lib)
	l.cur.Store(next)
	l.gen.Add(1)
	return ""
}

// FunctionFlush is FUNCTION FLUSH [ASYNC|SYNC].
func (e *Engine) FunctionFlush() {
	l := &e.libs
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur.Store(&libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}})
	l.gen.Add(1)
}

// FunctionList is FUNCTION LIST's data: the libraries whose names match pattern (a glob, as
// LIBRARYNAME; nil for all), sorted by name (Redis lists them in its hash order). The command
// layer renders library_name, engine "LUA", functions (name, description: null without one,
// flags: a set of status replies, Flags.Names order) and, with WITHCODE, library_code
// (renderList in functions_test.go is that reply, checked against redis-server).
func (e *Engine) FunctionList(pattern []byte) []*Library {
	var out []*Library
	for _, lib := range e.libs.cur.Load().libs {
		if pattern == nil || strs.Glob(pattern, []byte(lib.Name), false) {
			out = append(out, lib)
		}
	}
	slices.SortFunc(out, func(a, b *Library) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// LookupFunction finds a function by name in any case (for the command layer's flag checks
// before FCall: OOM, stale replicas).
func (e *Engine) LookupFunction(name []byte) (*Function, bool) {
	var buf [64]byte
	key := buf[:0]
	if len(name) > len(buf) {
		key = make([]byte, 0, len(name))
	}
	for _, c := range name {
		key = append(key, strs.Lower(c))
	}
	f, ok := e.libs.cur.Load().funcs[string(key)]
	return f, ok
}

// FCall is FCALL (opts.ReadOnly false) and FCALL_RO: it runs the function with keys and args
// and appends its reply, or the error reply, to dst.
func (e *Engine) FCall(dst []byte, h Host, name []byte, keys, args [][]byte, opts RunOptions) []byte {
	f, ok := e.LookupFunction(name)
	if !ok {
		return appendErrorLine(dst, errFuncNotFound)
	}
	if opts.ReadOnly && f.Flags&FlagNoWrites == 0 {
		return appendErrorLine(dst, errWriteFlagRO)
	}
	sl := e.pool.acquire()
	defer e.pool.release(sl)
	st := sl.st
	defer st.rethrow()
	fn, errReply := st.functionFor(f)
	if errReply != "" {
		return appendErrorLine(dst, errReply)
	}
	sl.run.fn.Store(f)
	L := st.L
	L.Push(st.luaArray(keys))
	L.Push(st.luaArray(args))
	return st.call(dst, h, f.Name, fn, 2, opts, f.Flags, true)
}

// luaArray makes a new table of strings: a function may keep its keys and args tables in a
// closure, so they are not reused as KEYS and ARGV are.
func (st *state) luaArray(vals [][]byte) *lua.LTable {
	t := st.L.CreateTable(len(vals), 0)
	for i, v := range vals {
		t.RawSetInt(i+1, lua.LString(v))
	}
	return t
}
