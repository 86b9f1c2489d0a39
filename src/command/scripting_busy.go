package command

import (
	"time"

	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/script"
)

// BUSY for commands that waited behind a busy script. Redis reads no command while a script
// runs until the script passes busy-reply-threshold; from then on it answers every command it
// reads (without allow-busy) -BUSY, those sent before the threshold included. Here a command
// routed while the run was not yet busy waits for the run's shard instead; when the run ends
// busy, it records on each shard it held the span from its batch's time to its end (busyMark),
// and a command of another client whose batch was routed within that span and reaches the
// shard's executor afterwards is answered the run's BUSY text instead of running, as Redis
// would have answered it. Not covered: commands waiting for the shard as barriers (multi-shard
// commands, other scripts, EXEC), which run.

// busyMark is the last run that ended busy holding a shard; guarded by the shard's token.
type busyMark struct {
	from, to int64  // the run's batch time and its end (unix ns); to is 0 before any
	by       uint64 // the run's client (ID): its own later commands are not refused
	reply    string
}

// markBusyLocked records the run's span on every shard it holds, before they are let go.
func (r *scriptRun) markBusyLocked() {
	m := busyMark{from: r.outer.Now, to: time.Now().UnixNano(), by: r.outer.Client.ID, reply: script.ErrBusyScript}
	m.to = max(m.to, m.from)
	if r.busyFn {
		m.reply = script.ErrBusyFunction
	}
	switch {
	case r.inTx:
	case r.onShard >= 0:
		r.e.data(r.onShard).busy = m
	case r.all:
		for i := range r.e.Group.Shards {
			r.e.data(int32(i)).busy = m
		}
	default:
		for _, id := range r.locked {
			r.e.data(id).busy = m
		}
	}
}

// busyRefused answers s with the BUSY text when it was routed while the shard's last busy run
// ran and comes from another client; it reports whether it did.
func (d *shardData) busyRefused(e *Engine, s *pipeline.Slot, now int64) bool {
	spec := s.Cmd.(*Spec)
	if now < d.busy.from || s.Client.(*Client).ID == d.busy.by || spec.Flags&AllowBusy != 0 || spec.Name == "exec" {
		return false
	}
	e.reject(s, spec, d.busy.reply)
	return true
}
