package command

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/script"
	"github.com/puzpuzpuz/xsync/v3"
)

// Scripts (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT; FCALL and FUNCTION in functions.go), on
// top of src/script's engine. docs/decisions.md "Scripts" has the reasoning and measurements.
//
//  1. A script is a barrier (ScopeSelf): on its connection it takes the tokens of its declared
//     keys' shards (Group.Lock, ascending) and holds them for the whole run; a SHA marked wide
//     takes every shard (LockAll). redis.call runs the command through call with the run's own
//     Ctx (scriptRun.ctx), without locking, when its keys' shards are held. A script known to
//     stay on its declared keys' one shard runs as that shard's work instead, and hands the
//     slot back to run as a barrier if it meets another (scripting_place.go).
//  2. A key on a shard not held (undeclared): above every held shard, the run waits for its
//     token while holding the others (ordered, as LockAll); below, it tries the token. A run
//     only adds tokens and lets them all go at its end (strict two-phase locking). A try is
//     retried for a bounded time (tryFor); one that still fails aborts the run (the engine
//     unwinds on the Host's panic), undoes what it wrote (scripting_undo.go: each key's value
//     before the run's first write to it is logged, or the run takes every shard before a
//     write it cannot log) and reruns it under every shard, and the SHA is marked wide.
//     Commands with no keys or that need every shard (DBSIZE, KEYS, SCAN, FLUSHALL) take the
//     remaining shards the same way. lua-strict-keys makes any undeclared key an error instead.
//  3. Inside EXEC the run uses the tokens EXEC holds (txShards counted its declared keys) and
//     cannot add any: an undeclared key on another shard is an error, and marks the script
//     wide, so that the next EXEC holding it takes every shard.
//  4. The commands' replicated forms are collected (txState.collect, as EXEC's) and appended
//     to the feed as one entry, wrapped in MULTI … EXEC when there are two or more, while the
//     tokens are held; redis.set_repl(redis.REPL_NONE) drops a command's. Their keyspace
//     events go to the script's slot, published after its reply, in order; blocked clients
//     are served after the run, before the tokens are let go.
//  5. While a run is busy (past busy-reply-threshold) commands without allow-busy that need a
//     shard it holds (or every shard, or no key: PING, CLIENT, CONFIG too) are refused with the
//     engine's BUSY text; so are those that were routed while it ran and waited for its shards
//     (scripting_busy.go).

