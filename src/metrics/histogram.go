package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hotkv/hotkv/src/command"
)

// LatencySource returns a command's latency distribution: how many calls were timed, their
// total in seconds, and the cumulative count of calls at or under each upper bound (seconds).
// ok is false for a command without a histogram.
type LatencySource func(name string) (count uint64, sum float64, buckets map[float64]uint64, ok bool)

var latencyDesc = desc("hotkv_command_duration_seconds", "Latency of each command, from the engine's per-command histograms (INFO latencystats).", "cmd")

// collectLatency sends a histogram for each command of the snapshot that has one.
func collectLatency(ch chan<- prometheus.Metric, src LatencySource, cmds []command.CommandMetric) {
	for _, cm := range cmds {
		count, sum, buckets, ok := src(cm.Name)
		if !ok {
			continue
		}
		ch <- prometheus.MustNewConstHistogram(latencyDesc, count, sum, buckets, cm.Name)
	}
}
