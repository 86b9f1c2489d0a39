package command

import (
	"math"
	"sort"
	"sync"
	"time"
)

// The latency monitor, as Redis 7.0's latency.c: each event class keeps its worst latency (ms)
// of each second, the last latencyTSLen seconds that had one, and its all-time maximum. Samples
// under latency-monitor-threshold are not kept; a threshold of 0 keeps none.
//
// Events HotKV raises, at the points Redis 7.0 samples them: "command" and "fast-command" (a
// call's execution, stats_call.go); "expire-cycle" (ActiveExpire); "eviction-cycle" (a write's
// gate or the cron's pass once it evicts, evict.go) and "eviction-del" (one evicted key's
// delete); from persist/aof's writer (Config.Latency): "aof-write" with one of
// "aof-write-pending-fsync", "aof-write-active-child" (a rewrite running) or "aof-write-alone",
// "aof-fsync-always" and "aof-fstat"; "rdb-unlink-temp-file" (a failed save removing its temp
// file, src/server). Not raised: "expire-del" (the keyspace unlinks an expired key inside its
// own lookup, and Go's collector, not the delete, frees it), "fork" (no child process),
// "while-blocked-cron" and the module and cluster events.

const latencyTSLen = 160 // LATENCY_TS_LEN

type latencySample struct {
	unix int64 // seconds; 0: empty
	ms   int64
}

type latencySeries struct {
	idx     int
	max     int64
	samples [latencyTSLen]latencySample
}

// latencyEvents are the series by event name; guarded by mu (a sample is a spike: rare).
type latencyEvents struct {
	mu     sync.Mutex
	series map[string]*latencySeries
	order  []string // names in creation order, for LATEST and DOCTOR
}

// LatencyEvent records that event took d, if d reaches latency-monitor-threshold (Redis's
// latencyAddSampleIfNeeded). Any goroutine may call it, holding anything: it takes one short
// lock only when the sample is kept.
func (e *Engine) LatencyEvent(event string, d time.Duration) {
	if ms := e.lat.monitorMs.Load(); ms > 0 && d.Milliseconds() >= ms {
		e.latencyEvent(event, d.Milliseconds())
	}
}

// latencyEvent adds a sample of ms milliseconds to event's series (latencyAddSample).
func (e *Engine) latencyEvent(event string, ms int64) {
	now := time.Now().Unix()
	ev := &e.lat.events
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ts := ev.series[event]
	if ts == nil {
		if ev.series == nil {
			ev.series = map[string]*latencySeries{}
		}
		ts = new(latencySeries)
		ev.series[event] = ts
		ev.order = append(ev.order, event)
	}
	ts.max = max(ts.max, ms)
	prev := &ts.samples[(ts.idx+latencyTSLen-1)%latencyTSLen]
	if prev.unix == now {
		prev.ms = max(prev.ms, ms)
		return
	}
	ts.samples[ts.idx] = latencySample{unix: now, ms: ms}
	ts.idx = (ts.idx + 1) % latencyTSLen
}

// history returns a series' samples, oldest first.
func (ts *latencySeries) history() []latencySample {
	var out []latencySample
	for j := range latencyTSLen {
		if s := ts.samples[(ts.idx+j)%latencyTSLen]; s.unix != 0 {
			out = append(out, s)
		}
	}
	return out
}

// reset deletes the named series (every one when names is empty, case-insensitively as
// latencyResetEvent), returning how many it deleted.
func (ev *latencyEvents) reset(names [][]byte) int {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	n := 0
	kept := ev.order[:0]
	for _, name := range ev.order {
		hit := len(names) == 0
		for _, want := range names {
			if equalFoldString(want, name) {
				hit = true
			}
		}
		if hit {
			delete(ev.series, name)
			n++
		} else {
			kept = append(kept, name)
		}
	}
	ev.order = kept
	return n
}

func equalFoldString(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// latencyStats is analyzeLatencyForEvent's summary of a series.
type latencyStats struct {
	allTimeHigh, avg, min, max, mad int64
	samples                         int
	period                          int64
}

func analyzeLatency(ts *latencySeries, now int64) latencyStats {
	ls := latencyStats{allTimeHigh: ts.max}
	var sum int64
	for _, s := range ts.samples {
		if s.unix == 0 {
			continue
		}
		ls.samples++
		if ls.samples == 1 {
			ls.min, ls.max = s.ms, s.ms
		} else {
			ls.min, ls.max = min(ls.min, s.ms), max(ls.max, s.ms)
		}
		sum += s.ms
		if ls.period == 0 || s.unix < ls.period {
			ls.period = s.unix
		}
	}
	if ls.samples == 0 {
		return ls
	}
	ls.avg = sum / int64(ls.samples)
	if ls.period = now - ls.period; ls.period == 0 {
		ls.period = 1
	}
	sum = 0
	for _, s := range ts.samples {
		if s.unix != 0 {
			sum += int64(math.Abs(float64(ls.avg - s.ms)))
		}
	}
	ls.mad = sum / int64(ls.samples)
	return ls
}

// sortedEvents returns the event names sorted, for output that does not depend on a hash
// table's order (Redis's dict order is not something a client can rely on).
func (ev *latencyEvents) sortedNames() []string {
	names := append([]string(nil), ev.order...)
	sort.Strings(names)
	return names
}
