// Package script is HotKV's Lua engine: the script cache, the sandbox, the redis.* API, the
// Lua<->RESP conversions, the limits (busy threshold, SCRIPT KILL, memory cap) and the function
// libraries of FUNCTION/FCALL. github.com/yuin/gopher-lua (Lua 5.1, as Redis's) sits behind it
// and no other package sees it; src/script/lualib adds cjson, cmsgpack, bit and struct.
//
// # What the command layer calls
//
// One Engine per server (New; Close at shutdown). The server implements Host (host.go): look a
// command up, run it for redis.call, answer redis.acl_check_cmd, log. Replies are appended to
// dst as RESP in the caller's protocol; error texts are Redis 7.0.15's without '-' and CRLF.
//
//	EVAL body n k.. a..      s, e := Compile(body); e != "" -> -e; else Run(dst, h, s, keys, args, opts)
//	EVALSHA sha ...          s, ok := Lookup(sha); !ok -> -ErrNoScript; else Run(...)
//	EVAL_RO, EVALSHA_RO      the same with RunOptions.ReadOnly (Run refuses a shebang script
//	                         without no-writes: "Can not execute a script with write flag ...")
//	SCRIPT LOAD body         Compile(body), reply s.SHA
//	SCRIPT EXISTS sha..      Exists(sha) per argument
//	SCRIPT FLUSH [ASYNC|SYNC] Flush()
//	SCRIPT KILL              Kill(false): "" -> +OK, else -text
//	FUNCTION LOAD [REPLACE]  FunctionLoad(h, code, replace): the library name or -text
//	FUNCTION DELETE name     FunctionDelete(name): "" -> +OK
//	FUNCTION FLUSH           FunctionFlush()
//	FUNCTION LIST ...        FunctionList(pattern or nil): render as renderList in functions_test.go
//	FUNCTION KILL            Kill(true)
//	FUNCTION DUMP            FunctionDump()
//	FUNCTION RESTORE p [pol] ParseRestorePolicy(pol), FunctionRestore(h, p, policy): "" -> +OK
//	FUNCTION STATS           Running() (running_script) and FunctionCounts() (engines.LUA)
//	FCALL, FCALL_RO          FCall(dst, h, name, keys, args, opts)
//	another client's command while a run is busy: BusyReply() != "" -> -BusyReply()
//
// The command layer keeps what depends on its own state: numkeys parsing (EVAL: "Number of keys
// can't be greater than number of args", "Number of keys can't be negative"; FCALL looks the
// function up first, then "Bad number of keys provided"), which shards a run
// locks, OOM without allow-oom, stale replicas without allow-stale (Script.Flags,
// Function.Flags, FlagShebang), the replication of a run's effects (Host.Call gets
// redis.set_repl's choice), and which client's commands get BUSY.
//
// # Ordering and ownership
//
//  1. A Script and a Library are immutable once compiled; their *lua.FunctionProto is shared by
//     every state. The script cache is one xsync map keyed by the SHA1's 20 bytes; the library
//     registry an immutable snapshot behind an atomic pointer, replaced whole on change.
//  2. An interpreter state is used by one run at a time: a run takes a slot from the pool (the
//     slot of its P first, so two cores' runs share no line) and gives it back at the end. A
//     state is built once with its sandbox and reused; it compiles each script into a closure
//     once (the cache is dropped on SCRIPT FLUSH) and loads a library the first time it runs
//     one of its functions. Overlapping runs (a run preempted mid-script, a Host that runs a
//     script) get more slots; the pool keeps them.
//  3. A run writes only its own slot: a sequence number at start and end, a "wrote" flag once it
//     calls a write command. The watchdog goroutine reads the slots every Tick; it alone
//     decides that a run is busy (past BusyThreshold), over MaxMemory or past a library load's
//     500 ms, and it and Kill mark the slot's sequence stopped. The interpreter polls that mark
//     before every instruction, so a stopped run ends at its next instruction, also inside
//     pcall and coroutines (pcall cannot swallow it: the next instruction raises again).
//  4. Host methods are called only from the goroutine inside Run or FCall, never after it
//     returns. A panic in the Host unwinds the script and panics out of Run again.
//  5. Bytes given to Run (keys, args) are copied into Lua strings before the script starts;
//     the args given to Host.Call are valid until Call returns.
//
// # Decisions and measurements (2-core VM shared with other work; medians of noisy runs)
//
//   - States: a slot per P, tried first, more on demand, never dropped. Taking and giving back
//     a state costs 22-32 ns (BenchmarkPool; sync.Pool 29-39 ns), and a state costs 1.4-2.3 ms
//     and 1 MB to build (BenchmarkNewState; 800 KB of it the fixed call stack), which a
//     sync.Pool would pay again after every garbage collection.
//   - Kill check: gopher-lua can only stop a script through its context, polled before every
//     instruction. killCtx's Done is two atomic loads and never a channel until a kill:
//     BenchmarkLoop 40 ns per loop iteration against 35 without any context (+15% on pure Lua
//     compute, nothing measurable for scripts that mostly call redis.call).
//   - EVALSHA of return redis.call('INCR', KEYS[1]) through an in-memory Host
//     (BenchmarkEvalSHA): 1.0-1.5 us wall on a quiet moment, 1.7-1.8 us of CPU per call by
//     getrusage over 300,000 calls at load average 10 (1.4-1.8 us at two goroutines: the states
//     of two cores do not contend), and 1 allocation per call, which gopher-lua forces (the
//     reply's number boxed into an LValue). KEYS and ARGV tables are reused and their strings
//     kept while the keys repeat; main chunks get no "arg" table (gopher-lua built one per call,
//     10 of 13 allocations).
//   - Memory cap: gopher-lua has no allocator hook. The watchdog compares the Go heap with what
//     it was when it first saw the run; past the cap it forces one collection and stops the run
//     if the live heap still grew by the cap. string.rep, table.concat, .. and load check sizes
//     before allocating. A run is charged for what other goroutines allocate beside it (the heap
//     is the process's), and one allocation in progress completes. Measured (TestMemoryCap):
//     stopped with the heap's peak 72 MB over start at a 64 MB cap, 281 MB at 256 MB; RSS +92
//     and +250 MB.
//   - Call depth 10,000 Lua frames (Lua 5.1: 20,000), in a fixed stack (gopher-lua's growing
//     stack panics instead of raising "stack overflow"); an overflow costs 0.3 s of CPU, as
//     gopher-lua builds a quadratic stack trace. Coroutines get 200 frames.
//   - Numbers print as Lua 5.1's "%.14g" in tostring, .., string.format %s, table.concat,
//     redis.log and the string library's string arguments: the sandbox replaces those, and
//     every chunk is rewritten so that .. calls a hidden upvalue instead of gopher-lua's
//     OP_CONCAT (concat.go; BenchmarkConcat: the same cost). redis.call's number arguments are
//     "%.17g" as Redis's.
//
// # Known differences from Redis 7.0.15 (gopher-lua's, or chosen)
//
//   - Runtime error texts that name a variable ("attempt to index local 't' (a nil value)")
//     read gopher-lua's way; the forms without a name are rewritten to Lua's (messages.go).
//     Syntax errors say "unexpected symbol" where Lua may say "'end' expected".
//   - A missing argument reads "got nil" where Lua says "got no value"; an error raised by a Go
//     library function called directly by pcall carries the caller's position.
//   - Map and set replies (RESP3) and FUNCTION LIST come in gopher-lua's table order and name
//     order, where Redis uses its hash order.
//   - getmetatable of a protected table returns false (Redis returns the protection metatable).
//   - error({}) returns "ERR unknown error" where Redis 7.0.15 crashes.
//   - Several scripts run at once, one per core; SCRIPT KILL stops every busy one that did not
//     write, Running lists them all.
//   - State a script can keep between calls lives per interpreter state, so per core, where
//     Redis has one Lua state: a library's top-level locals (a counter a function increments),
//     math.randomseed's sequence, cjson's settings.
//   - lua-max-memory charges a run for what the whole process allocates while it runs (after a
//     collection confirms the growth is live): a long script beside clients loading hundreds of
//     megabytes on other shards can be stopped although it allocated little itself. Tried and
//     set aside: walking the script's own values on its goroutine (from killCtx.Done) when the
//     heap check fires; estimated sizes of gopher-lua's values fell short by about 2x, and the
//     visited set over millions of small tables costs as much heap as the tables (the 64 MB
//     cap then let the heap grow by 279 MB).
//   - NaN signs from the VM's arithmetic (5 % 0 is nan here, -nan in Redis on x86).
//   - FUNCTION DUMP writes library code uncompressed where Redis may LZF-compress it (both
//     sides restore either); with several colliding libraries RESTORE names the first of the
//     payload, Redis the first in its hash order.
package script