var scriptingCommands = []*Spec{
	{Name: "eval", Arity: -3, Flags: NoScript | Stale | SkipMonitor | NoMandatoryKeys | MovableKeys | MayReplicate,
		NumKeys: 2, Scope: ScopeSelf, Run: func(c *Ctx) { evalGeneric(c, false, false) }},
	{Name: "evalsha", Arity: -3, Flags: NoScript | Stale | SkipMonitor | NoMandatoryKeys | MovableKeys | MayReplicate,
		NumKeys: 2, Scope: ScopeSelf, Run: func(c *Ctx) { evalGeneric(c, true, false) }},
	{Name: "eval_ro", Arity: -3, Flags: ReadOnly | NoScript | Stale | SkipMonitor | NoMandatoryKeys | MovableKeys,
		NumKeys: 2, Scope: ScopeSelf, Run: func(c *Ctx) { evalGeneric(c, false, true) }},
	{Name: "evalsha_ro", Arity: -3, Flags: ReadOnly | NoScript | Stale | SkipMonitor | NoMandatoryKeys | MovableKeys,
		NumKeys: 2, Scope: ScopeSelf, Run: func(c *Ctx) { evalGeneric(c, true, true) }},
	(&Spec{Name: "script", Arity: -2, Scope: ScopeConn}).sub(
		&Spec{Name: "script|exists", Arity: -3, Flags: NoScript, Scope: ScopeConn, Run: scriptExists},
		&Spec{Name: "script|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: scriptHelp},
		&Spec{Name: "script|kill", Arity: 2, Flags: NoScript | AllowBusy, Scope: ScopeConn, Run: scriptKill},
		&Spec{Name: "script|flush", Arity: -2, Flags: NoScript, Scope: ScopeConn, Run: scriptFlush},
		&Spec{Name: "script|load", Arity: 3, Flags: NoScript | Stale, Scope: ScopeConn, Run: scriptLoad},
		&Spec{Name: "script|debug", Arity: 3, Flags: NoScript, Scope: ScopeConn, Run: scriptDebug},
	),
}

// runsScript reports whether spec runs a script with declared keys (EVAL*, FCALL*): EXEC counts
// those keys' shards (txShards) and mayBlock serves its batch off the poller.
func runsScript(spec *Spec) bool { return spec.NumKeys == 2 && spec.Scope == ScopeSelf }

// scriptWide reports whether the EVAL*, EVALSHA* or FCALL* in args runs a script marked wide
// (EXEC then takes every shard for it: txShards).
func (e *Engine) scriptWide(args [][]byte) bool {
	sc := &e.scripting
	if sc.wideN.Load() == 0 || len(args) < 2 {
		return false
	}
	name := args[0]
	switch {
	case strs.EqualFold(name, "EVALSHA"), strs.EqualFold(name, "EVALSHA_RO"):
		return sc.isWide(string(bytes.ToLower(args[1])))
	case strs.EqualFold(name, "EVAL"), strs.EqualFold(name, "EVAL_RO"):
		sum := sha1.Sum(args[1])
		return sc.isWide(hex.EncodeToString(sum[:]))
	}
	f, ok := e.Scripts().LookupFunction(args[1])
	return ok && sc.isWide("f:"+f.Name)
}

// scriptingState is the engine's scripting side: the Lua engine and what BUSY needs.
type scriptingState struct {
	running atomic.Int32   // runs in progress
	all     atomic.Int32   // runs holding every shard
	held    []atomic.Int32 // per shard, the runs holding it
	spans   busySpans      // the spans of the last runs that ended busy (scripting_busy.go)
	wideN   atomic.Int32   // entries in wide
	wide    *xsync.MapOf[string, struct{}]
	strict  atomic.Bool // lua-strict-keys
	once    sync.Once
	lua     atomic.Pointer[script.Engine]
	// mu guards free (the runs not in use, reused), every (every run made: as many as ran at
	// once) and each run's job and args, which FUNCTION STATS reads from another connection.
	mu    sync.Mutex
	free  []*scriptRun
	every []*scriptRun
}

func (e *Engine) initScripting() {
	sc := &e.scripting
	sc.held = make([]atomic.Int32, len(e.Group.Shards))
	sc.wide = xsync.NewMapOf[string, struct{}]()
}

// getRun takes a free scriptRun (or makes one) for a run of j by c.
func (sc *scriptingState) getRun(e *Engine, c *Ctx, j *scriptJob) *scriptRun {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var r *scriptRun
	if n := len(sc.free); n > 0 {
		r, sc.free = sc.free[n-1], sc.free[:n-1]
	} else {
		r = &scriptRun{e: e, set: make([]uint64, (len(e.Group.Shards)+63)/64), maxID: -1}
		sc.every = append(sc.every, r)
	}
	r.job, r.args = j.id, c.Args
	return r
}

func (sc *scriptingState) putRun(r *scriptRun) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	r.args = nil
	r.gen++
	sc.free = append(sc.free, r)
}

// Scripts returns the Lua engine, started on first use (its watchdog is a goroutine).
func (e *Engine) Scripts() *script.Engine {
	sc := &e.scripting
	if lua := sc.lua.Load(); lua != nil {
		return lua
	}
	sc.once.Do(func() {
		sc.lua.Store(script.New(script.Config{}))
		e.applyScriptSettings(e.Settings())
	})
	return sc.lua.Load()
}

// applyScriptSettings gives the Lua engine busy-reply-threshold, lua-max-memory and
// lua-strict-keys.
func (e *Engine) applyScriptSettings(s *Settings) {
	sc := &e.scripting
	sc.strict.Store(s.LuaStrictKeys)
	lua := sc.lua.Load()
	if lua == nil {
		return
	}
	busy := time.Duration(s.BusyReplyThreshold) * time.Millisecond
	if busy <= 0 {
		busy = -1
	}
	lua.SetBusyThreshold(busy)
	mem := s.LuaMaxMemory
	if mem <= 0 {
		mem = -1
	}
	lua.SetMaxMemory(mem)
}

// scriptCounts are INFO's number_of_cached_scripts, number_of_libraries and
// number_of_functions; zero while no script has run (the engine starts on first use).
func (e *Engine) scriptCounts() (scripts, libs, fns int) {
	lua := e.scripting.lua.Load()
	if lua == nil {
		return 0, 0, 0
	}
	libs, fns = lua.FunctionCounts()
	return lua.Len(), libs, fns
}

// Close stops what the engine started beside the shards: the Lua engine's watchdog.
func (e *Engine) Close() {
	if lua := e.scripting.lua.Load(); lua != nil {
		lua.Close()
	}
}

