package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// A section of the report compares two sides (a baseline and a candidate) command by command.
type section struct {
	name, title, note string
	a, b              side
	metrics           []metric
	rss               bool   // print the servers' RSS after the prefill
	chart             string // the title of the section's PNG chart of ratios; none if empty
}

type side struct{ server, label string }

// A metric gives two columns (one per side) and, with ratio, the candidate/baseline ratio.
type metric struct {
	header string
	value  func(stats) (float64, bool)
	format func(float64) string
	ratio  bool
}

var (
	opsMetric = metric{"ops/s", func(s stats) (float64, bool) { return s.opsPerSec, true }, thousands, true}
	cpuMetric = metric{"CPU-s per 1M", func(s stats) (float64, bool) { return s.cpuPerM, s.cpuPerM >= 0 }, fixed(2), false}
	genMetric = metric{"generator CPU-s per 1M", func(s stats) (float64, bool) { return s.genCPUPerM, true }, fixed(2), false}
	p50Metric = metric{"p50 ms", func(s stats) (float64, bool) { return s.p50, true }, millis, false}
	p99Metric = metric{"p99 ms", func(s stats) (float64, bool) { return s.p99, true }, millis, false}
	p999      = metric{"p99.9 ms", func(s stats) (float64, bool) { return s.p999, s.p999 > 0 }, millis, false}
)

var redisSide, hotkvSide = side{"redis", "Redis"}, side{"hotkv", "HotKV"}

// sections in report order; a section without runs is left out.
var sections = []section{
	{name: "throughput", title: "Throughput (pipeline {pipeline}, {clients} connections, {keys} keys, {size}-byte values)",
		a: redisSide, b: hotkvSide, metrics: []metric{opsMetric, cpuMetric, p50Metric, p99Metric}, rss: true,
		chart: "HotKV relative to Redis 7.0.15 (1 = equal, higher favours HotKV)"},
	{name: "scaling", title: "HotKV --threads 1 (CPU 0) against --threads 2 (CPUs 0-1, shared with the generator)",
		note: "CPU-s per 1M is the server's CPU time per million requests: the number to compare; ops/s of --threads 2 is capped by the generator sharing both cores.",
		a:    side{"hotkv", "1 thread"}, b: side{"hotkv2", "2 threads"}, metrics: []metric{opsMetric, cpuMetric}},
	{name: "coordination", title: "HotKV --threads 1 against --threads 2, both on CPU 0 (coordination only)",
		note: "The generator runs alone on CPU 1, so no core is shared with it: the difference in CPU-s per 1M is what running two pollers costs.",
		a:    side{"hotkv", "1 thread"}, b: side{"hotkv2c", "2 threads"}, metrics: []metric{opsMetric, cpuMetric}},
	{name: "latency", title: "Latency at pipeline 1 ({clients} connections, {keys} keys)",
		a: redisSide, b: hotkvSide, metrics: []metric{opsMetric, p50Metric, p99Metric, p999}},
	{name: "collections", title: "Collections (pipeline {pipeline}, {clients} connections, {coll_keys} keys of each type holding {coll_keys} members, {size}-byte values)",
		note: "SISMEMBER, HGET and ZSCORE always hit; ZRANGE 0 9 reads 10 of a sorted set's members. SADD, HSET and ZADD insert " +
			"new members into copies of the prefilled collections made for each run; LPUSH and RPUSH push onto new lists. " +
			"LPOP runs {pop_requests} requests (not a duration) against lists filled for them before each run and checked non-empty after it.",
		a: side{"rediscoll", "Redis"}, b: side{"hotkvcoll", "HotKV"}, metrics: []metric{opsMetric, cpuMetric, p50Metric, p99Metric},
		rss: true, chart: "Collections: HotKV relative to Redis 7.0.15 (1 = equal, higher favours HotKV)"},
	{name: "big", title: "Latency at pipeline 1 with {big_keys} keys loaded",
		a: side{"redisbig", "Redis"}, b: side{"hotkvbig", "HotKV"}, metrics: []metric{opsMetric, p50Metric, p99Metric, p999}, rss: true},
	{name: "proof", title: "The generator: hotkv-benchmark against redis-benchmark, both on CPU 1, redis-server on CPU 0",
		note: "Generator CPU-s per 1M is the generator process's user+system time per million requests, measured from outside for both.",
		a:    side{"redis-benchmark", "redis-benchmark"}, b: side{"hotkv-benchmark", "hotkv-benchmark"},
		metrics: []metric{opsMetric, genMetric, p50Metric, p99Metric}},
}

