package command

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
)

// route is the pipeline's route stage: resolve, check, and decide where the slot runs.
func (e *Engine) route(cl *Client, s *pipeline.Slot) {
	s.DB, s.Proto = int32(cl.DB), int8(cl.Proto)
	s.Silent = cl.replyMode == replyOff || cl.skipNext
	cl.skipNext = false
	spec, errMsg := cl.lastSpec, ""
	if spec == nil || spec.Subs != nil || !sameName(s.Args[0], spec.Name) || !arityOK(spec, len(s.Args)) {
		spec, errMsg = lookupArgs(s.Args)
	}
	if errMsg != "" {
		e.reject(s, spec, errMsg)
		return
	}
	if !cl.Authed && spec.Flags&NoAuth == 0 {
		e.reject(s, spec, ErrNoAuth)
		return
	}
	e.pause.wait(spec)
	s.Cmd = spec
	if cl.lastSpec != spec { // pipelines repeat a command: publish for CLIENT LIST only on change
		cl.lastSpec = spec
		cl.lastCmd.Store(&spec.Name)
	}
	switch spec.Scope {
	case ScopeConn:
		s.Target = pipeline.TargetNone
		e.callConn(cl, s)
		if cl.forceReply { // CLIENT REPLY ON answers although the slot was silent
			s.Silent, cl.forceReply = false, false
		}
	case ScopeKeys:
		s.Target = e.routeKeys(cl, spec, s)
		s.Shared = spec.shared && s.Target >= 0
		if spec.Flags&Blocking != 0 {
			s.Target = pipeline.TargetBarrier // it may wait: see block.go
		}
	default:
		s.Target = pipeline.TargetBarrier
	}
}

// callConn runs a connection command. Like the shards' work items, only one call in timeSample
// reads the clock (twice: a virtual machine's clock read cost as much as PING itself), and its
// duration is charged timeSample times over.
func (e *Engine) callConn(cl *Client, s *pipeline.Slot) {
	spec := s.Cmd.(*Spec)
	cl.connRuns++
	if cl.connRuns%timeSample != 0 {
		e.call(&cl.ctx, s, cl.batchNow)
		return
	}
	start := time.Now()
	e.call(&cl.ctx, s, start.UnixNano())
	spec.stats.nsec.Add(int64(time.Since(start)) * timeSample)
}

// mayBlock reports whether the command in args may wait when it runs: a blocking command, DEBUG
// (SLEEP), or any command while CLIENT PAUSE is in effect. The transport then serves the batch
// where waiting does not stall other connections (see pipeline.Env.MayBlock).
func (e *Engine) mayBlock(cl *Client, args [][]byte) bool {
	if e.pause.active.Load() {
		return true
	}
	spec := cl.lastSpec
	if spec == nil || !sameName(args[0], spec.Name) {
		if spec = lookup(args[0]); spec == nil {
			return false
		}
	}
	return spec.Flags&Blocking != 0 || spec.Name == "debug"
}

// routeKeys returns the one shard of the command's keys, or a barrier when they span shards
// (the shard set is left sorted in cl.shards for the barrier to lock).
func (e *Engine) routeKeys(cl *Client, spec *Spec, s *pipeline.Slot) pipeline.Target {
	args := s.Args
	cl.keyPos = spec.keyIndexes(args, cl.keyPos[:0])
	cl.shards = cl.shards[:0]
	s.KeyHash = 0
	for j, i := range cl.keyPos {
		h := keyspace.Hash(args[i])
		if j == 0 {
			s.KeyHash = h
		}
		cl.shards = append(cl.shards, e.shardOfHash(h))
	}
	if len(cl.shards) == 0 {
		return pipeline.TargetBarrier
	}
	first, same := cl.shards[0], true
	for _, sh := range cl.shards[1:] {
		same = same && sh == first
	}
	if same {
		// One entry: a blocking command runs as a barrier that locks cl.shards, and Group.Lock
		// spins forever on a repeated shard.
		cl.shards = cl.shards[:1]
		return pipeline.Target(first)
	}
	slices.Sort(cl.shards)
	cl.shards = slices.Compact(cl.shards)
	return pipeline.TargetBarrier
}

// lookupArgs resolves a command (and subcommand) and checks its arity.
func lookupArgs(args [][]byte) (*Spec, string) {
	spec := lookup(args[0])
	if spec == nil {
		return nil, unknownCommand(args)
	}
	if spec.Subs != nil && len(args) > 1 {
		sub := lookupIn(spec.Subs, args[1])
		if sub == nil {
			return spec, fmt.Sprintf(ErrUnknownSub, trunc(args[1], 128), upper(args[0]))
		}
		spec = sub
	}
	if !arityOK(spec, len(args)) {
		return spec, fmt.Sprintf(ErrArity, spec.Name)
	}
	return spec, ""
}

func arityOK(spec *Spec, n int) bool {
	return (spec.Arity <= 0 || n == spec.Arity) && n >= -spec.Arity
}