// StopScripts ends every script and function run in progress, and any started later, even one
// that wrote (script.Engine.StopRuns): the server is stopping and would otherwise wait for a
// busy run's connection for its whole grace.
func (e *Engine) StopScripts() {
	if lua := e.scripting.lua.Load(); lua != nil {
		lua.StopRuns()
	}
}

// runningCommand is the command (RESP array) of a run in progress of r's function: FUNCTION
// STATS's command.
func (e *Engine) runningCommand(r script.Running) []byte {
	id := "f:" + r.Function.Name
	sc := &e.scripting
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, run := range sc.every {
		if run.job == id && run.args != nil {
			return appendCommand(nil, run.args)
		}
	}
	return resp.AppendArrayLen(nil, 0)
}

func (sc *scriptingState) isWide(id string) bool {
	if sc.wideN.Load() == 0 {
		return false
	}
	_, ok := sc.wide.Load(id)
	return ok
}

func (sc *scriptingState) markWide(id string) {
	if _, loaded := sc.wide.LoadOrStore(id, struct{}{}); !loaded {
		sc.wideN.Add(1)
	}
}

// scriptJob is one EVAL or FCALL as parsed: what runs, with which keys and arguments.
type scriptJob struct {
	// flags are the script's declared flags (a shebang's, or the function's); 0 without.
	flags script.Flags
	sc    *script.Script // EVAL*; nil for FCALL*
	fn    []byte         // FCALL*: the function's name
	id    string         // the wide map's key: the SHA, or "f:" and the function's name
	keys  [][]byte
	args  [][]byte
	opts  script.RunOptions
	hint  *atomic.Int32 // the Script's or Function's Hint (scripting_place.go)
}

// errRestart is the Host's panic that aborts a run which has written nothing, to rerun it
// under every shard.
type errRestart struct{}

// EVAL script numkeys [key ...] [arg ...]; EVALSHA sha1 numkeys ...; EVAL_RO; EVALSHA_RO
func evalGeneric(c *Ctx, bySHA, ro bool) {
	n, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrNotInt)
		return
	case n > int64(len(c.Args)-3):
		c.Err(ErrNumKeysGreater)
		return
	case n < 0:
		c.Err(ErrNumKeysNegative)
		return
	}
	var s *script.Script
	if bySHA {
		if s, ok = lookupSHA(c); !ok {
			c.Err(script.ErrNoScript)
			return
		}
	} else {
		var msg string
		if s, msg = c.E.Scripts().Compile(c.Args[1]); msg != "" {
			c.Err(msg)
			return
		}
	}
	j := scriptJob{sc: s, flags: s.Flags, id: s.SHA, keys: c.Args[3 : 3+n], args: c.Args[3+n:],
		opts: script.RunOptions{Proto: c.Proto, ReadOnly: ro}, hint: &s.Hint}
	c.E.runScript(c, &j)
}

// lookupSHA finds EVALSHA's script, through the connection's cache of its last one.
func lookupSHA(c *Ctx) (*script.Script, bool) {
	if c.Client == nil {
		return c.E.Scripts().Lookup(c.Args[1])
	}
	return c.E.Scripts().LookupCached(&c.Client.sha, c.Args[1])
}

// runScript runs j for the call c, rerunning it under every shard when its first run met a
// shard it could not take (see the file's comment).
func (e *Engine) runScript(c *Ctx, j *scriptJob) {
	sc := &e.scripting
	r := sc.getRun(e, c, j)
	sc.running.Add(1)
	defer func() {
		sc.running.Add(-1)
		r.release()
		sc.putRun(r)
	}()
	r.onShard, r.hint = onShardOf(c), j.hint
	// CLIENT CACHING yes covers the run's reads (every attempt's) and ends with it. (A run on its
	// shard has no tracking: selfTarget.)
	if r.onShard < 0 {
		r.caching, c.Client.track.caching = c.Client.track.caching, false
	}
	wide := sc.isWide(j.id) && r.onShard < 0
	r.retry = false
	for !r.attempt(c, j, wide) {
		r.retry = true
		if r.onShard >= 0 { // it met another shard: it runs again as a barrier (scripting_place.go)
			j.hint.Store(hintRoams)
			c.needToken = true
			return
		}
		wide = true
		sc.markWide(j.id)
	}
}

