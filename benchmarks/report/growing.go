package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The growing-data section: the twelve commands one after another on one pair of servers that keep
// everything, at each key count. The manifest names its runs' sections growing:KEYS (and the GET at
// pipeline 1 that follows the sequence at the largest count growing-latency:KEYS), its run numbers
// are the rounds; the growing table adds what each server held after each step.

var growRedis, growHotkv = side{"redisgrow", "Redis"}, side{"hotkvgrow", "HotKV"}

// A growRow is one line of run.sh's growing table: one server's DBSIZE, used_memory and VmRSS
// (bytes) after one step (the prefill or a command) of one round at one key count.
type growRow struct {
	keys, server, step string
	round              int
	dbsize, used, rss  float64 // negative when the server did not answer
}

// readGrowing reads the tab-separated lines run.sh writes: key count, round, server, step, DBSIZE,
// used_memory and RSS, the last three empty when the server did not answer. An empty path means no
// growing section.
func readGrowing(path string) ([]growRow, error) {
	if path == "" {
		return nil, nil
	}
	return readLines(path, "growing table", parseGrowRow)
}

func parseGrowRow(line string) (growRow, error) {
	f := strings.Split(line, "\t")
	if len(f) != 7 {
		return growRow{}, fmt.Errorf("%d fields, want 7", len(f))
	}
	r := growRow{keys: f[0], server: f[2], step: f[3]}
	var err error
	if r.round, err = strconv.Atoi(f[1]); err != nil {
		return growRow{}, fmt.Errorf("bad round %q", f[1])
	}
	for i, p := range []*float64{&r.dbsize, &r.used, &r.rss} {
		v, err := strconv.ParseFloat(f[4+i], 64)
		if err != nil || v < 0 || i == 2 && v == 0 {
			v = -1 // a server that died answers nothing: its cells stay empty, its runs failed already
		}
		*p = v
	}
	return r, nil
}