// writeMarkdown writes the whole report; charts maps a section to its chart's file name.
func writeMarkdown(w io.Writer, runs []run, mem []memRow, meta map[string]string, charts map[string]string) {
	all := summarize(runs)
	onlyProof := len(runs) > 0 && !slices.ContainsFunc(runs, func(r run) bool { return r.section != "proof" })
	if onlyProof {
		fmt.Fprintf(w, "# hotkv-benchmark vs redis-benchmark against Redis %s, %s\n\n", meta["redis"], meta["date"])
	} else {
		fmt.Fprintf(w, "# HotKV vs Redis %s, %s\n\n", meta["redis"], meta["date"])
	}
	fmt.Fprintf(w, "Machine: %s, %s CPUs, %s; Go %s; HotKV %s. Load average at start %s, at end %s.\n",
		meta["cpu"], meta["cpus"], meta["kernel"], meta["go"], meta["hotkv_commit"], meta["load"], meta["load_end"])
	switch {
	case len(runs) == 0:
		fmt.Fprintf(w, "Each dataset was loaded once into fresh servers pinned to CPU 0, the loader on CPU 1.\n")
	case onlyProof:
		fmt.Fprintf(w, "Each number is the median of %s run(s) of %s requests (a tenth of that at pipeline 1).\n",
			meta["runs"], expand("{proof_requests}", meta))
	default:
		fmt.Fprintf(w, "Each number is the median of %s run(s) of %s; servers pinned to CPU 0, hotkv-benchmark to CPU 1.\n",
			meta["runs"], meta["duration"])
	}
	for _, sec := range sections {
		cmds := commands(runs, sec.name)
		if len(cmds) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n## %s\n\n", expand(sec.title, meta))
		if sec.note != "" {
			fmt.Fprintf(w, "%s\n\n", expand(sec.note, meta))
		}
		if sec.rss {
			fmt.Fprintf(w, "RSS after prefill: %s %s, %s %s.\n\n", sec.a.label, rssMB(meta["rss."+sec.a.server]),
				sec.b.label, rssMB(meta["rss."+sec.b.server]))
		}
		writeTable(w, sec, cmds, all)
		if c := charts[sec.name]; c != "" {
			fmt.Fprintf(w, "![HotKV/Redis ratios](%s)\n", c)
		}
	}
	writeMemory(w, mem, meta)
}

func writeTable(w io.Writer, sec section, cmds []string, all map[key]stats) {
	head := []string{"command"}
	for _, m := range sec.metrics {
		head = append(head, sec.a.label+" "+m.header, sec.b.label+" "+m.header)
		if m.ratio {
			head = append(head, sec.b.label+"/"+sec.a.label)
		}
	}
	fmt.Fprintf(w, "| %s |\n|---|%s\n", strings.Join(head, " | "), strings.Repeat("---:|", len(head)-1))
	for _, cmd := range cmds {
		a, b := all[key{sec.name, cmd, sec.a.server}], all[key{sec.name, cmd, sec.b.server}]
		row := []string{cmd}
		for _, m := range sec.metrics {
			row = append(row, cell(a, m), cell(b, m))
			if m.ratio {
				row = append(row, ratio(a, b, m))
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	if sec.name != "proof" {
		writeGeneratorLoad(w, sec, cmds, all)
	}
	for _, s := range []side{sec.a, sec.b} {
		for _, cmd := range cmds {
			if st := all[key{sec.name, cmd, s.server}]; st.runs > 0 && !st.ok() {
				fmt.Fprintf(w, "\n%s %s failed in %d of %d runs: %s", s.label, cmd, st.failures, st.runs, shortError(st.err))
			}
		}
	}
	fmt.Fprintln(w)
}

func cell(s stats, m metric) string {
	if s.runs == 0 {
		return "—"
	}
	if !s.ok() {
		return "failed"
	}
	v, ok := m.value(s)
	if !ok {
		return "—"
	}
	return m.format(v)
}

func ratio(a, b stats, m metric) string {
	va, oka := m.value(a)
	vb, okb := m.value(b)
	if !a.ok() || !b.ok() || !oka || !okb || va == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", vb/va)
}

// expand fills {name} with meta values, numbers with thousands separators.
func expand(s string, meta map[string]string) string {
	for k, v := range meta {
		if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 1000 {
			v = thousands(n)
		}
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

func rssMB(kb string) string {
	n, err := strconv.ParseFloat(kb, 64)
	if err != nil || n == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.0f MB", n/1024)
}

// thousands formats a count as 1,234,567.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func fixed(prec int) func(float64) string {
	return func(v float64) string { return strconv.FormatFloat(v, 'f', prec, 64) }
}

// millis formats microseconds as milliseconds.
func millis(us float64) string { return strconv.FormatFloat(us/1000, 'f', 3, 64) }

// writeGeneratorLoad says how busy the generator was at most: near 100% it, not the server, may have
// set the pace.
func writeGeneratorLoad(w io.Writer, sec section, cmds []string, all map[key]stats) {
	var most float64
	var where string
	for _, cmd := range cmds {
		for _, s := range []side{sec.a, sec.b} {
			if st := all[key{sec.name, cmd, s.server}]; st.ok() && st.genBusy > most {
				most, where = st.genBusy, cmd+" on "+s.label
			}
		}
	}
	if where != "" {
		fmt.Fprintf(w, "\nThe generator's CPU time was at most %.0f%% of the run's wall time (%s).\n", 100*most, where)
	}
}