// scriptRun is one script run's state: the tokens it holds, its Ctx and slot for redis.call,
// and what it collected. It is owned by the goroutine running the script and reused.
type scriptRun struct {
	e     *Engine
	outer *Ctx // the EVAL's or FCALL's call
	// lastName and lastSpec are resolve's cache: the last top-level command name resolved.
	lastName []byte
	lastSpec *Spec
	ctx      Ctx // redis.call's
	slot     pipeline.Slot
	tx       txState // the replicated forms collected (outside EXEC)
	reply    []byte

	set    []uint64 // the shards held, a bit each
	locked []int32  // the shards this run locked, in the order it did
	maxID  int32    // the highest shard held, -1 when none
	all    bool     // every shard is held
	wideL  bool     // the run took every shard with LockAll
	inTx   bool     // EXEC holds the shards: the run takes none
	// onShard is the shard whose work runs the script (scripting_place.go), -1 for a barrier;
	// hint is the script's Hint.
	onShard int32
	hint    *atomic.Int32
	// busy is set when the run's Lua code ended past the busy threshold; busyFn when it is an
	// FCALL (scripting_busy.go).
	busy, busyFn bool
	abort        bool // a restart is unwinding: no command may run (pcall may catch it)
	// stopped is set when the server's stop ended the run (script.Engine.StopRuns): its
	// unfinished writes are not replicated
	stopped bool
	retry   bool // the attempt is a rerun under every shard
	// declared are the run's declared keys and caching its caller's CLIENT CACHING yes, for
	// client tracking (track).
	declared [][]byte
	caching  bool
	wrote    bool      // a command that writes or replicates ran
	undo     undoLog   // what the run's writes replaced (scripting_undo.go)
	calls    []runCall // the commands it called, counted where: an undo takes them back
	allowOOM bool      // the script declared allow-oom
	strict   bool
	db       int
	one      [1]int32
	keyPos   []int
	shards   []int32
	job      string   // guarded by scriptingState.mu: the wide map's key of the run
	args     [][]byte // guarded by scriptingState.mu: the EVAL's or FCALL's arguments while it runs
	gen      uint64   // guarded by scriptingState.mu: runs ended (putRun), for busyWait
}

// attempt runs j once; it reports false when the run was aborted to run again wide.
func (r *scriptRun) attempt(c *Ctx, j *scriptJob, wide bool) (done bool) {
	effects := 0
	if c.slot != nil {
		effects = len(c.slot.Effects)
	}
	r.begin(c, j.keys, wide)
	r.busy, r.busyFn = false, j.sc == nil
	r.allowOOM = j.flags&script.FlagAllowOOM != 0
	if msg := r.waitedBusy(c); msg != "" { // scripting_busy.go
		c.Err(msg)
		r.finish(false)
		return true
	}
	if c.tx == nil && !r.e.selfGate(c) { // maxmemory, holding the declared keys' shards
		r.finish(true)
		return true
	}
	defer func() {
		p := recover()
		if _, ok := p.(errRestart); ok {
			if c.slot != nil {
				// The aborted run's events go but its "expired" ones: those deletions happened
				// (undoWrites keeps their DELs too), and the rerun finds the keys gone.
				c.slot.Effects = keepExpiredEvents(c.slot.Effects, effects)
			}
			r.finish(false)
			return
		}
		r.finish(true)
		if p != nil {
			panic(p)
		}
	}()
	r.busy, j.opts.Busy = false, &r.busy
	j.opts.Stopped = &r.stopped
	if j.sc != nil {
		c.Out = r.e.Scripts().Run(c.Out, r, j.sc, j.keys, j.args, j.opts)
	} else {
		c.Out = r.e.Scripts().FCall(c.Out, r, j.fn, j.keys, j.args, j.opts)
	}
	return true
}

// keepExpiredEvents cuts fx back to its first n bytes of events but for the "expired" events
// of the part after them, which it keeps in order.
func keepExpiredEvents(fx []byte, n int) []byte {
	var kept []byte
	for b := fx[n:]; len(b) > 0; {
		var ev event
		ev, b = nextEvent(b)
		if ev.class == NotifyExpired {
			kept = appendEvent(kept, ev.db, ev.class, string(ev.name), ev.key)
		}
	}
	return append(fx[:n], kept...)
}

