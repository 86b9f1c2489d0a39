package command

import (
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
)

// The execute stage. A command runs in one of four places, each a function below, and every one
// of them ends in call, the single place a command's handler is invoked, its panic caught and its
// call counted:
//
//   - execWork: a shard actor runs one batch's slots for its shard, holding the shard's token;
//   - execShared: the same without the token, for work whose commands are all shared reads
//     (shared.go, pipeline/shared.go);
//   - callConn: a connection command, on the connection while the batch is routed (route.go);
//   - barrier: a command whose keys span shards, or that needs every shard, on the connection
//     once every earlier slot of its batch has completed (runOnKeys, runOnAll).
//
// Blocked clients made ready by a write are served before the token that wrote is let go.

// timeSample: one work item in timeSample has its duration measured, and charged timeSample
// times over, so command statistics cost no clock reads on most batches.
const timeSample = 32

// execWork is the shards' executor: it runs one batch's slots for one shard, in order, at the
// batch's time. The clock is read only for the sampled work items.
func (e *Engine) execWork(sh *pipeline.Shard, w *pipeline.Work) {
	if p := w.Reader(); p >= 0 {
		e.execShared(&e.readers[p], w)
		return
	}
	d := sh.Data.(*shardData)
	b := w.Batch()
	now := b.Now
	d.stats.works++
	timed := d.stats.works%timeSample == 0 && !e.exactTimes()
	var start time.Time
	if timed {
		start = time.Now()
	}
	d.running = &d.ctx
	ran := len(w.Slots)
	var clock int64 // callChained
	for k, i := range w.Slots {
		if d.busy.to >= now && d.busyRefused(e, &b.Slots[i], now) { // scripting_busy.go
			clock = 0
			continue
		}
		e.callChained(&d.ctx, &b.Slots[i], now, &clock)
		if d.ctx.needToken { // a script that must run as a barrier after all (scripting_place.go)
			d.ctx.needToken = false
			w.NeedBarrier(k)
			ran = k
			break
		}
		if d.block.pending() {
			e.serveReadyLocked(d, now, &b.Slots[i])
			clock = 0 // the served calls ran in between
		}
	}
	d.running = nil
	d.epoch++
	d.stats.done.Add(int64(ran))
	if timed && ran > 0 {
		per := int64(time.Since(start)) * timeSample / int64(ran)
		for _, i := range w.Slots[:ran] {
			d.stats.cmds[b.Slots[i].Cmd.(*Spec).id].nsec += per
		}
	}
}

// execShared runs one batch's slots for one shard without its token, counting in r. A slot
// that finds it needs the token (FindRead met an expired key) hands it and the rest back.
func (e *Engine) execShared(r *readerState, w *pipeline.Work) {
	b := w.Batch()
	// The client's own Ctx: only its goroutine runs its shared work, and never beside a
	// barrier or connection command of its own.
	c := &b.Slots[w.Slots[0]].Client.(*Client).ctx
	c.rstats = r
	defer func() { c.rstats = nil }()
	timed := r.works.Add(1)%timeSample == 0 && !e.exactTimes()
	var start time.Time
	if timed {
		start = time.Now()
	}
	ran := len(w.Slots)
	var clock int64 // callChained
	for k, i := range w.Slots {
		e.callChained(c, &b.Slots[i], b.Now, &clock)
		if c.needToken {
			c.needToken = false
			w.NeedToken(k)
			ran = k
			break
		}
	}
	r.done.Add(int64(ran))
	if timed && ran > 0 {
		per := int64(time.Since(start)) * timeSample / int64(ran)
		for _, i := range w.Slots[:ran] {
			r.cmds[b.Slots[i].Cmd.(*Spec).id].nsec.Add(per)
		}
	}
}

// runKeysShared runs a shared command whose keys span shards (MGET) as a reader of them all,
// without their tokens. It reports false, having changed nothing, when a token was taken or a
// key must be deleted; the caller then runs it holding the tokens.
func (e *Engine) runKeysShared(c *Ctx, s *pipeline.Slot, cl *Client, now int64) bool {
	p, ok := e.Group.Share(cl.shards)
	if !ok {
		return false
	}
	defer e.Group.Unshare(p, cl.shards)
	r := &e.readers[p]
	r.sink.Add(e.warmKeys(s, cl.keyPos))
	c.rstats = r
	e.call(c, s, now)
	undone := c.needToken
	c.rstats, c.needToken = nil, false
	return !undone
}

