package main

import (
	"slices"
	"strings"
)

// stats is the median over the runs of one command on one server (or generator).
type stats struct {
	runs, failures int
	err            string // the first failure's text
	opsPerSec      float64
	cpuPerM        float64 // server CPU-seconds per million requests; negative when not measured
	genCPUPerM     float64 // generator CPU-seconds per million requests
	genBusy        float64 // generator CPU time over wall time: near 1, the generator was a limit
	p50, p99, p999 float64 // microseconds
}

// ok tells whether every run succeeded: a command that fails in any run is reported as failed, so a
// flaky failure is never hidden behind the runs that passed.
func (s stats) ok() bool { return s.runs > 0 && s.failures == 0 }

// summarize groups runs by section, command and server and takes medians.
func summarize(runs []run) map[key]stats {
	groups := map[key][]run{}
	for _, r := range runs {
		k := key{r.section, r.command, r.server}
		groups[k] = append(groups[k], r)
	}
	out := make(map[key]stats, len(groups))
	for k, rs := range groups {
		out[k] = summarizeRuns(rs)
	}
	return out
}

type key struct{ section, command, server string }

func summarizeRuns(rs []run) stats {
	s := stats{runs: len(rs), cpuPerM: -1}
	var ops, cpu, gen, busy, p50, p99, p999 []float64
	for i := range rs {
		r := &rs[i]
		if msg, failed := r.failed(); failed {
			if s.failures++; s.err == "" {
				s.err = msg
			}
			continue
		}
		m := float64(r.result.Ops) / 1e6
		ops = append(ops, r.result.OpsPerSec)
		if r.serverCPU >= 0 {
			cpu = append(cpu, r.serverCPU/m)
		}
		gen = append(gen, r.result.GeneratorCPU/m)
		if r.result.Seconds > 0 {
			busy = append(busy, r.result.GeneratorCPU/r.result.Seconds)
		}
		p50, p99, p999 = append(p50, r.result.Latency.P50), append(p99, r.result.Latency.P99), append(p999, r.result.Latency.P999)
	}
	s.opsPerSec, s.genCPUPerM, s.genBusy = median(ops), median(gen), median(busy)
	s.p50, s.p99, s.p999 = median(p50), median(p99), median(p999)
	if len(cpu) > 0 {
		s.cpuPerM = median(cpu)
	}
	return s
}

// median of the values; the mean of the middle two for an even count; 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// commands lists a section's commands in the order they were first run.
func commands(runs []run, section string) []string {
	var out []string
	for _, r := range runs {
		if r.section == section && !slices.Contains(out, r.command) {
			out = append(out, r.command)
		}
	}
	return out
}

// shortError keeps an error's first words: a table cell, not a log.
func shortError(msg string) string {
	msg = strings.TrimPrefix(msg, "error reply to ")
	if i := strings.Index(msg, ", with args beginning with"); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 70 {
		msg = msg[:70] + "…"
	}
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(msg)
}
