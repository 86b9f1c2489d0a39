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
//     gc-percent says. 0 derives it from maxmemory (memoryLimit): about maxmemory plus half of it
//     for garbage and buffers, less what the process holds beyond the runtime's count, so that
//     the process's RSS stays within 1.5x maxmemory; with maxmemory 0 too there is no limit.
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

// rssReserve is what the process holds resident beyond the memory the Go runtime counts against
// its limit: mostly the binary's own file-backed pages. A 34 MB binary keeps about 19 MB of them
// resident (the kernel maps whole page-cache folios around each fault, so the whole text is
// resident once start-up has run it), and the heap sits a few MB under the limit on average, so
// RSS was about 12-13 MB above the limit at 100mb (154 MB RSS at a 141 MB limit; 148 at 134).
// When the binary was 22 MB, 8 MB was enough.
const rssReserve = 14 << 20

// memoryLimit is the soft limit gc-memory-limit and maxmemory give (math.MaxInt64: none).
//
// Derived from maxmemory it keeps RSS within 1.5x maxmemory (issue 18). Once the data fills
// maxmemory, every write frees what eviction takes, so the heap grows to the limit between
// collections and stays there: its spans stay in use, partly filled with live values. RSS is
// then the limit plus rssReserve. The limit is 1.5x less 2% (the limit is soft) and rssReserve:
// at 100mb, 134 MB, RSS peaked at 1.467-1.484x under allkeys-lru and volatile-lru writing 1 GB
// (it was 1.536-1.540x at the old 141 MB, the CPU per SET 7-20% lower). Below about 150mb the
// limit is at least 1.125x plus 16 MB instead: the runtime's own ~12 MB would leave the collector
// no room (at 16mb and the old 1.5x, 24 MB, it collected about 200 times per 200 MB written,
// 7-12 us of CPU per SET; at 36.8 MB 46 times, 4-6 us, RSS 46 MB).
func memoryLimit(limit, maxmemory uint64) int64 {
	switch {
	case limit > 0:
		return int64(min(limit, math.MaxInt64))
	case maxmemory >= math.MaxInt64/3*2:
		return math.MaxInt64
	case maxmemory > 0:
		floor := maxmemory + maxmemory/8 + 16<<20
		l := maxmemory + maxmemory/2 - maxmemory/50
		if l < floor+rssReserve {
			return int64(floor)
		}
		return int64(l - rssReserve)
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
