package server

import (
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/src/config"
)

// The Go collector's settings come from the configuration (docs/decisions.md, "Go runtime"):
//
//   - gc-percent is GOGC: how far the heap may grow past what the last collection found live
//     before the next one starts (100: to twice the live heap; -1 turns collection off).
//   - gc-memory-limit is GOMEMLIMIT, the soft limit at which the collector works harder whatever
//     gc-percent says. 0 derives it from maxmemory: maxmemory plus half of it for garbage and
//     buffers, so a server whose data stays within maxmemory collects before its heap doubles;
//     with maxmemory 0 too there is no limit.
//   - gc-idle yes starts a collection once the server has run no command for a second while a
//     quarter or more of its heap is garbage (at least idleGarbageMin bytes), so that memory a
//     burst of writes left behind is reused, and INFO's used_memory counts what is live, without
//     waiting up to two minutes for Go's periodic collection. It costs CPU only when idle.
//
// GOGC and GOMEMLIMIT in the environment win over the configuration, as Go's documentation
// promises its users; the server logs that it ignores the directives then.

// idleGarbageMin is the least garbage an idle collection is started for.
const idleGarbageMin = 16 << 20

type gcTuner struct {
	cfg           *config.Store
	log           *slog.Logger
	envGC, envLim bool
	ops           func() int64 // commands executed so far
	lastOps       int64
	idle          int // consecutive idle checks
	collecting    atomic.Bool
	samples       []metrics.Sample
	collect       func() // runtime.GC; a test counts calls
}

func newGCTuner(cfg *config.Store, log *slog.Logger, ops func() int64) *gcTuner {
	envGC, envLim := os.Getenv("GOGC") != "", os.Getenv("GOMEMLIMIT") != "" // empty: Go's default too
	t := &gcTuner{cfg: cfg, log: log, envGC: envGC, envLim: envLim, ops: ops, collect: runtime.GC,
		samples: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}}
	if envGC || envLim {
		log.Info("the environment sets the Go collector; gc-percent and gc-memory-limit do not apply",
			"GOGC", os.Getenv("GOGC"), "GOMEMLIMIT", os.Getenv("GOMEMLIMIT"))
	}
	return t
}

// memoryLimit is the soft limit gc-memory-limit and maxmemory give (math.MaxInt64: none).
func memoryLimit(limit, maxmemory uint64) int64 {
	switch {
	case limit > 0:
		return int64(min(limit, math.MaxInt64))
	case maxmemory >= math.MaxInt64/3*2:
		return math.MaxInt64
	case maxmemory > 0:
		return int64(maxmemory + maxmemory/2)
	}
	return math.MaxInt64
}

// apply sets GOGC and the memory limit from the configuration.
func (t *gcTuner) apply() {
	if !t.envGC {
		debug.SetGCPercent(int(t.cfg.Int("gc-percent")))
	}
	if !t.envLim {
		debug.SetMemoryLimit(memoryLimit(uint64(t.cfg.Int("gc-memory-limit")), uint64(t.cfg.Int("maxmemory"))))
	}
}

// check runs once a second from the cron: after a second with no command it starts a collection
// when the heap holds enough garbage (gc-idle). The collection runs on its own goroutine, beside
// whatever commands arrive meanwhile, like any of Go's background collections.
func (t *gcTuner) check() {
	ops := t.ops()
	if ops != t.lastOps {
		t.lastOps, t.idle = ops, 0
		return
	}
	t.idle++
	if t.idle != 1 || !t.cfg.Bool("gc-idle") || t.collecting.Load() {
		return // once per idle spell: a collection then leaves nothing to gain until commands run
	}
	metrics.Read(t.samples)
	live, objects := t.samples[0].Value.Uint64(), t.samples[1].Value.Uint64()
	if objects < live || objects-live < max(idleGarbageMin, live/4) {
		return
	}
	t.collecting.Store(true)
	go func() {
		defer t.collecting.Store(false)
		start := time.Now()
		t.collect()
		t.log.Debug("idle garbage collection", "garbage_mb", (objects-live)>>20, "live_mb", live>>20,
			"took", time.Since(start).Round(time.Millisecond))
	}()
}