// growKeyCounts lists the key counts of the growing section in the order they ran.
func growKeyCounts(runs []run) []string {
	var out []string
	for _, r := range runs {
		if k, ok := strings.CutPrefix(r.section, "growing:"); ok && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// writeGrowing writes one part per key count: throughput and latency per command, what each server
// held after each step, how that compares with the targets, and the GET at pipeline 1.
func writeGrowing(w io.Writer, in input, all map[key]stats) {
	for _, keys := range growKeyCounts(in.runs) {
		sec := section{name: "growing:" + keys, a: growRedis, b: growHotkv, geomean: true,
			metrics: []metric{opsMetric, cpuMetric, p50Metric, p99Metric, p999}}
		cmds := commands(in.runs, sec.name)
		n, _ := strconv.ParseFloat(keys, 64)
		fmt.Fprintf(w, "\n## Growing data: the commands one after another on %s prefilled keys, nothing deleted "+
			"(pipeline %s, %s connections, %s-byte values)\n\n", thousands(n), in.meta["pipeline"], in.meta["clients"], in.meta["size"])
		fmt.Fprintf(w, "%s\n\n", expand(growNote, in.meta))
		by := growIndex(in.grow, keys)
		if a, b := by[growKey{growRedis.server, "prefill"}], by[growKey{growHotkv.server, "prefill"}]; len(a) > 0 || len(b) > 0 {
			fmt.Fprintf(w, "RSS after prefill: Redis %s, HotKV %s.\n\n", growCell(a, rssOf, mb), growCell(b, rssOf, mb))
		}
		writeSched(w, sec, in.meta)
		writeTable(w, sec, cmds, all, in.runs)
		writeGrowMemory(w, cmds, by)
		writeGrowTargets(w, sec, cmds, all, by)
		lat := section{name: "growing-latency:" + keys, a: growRedis, b: growHotkv,
			metrics: []metric{opsMetric, p50Metric, p99Metric, p999}}
		if lcmds := commands(in.runs, lat.name); len(lcmds) > 0 {
			fmt.Fprintf(w, "\n### Latency at pipeline 1 after the sequence (%s connections, %s keys and everything the "+
				"commands wrote still loaded)\n\n", in.meta["clients"], thousands(n))
			writeTable(w, lat, lcmds, all, in.runs)
			writeLatencyTarget(w, lat, lcmds, all)
		}
	}
}

const growNote = "What users run: each command against one pair of servers that keep everything the commands " +
	"before it wrote, no cleanup between commands. Each round starts a fresh redis-server and a fresh HotKV " +
	"(`--threads 1`), both on CPU 0, prefilled with `SET key:N` of {size} bytes, then runs every command on both " +
	"(the generator on CPU 1), which server goes first alternating from command to command and from round to round. " +
	"LPUSH and RPUSH (`list:N`) and SADD (`set:N`) send {size} random bytes per element (`__rand__`), so every " +
	"request adds one; HSET `hash:N element:N`, APPEND `append:N` and INCR `counter:N` pile up as well. Medians of " +
	"{grow_runs} round(s) of {duration} per command, with the range over the rounds. Checks besides every reply's: " +
	"DBSIZE never falls (below what it was before a command, nor below the prefill), grows by at most the requests " +
	"of a command that creates keys (APPEND, INCR, LPUSH, RPUSH, SADD, HSET) and not at all with the others."

// growKey picks one server's rows after one step; growIndex maps it to the rows by round.
type growKey struct{ server, step string }

func growIndex(rows []growRow, keys string) map[growKey]map[int]growRow {
	out := map[growKey]map[int]growRow{}
	for _, r := range rows {
		if r.keys != keys {
			continue
		}
		k := growKey{r.server, r.step}
		if out[k] == nil {
			out[k] = map[int]growRow{}
		}
		out[k][r.round] = r
	}
	return out
}

func usedOf(r growRow) float64   { return r.used }
func rssOf(r growRow) float64    { return r.rss }
func dbsizeOf(r growRow) float64 { return r.dbsize }

// growCell is the median over the rounds that measured it, with their range.
func growCell(by map[int]growRow, get func(growRow) float64, format func(float64) string) string {
	var v []float64
	for _, r := range by {
		if x := get(r); x >= 0 {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return "—"
	}
	return withRange(format(median(v)), format, v)
}

// growRatio is HotKV's median over Redis's (below 1 HotKV holds less), with the range of the
// rounds' own ratios, round n against round n.
func growRatio(a, b map[int]growRow, get func(growRow) float64) string {
	var va, vb, each []float64
	for n, ra := range a {
		if x := get(ra); x > 0 {
			va = append(va, x)
			if rb, ok := b[n]; ok && get(rb) > 0 {
				each = append(each, get(rb)/x)
			}
		}
	}
	for _, rb := range b {
		if x := get(rb); x > 0 {
			vb = append(vb, x)
		}
	}
	if len(va) == 0 || len(vb) == 0 {
		return "—"
	}
	return withRange(fixed(2)(median(vb)/median(va)), fixed(2), each)
}

// writeGrowMemory gives, after the prefill and after each command, both servers' used_memory, RSS
// and DBSIZE, then the same after the whole sequence on a line of its own.
func writeGrowMemory(w io.Writer, cmds []string, by map[growKey]map[int]growRow) {
	steps := append([]string{"prefill"}, cmds...)
	fmt.Fprintf(w, "\nWhat each server held after each step (HotKV/Redis: below 1, HotKV holds less):\n\n")
	fmt.Fprintf(w, "| after | Redis used_memory | HotKV used_memory | HotKV/Redis | Redis RSS | HotKV RSS | HotKV/Redis | "+
		"Redis DBSIZE | HotKV DBSIZE |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, step := range steps {
		a, b := by[growKey{growRedis.server, step}], by[growKey{growHotkv.server, step}]
		if len(a) == 0 && len(b) == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", step, growCell(a, usedOf, mb), growCell(b, usedOf, mb),
			growRatio(a, b, usedOf), growCell(a, rssOf, mb), growCell(b, rssOf, mb), growRatio(a, b, rssOf),
			growCell(a, dbsizeOf, thousands), growCell(b, dbsizeOf, thousands))
	}
	if len(cmds) == 0 {
		return
	}
	last := cmds[len(cmds)-1]
	a, b := by[growKey{growRedis.server, last}], by[growKey{growHotkv.server, last}]
	fmt.Fprintf(w, "\nAfter the whole sequence (after %s): Redis used_memory %s, RSS %s, %s keys; HotKV used_memory %s, "+
		"RSS %s, %s keys; HotKV/Redis RSS %s, used_memory %s.\n", last, growCell(a, usedOf, mb), growCell(a, rssOf, mb),
		growCell(a, dbsizeOf, thousands), growCell(b, usedOf, mb), growCell(b, rssOf, mb), growCell(b, dbsizeOf, thousands),
		growRatio(a, b, rssOf), growRatio(a, b, usedOf))
}

// writeGrowTargets compares the medians with issue 14's targets for this mode: CPU per request at or
// below Redis's on every command and 1.5x in geometric mean, p99 at or below Redis's on every
// command, RSS after the sequence at or below Redis's.
func writeGrowTargets(w io.Writer, sec section, cmds []string, all map[key]stats, by map[growKey]map[int]growRow) {
	var cpuMiss, p99Miss []string
	var ratios []float64
	n := 0
	for _, cmd := range cmds {
		a, b := all[key{sec.name, cmd, sec.a.server}], all[key{sec.name, cmd, sec.b.server}]
		if !a.ok() || !b.ok() || a.cpuPerM <= 0 || b.cpuPerM <= 0 {
			continue
		}
		n++
		r := a.cpuPerM / b.cpuPerM
		ratios = append(ratios, r)
		if r < 1 {
			cpuMiss = append(cpuMiss, fmt.Sprintf("%s %.2f", cmd, r))
		}
		if b.p99 > a.p99 {
			p99Miss = append(p99Miss, fmt.Sprintf("%s %s against %s ms", cmd, millis(b.p99), millis(a.p99)))
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\nAgainst issue 14's targets: Redis/HotKV CPU per request at least 1 on %d of %d commands%s; "+
		"geometric mean %.2f (target 1.5); HotKV's p99 at most Redis's on %d of %d%s",
		n-len(cpuMiss), n, missList(cpuMiss), geomean(ratios), n-len(p99Miss), n, missList(p99Miss))
	if len(cmds) > 0 {
		last := cmds[len(cmds)-1]
		fmt.Fprintf(w, "; HotKV/Redis RSS after the sequence %s (target at most 1)",
			growRatio(by[growKey{growRedis.server, last}], by[growKey{growHotkv.server, last}], rssOf))
	}
	fmt.Fprintln(w, ".")
}

func missList(miss []string) string {
	if len(miss) == 0 {
		return ""
	}
	return " (not: " + strings.Join(miss, ", ") + ")"
}

// writeLatencyTarget compares p99.9 with the "no latency cliff" target.
func writeLatencyTarget(w io.Writer, sec section, cmds []string, all map[key]stats) {
	for _, cmd := range cmds {
		a, b := all[key{sec.name, cmd, sec.a.server}], all[key{sec.name, cmd, sec.b.server}]
		if !a.ok() || !b.ok() || a.p999 <= 0 || b.p999 <= 0 {
			continue
		}
		verdict := "at most Redis's: met"
		if b.p999 > a.p999 {
			verdict = "above Redis's: not met"
		}
		fmt.Fprintf(w, "\nAgainst issue 14's target (no latency cliff from the collector): p99.9 of %s at pipeline 1, "+
			"HotKV %s ms against Redis %s ms, %s.\n", cmd, millis(b.p999), millis(a.p999), verdict)
	}
}