// callConn runs a connection command. Like the shards' work items, only one call in timeSample
// reads the clock (twice: a virtual machine's clock read cost as much as PING itself), and its
// duration is charged timeSample times over.
func (e *Engine) callConn(cl *Client, s *pipeline.Slot) {
	spec := s.Cmd.(*Spec)
	cl.connRuns++
	if cl.connRuns%timeSample != 0 || e.exactTimes() {
		e.call(&cl.ctx, s, cl.batchNow)
		return
	}
	start := time.Now()
	e.call(&cl.ctx, s, start.UnixNano())
	spec.stats.nsec.Add(int64(time.Since(start)) * timeSample)
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
	cl.ownPending = false // every earlier slot has run
	if spec.Scope == ScopeConn {
		defer func() {
			if cl.forceReply { // CLIENT REPLY ON answers although the slot was silent (as route)
				s.Silent, cl.forceReply = false, false
			}
		}()
	}
	timed := cl.connRuns%timeSample == 0 && !e.exactTimes()
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
			if spec == scanSpec { // it ran beside a busy script on a shard it visited after (scripting_busy.go)
				if msg := e.busyHeld(cl, spec, nil, true, now); msg != "" {
					e.reject(s, spec, msg)
				}
			}
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
	open := cl.cluster.open != SlotStable // cluster mode: a slot in resharding (cluster.go)
	// After a busy script ended, it runs holding the tokens: it may have waited for the script.
	if s.Cmd.(*Spec).shared && !open && e.scripting.spans.to.Load() < now && e.runKeysShared(c, s, cl, now) {
		return
	}
	e.Group.Lock(cl.shards)
	defer e.Group.Unlock(cl.shards)
	if msg := e.busyHeld(cl, s.Cmd.(*Spec), cl.shards, false, now); msg != "" { // scripting_busy.go
		e.reject(s, s.Cmd.(*Spec), msg)
		return
	}
	if open {
		if msg := e.openSlotRefusal(cl, s, now); msg != "" {
			e.reject(s, s.Cmd.(*Spec), msg)
			return
		}
	}
	e.enter(cl.shards, false, c)
	defer e.leave(cl.shards, false, c)
	if sink := e.warmKeys(s, cl.keyPos); sink != 0 {
		e.data(cl.shards[0]).warmSink += sink
	}
	e.call(c, s, now)
	e.serveReadyIn(cl.shards, now, s)
}

// runOnAll runs a barrier holding every shard, as runOnKeys does.
func (e *Engine) runOnAll(c *Ctx, s *pipeline.Slot, now int64) {
	e.Group.LockAll()
	defer e.Group.UnlockAll()
	if msg := e.busyHeld(s.Client.(*Client), s.Cmd.(*Spec), nil, true, now); msg != "" { // scripting_busy.go
		e.reject(s, s.Cmd.(*Spec), msg)
		return
	}
	e.enter(nil, true, c)
	defer e.leave(nil, true, c)
	e.call(c, s, now)
	e.serveReadyAll(now, s)
}

// enter makes c the running call of the held shards (every shard when all is set), so that keys
// they find expired are reported to it, and the first of them c's feed ring.
func (e *Engine) enter(shards []int32, all bool, c *Ctx) {
	c.fx.ring = 0
	if all {
		for i := range e.Group.Shards {
			e.data(int32(i)).running = c
		}
		return
	}
	c.fx.ring = -1 // a barrier whose keys turned out to be none (DEBUG SLEEP) holds no ring
	if len(shards) > 0 {
		c.fx.ring = shards[0]
	}
	for _, id := range shards {
		e.data(id).running = c
	}
}

