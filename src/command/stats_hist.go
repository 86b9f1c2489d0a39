package command

import (
	"math/bits"
	"strings"
	"sync/atomic"
	"time"
)

// Per-command latency histograms (LATENCY HISTOGRAM, INFO latencystats, the metrics endpoint).
//
// A latencyHist is log-linear, like an HDR histogram with 64 sub-buckets per power of two:
// durations below 64 ns have a bucket each; a duration d >= 64 ns with its highest bit at h
// falls in one of 64 equal buckets spanning [2^h, 2^(h+1)), each 2^(h-6) ns wide, so a bucket's
// midpoint is within 0.8% of every value in it. Durations are capped at 2^36 ns (68.7 s); Redis
// caps its own at 1 s.
//
// Ownership: every counter is atomic and is only ever added to, so a histogram is recorded by
// its owner (a shard's token holder, a P's shared readers, any connection for the commands that
// run on one) and read by anyone (INFO, LATENCY, the metrics scraper) at any time without a
// lock. Rows of 64 buckets are allocated when first touched, at most histRows per histogram:
// a command of steady duration touches three or four, and records allocate nothing after.

const (
	histSubBits = 6
	histSub     = 1 << histSubBits
	histMaxBit  = 36 // durations of 2^histMaxBit ns and more count as the largest bucket
	histRows    = histMaxBit - histSubBits + 1
)

type histRow [histSub]atomic.Uint64

type latencyHist struct {
	count atomic.Uint64
	rows  [histRows]atomic.Pointer[histRow]
}

// histIndex maps a duration in ns to its row and sub-bucket.
func histIndex(ns int64) (row, sub int) {
	if ns < histSub {
		return 0, int(max(ns, 0))
	}
	v := uint64(min(ns, 1<<histMaxBit-1))
	h := bits.Len64(v) - 1
	return h - histSubBits + 1, int(v>>(h-histSubBits)) & (histSub - 1)
}

// histBounds returns the lowest and highest duration (ns) of a bucket.
func histBounds(row, sub int) (lo, hi int64) {
	if row == 0 {
		return int64(sub), int64(sub)
	}
	shift := row - 1
	lo = int64(histSub+sub) << shift
	return lo, lo + 1<<shift - 1
}

// record adds one duration.
func (h *latencyHist) record(ns int64) {
	row, sub := histIndex(ns)
	r := h.rows[row].Load()
	if r == nil {
		r = new(histRow)
		if !h.rows[row].CompareAndSwap(nil, r) {
			r = h.rows[row].Load()
		}
	}
	r[sub].Add(1)
	h.count.Add(1)
}

// histSet is a command's histograms, one per place it is recorded in, by Spec.id; created
// lazily, read by anyone.
type histSet []atomic.Pointer[latencyHist]

func newHistSet() histSet { return make(histSet, numSpecs) }

// of returns spec's histogram, creating it.
func (hs histSet) of(spec *Spec) *latencyHist {
	p := &hs[spec.id]
	if h := p.Load(); h != nil {
		return h
	}
	p.CompareAndSwap(nil, new(latencyHist))
	return p.Load()
}

// histCounts is a merged histogram: counts by flat bucket index (row*histSub + sub).
type histCounts struct {
	total  uint64
	counts [histRows * histSub]uint64
}

func (m *histCounts) add(h *latencyHist) {
	if h == nil {
		return
	}
	for row := range h.rows {
		r := h.rows[row].Load()
		if r == nil {
			continue
		}
		for sub := range r {
			if n := r[sub].Load(); n > 0 {
				m.counts[row*histSub+sub] += n
				m.total += n
			}
		}
	}
}

// percentile returns the highest duration (ns) of the bucket holding the p-th percentile, as
// HDR's value_at_percentile; 0 without samples.
func (m *histCounts) percentile(p float64) int64 {
	if m.total == 0 {
		return 0
	}
	want := max(uint64(p/100*float64(m.total)+0.5), 1)
	var seen uint64
	for i, n := range m.counts {
		if seen += n; seen >= want {
			_, hi := histBounds(i/histSub, i%histSub)
			return hi
		}
	}
	_, hi := histBounds(histRows-1, histSub-1)
	return hi
}

