package command

import (
	"sync/atomic"
	_ "unsafe" // go:linkname nanotime

	"github.com/hotkv/hotkv/pipeline"
)

// Timing each call. While latency-tracking, the slowlog (slowlog-log-slower-than >= 0) or the
// latency monitor (latency-monitor-threshold > 0) is on, call reads the call clock
// (callclock.go) before and after the handler: the duration is the handler's execution, not its wait in a queue or for
// a token, as Redis's call() measures c->cmd->proc. It then feeds commandstats' usec exactly
// (the executors' 1-in-timeSample sampling is off), the command's histogram, the latency
// monitor and the slowlog. With all three off, a call costs one atomic load for this.

// nanotime is the runtime's monotonic clock: one vDSO read, where time.Now makes two.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// obsState is the engine's observability settings and state (e.lat).
type obsState struct {
	timed     atomic.Bool  // time every call (any of the three below is on)
	tracking  atomic.Bool  // latency-tracking
	slowerUs  atomic.Int64 // slowlog-log-slower-than; negative: off
	slowMax   atomic.Int64 // slowlog-max-len
	monitorMs atomic.Int64 // latency-monitor-threshold; 0: off

	conn     histSet // histograms of commands run on connections (connection commands, barriers)
	slowlog  slowlog
	events   latencyEvents
	monitors monitorSet

	noActiveExpire atomic.Bool  // DEBUG SET-ACTIVE-EXPIRE 0 (expire.go's ActiveExpire does nothing)
	expireCycleNs  atomic.Int64 // time spent in ActiveExpire (INFO expire_cycle_cpu_milliseconds)
}

func (e *Engine) initObs() {
	e.lat.conn = newHistSet()
}

// applyObsSettings takes the observability directives from a new settings snapshot.
func (e *Engine) applyObsSettings(s *Settings) {
	o := &e.lat
	o.tracking.Store(s.LatencyTracking)
	o.slowerUs.Store(s.SlowlogLogSlowerThan)
	o.slowMax.Store(s.SlowlogMaxLen)
	o.monitorMs.Store(s.LatencyMonitorThreshold)
	o.timed.Store(s.LatencyTracking || s.SlowlogLogSlowerThan >= 0 || s.LatencyMonitorThreshold > 0)
}

// exactTimes reports whether calls are timed one by one, so the executors must not charge their
// sampled durations too.
func (e *Engine) exactTimes() bool { return e.lat.timed.Load() }

// inScript reports whether c runs a command a script called (redis.call): its context is the
// script run's, not the client's own nor its transaction's.
func inScript(c *Ctx) bool {
	return c.tx != nil && c.Client != nil && c != &c.Client.tx.ctx
}

// observe records a timed call of spec that took dur ns. A call that left its client blocked
// is recorded when it is served, as Redis records a blocked command when it is unblocked.
func (e *Engine) observe(c *Ctx, s *pipeline.Slot, spec *Spec, dur int64) {
	if c.blocked != nil {
		return
	}
	var hs histSet
	switch {
	case c.rstats != nil:
		c.rstats.cmds[spec.id].nsec.Add(dur)
		hs = c.rstats.hists
	case c.stats != nil:
		c.stats.cmds[spec.id].nsec += dur
		hs = c.stats.hists
	default:
		spec.stats.nsec.Add(dur)
		hs = e.lat.conn
	}
	o := &e.lat
	if o.tracking.Load() {
		hs.of(spec).record(dur)
	}
	if ms := o.monitorMs.Load(); ms > 0 && dur/1e6 >= ms {
		event := "command"
		if spec.Flags&Fast != 0 {
			event = "fast-command"
		}
		e.latencyEvent(event, dur/1e6)
	}
	if us := o.slowerUs.Load(); us >= 0 && dur/1000 >= us && spec.Flags&SkipSlowlog == 0 {
		e.slowlogPush(c, s, spec, dur/1000)
	}
}
