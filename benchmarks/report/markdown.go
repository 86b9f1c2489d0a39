package main

import (
	"fmt"
	"io"
	"math"
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
	geomean           bool   // end the table with the geometric means of its ratios
}

type side struct{ server, label string }

// A metric gives two columns (one per side) and, with ratio, a ratio column: higher favours the
// candidate, so ops/s are candidate/baseline and CPU per request baseline/candidate. With run, each
// cell also gives the range over the runs (min–max), a ratio the range of the runs' paired ratios
// (run n of one side against run n of the other).
type metric struct {
	header string
	value  func(stats) (float64, bool)
	format func(float64) string
	ratio  ratioKind
	run    func(runStat) (float64, bool) // one run's value; nil: no range
}

type ratioKind uint8

const (
	noRatio     ratioKind = iota
	candidateUp           // b/a: ops/s
	baselineUp            // a/b: CPU per request
)

var (
	opsMetric = metric{"ops/s", func(s stats) (float64, bool) { return s.opsPerSec, true }, thousands, candidateUp,
		func(r runStat) (float64, bool) { return r.opsPerSec, true }}
	cpuMetric = metric{"CPU-s per 1M", func(s stats) (float64, bool) { return s.cpuPerM, s.cpuPerM >= 0 }, fixed(2), baselineUp,
		func(r runStat) (float64, bool) { return r.cpuPerM, r.cpuPerM >= 0 }}
	subsMetric = metric{"subscribers CPU-s per 1M", func(s stats) (float64, bool) { return s.subsCPUPerM, s.subsCPUPerM >= 0 }, fixed(2),
		noRatio, func(r runStat) (float64, bool) { return r.subsCPUPerM, r.subsCPUPerM >= 0 }}
	genMetric = metric{"generator CPU-s per 1M", func(s stats) (float64, bool) { return s.genCPUPerM, true }, fixed(2), noRatio, nil}
	p50Metric = metric{"p50 ms", func(s stats) (float64, bool) { return s.p50, true }, millis, noRatio, nil}
	p99Metric = metric{"p99 ms", func(s stats) (float64, bool) { return s.p99, true }, millis, noRatio, nil}
	p999      = metric{"p99.9 ms", func(s stats) (float64, bool) { return s.p999, s.p999 > 0 }, millis, noRatio, nil}
)

var redisSide, hotkvSide = side{"redis", "Redis"}, side{"hotkv", "HotKV"}

