package command

import (
	"slices"
	"strconv"
	"strings"
)

// infoLatencyStats is INFO latencystats: for every command with recorded calls, the
// percentiles of latency-tracking-info-percentiles in microseconds, as Redis 7.0's
// fillPercentileDistributionLatencies prints them ("p99.9=12.031"); nothing while
// latency-tracking is off. Commands are sorted by name (Redis's order is its dict's).
func infoLatencyStats(w *infoWriter, c *Ctx) {
	e := c.E
	if !e.lat.tracking.Load() {
		return
	}
	ps := infoPercentiles(e.configValue("latency-tracking-info-percentiles", "50 99 99.9"))
	var specs []*Spec
	eachSpec(func(s *Spec) { specs = append(specs, s) })
	slices.SortFunc(specs, func(a, b *Spec) int { return strings.Compare(a.Name, b.Name) })
	for _, s := range specs {
		// INFO holds every shard: merge only the histograms of commands that ran.
		if calls, _, _, _ := e.cmdStats(s); calls == 0 {
			continue
		}
		var m histCounts
		e.latencyOf(s, &m)
		if m.total == 0 {
			continue
		}
		w.b = append(append(w.b, "latency_percentiles_usec_"...), s.Name...)
		w.b = append(w.b, ':')
		for i, p := range ps {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, 'p')
			w.b = strconv.AppendFloat(w.b, p, 'f', -1, 64)
			w.b = append(w.b, '=')
			w.b = strconv.AppendFloat(w.b, float64(m.percentile(p))/1000, 'f', 3, 64)
		}
		w.b = append(w.b, "\r\n"...)
	}
}

// infoPercentiles parses latency-tracking-info-percentiles (validated by CONFIG SET).
func infoPercentiles(v string) []float64 {
	var out []float64
	for _, f := range strings.Fields(v) {
		if p, err := strconv.ParseFloat(f, 64); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// trackingTotals are INFO's tracking_total_keys (keys in the tracking table), _items (client
// ids over every key) and _prefixes (BCAST prefixes).
func (e *Engine) trackingTotals() (keys, items, prefixes int64) {
	if e.track.table != nil {
		keys = int64(e.track.table.Size())
	}
	if l := e.track.list.Load(); l != nil {
		prefixes = int64(len(*l))
	}
	return keys, e.track.items.Load(), prefixes
}
