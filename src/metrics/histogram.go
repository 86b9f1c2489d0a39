package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hotkv/hotkv/src/command"
)

var latencyDesc = desc("hotkv_command_duration_seconds", "Latency of each command, from the engine's per-command histograms (LATENCY HISTOGRAM's buckets; _sum is commandstats' time).", "cmd")

// latencyBounds are the exported buckets' upper bounds, fixed so that every scrape has the same
// series: LATENCY HISTOGRAM's 1024 ns·2^k from about 1 µs to about 1.07 s (Redis caps its
// histograms at 1 s).
var latencyBounds = func() []time.Duration {
	var b []time.Duration
	for le := 1024 * time.Nanosecond; le <= 1100*time.Millisecond; le *= 2 {
		b = append(b, le)
	}
	return b
}()

// collectLatency sends a histogram for each command of the snapshot that has timed calls
// (none while latency-tracking, slowlog and the latency monitor are all off). Its
// sum is the command's commandstats time, which the same clock reads measure.
func collectLatency(ch chan<- prometheus.Metric, cmds []command.CommandMetric) {
	for _, cm := range cmds {
		if cm.Timed == 0 {
			continue
		}
		ch <- prometheus.MustNewConstHistogram(latencyDesc, cm.Timed, float64(cm.Nanos)/1e9,
			cumulative(cm.Timed, cm.Latency), cm.Name)
	}
}

// cumulative maps the engine's buckets onto latencyBounds: a bound past the engine's last bucket
// counts every call; one the engine skipped counts what the bucket below it counts.
func cumulative(count uint64, got []command.LatencyBucket) map[float64]uint64 {
	out := make(map[float64]uint64, len(latencyBounds))
	var n uint64
	i := 0
	for _, le := range latencyBounds {
		for i < len(got) && got[i].Le <= le {
			n = got[i].Count
			i++
		}
		if i == len(got) {
			n = count
		}
		out[le.Seconds()] = n
	}
	return out
}