// begin takes the run's first tokens: those of j's declared keys, every shard when wide, none
// inside EXEC (which holds them).
func (r *scriptRun) begin(c *Ctx, keys [][]byte, wide bool) {
	e := r.e
	r.outer, r.wrote, r.abort, r.db, r.declared = c, false, false, c.DB, keys
	r.stopped = false
	r.undo.reset()
	r.tx.keepPre, r.tx.pres = false, r.tx.pres[:0]
	r.strict = e.scripting.strict.Load()
	rc := &r.ctx
	rc.E, rc.Client, rc.noBlock, rc.Now, rc.DB = e, c.Client, true, c.Now, c.DB
	rc.fx.ring = -1
	r.tx.ops, r.tx.nops, r.tx.after = r.tx.ops[:0], 0, r.tx.after[:0]
	r.tx.ofRun, r.tx.mon, r.tx.touched = true, r.tx.mon[:0], r.tx.touched[:0]
	r.tx.inval, r.calls = r.tx.inval[:0], r.calls[:0]
	rc.tx = &r.tx
	if c.tx != nil { // inside EXEC: its tokens, its transaction's replicated form
		r.inTx, rc.tx, rc.fx.ring, rc.stats = true, c.tx, c.fx.ring, c.stats
		r.all = c.tx.heldAll
		for _, id := range c.tx.held {
			r.mark(id)
		}
		e.scripting.noteHeld(c.tx.held, r.all, 1)
		r.setRunning(rc)
		return
	}
	if r.onShard >= 0 {
		r.beginOnShard(r.onShard)
		return
	}
	if wide {
		e.Group.LockAll()
		r.all, r.wideL = true, true
		e.enter(nil, true, rc)
		rc.stats = &e.data(0).stats
		r.maxID = int32(len(e.Group.Shards) - 1)
		e.scripting.all.Add(1)
		return
	}
	r.shards = r.shards[:0]
	for _, k := range keys {
		r.shards = append(r.shards, e.shardOf(k))
	}
	slices.Sort(r.shards)
	r.shards = slices.Compact(r.shards)
	if len(r.shards) > 0 {
		e.Group.Lock(r.shards)
		for _, id := range r.shards {
			r.add(id)
		}
	}
}

// add records shard id as locked by this run, its token just taken.
func (r *scriptRun) add(id int32) {
	r.locked = append(r.locked, id)
	r.mark(id)
	if r.ctx.fx.ring < 0 {
		r.ctx.fx.ring = id
		r.ctx.stats = &r.e.data(id).stats // its counters: the commands' calls are counted there
	}
	r.e.data(id).running = &r.ctx
	r.e.scripting.held[id].Add(1)
}

func (r *scriptRun) mark(id int32) {
	r.set[id>>6] |= 1 << (id & 63)
	r.maxID = max(r.maxID, id)
}

func (r *scriptRun) holds(id int32) bool { return r.all || r.set[id>>6]&(1<<(id&63)) != 0 }

// setRunning makes c the running call of the shards EXEC holds.
func (r *scriptRun) setRunning(c *Ctx) {
	if r.all {
		for i := range r.e.Group.Shards {
			r.e.data(int32(i)).running = c
		}
		return
	}
	for _, id := range r.outer.tx.held {
		r.e.data(id).running = c
	}
}

// finish ends an attempt holding its tokens: the collected replicated form goes to the feed
// (also for an aborted run: keys it found expired were deleted), the nested calls' own pushes
// follow the reply, blocked clients are served; then the tokens are let go.
func (r *scriptRun) finish(ok bool) {
	e, rc := r.e, &r.ctx
	if r.inTx {
		r.outer.tx.stopped = r.outer.tx.stopped || r.stopped
		e.scripting.noteHeld(r.outer.tx.held, r.all, -1)
		r.setRunning(r.outer)
		r.reset()
		return
	}
	if r.tx.nops > 0 && rc.fx.ring >= 0 && e.Feed.Active() && !r.stopped {
		e.Feed.Append(int(rc.fx.ring), r.tx.opsDB, r.tx.wrapped())
	}
	e.flushRunMonitor(&r.tx)
	e.flushRunTouches(&r.tx)
	r.flushInvalidations(ok) // scripting_undo.go
	if ok && len(r.tx.after) > 0 {
		r.outer.Out = append(r.outer.Out, r.tx.after...)
	}
	if r.busy {
		r.markBusyLocked() // scripting_busy.go
	}
	if r.onShard >= 0 {
		r.finishOnShard()
		r.reset()
		return
	}
	if ok {
		r.learn()
	}
	by := r.outer.slot
	if r.wideL {
		e.leave(nil, true, rc)
		e.serveReadyAll(rc.Now, by)
		e.scripting.all.Add(-1)
		e.Group.UnlockAll()
	} else {
		e.leave(r.locked, false, rc)
		e.serveReadyIn(r.locked, rc.Now, by)
		e.scripting.noteHeld(r.locked, false, -1)
		for i := len(r.locked) - 1; i >= 0; i-- {
			r.one[0] = r.locked[i]
			e.Group.Unlock(r.one[:])
		}
	}
	r.reset()
}

