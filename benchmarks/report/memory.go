package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A memRow is one line of run.sh's memory table: one dataset loaded into one fresh server.
type memRow struct {
	dataset, server string
	members         float64
	empty, loaded   memPoint
	settled         memPoint // negative when not measured (--quick)
	seconds         float64  // how long the load took
	err             string
}

// memPoint is what the server used at one moment, in bytes.
type memPoint struct{ used, rss float64 }

// perMember is what the dataset added over the empty server, per member.
func (r memRow) perMember(p memPoint, rss bool) float64 {
	if rss {
		return (p.rss - r.empty.rss) / r.members
	}
	return (p.used - r.empty.used) / r.members
}

// readMemory reads the tab-separated lines run.sh writes: dataset, server, members, then used_memory
// and RSS empty, loaded and settled, the load's seconds and an error (empty when it worked). An empty
// path means no memory section.
func readMemory(path string) ([]memRow, error) {
	if path == "" {
		return nil, nil
	}
	return readLines(path, "memory table", parseMemRow)
}

func parseMemRow(line string) (memRow, error) {
	f := strings.Split(line, "\t")
	if len(f) != 11 {
		return memRow{}, fmt.Errorf("%d fields, want 11", len(f))
	}
	r := memRow{dataset: f[0], server: f[1], err: f[10]}
	nums := []*float64{&r.members, &r.empty.used, &r.empty.rss, &r.loaded.used, &r.loaded.rss,
		&r.settled.used, &r.settled.rss, &r.seconds}
	for i, p := range nums {
		v, err := strconv.ParseFloat(f[2+i], 64)
		if err != nil && r.err == "" {
			// A server that died cannot answer INFO: that row failed, the report goes on.
			r.err = fmt.Sprintf("no measurement (field %d is %q)", 3+i, f[2+i])
		}
		*p = v
	}
	if r.members <= 0 && r.err == "" {
		r.err = "no members"
	}
	return r, nil
}

// datasetAbout describes fill's memory datasets for the table; n is the member count.
func datasetAbout(name string, n float64) string {
	c := thousands(n)
	switch name {
	case "intset":
		return "set of the integers 0.." + thousands(n-1)
	case "intset-random":
		return "set of " + c + " random 63-bit integers"
	case "strset":
		return "set of " + c + " random 16-byte strings"
	case "hash":
		return "hash of " + c + " fields field:N, 16-byte values"
	case "zset":
		return "sorted set of " + c + " members member:N, random scores"
	case "smallhash":
		return thousands(n/10) + " hashes of 10 fields, 10-byte values"
	}
	return name
}

// A memPair is one dataset's Redis and HotKV rows.
type memPair struct {
	dataset string
	redis   *memRow
	hotkv   *memRow
}

func pairs(rows []memRow) []memPair {
	var out []memPair
	at := map[string]int{}
	for i := range rows {
		r := &rows[i]
		j, ok := at[r.dataset]
		if !ok {
			j = len(out)
			at[r.dataset] = j
			out = append(out, memPair{dataset: r.dataset})
		}
		if r.server == "redis" {
			out[j].redis = r
		} else {
			out[j].hotkv = r
		}
	}
	return out
}

// writeMemory writes the memory section: bytes per member by used_memory and by RSS, each as loaded
// and settled, then the totals.
func writeMemory(w io.Writer, rows []memRow, meta map[string]string) {
	if len(rows) == 0 {
		return
	}
	ps := pairs(rows)
	fmt.Fprintf(w, "\n## Memory after loading one dataset into fresh servers\n\n")
	settled := "*settled* is after each HotKV's first garbage collection that followed its load (at most " +
		meta["mem_settle"] + " s later), Redis measured at the same moment"
	if meta["mem_settle"] == "0" {
		settled = "*settled* was not measured (MEM_SETTLE=0, as in --quick)"
	}
	fmt.Fprintf(w, "Bytes per member: (used_memory or VmRSS after the load − the same server's, empty) / members. "+
		"*Loaded* is right after the loader's last reply; %s. Loaded by `fill` (benchmarks/fill): one pipelined "+
		"connection of variadic commands.\n\n", settled)
	writeEmpty(w, ps)
	for _, rss := range []bool{false, true} {
		title := "used_memory"
		if rss {
			title = "RSS"
		}
		fmt.Fprintf(w, "\n%s, bytes per member:\n\n", title)
		fmt.Fprintf(w, "| dataset | Redis loaded | Redis settled | HotKV loaded | HotKV settled | HotKV/Redis loaded | HotKV/Redis settled |\n")
		fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|\n")
		for _, p := range ps {
			fmt.Fprintf(w, "| %s | %s |\n", datasetLabel(p), strings.Join(perMemberCells(p, rss), " | "))
		}
	}
	writeTotals(w, ps)
	for _, p := range ps {
		for _, r := range []*memRow{p.redis, p.hotkv} {
			if r != nil && r.err != "" {
				fmt.Fprintf(w, "\n%s %s failed: %s", label(r.server), p.dataset, shortError(r.err))
			}
		}
	}
	fmt.Fprintln(w)
}