// LatencyBucket is one bucket of a command's latency distribution: Count calls (cumulative)
// took less than Le. The bounds are 1024 ns times powers of two, as LATENCY HISTOGRAM's.
type LatencyBucket struct {
	Le    time.Duration
	Count uint64
}

// powerBuckets returns the cumulative counts below each bound 1024·2^k ns, up to the first
// bound that counts every call (LATENCY HISTOGRAM's buckets, before it drops those that add
// nothing); nil without calls.
func (m *histCounts) powerBuckets() []LatencyBucket {
	if m.total == 0 {
		return nil
	}
	var out []LatencyBucket
	var seen uint64
	i := 0
	for le := int64(1024); ; le *= 2 {
		for ; i < len(m.counts); i++ {
			if lo, _ := histBounds(i/histSub, i%histSub); lo >= le {
				break
			}
			seen += m.counts[i]
		}
		out = append(out, LatencyBucket{Le: time.Duration(le), Count: seen})
		if seen >= m.total {
			return out
		}
	}
}

// latencyOf merges spec's histograms from every place it runs in.
func (e *Engine) latencyOf(spec *Spec, m *histCounts) {
	m.add(e.lat.conn[spec.id].Load())
	for i := range e.Group.Shards {
		m.add(e.data(int32(i)).stats.hists[spec.id].Load())
	}
	for i := range e.readers {
		m.add(e.readers[i].hists[spec.id].Load())
	}
}

// CommandLatency returns the latency distribution of the command (or "container|sub") name
// since the start or the last CONFIG RESETSTAT: the calls recorded and cumulative buckets with
// power-of-two bounds from 1024 ns up to the slowest call. Durations are recorded while
// latency-tracking, slowlog or the latency monitor is on. It takes no lock; the metrics endpoint
// calls it.
func (e *Engine) CommandLatency(name string) (count uint64, buckets []LatencyBucket) {
	spec := specNamed(name)
	if spec == nil {
		return 0, nil
	}
	var m histCounts
	e.latencyOf(spec, &m)
	return m.total, m.powerBuckets()
}

// ForEachCommandStat calls fn with every command's INFO commandstats figures (calls, usec,
// rejected_calls, failed_calls), commands never called included, subcommands named
// "container|sub". It holds every shard's token while it sums them (as INFO does), and calls fn
// after letting them go.
func (e *Engine) ForEachCommandStat(fn func(name string, calls, usec, rejected, failed int64)) {
	type row struct {
		name                          string
		calls, usec, rejected, failed int64
	}
	var rows []row
	e.Group.LockAll()
	eachSpec(func(s *Spec) {
		calls, nsec, rejected, failed := e.cmdStats(s)
		rows = append(rows, row{s.Name, calls, nsec / 1000, rejected, failed})
	})
	e.Group.UnlockAll()
	for _, r := range rows {
		fn(r.name, r.calls, r.usec, r.rejected, r.failed)
	}
}

// eachSpec calls fn with every command and subcommand of the table.
func eachSpec(fn func(*Spec)) {
	for _, s := range table {
		fn(s)
		for _, sub := range s.Subs {
			fn(sub)
		}
	}
}

// specNamed finds a command or "container|sub" by name, case-insensitively.
func specNamed(name string) *Spec {
	name = strings.ToLower(name)
	top, sub, isSub := strings.Cut(name, "|")
	s := table[top]
	if s == nil || !isSub {
		return s
	}
	return s.Subs[sub]
}

// resetLatencyLocked clears every command histogram (CONFIG RESETSTAT). Histograms are
// replaced, not zeroed, so a recorder still holding the old one loses at most its sample.
func (e *Engine) resetLatencyLocked() {
	clearSet := func(hs histSet) {
		for i := range hs {
			hs[i].Store(nil)
		}
	}
	clearSet(e.lat.conn)
	for i := range e.Group.Shards {
		clearSet(e.data(int32(i)).stats.hists)
	}
	for i := range e.readers {
		clearSet(e.readers[i].hists)
	}
}
