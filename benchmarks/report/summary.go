package main

import (
	"fmt"
	"slices"
	"strings"
)

// stats is the median over the runs of one command on one server (or generator), and each
// successful run's own numbers by run number, for ranges and paired ratios.
type stats struct {
	runs, failures int
	err            string // the first failure's text
	opsPerSec      float64
	cpuPerM        float64 // server CPU-seconds per million requests; negative when not measured
	genCPUPerM     float64 // generator CPU-seconds per million requests
	genBusy        float64 // generator CPU time over wall time: near 1, the generator was a limit
	subsCPUPerM    float64 // the subscribers' CPU-seconds per million requests; negative when none ran
	subsBusy       float64 // the subscribers' CPU time over the run's wall time
	clientBusy     float64 // the generator's and the subscribers' CPU time (they share CPU 1) over wall time
	p50, p99, p999 float64 // microseconds
	byRun          map[int]runStat
}

// runStat is one run's throughput, server CPU and subscribers' CPU per million requests
// (negative: not measured).
type runStat struct{ opsPerSec, cpuPerM, subsCPUPerM float64 }

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
	s := stats{runs: len(rs), cpuPerM: -1, subsCPUPerM: -1, byRun: map[int]runStat{}}
	var ops, cpu, gen, busy, subs, subsBusy, clientBusy, p50, p99, p999 []float64
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
		rs := runStat{opsPerSec: r.result.OpsPerSec, cpuPerM: -1, subsCPUPerM: -1}
		if r.serverCPU >= 0 {
			rs.cpuPerM = r.serverCPU / m
			cpu = append(cpu, rs.cpuPerM)
		}
		if r.subsCPU >= 0 {
			rs.subsCPUPerM = r.subsCPU / m
			subs = append(subs, rs.subsCPUPerM)
		}
		s.byRun[r.n] = rs
		gen = append(gen, r.result.GeneratorCPU/m)
		if secs := r.result.Seconds; secs > 0 {
			busy = append(busy, r.result.GeneratorCPU/secs)
			client := r.result.GeneratorCPU
			if r.subsCPU >= 0 {
				subsBusy = append(subsBusy, r.subsCPU/secs)
				client += r.subsCPU
			}
			clientBusy = append(clientBusy, client/secs)
		}
		p50, p99, p999 = append(p50, r.result.Latency.P50), append(p99, r.result.Latency.P99), append(p999, r.result.Latency.P999)
	}
	s.opsPerSec, s.genCPUPerM, s.genBusy = median(ops), median(gen), median(busy)
	s.p50, s.p99, s.p999 = median(p50), median(p99), median(p999)
	if len(cpu) > 0 {
		s.cpuPerM = median(cpu)
	}
	if len(subs) > 0 {
		s.subsCPUPerM, s.subsBusy = median(subs), median(subsBusy)
	}
	s.clientBusy = median(clientBusy)
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

// shortError keeps an error's first words: a line under a table, not a log. An unexpected reply
// keeps what the reply was and what was expected.
func shortError(msg string) string {
	msg = strings.TrimPrefix(msg, "error reply to ")
	if i := strings.Index(msg, ", with args beginning with"); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.Index(msg, " (inferred from"); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.Index(msg, "; is the data loaded"); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(msg)
}

// failures lists every run and load that failed, one line each, for the harness's exit.
func failures(in input) []string {
	var out []string
	for i := range in.runs {
		if msg, failed := in.runs[i].failed(); failed {
			r := &in.runs[i]
			out = append(out, fmt.Sprintf("%s: %s on %s, run %d: %s", r.section, r.command, r.server, r.n, msg))
		}
	}
	for _, r := range in.mem {
		if r.err != "" {
			out = append(out, fmt.Sprintf("memory: %s on %s: %s", r.dataset, r.server, r.err))
		}
	}
	for _, r := range in.small {
		if r.err != "" {
			out = append(out, fmt.Sprintf("smallcoll: %s on %s: %s", r.label(), r.server, r.err))
		}
	}
	return out
}

// spread is the smallest and the largest of the values.
func spread(v []float64) (lo, hi float64) {
	return slices.Min(v), slices.Max(v)
}