func (r *scriptRun) reset() {
	if cap(r.tx.ops) > txQueueMax { // a run that wrote a lot keeps nothing for the next
		r.tx.ops, r.tx.wrap = nil, nil
	}
	clear(r.set)
	r.locked, r.maxID, r.all, r.wideL, r.inTx = r.locked[:0], -1, false, false, false
	r.ctx.tx, r.ctx.Client, r.ctx.stats, r.declared = nil, nil, nil, nil
}

// release drops what the run kept from its caller once it is over.
func (r *scriptRun) release() {
	r.outer = nil
	clear(r.slot.Args)
	r.slot.Args, r.slot.Client = nil, nil
}

// noteHeld counts the runs holding shards, for BUSY (scriptBusy).
func (sc *scriptingState) noteHeld(ids []int32, all bool, d int32) {
	if all {
		sc.all.Add(d)
		return
	}
	for _, id := range ids {
		sc.held[id].Add(d)
	}
}

// Command is script.Host's: what args[0] (and a subcommand) names.
func (r *scriptRun) Command(args [][]byte) script.Command {
	spec := r.resolve(r.e.renamedArgs(args)) // rename-command (rename.go)
	if spec == nil {
		return 0
	}
	cmd := script.CommandKnown
	if arityOK(spec, len(args)) {
		cmd |= script.CommandArityOK
	}
	if spec.Flags&Write != 0 {
		cmd |= script.CommandWrite
	}
	if spec.Flags&NoScript != 0 {
		cmd |= script.CommandNoScript
	}
	return cmd
}

// resolve is resolve through the run's cache of its last top-level command: redis.call asks
// twice a call (Command, then Call), and scripts call the same few commands. The command table
// does not change, so the cache holds across runs.
func (r *scriptRun) resolve(args [][]byte) *Spec {
	if r.lastSpec != nil && string(args[0]) == string(r.lastName) {
		return r.lastSpec
	}
	spec := resolve(args)
	if spec != nil && spec.Subs == nil && strings.IndexByte(spec.Name, '|') < 0 {
		r.lastName, r.lastSpec = append(r.lastName[:0], args[0]...), spec
	}
	return spec
}

// resolve finds the command (or subcommand) args names, nil when there is none.
func resolve(args [][]byte) *Spec {
	spec := lookup(args[0])
	if spec != nil && spec.Subs != nil && len(args) > 1 {
		spec = lookupIn(spec.Subs, args[1])
	}
	return spec
}

// Call is script.Host's: redis.call of args, with the tokens the command needs taken first.
func (r *scriptRun) Call(args [][]byte, proto int, repl script.Repl, dst []byte) []byte {
	if r.abort {
		panic(errRestart{}) // the script caught the first one with pcall: keep unwinding
	}
	args = r.e.renamedArgs(args) // rename-command (rename.go)
	spec := r.resolve(args)
	if spec == nil || !arityOK(spec, len(args)) { // the engine checked both
		panic("BUG: script called an unchecked command")
	}
	if msg := r.e.aclScriptRefusal(r.outer.Client, spec, args); msg != "" { // acl_check.go
		return resp.AppendError(dst, msg)
	}
	if msg := r.need(spec, args); msg != "" {
		return resp.AppendError(dst, msg)
	}
	if spec.Flags&(Write|MayReplicate) != 0 {
		r.logWrite(spec, args) // or takes every shard first (scripting_undo.go)
	}
	// Redis refuses a denyoom command over maxmemory only as a script's first write, and never
	// in an allow-oom script: it cannot stop a script half way (scriptVerifyOOM).
	r.ctx.oomFree = r.allowOOM || r.wrote
	if spec.Flags&(Write|MayReplicate) != 0 {
		r.wrote = true
	}
	cl := r.outer.Client // call clears r.ctx.Client when it returns
	if r.onShard < 0 && cl.track.flags.Load() != 0 && spec.Scope != ScopeConn {
		r.track(cl, spec)
	}
	s := &r.slot
	s.Args, s.Cmd, s.Client = args, spec, cl
	s.DB, s.Proto = int32(r.db), int8(proto)
	s.Reply, s.Effects = r.reply[:0], s.Effects[:0]
	tx := r.ctx.tx
	ops, nops, lastDB, opsDB := len(tx.ops), tx.nops, tx.lastDB, tx.opsDB
	if r.onShard >= 0 { // a keyed command: it changes no database, and cl.DB is route's now
		r.e.call(&r.ctx, s, r.ctx.Now)
	} else {
		callerDB := cl.DB
		cl.DB = r.db // SELECT inside the script changes the script's database only
		r.e.call(&r.ctx, s, r.ctx.Now)
		r.db, cl.DB = cl.DB, callerDB
	}
	if repl == script.ReplNone { // redis.set_repl(redis.REPL_NONE)
		tx.ops, tx.nops, tx.lastDB, tx.opsDB = tx.ops[:ops], nops, lastDB, opsDB
	}
	r.reply = s.Reply
	if !r.all && !r.inTx { // an attempt that may be undone (one holding every shard is not)
		r.calls = append(r.calls, runCall{stats: r.ctx.stats, spec: spec,
			failed: len(s.Reply) > 0 && s.Reply[0] == '-'})
	}
	if len(s.Effects) > 0 && r.outer.slot != nil {
		r.outer.slot.Effects = append(r.outer.slot.Effects, s.Effects...)
	}
	s.Args = nil
	return append(dst, s.Reply...)
}

