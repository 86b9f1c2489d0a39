package command

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
)

// route is the pipeline's route stage: resolve, check, and decide where the slot runs.
func (e *Engine) route(cl *Client, s *pipeline.Slot) {
	s.DB, s.Proto = int32(cl.DB), int8(cl.Proto)
	s.Silent = cl.replyMode == replyOff || cl.skipNext
	cl.skipNext = false
	if rt := e.names; rt != nil && !rt.renamed(s.Args) { // rename-command (rename.go)
		e.refuse(cl, s, nil, unknownCommand(s.Args))
		return
	}
	spec, errMsg := cl.recentSpec(s.Args[0]), ""
	if spec == nil || !arityOK(spec, len(s.Args)) {
		spec, errMsg = lookupArgs(s.Args)
	}
	if errMsg != "" {
		e.refuse(cl, s, spec, errMsg)
		return
	}
	if !cl.Authed && spec.Flags&NoAuth == 0 && e.authRequired() {
		e.refuse(cl, s, spec, ErrNoAuth)
		return
	}
	if u := cl.aclEntry().User(); !u.Unrestricted() && !(cl.tx.on && spec.Flags&NoMulti != 0) {
		if msg := e.aclRefusal(cl, spec, s.Args, aclContext(cl)); msg != "" { // acl_check.go
			e.refuse(cl, s, spec, msg)
			return
		}
	}
	if cl.Proto == 2 && cl.subs.any() && !subscribedModeAllows(spec) {
		e.refuse(cl, s, spec, fmt.Sprintf(ErrSubscribedMode, spec.Name))
		return
	}
	if g := e.persist.gate.Load(); g != 0 { // MISCONF, LOADING (persist_gate.go)
		if msg := e.persistRefusal(cl, spec, g); msg != "" {
			e.refuse(cl, s, spec, msg)
			return
		}
	}
	if e.scripting.running.Load() > 0 { // BUSY while a script runs past its threshold (scripting.go)
		if msg := e.scriptBusy(spec, s.Args, cl.keyPos); msg != "" {
			e.refuse(cl, s, spec, msg)
			return
		}
		// Answered here, or holding no shard the run holds: they wait for it (scripting_busy.go).
		if cl.tx.on && !isTxControl(spec) || spec.Name == "exec" || runsScript(spec) {
			if msg := e.busyWait(spec, s.Args, cl.keyPos); msg != "" {
				e.refuse(cl, s, spec, msg)
				return
			}
		}
	}
	e.pauseWait(cl, spec, s.Args)
	s.Cmd = spec
	if cl.lastSpec != spec { // pipelines repeat a command: publish for CLIENT LIST only on change
		cl.lastSpec = spec
		cl.lastCmd.Store(&spec.Name)
		cl.remember(spec)
	}
	if msg := e.oomAtRoute(cl, spec); msg != "" { // evict.go
		e.refuse(cl, s, spec, msg)
		return
	}
	if e.Hooks.Cluster != nil { // cluster mode: CROSSSLOT, MOVED, ASK, CLUSTERDOWN (cluster.go)
		if msg := e.clusterRefusal(cl, spec, s.Args); msg != "" {
			if spec.Name == "exec" && cl.tx.on { // Redis's processCommand: the redirect itself
				e.discardTx(cl)
				e.reject(s, spec, msg)
				return
			}
			e.refuse(cl, s, spec, msg)
			return
		}
	}
	if cl.tx.on && !isTxControl(spec) { // inside MULTI: queued (multi.go)
		if spec.Flags&NoMulti != 0 {
			e.refuse(cl, s, spec, ErrNoMultiCmd)
			return
		}
		e.queue(cl, spec, s)
		return
	}
	switch spec.Scope {
	case ScopeConn:
		// After the script on its shard (scripting_place.go); WAIT after every write the
		// connection sent before it, which a pipeline may still have on its shards: answered
		// here, it read the feed's end before those writes and acknowledged the write before them.
		if cl.ownPending || spec.Name == "wait" {
			s.Target = pipeline.TargetBarrier
			break
		}
		s.Target = pipeline.TargetNone
		e.callConn(cl, s)
		if cl.forceReply { // CLIENT REPLY ON answers although the slot was silent
			s.Silent, cl.forceReply = false, false
		}
	case ScopeKeys:
		s.Target = e.routeKeys(cl, spec, s)
		if cl.cluster.open != SlotStable { // its keys decide, holding their shards (cluster.go)
			s.Target = pipeline.TargetBarrier
		}
		if cl.track.flags.Load() != 0 && cl.trackRead(spec) {
			e.rememberKeys(cl, s.Args, cl.keyPos)
		}
		s.Shared = spec.shared && s.Target >= 0
		if spec.mayWait(s.Args) {
			s.Target = pipeline.TargetBarrier // it may wait: see block.go
		}
	default:
		s.Target = e.selfTarget(cl, spec, s) // a barrier, or one shard (scripting_place.go)
	}
}

