// Package script is HotKV's Lua engine: the script cache, the sandbox, the redis.* API, the
// Lua<->RESP conversions, the limits (busy threshold, SCRIPT KILL, memory cap) and the function
// libraries of FUNCTION/FCALL. github.com/yuin/gopher-lua (Lua 5.1, as Redis's) sits behind it
// and no other package sees it.
//
// The server implements Host, a small interface the engine calls while a script runs: look a
// command up, run it, log. The engine knows nothing of shards, clients or RESP parsing beyond the
// replies it converts, so it is tested against a Host that forwards to a real redis-server
// (differential_test.go).
//
// Use (the command layer's side):
//
//	e := script.New(script.Config{})            // once per server; e.Close() at shutdown
//	s, errReply := e.Compile(body)               // EVAL: compile or find by SHA1, cache it
//	s, ok := e.Lookup(sha)                       // EVALSHA: ok false -> reply script.ErrNoScript
//	dst = e.Run(dst, host, s, keys, args, script.RunOptions{Proto: 2, ReadOnly: false})
//	e.Exists(sha), e.Flush()                     // SCRIPT EXISTS / FLUSH
//	e.Busy(), e.Kill(false)                      // BUSY gating, SCRIPT KILL; Kill(true): FUNCTION KILL
//	e.Functions(): FUNCTION LOAD/DELETE/FLUSH/LIST and FCALL (functions.go)
//
// Ordering and ownership:
//
//  1. A Script is immutable once compiled; its *lua.FunctionProto is shared by every state.
//  2. An interpreter state is used by one run at a time: Run takes one from the pool (the slot
//     of the current P first, so the states of two cores never share a line on the hot path)
//     and gives it back when the run ends. States are built once, with their sandbox, and reused.
//  3. A run writes only its own slot: a sequence number at start and end, a "wrote" flag once it
//     calls a write command. The watchdog goroutine reads the slots; it alone decides that a run
//     is busy (past the threshold) or over its memory cap, and Kill marks the slot's sequence as
//     killed. The interpreter polls that mark before every instruction (gopher-lua's context
//     check), so a killed run stops at its next instruction, also inside pcall and coroutines.
//  4. Host methods are called only from the goroutine inside Run, never after Run returns.
//  5. Bytes given to Run (keys, args) are copied into Lua strings before the script starts; the
//     engine keeps nothing of them after Run returns.
package script