// track remembers for client tracking, when spec reads, the keys the script declared: Redis
// 7.0.15 remembers its caller's command's keys (EVAL's), not those of the command the script
// runs, and CLIENT CACHING yes covers every read of the run (testdata/scripting_tracking.txt).
func (r *scriptRun) track(cl *Client, spec *Spec) {
	cl.track.caching = r.caching
	if !cl.trackRead(spec) {
		return
	}
	r.keyPos = r.keyPos[:0]
	for i := range r.declared {
		r.keyPos = append(r.keyPos, 3+i)
	}
	r.e.rememberKeys(cl, r.outer.Args, r.keyPos)
}

// need takes the tokens spec needs for args that the run does not hold yet, or returns the
// error the command fails with.
func (r *scriptRun) need(spec *Spec, args [][]byte) string {
	switch spec.Scope {
	case ScopeConn:
		if r.onShard >= 0 {
			r.roam() // it changes the connection's state (SELECT): as a barrier (scripting_place.go)
		}
		return ""
	case ScopeKeys:
		r.keyPos = spec.keyIndexes(args, r.keyPos[:0])
		if len(r.keyPos) == 0 {
			break
		}
		for _, p := range r.keyPos {
			if msg := r.needShard(r.e.shardOf(args[p]), true); msg != "" {
				return msg
			}
		}
		return ""
	case ScopeSelf:
		if spec.Name == "publish" || spec.Name == "spublish" {
			return ""
		}
	}
	if r.all {
		return ""
	}
	for id := range r.e.Group.Shards {
		if msg := r.needShard(int32(id), false); msg != "" {
			return msg
		}
	}
	r.all = true // every bit is set: holds need not look
	return ""
}

// needShard takes shard id's token unless the run holds it (the file's comment, item 2).
func (r *scriptRun) needShard(id int32, key bool) string {
	switch {
	case r.holds(id):
		return ""
	case key && r.strict:
		return ErrScriptStrictKeys
	case r.onShard >= 0:
		r.roam() // runs again as a barrier (scripting_place.go)
	case r.inTx:
		r.e.scripting.markWide(r.job) // the next EXEC holding this script takes every shard
		return ErrScriptUndeclaredTx
	case id > r.maxID:
		r.one[0] = id
		r.e.Group.Lock(r.one[:])
	case r.tryFor(id):
	default:
		r.undoWrites() // scripting_undo.go: every write the run made was logged
		r.abort = true
		panic(errRestart{})
	}
	r.add(id)
	return ""
}

// tryBound bounds the tries of a shard below the held ones: holders that never wait while
// holding (shard actors, Group.Lock's barriers) let go within microseconds, so a run retries
// before it gives up; one that must wait for a token this run holds (LockAll, another script
// adding shards) never lets go, so the retries are bounded. Giving up costs a rerun under every
// shard (after the run's writes are undone).
const tryBound = 200 * time.Microsecond

// tryFor tries shard id's token until it gets it or tryBound has passed.
func (r *scriptRun) tryFor(id int32) bool {
	if r.e.Group.TryLock(id) {
		return true
	}
	deadline := time.Now().Add(tryBound)
	for i := 0; time.Now().Before(deadline); i++ {
		if i < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
		if r.e.Group.TryLock(id) {
			return true
		}
	}
	return false
}

// Allowed is script.Host's redis.acl_check_cmd: whether the script's caller may run args.
func (r *scriptRun) Allowed(args [][]byte) bool {
	return r.e.aclAllows(r.outer.Client, r.e.renamedArgs(args))
}