// sections in report order; a section without runs is left out.
var sections = []section{
	{name: "throughput", title: "Throughput (pipeline {pipeline}, {clients} connections, {keys} keys, {size}-byte values)",
		a: redisSide, b: hotkvSide, metrics: []metric{opsMetric, cpuMetric, p50Metric, p99Metric}, rss: true,
		chart: "HotKV relative to Redis 7.0.15 (1 = equal, higher favours HotKV)"},
	{name: "throughput-batch", title: "Throughput with redis-server under SCHED_BATCH (chrt -b 0; pipeline {pipeline}, {clients} connections, {keys} keys, {size}-byte values)",
		note: "The throughput section again, with redis-server started under `chrt -b 0`: the policy HotKV's `sched-batch` gives " +
			"its threads. Whatever this changes in Redis's numbers is the part of the throughput ratios that the scheduling " +
			"policy explains.",
		a: side{"redisbatch", "Redis"}, b: hotkvSide, metrics: []metric{opsMetric, cpuMetric, p50Metric, p99Metric}, rss: true},
	{name: "scaling", title: "HotKV --threads 1 (CPU 0) against --threads 2 (CPUs 0-1, shared with the generator)",
		note: "CPU-s per 1M is the server's CPU time per million requests: the number to compare; ops/s of --threads 2 is capped by the generator sharing both cores.",
		a:    side{"hotkv", "1 thread"}, b: side{"hotkv2", "2 threads"}, metrics: []metric{opsMetric, cpuMetric}},
	{name: "coordination", title: "HotKV --threads 1 against --threads 2, both on CPU 0 (coordination only)",
		note: "The generator runs alone on CPU 1, so no core is shared with it: the difference in CPU-s per 1M is what running two pollers costs.",
		a:    side{"hotkv", "1 thread"}, b: side{"hotkv2c", "2 threads"}, metrics: []metric{opsMetric, cpuMetric}},
	{name: "latency", title: "Latency at pipeline 1 ({clients} connections, {keys} keys)",
		a: redisSide, b: hotkvSide, metrics: []metric{opsMetric, p50Metric, p99Metric, p999}},
	{name: "pubsub", title: "Pub/sub ({clients} connections publishing, {size}-byte messages)",
		note: "PUBLISH to a channel with 0, 1 and 100 subscribers (every reply must be the subscriber count), and SET on the " +
			"{keys} prefilled keys with notify-keyspace-events KEA and one pattern subscriber on `__key*__:*` (CONFIG SET on " +
			"both servers before those rows, reset after them), at the pipeline each row names. The subscribers are " +
			"benchmarks/subs, pinned to CPU 1 beside the generator so that the server keeps CPU 0 to itself; they read and " +
			"count everything they receive, and a run fails unless afterwards the server still counts every subscriber " +
			"(PUBSUB NUMSUB, NUMPAT) and each received at least one message per PUBLISH (two per SET: keyspace and keyevent). " +
			"CPU-s per 1M is the server's alone; the subscribers' own CPU time (user+system, from their subscription to " +
			"the end of their drain) is in its own columns, per million requests.",
		a: redisSide, b: hotkvSide, metrics: []metric{opsMetric, cpuMetric, subsMetric, p50Metric, p99Metric}},
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
func writeMarkdown(w io.Writer, in input, charts map[string]string) {
	runs, meta := in.runs, in.meta
	all := summarize(runs)
	failed := failures(in)
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
		n := meta["runs"]
		if !slices.ContainsFunc(runs, func(r run) bool { return !strings.HasPrefix(r.section, "growing") }) {
			n = meta["grow_runs"] // the growing section's rounds are its runs
		}
		fmt.Fprintf(w, "Each number is the median of %s run(s) of %s, with the range over the runs (min–max) beside it "+
			"where there are several; servers pinned to CPU 0, hotkv-benchmark to CPU 1. Every reply was checked against "+
			"what its command must answer, and every server's data (DBSIZE, collection sizes) after its prefill and "+
			"before each run.\n", n, meta["duration"])
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\n**FAILED: %d run(s) or load(s) failed; their cells say failed, and the reasons follow each table. "+
			"A failed check means a server did not answer what it should: its numbers are no comparison.**\n", len(failed))
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
		writeSched(w, sec, meta)
		writeTable(w, sec, cmds, all, runs)
		if sec.name == "throughput-batch" {
			writeSchedEffect(w, cmds, all, meta)
		}
		if c := charts[sec.name]; c != "" {
			fmt.Fprintf(w, "![HotKV/Redis ratios](%s)\n", c)
		}
	}
	writeGrowing(w, in, all)
	writeMemory(w, in.mem, meta)
	writeSmall(w, in.small, meta)
}

// writeSched names each side's scheduling policy as run.sh read it off the running server's
// threads after the prefill.
func writeSched(w io.Writer, sec section, meta map[string]string) {
	a, b := meta["sched."+sec.a.server], meta["sched."+sec.b.server]
	if a == "" && b == "" {
		return
	}
	fmt.Fprintf(w, "Scheduling policy (of each thread, read off the running servers after the prefill): %s %s, %s %s.\n\n",
		sec.a.label, orUnknown(a), sec.b.label, orUnknown(b))
}

