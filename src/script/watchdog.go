package script

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// runMark is a slot's record of its current run, written by the run and read by the watchdog
// and Kill (see the package doc, item 3).
type runMark struct {
	seq    atomic.Uint64 // odd while a run is in progress; +1 at its start and at its end
	wrote  atomic.Bool   // the run called a write command (SCRIPT KILL refuses then)
	kind   atomic.Int32  // runKind: EVAL, FCALL (FUNCTION KILL, not SCRIPT KILL) or a library load
	busy   atomic.Bool   // set by the watchdog once the run passed the busy threshold
	kill   atomic.Uint64 // the seq of a run to stop; killed() compares with seq
	reason atomic.Int32  // why it was stopped
	// elapsed is how long the watchdog has seen the run running, by the clock at its last
	// check (FUNCTION STATS's duration; ticks counted would lag behind busy on a loaded machine)
	elapsed atomic.Int64
	script  atomic.Pointer[Script]
	fn      atomic.Pointer[Function]
}

type killReason int32

const (
	notKilled killReason = iota
	killedByUser
	killedOverMemory
	killedLoadTimeout
	killedByShutdown // StopRuns: the server is stopping
)

// runKind says what a run is.
type runKind int32

const (
	kindEval runKind = iota
	kindFunction
	kindLoad // FUNCTION LOAD's code: never busy, stopped at 500 ms
)

func (m *runMark) begin(kind runKind, e *Engine) uint64 {
	m.wrote.Store(false)
	m.busy.Store(false)
	m.kind.Store(int32(kind))
	seq := m.seq.Add(1)
	if e.stopping.Load() { // StopRuns came first: the run ends at its first instruction
		m.stop(seq, killedByShutdown)
	}
	if e.dog.parked.Load() {
		e.dog.wake()
	}
	return seq
}

func (m *runMark) end() { m.seq.Add(1) }

func (m *runMark) killed() bool {
	k := m.kill.Load()
	return k != 0 && k == m.seq.Load()
}

// killCause tells, once the run seq ended its Lua code, whether it was stopped and why.
func (m *runMark) killCause(seq uint64) killReason {
	if m.kill.Load() != seq {
		return notKilled
	}
	return killReason(m.reason.Load())
}

// stop marks run seq to be stopped; the interpreter notices before its next instruction.
func (m *runMark) stop(seq uint64, why killReason) {
	m.reason.Store(int32(why))
	m.kill.Store(seq)
}

// watchdog is the engine's one goroutine: every tick it looks at the running slots, marks runs
// busy past the threshold, and stops a run that grew the heap past its cap. With no run for a
// second it parks until a run starts.
type watchdog struct {
	e       *Engine
	running atomic.Bool // its goroutine is in loop
	parked  atomic.Bool
	wakeCh  chan struct{}
	quit    chan struct{}
	done    sync.WaitGroup
	seen    map[*slot]*watch
	lastGC  uint64
}

// watch is what the watchdog remembers of one run it saw.
type watch struct {
	seq      uint64
	seen     time.Time // when first seen: within a tick of the run's start
	heapBase uint64    // heap objects when first seen
	liveBase uint64    // live heap of the last collection when first seen
}

func (w *watchdog) start(e *Engine) {
	w.e = e
	w.wakeCh = make(chan struct{}, 1)
	w.quit = make(chan struct{})
	w.seen = map[*slot]*watch{}
	w.done.Add(1)
	w.running.Store(true)
	go w.loop()
}

func (w *watchdog) stop() {
	close(w.quit)
	w.done.Wait()
}

func (w *watchdog) wake() {
	select {
	case w.wakeCh <- struct{}{}:
	default:
	}
}

func (w *watchdog) loop() {
	defer w.done.Done()
	defer w.running.Store(false)
	t := time.NewTicker(w.e.cfg.Tick)
	defer t.Stop()
	idle := 0
	idleTicks := int(time.Second / w.e.cfg.Tick)
	for {
		select {
		case <-w.quit:
			return
		case <-t.C:
		}
		if w.check() {
			idle = 0
			continue
		}
		if idle++; idle < idleTicks {
			continue
		}
		w.parked.Store(true)
		if w.check() { // a run that started before parked was visible
			w.parked.Store(false)
			idle = 0
			continue
		}
		select {
		case <-w.quit:
			return
		case <-w.wakeCh:
		}
		w.parked.Store(false)
		idle = 0
	}
}

// check looks at every slot once; it reports whether any run is in progress.
func (w *watchdog) check() bool {
	any := false
	var heap, live uint64
	var now time.Time
	w.e.pool.each(func(s *slot) {
		seq := s.run.seq.Load()
		if seq&1 == 0 {
			delete(w.seen, s)
			return
		}
		any = true
		if heap == 0 {
			heap, live = readHeap()
		}
		if now.IsZero() {
			now = time.Now()
		}
		wt := w.seen[s]
		if wt == nil || wt.seq != seq {
			w.seen[s] = &watch{seq: seq, heapBase: heap, liveBase: live, seen: now}
			s.run.elapsed.Store(0)
			return
		}
		// The clock, not the ticks counted: a ticker drops the ticks of a watchdog that was not
		// scheduled in time (two cores busy with scripts), which would put the busy state late.
		elapsed := now.Sub(wt.seen)
		s.run.elapsed.Store(int64(elapsed))
		if runKind(s.run.kind.Load()) == kindLoad {
			if elapsed >= loadTimeoutTicks*time.Millisecond {
				s.run.stop(seq, killedLoadTimeout)
			}
		} else if th := time.Duration(w.e.busyNs.Load()); th > 0 && elapsed >= th {
			s.run.busy.Store(true)
		}
		w.checkMemory(s, wt, seq, &heap)
	})
	return any
}