// mayBlock reports whether the command in args may wait when it runs: a blocking command, DEBUG
// (SLEEP), MIGRATE (network I/O), EXEC of a transaction holding DEBUG, or any command while
// CLIENT PAUSE is in effect. The transport then serves the batch where waiting does not stall
// other connections (see pipeline.Env.MayBlock).
func (e *Engine) mayBlock(cl *Client, args [][]byte) bool {
	if e.pause.active.Load() {
		return true
	}
	name := args[0]
	if rt := e.names; rt != nil {
		var ok bool
		if name, ok = rt.own(name); !ok {
			return false
		}
	}
	spec := cl.recentSpec(name)
	if spec == nil {
		if spec = lookup(name); spec == nil {
			return false
		}
	}
	return spec.mayWait(args) || spec.Name == "debug" || spec.Name == "migrate" ||
		(spec.Name == "exec" && cl.tx.mayWait) ||
		// route's busyWait for a script in progress (scripting_busy.go)
		((cl.tx.on || spec.Name == "multi" || spec.Name == "exec" || spec.Name == "watch") && e.scripting.running.Load() > 0) ||
		runsScript(spec) || // a script may run until SCRIPT KILL, which must reach the server
		walksTags(spec) || // TAG.INVALIDATE, MEMBERS, COUNT: many holds (tags.go)
		offShard(spec, args) // may wait for an embedding endpoint (embedcall.go)
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
		cl.shards = append(cl.shards, e.shardOfKey(args[i], h))
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

// recentSpec returns the command named name among the client's recent ones, or nil. Only
// commands without subcommands are kept: theirs is the name of the command itself.
func (cl *Client) recentSpec(name []byte) *Spec {
	for _, sp := range &cl.recent {
		if sp != nil && strs.EqualFold(name, sp.Name) {
			return sp
		}
	}
	return nil
}

// remember adds spec to the client's recent commands, in place of the oldest, unless it has
// subcommands, is a subcommand, or is there already.
func (cl *Client) remember(spec *Spec) {
	if spec.Subs != nil || strings.IndexByte(spec.Name, '|') >= 0 {
		return
	}
	for _, sp := range &cl.recent {
		if sp == spec {
			return
		}
	}
	cl.recent[cl.recentNext%uint8(len(cl.recent))] = spec
	cl.recentNext++
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
			return spec, fmt.Sprintf(ErrUnknownSub, trunc(args[1], 128), strs.AppendUpper(nil, args[0]))
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

// refuse rejects a command of cl; inside MULTI the transaction is then discarded at EXEC
// (Redis's flagTransaction).
func (e *Engine) refuse(cl *Client, s *pipeline.Slot, spec *Spec, msg string) {
	if cl.tx.on {
		cl.tx.dirtyExec = true
	}
	if spec != nil && spec.Name == "exec" {
		msg = e.execRefused(cl, msg)
	}
	e.reject(s, spec, msg)
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