// sameName reports whether b names the command lower (lower case), ignoring b's case.
func sameName(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func unknownCommand(args [][]byte) string {
	var rest []byte
	for _, a := range args[1:] {
		if len(rest) >= 128 {
			break
		}
		rest = fmt.Appendf(rest, "'%s' ", trunc(a, 128-len(rest)))
	}
	return fmt.Sprintf(ErrUnknownCmd, trunc(args[0], 128), rest)
}

// trunc cuts b at n bytes and at its first NUL, as C's "%.*s" prints an argument.
func trunc(b []byte, n int) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return b[:min(len(b), max(n, 0))]
}

func upper(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// reject answers a command refused before it ran.
func (e *Engine) reject(s *pipeline.Slot, spec *Spec, msg string) {
	s.Target = pipeline.TargetNone
	if spec != nil {
		spec.stats.rejected.Add(1)
	}
	e.stats.countError(msg)
	s.Reply = resp.AppendError(s.Reply[:0], msg) // turns CR and LF from arguments into spaces
}

// barrier runs a slot that spans shards, after every earlier slot of its batch has completed.
// A blocking command that had to wait reruns here when a waiter cannot be served in place.
//
// The first run uses the batch's time; like connection commands, only one barrier in timeSample
// reads the clock for its statistics.
func (e *Engine) barrier(s *pipeline.Slot) {
	cl, spec := s.Client.(*Client), s.Cmd.(*Spec)
	c := &cl.ctx
	cl.connRuns++
	timed := cl.connRuns%timeSample == 0
	var start time.Time
	if timed {
		start = time.Now()
	}
	for now := cl.batchNow; ; now = time.Now().UnixNano() {
		switch spec.Scope {
		case ScopeKeys:
			e.runOnKeys(c, s, cl, now)
		case ScopeAll:
			e.runOnAll(c, s, now)
		default:
			e.call(c, s, now)
		}
		w := c.blocked
		if w == nil {
			break
		}
		c.blocked = nil
		if !e.waitBlocked(w, s, cl.shards) {
			break
		}
	}
	if timed {
		spec.stats.nsec.Add(int64(time.Since(start)) * timeSample)
	}
}

// runOnKeys runs a barrier holding its keys' shards. The tokens are let go by a deferred call:
// call recovers a command's panic, but one in the warming or in serving the blocked clients
// would otherwise leave the shards locked and hang every client of them.
func (e *Engine) runOnKeys(c *Ctx, s *pipeline.Slot, cl *Client, now int64) {
	if s.Cmd.(*Spec).shared && e.runKeysShared(c, s, cl, now) {
		return
	}
	e.Group.Lock(cl.shards)
	defer e.Group.Unlock(cl.shards)
	if sink := e.warmKeys(s, cl.keyPos); sink != 0 {
		e.data(cl.shards[0]).warmSink += sink
	}
	e.call(c, s, now)
	e.serveReadyIn(cl.shards, now)
}

// runOnAll runs a barrier holding every shard, as runOnKeys does.
func (e *Engine) runOnAll(c *Ctx, s *pipeline.Slot, now int64) {
	e.Group.LockAll()
	defer e.Group.UnlockAll()
	e.call(c, s, now)
	e.serveReadyAll(now)
}

// serveReadyIn serves blocked clients of keys made ready on the held shards.
func (e *Engine) serveReadyIn(shards []int32, now int64) {
	for _, id := range shards {
		if d := e.data(id); len(d.block.ready) > 0 {
			e.serveReadyLocked(d, now)
		}
	}
}

// serveReadyAll is serveReadyIn for every shard.
func (e *Engine) serveReadyAll(now int64) {
	for i := range e.Group.Shards {
		if d := e.data(int32(i)); len(d.block.ready) > 0 {
			e.serveReadyLocked(d, now)
		}
	}
}

// call runs one command with c, recording its statistics. A panic is logged, answered with an
// error, and closes the client; the executor and its tokens are unaffected.
func (e *Engine) call(c *Ctx, s *pipeline.Slot, now int64) {
	spec := s.Cmd.(*Spec)
	c.Args, c.Out, c.Proto, c.DB, c.Now, c.Spec = s.Args, s.Reply[:0], int(s.Proto), int(s.DB), now, spec
	c.Client, c.slot = s.Client.(*Client), s
	defer func() {
		if r := recover(); r != nil {
			slog.Error("command panicked", "cmd", spec.Name, "client", c.Client.ID, "panic", r,
				"stack", string(debug.Stack()))
			c.Out = append(c.Out[:0], "-ERR internal error\r\n"...)
			c.Client.CloseAfterReply()
		}
		s.Reply = c.Out
		if !c.needToken { // else not a call: it runs again holding the token (shared.go)
			e.count(c, spec)
		}
		c.Args, c.Client = nil, nil
	}()
	spec.Run(c)
}

// count records a call of spec by c: in the counters of the P, the shard or the Spec, whichever
// ran it.
func (e *Engine) count(c *Ctx, spec *Spec) {
	failed := len(c.Out) > 0 && c.Out[0] == '-'
	if failed {
		e.stats.countErrorReply(c.Out)
	}
	switch {
	case c.rstats != nil:
		c.rstats.count(spec, failed)
	case c.stats != nil:
		c.stats.count(spec, failed)
	default:
		spec.stats.calls.Add(1)
		if failed {
			spec.stats.failed.Add(1)
		}
	}
}