// leave undoes enter before the shards are let go. A call that ran inside (a barrier's) has
// committed already; a command that locks its shards itself (SORT) calls enter and leave around
// its work, and what it changed is propagated here, while the ring is still held.
func (e *Engine) leave(shards []int32, all bool, c *Ctx) {
	if e.Feed.Active() {
		e.propagateLocked(c)
	}
	if c.Args != nil { // inside a call (SORT): its commit must not propagate it again
		c.fx.propagated()
	}
	c.fx.ring = -1
	if all {
		for i := range e.Group.Shards {
			d := e.data(int32(i))
			d.running = nil
			d.epoch++
			if d.watch.held.n.Load() > 0 { // WATCHes made while a busy run held it (watch.go)
				d.settleHeldLocked()
			}
		}
		return
	}
	for _, id := range shards {
		d := e.data(id)
		d.running = nil
		d.epoch++
		if d.watch.held.n.Load() > 0 {
			d.settleHeldLocked()
		}
	}
}

// runInShard runs fn holding shard id, with c the running call there (a command that locks one
// shard at a time for itself: SCAN). Inside EXEC, which holds every shard already (multi.go), it
// runs fn without taking it.
func (e *Engine) runInShard(c *Ctx, id int, fn func(sh *pipeline.Shard)) {
	if c.tx != nil {
		fn(e.Group.Shards[id])
		return
	}
	e.Group.Do(id, func(sh *pipeline.Shard) {
		held := [1]int32{int32(id)}
		e.enter(held[:], false, c)
		defer e.leave(held[:], false, c)
		fn(sh)
	})
}

// serveReadyIn serves blocked clients of keys made ready on the held shards by the command of
// slot by.
func (e *Engine) serveReadyIn(shards []int32, now int64, by *pipeline.Slot) {
	for _, id := range shards {
		if d := e.data(id); d.block.pending() {
			e.serveReadyLocked(d, now, by)
		}
	}
}

// serveReadyAll is serveReadyIn for every shard.
func (e *Engine) serveReadyAll(now int64, by *pipeline.Slot) {
	for i := range e.Group.Shards {
		if d := e.data(int32(i)); d.block.pending() {
			e.serveReadyLocked(d, now, by)
		}
	}
}

// call runs one command with c, recording its statistics. A panic is logged, answered with an
// error, and closes the client; the executor and its tokens are unaffected.
func (e *Engine) call(c *Ctx, s *pipeline.Slot, now int64) { e.callChained(c, s, now, nil) }

// callChained is call for a run of calls back to back (a work item's slots): when the calls are
// timed, *clock is the call clock's reading (callclock.go) that ended the previous call (0: none),
// taken as this call's start, and this call's end is left in it, so n calls read the clock n+1
// times, not 2n (a nanotime read is 30-100 ns on a virtual machine, 17% of a pipelined SETBIT). A call's duration then includes
// the previous call's bookkeeping after its handler (counting, the histogram): tens of ns.
func (e *Engine) callChained(c *Ctx, s *pipeline.Slot, now int64, clock *int64) {
	spec := s.Cmd.(*Spec)
	c.Args, c.Out, c.Proto, c.DB, c.Now, c.Spec = s.Args, s.Reply[:0], int(s.Proto), int(s.DB), now, spec
	c.Client, c.slot = s.Client.(*Client), s
	dur, mon, refused := int64(-1), e.lat.monitors.n.Load() > 0, false // stats_call.go, monitor.go
	var t0 int64
	if e.lat.timed.Load() {
		if clock != nil && *clock != 0 {
			t0 = *clock
		} else {
			t0 = callTicks()
		}
	}
	defer func() {
		if r := recover(); r != nil {
			slog.Error("command panicked", "cmd", spec.Name, "client", c.Client.ID, "panic", r,
				"stack", string(debug.Stack()))
			c.Out = resp.AppendError(c.Out[:0], ErrInternal)
			c.Client.CloseAfterReply()
		}
		s.Reply = c.Out
		if !c.needToken { // else not a call: it runs again holding the token (shared.go)
			e.commit(c, s)
			e.count(c, spec)
			if dur >= 0 {
				e.observe(c, s, spec, dur)
			}
			if mon && !refused {
				e.feedMonitors(c, s, spec, false)
			}
		}
		c.Args, c.Client = nil, nil
	}()
	if refused = mon && e.monitorGate(c, s, spec); refused {
		return
	}
	e.run(c, spec) // memory_acct.go: the OOM gate and the used-memory accounting
	if t0 != 0 {
		end := callTicks()
		dur = ticksToNs(end - t0)
		if clock != nil {
			*clock = end
		}
	}
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
