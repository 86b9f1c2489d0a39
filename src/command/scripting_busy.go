package command

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/script"
)

// BUSY for commands that waited behind a busy script. Redis reads no command while a script
// runs until the script passes busy-reply-threshold; from then on it answers every command it
// reads (without allow-busy) -BUSY, those sent before the threshold included. Here a command
// routed while the run was not yet busy waits for the run's shard instead; when the run ends
// busy, it records the span from its batch's time to its end on each shard it held (busyMark)
// and in the engine's recent spans (busySpans), and a command of another client routed within
// that span that reaches the run's shards afterwards is answered the run's BUSY text instead of
// running, as Redis would have answered it:
//   - a keyed command on its shard's work (execWork), and the scripts and EXECs run there;
//   - a barrier holding its keys' shards (runOnKeys), an EXEC or a script holding the shards
//     of its keys: a span recorded on one of those shards;
//   - a barrier holding every shard (runOnAll, a wide EXEC or script), a script without keys,
//     a SCAN once it ran: a span of any run.
//
// An EXEC is answered EXECABORT with the BUSY text, as Redis's rejectCommand words it.
//
// Commands that hold no shard of the run, or are answered in route, wait there instead
// (busyWait): a command queued inside MULTI, an EXEC, a script, when a run in progress holds a
// shard of its keys, every shard, or it names no key. Each waits until the runs in progress when
// it was routed have ended (it then goes on) or one is busy (BUSY, and the transaction aborts at
// EXEC, as Redis's flagTransaction), as Redis reads it only then. Not covered: a SCAN that ended
// before the busy run did (it never waited for it), and connection commands (PING, SELECT)
// sent before the run is busy, answered at once.

// busyMark is the span of a run that ended busy; a shard's (shardData.busy) is guarded by the
// shard's token.
type busyMark struct {
	from, to int64  // the run's batch time and its end (unix ns); to is 0 before any
	by       uint64 // the run's client (ID): its own later commands are not refused
	reply    string
}

// covers reports whether a command of client by routed at now is within m's span.
func (m *busyMark) covers(now int64, by uint64) bool {
	return m.to >= now && now >= m.from && by != m.by
}

// busySpans are the spans of the last runs that ended busy, whichever shards they held: what
// commands that need every shard (or name no key) check. Written only when a busy run ends.
type busySpans struct {
	to   atomic.Int64 // the latest end recorded: a command routed after it is covered by none
	mu   sync.Mutex
	ring [8]busyMark // guarded by mu
	next int         // guarded by mu
}

func (b *busySpans) add(m busyMark) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ring[b.next] = m
	b.next = (b.next + 1) % len(b.ring)
	if m.to > b.to.Load() {
		b.to.Store(m.to)
	}
}

