package command

import (
	"sync/atomic"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/pipeline"
)

// Where a script runs: on its shard, or as a barrier (docs/decisions.md "Scripts").
//
//  1. EVALSHA, EVALSHA_RO, FCALL and FCALL_RO whose declared keys all hash to one shard, and
//     whose script (or function) is known local, are routed to that shard as a keyed command
//     is: pipelined, scripts of different shards run in one flush, a shard's scripts under one
//     take of its token. Known local (the Script's or Function's Hint): a barrier run held its
//     one declared shard from start to end, and no run since met another shard. A first run,
//     EVAL by body, a script without declared keys or with keys on several shards, inside
//     MULTI, or in an open cluster slot: a barrier, as scripting.go describes.
//  2. The slot is Own (pipeline.Slot): the batch's goroutine, off the poller (mayBlock), takes
//     the token holding no other and runs the work itself, so a script that runs until SCRIPT
//     KILL never holds a poller that another connection's work went through.
//  3. A run on its shard (scriptRun.onShard) holds only that token and takes no other: a command
//     of the script on a key of another shard, one that needs every shard (or escalates the
//     undo log), or a connection command (SELECT: the connection's state is route's while the
//     shard runs the script) undoes the run's writes (scripting_undo.go), marks the script
//     roaming, and hands
//     the slot back (Ctx.needToken, then Work.NeedBarrier): it runs again as a barrier, by the
//     rules of scripting.go, and so does every later run of the script. lua-strict-keys still
//     makes an undeclared key an error.
//  4. What a rerun cannot give back: the pipelined commands of the same connection and read
//     batch on other shards ran in the same flush, before or after the aborted run, so for the
//     first run that roams, such a command after it may miss its effect (or one before it see
//     it). Every later run is a barrier and keeps the connection's order. Atomicity always holds.

// A script's Hint.
const (
	hintUnknown int32 = iota
	hintLocal         // every run so far held one shard, its declared keys'
	hintRoams         // a run met a shard it had not declared, or took every shard
)

// selfTarget is route's target for a ScopeSelf command: a shard for a local script whose
// declared keys share it or a one-shard EXEC, else a barrier.
func (e *Engine) selfTarget(cl *Client, spec *Spec, s *pipeline.Slot) pipeline.Target {
	if spec.Name == "exec" {
		return e.execTarget(cl, s) // multi_place.go
	}
	// A tracking client's reads are remembered in its state, which route changes too: such a
	// script runs on the connection.
	if !runsScript(spec) || cl.cluster.open != SlotStable || cl.track.flags.Load() != 0 {
		return pipeline.TargetBarrier
	}
	args := s.Args
	n, ok := ParseInt(args[2])
	if !ok || n < 1 || n > int64(len(args)-3) {
		return pipeline.TargetBarrier
	}
	if hint := e.scriptHint(cl, spec, args); hint == nil || hint.Load() != hintLocal {
		return pipeline.TargetBarrier
	}
	h := keyspace.Hash(args[3])
	id := e.shardOfKey(args[3], h)
	for _, k := range args[4 : 3+n] {
		if e.shardOf(k) != id {
			return pipeline.TargetBarrier
		}
	}
	s.KeyHash, s.Own = h, true
	cl.ownPending = true
	return pipeline.Target(id)
}

// scriptHint returns the Hint of the script or function args runs, nil for EVAL and EVAL_RO
// (by body) or one not found. The client keeps the last EVALSHA's: a connection repeats its
// SHA, and the cache lookup is a tenth of a run. (A Hint of a script flushed since is still
// true of the same body; EVALSHA then answers NOSCRIPT on the shard.)
func (e *Engine) scriptHint(cl *Client, spec *Spec, args [][]byte) *atomic.Int32 {
	switch {
	case strs.EqualFold(args[0], "EVALSHA"), strs.EqualFold(args[0], "EVALSHA_RO"):
		if cl.hint != nil && string(args[1]) == string(cl.hintSHA[:]) {
			return cl.hint
		}
		if sc, ok := e.Scripts().Lookup(args[1]); ok {
			copy(cl.hintSHA[:], args[1]) // Lookup took only 40 hex digits
			cl.hint = &sc.Hint
			return cl.hint
		}
	case spec.Name == "fcall", spec.Name == "fcall_ro":
		if f, ok := e.Scripts().LookupFunction(args[1]); ok {
			return &f.Hint
		}
	}
	return nil
}

// onShardOf returns the shard a script call c runs on as its shard's work, -1 when it is not
// (a barrier, inside EXEC).
func onShardOf(c *Ctx) int32 {
	if c.tx != nil || c.slot == nil || c.slot.Target < 0 || !c.slot.Own {
		return -1
	}
	return int32(c.slot.Target)
}

// learn records in the run's hint where a barrier run that ended went, holding its tokens:
// local when it held its one declared shard alone, roaming when it took another.
func (r *scriptRun) learn() {
	hint := r.hint
	if hint == nil || r.inTx {
		return
	}
	switch {
	case r.wideL || r.all || len(r.locked) > len(r.shards):
		if hint.Load() != hintRoams {
			hint.Store(hintRoams)
		}
	case len(r.shards) == 1 && hint.Load() == hintUnknown:
		hint.CompareAndSwap(hintUnknown, hintLocal)
	}
}

// beginOnShard takes nothing: the run's shard is held by the work running it.
func (r *scriptRun) beginOnShard(id int32) {
	rc := &r.ctx
	r.mark(id)
	rc.fx.ring, rc.stats = id, &r.e.data(id).stats
	r.e.data(id).running = rc
	r.e.scripting.held[id].Add(1)
}

// finishOnShard ends a run on its shard as finish does, letting go of no token: the shard's own
// Ctx is the running call again, for the work's later slots.
func (r *scriptRun) finishOnShard() {
	e, rc, id := r.e, &r.ctx, r.onShard
	r.one[0] = id
	e.leave(r.one[:], false, rc)
	e.serveReadyIn(r.one[:], rc.Now, r.outer.slot)
	e.scripting.held[id].Add(-1)
	e.data(id).running = r.outer
}

// roam ends a run on its shard that needs another: its writes are undone and the run unwinds,
// to run again as a barrier (runScript).
func (r *scriptRun) roam() {
	r.undoWrites()
	r.abort = true
	panic(errRestart{})
}