// writeOrder says how often each side ran first in a pair of runs (the same command and run number),
// from the order of the manifest.
func writeOrder(w io.Writer, sec section, runs []run) {
	type pair struct {
		cmd string
		n   int
	}
	first := map[pair]string{}
	var pairs []pair
	for _, r := range runs {
		if r.section != sec.name || r.server != sec.a.server && r.server != sec.b.server {
			continue
		}
		p := pair{r.command, r.n}
		if _, seen := first[p]; !seen {
			first[p] = r.server
			pairs = append(pairs, p)
		}
	}
	if len(pairs) < 2 {
		return
	}
	na := 0
	for _, p := range pairs {
		if first[p] == sec.a.server {
			na++
		}
	}
	fmt.Fprintf(w, "\nRun order: %s went first in %d of %d pairs of runs, %s in %d.\n", sec.a.label, na, len(pairs),
		sec.b.label, len(pairs)-na)
}

// writeSchedEffect sets Redis's numbers in the throughput section (SCHED_OTHER) beside its numbers
// under SCHED_BATCH (throughput-batch), with the HotKV/Redis ratio of each, and the geometric means
// of the ratios' medians. Ranges pair run n with run n, across the sections where it compares them.
func writeSchedEffect(w io.Writer, cmds []string, all map[key]stats, meta map[string]string) {
	var rows []string
	var other, batch, redisGain []float64
	for _, cmd := range cmds {
		ro, rb := all[key{"throughput", cmd, "redis"}], all[key{"throughput-batch", cmd, "redisbatch"}]
		ho, hb := all[key{"throughput", cmd, "hotkv"}], all[key{"throughput-batch", cmd, "hotkv"}]
		if !ro.ok() || !rb.ok() || !ho.ok() || !hb.ok() || ro.opsPerSec == 0 || rb.opsPerSec == 0 {
			continue
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s |", cmd, cell(ro, opsMetric), cell(rb, opsMetric),
			ratio(ro, rb, opsMetric), cell(ro, cpuMetric), cell(rb, cpuMetric), ratio(ro, ho, opsMetric), ratio(rb, hb, opsMetric)))
		other, batch = append(other, ho.opsPerSec/ro.opsPerSec), append(batch, hb.opsPerSec/rb.opsPerSec)
		redisGain = append(redisGain, rb.opsPerSec/ro.opsPerSec)
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "Redis under each policy (the throughput section's Redis: %s; this section's: %s):\n\n",
		orUnknown(meta["sched.redis"]), orUnknown(meta["sched.redisbatch"]))
	fmt.Fprintf(w, "| command | Redis ops/s, throughput | Redis ops/s, SCHED_BATCH | batch/throughput | Redis CPU-s per 1M, throughput "+
		"| Redis CPU-s per 1M, SCHED_BATCH | HotKV/Redis, throughput | HotKV/Redis, SCHED_BATCH |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
	fmt.Fprintf(w, "| geometric mean | | | %.2f | | | %.2f | %.2f |\n\n", geomean(redisGain), geomean(other), geomean(batch))
}

func orUnknown(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}

func geomean(v []float64) float64 {
	sum := 0.0
	for _, x := range v {
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(v)))
}

