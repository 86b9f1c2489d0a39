package script

import (
	"crypto/sha1"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"

	"github.com/puzpuzpuz/xsync/v3"
	lua "github.com/yuin/gopher-lua"
)

// Config holds the engine's settings. Zero fields take Redis's defaults.
type Config struct {
	// BusyThreshold is busy-reply-threshold (alias lua-time-limit): past it a run counts as busy
	// (Busy, Kill). Default 5 s; negative disables the check.
	BusyThreshold time.Duration
	// MaxMemory is lua-max-memory, HotKV's own: how far the Go heap may grow while one run is
	// running before the run is stopped with an error. Default 256 MB; negative disables it.
	MaxMemory int64
	// Tick is how often the watchdog looks at running scripts (default 10 ms): the resolution of
	// the busy threshold and of the memory cap.
	Tick time.Duration
}

const (
	defaultBusy      = 5 * time.Second
	defaultMaxMemory = 256 << 20
	defaultTick      = 10 * time.Millisecond
	versionString    = "7.0.15"
	versionNum       = 0x07000f
)

// Flags are a script's shebang flags (or a function's registration flags).
type Flags uint16

const (
	FlagNoWrites Flags = 1 << iota
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlot
	// FlagShebang says the script declared its flags with "#!lua": Redis then applies them
	// strictly (a script without a shebang is treated as Redis 6 did: may write, checked per
	// command). The command layer reads it for the OOM and stale checks before Run.
	FlagShebang
)

// Script is one compiled EVAL script. It is immutable and shared by every state, but for Hint.
type Script struct {
	SHA   string // 40 lowercase hex digits
	Flags Flags
	proto *lua.FunctionProto
	name  string // "user_script" for EVAL; a function's name for FCALL
	// Hint is the command layer's own, changed with atomics from any goroutine: what it learned
	// of the script's runs (where they ran). The engine never reads it; it goes with the Script
	// (SCRIPT FLUSH starts it again at zero).
	Hint atomic.Int32
}

// Engine is the scripting engine of one server: the script cache, the interpreter states, the
// function libraries and the watchdog. Its methods are safe from any goroutine.
type Engine struct {
	cfg     Config
	scripts *xsync.MapOf[[20]byte, *Script]
	gen     atomic.Uint64 // bumped by Flush; states drop their compiled-function caches on change
	pool    pool
	libs    libraries
	dog     watchdog
	closeMu sync.Once
	busyNs  atomic.Int64 // BusyThreshold, changed by CONFIG SET (SetBusyThreshold)
	maxMem  atomic.Int64 // MaxMemory, changed by CONFIG SET (SetMaxMemory)
	// stopping is set by StopRuns: every run in progress or started later is ended
	stopping atomic.Bool
}

// SetBusyThreshold changes busy-reply-threshold (lua-time-limit) for the runs in progress too;
// 0 or negative disables the busy state.
func (e *Engine) SetBusyThreshold(d time.Duration) { e.busyNs.Store(int64(d)) }

// SetMaxMemory changes lua-max-memory; 0 or negative disables the cap.
func (e *Engine) SetMaxMemory(n int64) { e.maxMem.Store(n) }

// New builds an engine and starts its watchdog goroutine; Close stops it.
func New(cfg Config) *Engine {
	if cfg.BusyThreshold == 0 {
		cfg.BusyThreshold = defaultBusy
	}
	if cfg.MaxMemory == 0 {
		cfg.MaxMemory = defaultMaxMemory
	}
	if cfg.Tick <= 0 {
		cfg.Tick = defaultTick
	}
	e := &Engine{cfg: cfg, scripts: xsync.NewMapOf[[20]byte, *Script]()}
	e.SetBusyThreshold(cfg.BusyThreshold)
	e.SetMaxMemory(cfg.MaxMemory)
	e.pool.init(e)
	e.libs.init()
	e.dog.start(e)
	return e
}

// Close stops the watchdog. Runs still in progress finish normally, unwatched.
func (e *Engine) Close() { e.closeMu.Do(e.dog.stop) }

// WatchdogRunning reports whether the engine's watchdog goroutine runs (from New until Close
// returns).
func (e *Engine) WatchdogRunning() bool { return e.dog.running.Load() }

// Compile returns the cached script for body, compiling and caching it first if needed (EVAL,
// SCRIPT LOAD). On failure errReply is Redis's error text (no '-' nor CRLF) and nothing is cached.
func (e *Engine) Compile(body []byte) (s *Script, errReply string) {
	sum := sha1.Sum(body)
	if s, ok := e.scripts.Load(sum); ok {
		return s, ""
	}
	s, errReply = compileScript(body, sum)
	if errReply != "" {
		return nil, errReply
	}
	s, _ = e.scripts.LoadOrStore(sum, s)
	return s, ""
}

// Lookup finds a cached script by its SHA1 in hex, in either case (EVALSHA, SCRIPT EXISTS).
func (e *Engine) Lookup(sha []byte) (*Script, bool) {
	var sum [20]byte
	if len(sha) != 40 {
		return nil, false
	}
	if _, err := hex.Decode(sum[:], sha); err != nil {
		return nil, false
	}
	return e.scripts.Load(sum)
}

// ShaCache is one remembered EVALSHA lookup, for a caller that repeats the same SHA (a
// connection; one goroutine at a time): LookupCached answers it again without decoding the hex
// or reading the shared map, until SCRIPT FLUSH.
type ShaCache struct {
	sha [40]byte
	s   *Script
	gen uint64
}

// LookupCached is Lookup through c.
func (e *Engine) LookupCached(c *ShaCache, sha []byte) (*Script, bool) {
	gen := e.gen.Load() // before the lookup: a Flush after it leaves c stale, and so unused
	if c.s != nil && c.gen == gen && string(sha) == string(c.sha[:]) {
		return c.s, true
	}
	s, ok := e.Lookup(sha)
	if ok {
		copy(c.sha[:], sha) // Lookup checked the length
		c.s, c.gen = s, gen
	}
	return s, ok
}

// Exists reports whether a script with this SHA1 is cached (SCRIPT EXISTS).
func (e *Engine) Exists(sha []byte) bool {
	_, ok := e.Lookup(sha)
	return ok
}

// Flush empties the script cache (SCRIPT FLUSH, both ASYNC and SYNC: the old scripts are
// garbage once the runs holding them end). Runs in progress keep their script.
func (e *Engine) Flush() {
	e.scripts.Clear()
	e.gen.Add(1)
}

// Len is the number of cached scripts (INFO's number_of_cached_scripts).
func (e *Engine) Len() int { return e.scripts.Size() }

// RunOptions are the caller's side of one run.
type RunOptions struct {
	Proto    int  // the calling client's protocol, 2 or 3: the final reply's encoding
	ReadOnly bool // EVAL_RO, EVALSHA_RO, FCALL_RO: write commands fail
	// Busy, when set, receives whether the run was busy (past the busy threshold) when its
	// Lua code ended.
	Busy *bool
	// Stopped, when set, receives whether StopRuns ended the run (the server is stopping).
	Stopped *bool
}

func sha1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}