// checkMemory stops run seq when the heap grew by more than the cap since the run was first
// seen and a collection confirms the growth is live. The heap is the whole process's: a run
// beside another run that allocates may be charged for both; the cap bounds the sum.
func (w *watchdog) checkMemory(s *slot, wt *watch, seq uint64, heap *uint64) {
	capBytes := w.e.maxMem.Load()
	if capBytes <= 0 || *heap < wt.heapBase+uint64(capBytes) {
		return
	}
	if *heap > w.lastGC+uint64(capBytes)/2 || *heap < w.lastGC {
		runtime.GC()
		*heap, _ = readHeap()
		w.lastGC = *heap
	}
	if *heap > wt.liveBase+uint64(capBytes) {
		s.run.stop(seq, killedOverMemory)
	}
}

var heapSamples = []string{"/memory/classes/heap/objects:bytes", "/gc/heap/live:bytes"}

// readHeap returns the heap's object bytes now and the live bytes of the last collection.
func readHeap() (objects, live uint64) {
	s := make([]metrics.Sample, len(heapSamples))
	for i, n := range heapSamples {
		s[i].Name = n
	}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// Busy reports whether a script or function has been running longer than the busy threshold.
func (e *Engine) Busy() bool { return e.BusyReply() != "" }

// BusyReply is the error other clients get while a run is busy: ErrBusyScript for an EVAL,
// ErrBusyFunction for an FCALL (Redis names the KILL command that applies), "" when none is.
// The command layer answers with it the commands that touch the busy run's shards.
func (e *Engine) BusyReply() string {
	reply := ""
	e.pool.each(func(s *slot) {
		if s.run.seq.Load()&1 == 1 && s.run.busy.Load() {
			if runKind(s.run.kind.Load()) == kindFunction {
				reply = ErrBusyFunction
			} else if reply == "" {
				reply = ErrBusyScript
			}
		}
	})
	return reply
}

// Kill is SCRIPT KILL (function false) and FUNCTION KILL (function true): it stops every busy
// run of that kind that has not written. It returns "" (reply +OK) or the error text, checked
// in Redis's order: UNKILLABLE when a busy run wrote (whatever its kind), the other kind's BUSY
// text when only the other kind is busy (FUNCTION KILL while an EVAL runs), NOTBUSY when
// nothing is busy. Redis runs one script at a time; HotKV may run several, and Kill stops
// every one it may.
func (e *Engine) Kill(function bool) string {
	killed, unkillable, other := 0, 0, 0
	e.pool.each(func(s *slot) {
		seq := s.run.seq.Load()
		if seq&1 == 0 || !s.run.busy.Load() {
			return
		}
		switch {
		case s.run.wrote.Load():
			unkillable++
		case (runKind(s.run.kind.Load()) == kindFunction) != function:
			other++
		default:
			s.run.stop(seq, killedByUser)
			killed++
		}
	})
	switch {
	case killed > 0:
		return ""
	case unkillable > 0:
		return ErrUnkillable
	case other > 0 && function:
		return ErrBusyScript
	case other > 0:
		return ErrBusyFunction
	}
	return ErrNotBusy
}

// StopRuns ends every run in progress, whatever it did (a run that wrote too, which SCRIPT KILL
// refuses), and every run that starts after it, each at its next instruction. A stopping
// server calls it before it waits for its connections: a connection in a busy script would
// hold the stop for its whole grace (SHUTDOWN NOSAVE took 5 s where Redis exits at once). A run
// ended so reports it (RunOptions.Stopped): its writes were not finished and the command layer
// does not replicate them, as Redis, which exits inside the script, never propagates them.
func (e *Engine) StopRuns() {
	e.stopping.Store(true)
	e.pool.each(func(s *slot) {
		if seq := s.run.seq.Load(); seq&1 == 1 {
			s.run.stop(seq, killedByShutdown)
		}
	})
}

// Running describes a script or function in progress (FUNCTION STATS's running_script).
type Running struct {
	Script   *Script       // the EVAL script, or nil
	Function *Function     // the FCALL function, or nil
	Duration time.Duration // as the watchdog saw it: a multiple of its tick, 0 in the first
	Busy     bool
}

// Running lists the runs in progress (library loads excluded). Redis runs one at a time and
// FUNCTION STATS shows that one; HotKV may run several, one per core.
func (e *Engine) Running() []Running {
	var out []Running
	e.pool.each(func(s *slot) {
		seq := s.run.seq.Load()
		kind := runKind(s.run.kind.Load())
		if seq&1 == 0 || kind == kindLoad {
			return
		}
		r := Running{Duration: time.Duration(s.run.elapsed.Load()), Busy: s.run.busy.Load()}
		if kind == kindFunction {
			r.Function = s.run.fn.Load()
		} else {
			r.Script = s.run.script.Load()
		}
		if s.run.seq.Load() == seq { // still the same run: its fields belong together
			out = append(out, r)
		}
	})
	return out
}

// FunctionCounts is FUNCTION STATS's engines section: libraries and functions loaded.
func (e *Engine) FunctionCounts() (libraries, functions int) {
	set := e.libs.cur.Load()
	return len(set.libs), len(set.funcs)
}