func writeTable(w io.Writer, sec section, cmds []string, all map[key]stats, runs []run) {
	head := []string{"command"}
	for _, m := range sec.metrics {
		head = append(head, sec.a.label+" "+m.header, sec.b.label+" "+m.header)
		switch m.ratio {
		case candidateUp:
			head = append(head, sec.b.label+"/"+sec.a.label)
		case baselineUp:
			head = append(head, sec.a.label+"/"+sec.b.label+" CPU")
		}
	}
	fmt.Fprintf(w, "| %s |\n|---|%s\n", strings.Join(head, " | "), strings.Repeat("---:|", len(head)-1))
	for _, cmd := range cmds {
		a, b := all[key{sec.name, cmd, sec.a.server}], all[key{sec.name, cmd, sec.b.server}]
		row := []string{cmd}
		for _, m := range sec.metrics {
			row = append(row, cell(a, m), cell(b, m))
			if m.ratio != noRatio {
				row = append(row, ratio(a, b, m))
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	if sec.geomean {
		writeGeomeanRow(w, sec, cmds, all)
	}
	if sec.name != "proof" {
		writeGeneratorLoad(w, sec, cmds, all)
	}
	writeOrder(w, sec, runs)
	for _, s := range []side{sec.a, sec.b} {
		for _, cmd := range cmds {
			if st := all[key{sec.name, cmd, s.server}]; st.runs > 0 && !st.ok() {
				fmt.Fprintf(w, "\n%s %s failed in %d of %d runs: %s", s.label, cmd, st.failures, st.runs, shortError(st.err))
			}
		}
	}
	fmt.Fprintln(w)
}

// writeGeomeanRow ends a table with the geometric mean of each ratio column over the commands that
// passed on both sides.
func writeGeomeanRow(w io.Writer, sec section, cmds []string, all map[key]stats) {
	var row []string
	for _, m := range sec.metrics {
		row = append(row, "", "")
		if m.ratio == noRatio {
			continue
		}
		var rs []float64
		for _, cmd := range cmds {
			a, b := all[key{sec.name, cmd, sec.a.server}], all[key{sec.name, cmd, sec.b.server}]
			va, oka := m.value(a)
			vb, okb := m.value(b)
			if a.ok() && b.ok() && oka && okb && va > 0 && vb > 0 {
				if m.ratio == baselineUp {
					rs = append(rs, va/vb)
				} else {
					rs = append(rs, vb/va)
				}
			}
		}
		if len(rs) == 0 {
			row = append(row, "—")
		} else {
			row = append(row, fixed(2)(geomean(rs)))
		}
	}
	line := "| geometric mean |"
	for _, c := range row {
		line += strings.TrimSuffix(" "+c, " ") + " |"
	}
	fmt.Fprintln(w, line)
}

// cell is a side's median, and with several runs their range: 502,999 (480,112–510,001).
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
	var each []float64
	if m.run != nil {
		for _, r := range s.byRun {
			if x, ok := m.run(r); ok {
				each = append(each, x)
			}
		}
	}
	return withRange(m.format(v), m.format, each)
}

// ratio is the sides' ratio of medians, higher favouring the candidate, and with several runs the
// range of the runs' own ratios, run n against run n.
func ratio(a, b stats, m metric) string {
	va, oka := m.value(a)
	vb, okb := m.value(b)
	if !a.ok() || !b.ok() || !oka || !okb || va == 0 || vb == 0 {
		return "—"
	}
	of := func(x, y float64) float64 {
		if m.ratio == baselineUp {
			return x / y
		}
		return y / x
	}
	var each []float64
	for n, ra := range a.byRun {
		rb, ok := b.byRun[n]
		if !ok {
			continue
		}
		xa, oka := m.run(ra)
		xb, okb := m.run(rb)
		if oka && okb && xa > 0 && xb > 0 {
			each = append(each, of(xa, xb))
		}
	}
	return withRange(fixed(2)(of(va, vb)), fixed(2), each)
}

// withRange appends (min–max) of the values to the median when there are at least two.
func withRange(median string, format func(float64) string, values []float64) string {
	if len(values) < 2 {
		return median
	}
	lo, hi := spread(values)
	return fmt.Sprintf("%s (%s–%s)", median, format(lo), format(hi))
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
	// With subscribers beside it on CPU 1: theirs, and the two together (near 100%, the client side
	// may have set the pace).
	var subs, client float64
	var subsAt, clientAt string
	for _, cmd := range cmds {
		for _, s := range []side{sec.a, sec.b} {
			st := all[key{sec.name, cmd, s.server}]
			if !st.ok() || st.subsCPUPerM < 0 {
				continue
			}
			if st.subsBusy > subs {
				subs, subsAt = st.subsBusy, cmd+" on "+s.label
			}
			if st.clientBusy > client {
				client, clientAt = st.clientBusy, cmd+" on "+s.label
			}
		}
	}
	if subsAt != "" {
		fmt.Fprintf(w, "The subscribers' CPU time (on CPU 1 with the generator) was at most %.0f%% of the run's wall time (%s); "+
			"the generator's and the subscribers' together at most %.0f%% (%s).\n", 100*subs, subsAt, 100*client, clientAt)
	}
}