// Log is script.Host's redis.log.
func (r *scriptRun) Log(level int, msg string) { scriptLog(level, msg) }

func scriptLog(level int, msg string) {
	switch level {
	case script.LogDebug:
		slog.Debug(msg, "from", "script")
	case script.LogWarning:
		slog.Warn(msg, "from", "script")
	default:
		slog.Info(msg, "from", "script")
	}
}

// scriptBusy is BUSY for other clients: the engine's text when a run is busy and the command
// needs a shard a run holds (or every shard, or names no key); "" otherwise. route calls it
// only while a run is in progress.
func (e *Engine) scriptBusy(spec *Spec, args [][]byte, keyPos []int) string {
	if spec.Flags&AllowBusy != 0 { // connection commands (PING, ECHO, CLIENT, CONFIG) too, as Redis 7.0.15
		return ""
	}
	reply := e.Scripts().BusyReply()
	if reply == "" || !e.scriptConflict(spec, args, keyPos) {
		return ""
	}
	return reply
}

// scriptConflict reports whether the command in args would be refused BUSY were the runs in
// progress busy: every shard is held by one, it names no key (or is not keyed), or one of its
// keys is on a held shard.
func (e *Engine) scriptConflict(spec *Spec, args [][]byte, keyPos []int) bool {
	sc := &e.scripting
	if sc.all.Load() > 0 || spec.Scope != ScopeKeys && !runsScript(spec) {
		return true
	}
	keyPos = spec.keyIndexes(args, keyPos[:0])
	if len(keyPos) == 0 {
		return true
	}
	for _, p := range keyPos {
		if sc.held[e.shardOf(args[p])].Load() > 0 {
			return true
		}
	}
	return false
}

// SCRIPT LOAD script
func scriptLoad(c *Ctx) {
	s, msg := c.E.Scripts().Compile(c.Args[2])
	if msg != "" {
		c.Err(msg)
		return
	}
	c.BulkString(s.SHA)
}

// SCRIPT EXISTS sha1 [sha1 ...]
func scriptExists(c *Ctx) {
	c.ArrayLen(len(c.Args) - 2)
	for _, sha := range c.Args[2:] {
		if c.E.Scripts().Exists(sha) {
			c.Int(1)
		} else {
			c.Int(0)
		}
	}
}

// SCRIPT FLUSH [ASYNC|SYNC]
func scriptFlush(c *Ctx) {
	if len(c.Args) > 3 || len(c.Args) == 3 && !strs.EqualFold(c.Args[2], "ASYNC") && !strs.EqualFold(c.Args[2], "SYNC") {
		c.Err(ErrScriptFlushArg)
		return
	}
	c.E.Scripts().Flush()
	c.OK()
}

// SCRIPT DEBUG YES|SYNC|NO: HotKV has no Lua debugger (Redis's LDB); NO, the default, is
// accepted.
func scriptDebug(c *Ctx) {
	switch a := c.Args[2]; {
	case strs.EqualFold(a, "NO"):
		c.OK()
	case strs.EqualFold(a, "YES"), strs.EqualFold(a, "SYNC"):
		c.Err(ErrScriptDebugUnsupported)
	default:
		c.Err(ErrScriptDebugArg)
	}
}

// SCRIPT KILL
func scriptKill(c *Ctx) { killGeneric(c, false) }

func killGeneric(c *Ctx, function bool) {
	if msg := c.E.Scripts().Kill(function); msg != "" {
		c.Err(msg)
		return
	}
	c.OK()
}

// SCRIPT HELP
func scriptHelp(c *Ctx) { replyHelpLines(c, scriptHelpLines) }

// scriptHelpLines is Redis 7.0.15's SCRIPT HELP text.
var scriptHelpLines = strings.Split(`SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:
DEBUG (YES|SYNC|NO)
    Set the debug mode for subsequent scripts executed.
EXISTS <sha1> [<sha1> ...]
    Return information about the existence of the scripts in the script cache.
FLUSH [ASYNC|SYNC]
    Flush the Lua scripts cache. Very dangerous on replicas.
    When called without the optional mode argument, the behavior is determined by the
    lazyfree-lazy-user-flush configuration directive. Valid modes are:
    * ASYNC: Asynchronously flush the scripts cache.
    * SYNC: Synchronously flush the scripts cache.
KILL
    Kill the currently executing Lua script.
LOAD <script>
    Load a script into the scripts cache without executing it.
HELP
    Prints this help.`, "\n")