// covering returns the BUSY text of a recorded span that covers a command of client by routed
// at now, "" when none does.
func (b *busySpans) covering(now int64, by uint64) string {
	if b.to.Load() < now {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.ring {
		if b.ring[i].covers(now, by) {
			return b.ring[i].reply
		}
	}
	return ""
}

// markBusyLocked records the run's span on every shard it holds, before they are let go, and
// in the engine's recent spans.
func (r *scriptRun) markBusyLocked() {
	m := busyMark{from: r.outer.Now, to: time.Now().UnixNano(), by: r.outer.Client.ID, reply: script.ErrBusyScript}
	m.to = max(m.to, m.from)
	if r.busyFn {
		m.reply = script.ErrBusyFunction
	}
	switch {
	case r.all:
		for i := range r.e.Group.Shards {
			r.e.data(int32(i)).busy = m
		}
	case r.inTx:
		for _, id := range r.outer.tx.held {
			r.e.data(id).busy = m
		}
	case r.onShard >= 0:
		r.e.data(r.onShard).busy = m
	default:
		for _, id := range r.locked {
			r.e.data(id).busy = m
		}
	}
	r.e.scripting.spans.add(m)
}

// busyRefused answers s with the BUSY text when it was routed while the shard's last busy run
// ran and comes from another client; it reports whether it did. The shard is held.
func (d *shardData) busyRefused(e *Engine, s *pipeline.Slot, now int64) bool {
	spec, cl := s.Cmd.(*Spec), s.Client.(*Client)
	if !d.busy.covers(now, cl.ID) || spec.Flags&AllowBusy != 0 {
		return false
	}
	msg := d.busy.reply
	if spec.Name == "exec" { // an EXEC on its shard: the watched keys are there (multi_place.go)
		e.unwatchLocked(cl)
		cl.tx.end()
		msg = execAbortText(msg)
	}
	e.reject(s, spec, msg)
	return true
}

// busyHeld is the BUSY text for a command of cl routed at now that holds shards now (every
// shard with all, and a command that names no key) when a busy run it waited for covered its
// routing; "" otherwise.
func (e *Engine) busyHeld(cl *Client, spec *Spec, shards []int32, all bool, now int64) string {
	sc := &e.scripting
	if sc.spans.to.Load() < now || spec.Flags&AllowBusy != 0 {
		return ""
	}
	if all || len(shards) == 0 {
		return sc.spans.covering(now, cl.ID)
	}
	for _, id := range shards {
		if d := e.data(id); d.busy.covers(now, cl.ID) {
			return d.busy.reply
		}
	}
	return ""
}

// waitedBusy is busyHeld for a script run that is a barrier, its first tokens just taken (its
// declared keys' shards, or every shard); "" on a rerun, inside EXEC and on its shard's work
// (execWork checked the slot).
func (r *scriptRun) waitedBusy(c *Ctx) string {
	if r.retry || r.inTx || r.onShard >= 0 {
		return ""
	}
	return r.e.busyHeld(c.Client, c.Spec, r.locked, r.wideL, c.Now)
}

// busyWait is route's wait for a command (spec, args) of another client that a run in progress
// would make BUSY once busy (scriptConflict): until the runs in progress now have ended or the
// conflict is gone (""), or one is busy (its BUSY text). It gives up past busy-reply-threshold
// and a margin: a run in progress now is busy by then. The connection is served off the poller
// (mayBlock), and it holds no token, so the runs it waits for never wait for it.
func (e *Engine) busyWait(spec *Spec, args [][]byte, keyPos []int) string {
	sc := &e.scripting
	if spec.Flags&AllowBusy != 0 || !e.scriptConflict(spec, args, keyPos) {
		return ""
	}
	th := time.Duration(e.Settings().BusyReplyThreshold) * time.Millisecond
	if th <= 0 {
		return "" // runs are never busy
	}
	msg := ""
	sc.waitRuns(th, func() bool {
		msg = e.scriptBusy(spec, args, keyPos)
		return msg != "" || !e.scriptConflict(spec, args, keyPos)
	})
	return msg
}

// waitRuns is the busy waits' loop (busyWait, watchBusy): it polls stop, yielding and then
// sleeping up to a millisecond between polls, until stop is true, the runs in progress at the
// call have all ended, or the threshold th and busyWaitMargin have passed (a run in progress
// now is busy by then).
func (sc *scriptingState) waitRuns(th time.Duration, stop func() bool) {
	var buf [16]runGen
	seen := sc.inProgress(buf[:0])
	deadline := time.Now().Add(th + busyWaitMargin)
	for spin := 0; len(seen) > 0 && !stop() && !time.Now().After(deadline); spin++ {
		if spin < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(min(time.Duration(spin)*time.Microsecond, time.Millisecond))
		}
		seen = sc.stillRunning(seen)
	}
}

// busyWaitMargin is how long past the threshold a busy wait waits: the watchdog's few ticks.
const busyWaitMargin = 50 * time.Millisecond

// runGen is a run in progress as busyWait saw it.
type runGen struct {
	r   *scriptRun
	gen uint64
}

// inProgress appends the runs in use (between getRun and putRun) to dst.
func (sc *scriptingState) inProgress(dst []runGen) []runGen {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, r := range sc.every {
		if r.args != nil {
			dst = append(dst, runGen{r, r.gen})
		}
	}
	return dst
}

// stillRunning keeps the runs of seen that have not ended since.
func (sc *scriptingState) stillRunning(seen []runGen) []runGen {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	out := seen[:0]
	for _, g := range seen {
		if g.r.gen == g.gen {
			out = append(out, g)
		}
	}
	return out
}