func datasetLabel(p memPair) string {
	for _, r := range []*memRow{p.redis, p.hotkv} {
		if r != nil {
			return p.dataset + ": " + datasetAbout(p.dataset, r.members)
		}
	}
	return p.dataset
}

func label(server string) string {
	if server == "redis" {
		return "Redis"
	}
	return "HotKV"
}

func perMemberCells(p memPair, rss bool) []string {
	get := func(r *memRow, settled bool) (float64, bool) {
		if r == nil || r.err != "" || (settled && r.settled.used < 0) {
			return 0, false
		}
		if settled {
			return r.perMember(r.settled, rss), true
		}
		return r.perMember(r.loaded, rss), true
	}
	cells := []string{}
	for _, r := range []*memRow{p.redis, p.hotkv} {
		for _, settled := range []bool{false, true} {
			cells = append(cells, bytesCell(r, settled, get))
		}
	}
	for _, settled := range []bool{false, true} {
		a, oka := get(p.redis, settled)
		b, okb := get(p.hotkv, settled)
		if oka && okb && a > 0 {
			cells = append(cells, fmt.Sprintf("%.2f", b/a))
		} else {
			cells = append(cells, "—")
		}
	}
	return cells
}

func bytesCell(r *memRow, settled bool, get func(*memRow, bool) (float64, bool)) string {
	if r != nil && r.err != "" {
		return "failed"
	}
	v, ok := get(r, settled)
	if !ok {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// writeEmpty gives the baseline subtracted from every figure.
func writeEmpty(w io.Writer, ps []memPair) {
	for _, p := range ps {
		if p.redis == nil || p.hotkv == nil {
			continue
		}
		fmt.Fprintf(w, "Empty servers (first dataset's): Redis used_memory %s, RSS %s; HotKV used_memory %s, RSS %s.\n",
			mb(p.redis.empty.used), mb(p.redis.empty.rss), mb(p.hotkv.empty.used), mb(p.hotkv.empty.rss))
		return
	}
}

// writeTotals gives whole-server figures, settled where measured, and how long each load took.
func writeTotals(w io.Writer, ps []memPair) {
	fmt.Fprintf(w, "\nWhole server (settled where measured, otherwise as loaded) and load time:\n\n")
	fmt.Fprintf(w, "| dataset | Redis used_memory | HotKV used_memory | Redis RSS | HotKV RSS | Redis load s | HotKV load s |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range ps {
		cells := []string{p.dataset}
		final := func(r *memRow) (memPoint, bool) {
			if r == nil || r.err != "" {
				return memPoint{}, false
			}
			if r.settled.used >= 0 {
				return r.settled, true
			}
			return r.loaded, true
		}
		for _, rss := range []bool{false, true} {
			for _, r := range []*memRow{p.redis, p.hotkv} {
				pt, ok := final(r)
				switch {
				case !ok:
					cells = append(cells, "—")
				case rss:
					cells = append(cells, mb(pt.rss))
				default:
					cells = append(cells, mb(pt.used))
				}
			}
		}
		for _, r := range []*memRow{p.redis, p.hotkv} {
			if r == nil || r.err != "" {
				cells = append(cells, "—")
			} else {
				cells = append(cells, strconv.FormatFloat(r.seconds, 'f', 1, 64))
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

// mb formats bytes in MB of 2^20 bytes with one decimal, as the report's other RSS figures.
func mb(b float64) string { return strconv.FormatFloat(b/(1<<20), 'f', 1, 64) + " MB" }
