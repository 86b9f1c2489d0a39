package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A smallRow is one line of run.sh's small-collections table: keys collections of one type, each of
// count elements of size bytes, loaded into one fresh server.
type smallRow struct {
	typ, server          string
	count, size          int
	keys                 float64
	empty, loaded, later memPoint // later.used < 0: not measured (SMALL_WAIT=0)
	seconds              float64
	encoding, err        string
}

func (r smallRow) label() string {
	return fmt.Sprintf("%s of %d %d-byte elements", r.typ, r.count, r.size)
}

// perKey is what the load added over the empty server, per key.
func (r smallRow) perKey(p memPoint, rss bool) float64 {
	if rss {
		return (p.rss - r.empty.rss) / r.keys
	}
	return (p.used - r.empty.used) / r.keys
}

// readSmall reads the tab-separated lines run.sh writes: type, elements, element bytes, server,
// keys, used_memory and RSS empty, loaded and after the wait (-1: not measured), the load's
// seconds, OBJECT ENCODING of key 0 and an error (empty when it worked). An empty path means no
// small-collections section.
func readSmall(path string) ([]smallRow, error) {
	if path == "" {
		return nil, nil
	}
	return readLines(path, "small-collections table", parseSmallRow)
}

func parseSmallRow(line string) (smallRow, error) {
	f := strings.Split(line, "\t")
	if len(f) != 14 {
		return smallRow{}, fmt.Errorf("%d fields, want 14", len(f))
	}
	r := smallRow{typ: f[0], server: f[3], encoding: f[12], err: f[13]}
	var err1, err2 error
	r.count, err1 = strconv.Atoi(f[1])
	r.size, err2 = strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return smallRow{}, fmt.Errorf("bad elements or size in %q", line)
	}
	nums := []*float64{&r.keys, &r.empty.used, &r.empty.rss, &r.loaded.used, &r.loaded.rss, &r.later.used, &r.later.rss, &r.seconds}
	for i, p := range nums {
		v, err := strconv.ParseFloat(f[4+i], 64)
		if err != nil && r.err == "" {
			// A server that died cannot answer INFO: that row failed, the report goes on.
			r.err = fmt.Sprintf("no measurement (field %d is %q)", 5+i, f[4+i])
		}
		*p = v
	}
	if r.keys <= 0 && r.err == "" {
		r.err = "no keys"
	}
	return r, nil
}

// A smallPair is one row of the table: the same collections in Redis and in HotKV.
type smallPair struct {
	first        smallRow // either side's, for the row's labels
	redis, hotkv *smallRow
}

func smallPairs(rows []smallRow) []smallPair {
	var out []smallPair
	at := map[string]int{}
	for i := range rows {
		r := &rows[i]
		k := r.label()
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, smallPair{first: *r})
		}
		if r.server == "redis" {
			out[j].redis = r
		} else {
			out[j].hotkv = r
		}
	}
	return out
}

// writeSmall writes the small-collections section: bytes per key right after the load and, when
// measured, after the wait, against Redis, and how many rows meet the targets.
func writeSmall(w io.Writer, rows []smallRow, meta map[string]string) {
	if len(rows) == 0 {
		return
	}
	ps := smallPairs(rows)
	fmt.Fprintf(w, "\n## Small collections: bytes per key of %s keys built one element per command\n\n", expand("{small_keys}", meta))
	fmt.Fprintf(w, "%s\n\n", expand(smallNote, meta))
	for _, p := range ps {
		if p.redis != nil && p.hotkv != nil {
			fmt.Fprintf(w, "Empty servers (first row's): Redis used_memory %s, RSS %s; HotKV used_memory %s, RSS %s.\n\n",
				mb(p.redis.empty.used), mb(p.redis.empty.rss), mb(p.hotkv.empty.used), mb(p.hotkv.empty.rss))
			break
		}
	}
	fmt.Fprintf(w, "Right after the load:\n\n")
	writeSmallTable(w, ps, func(r *smallRow) (memPoint, bool) { return r.loaded, true }, true)
	if meta["small_wait"] != "" && meta["small_wait"] != "0" {
		fmt.Fprintf(w, "\n%s s after the load:\n\n", meta["small_wait"])
		writeSmallTable(w, ps, func(r *smallRow) (memPoint, bool) { return r.later, r.later.used >= 0 }, false)
	}
	for _, p := range ps {
		for _, r := range []*smallRow{p.redis, p.hotkv} {
			if r != nil && r.err != "" {
				fmt.Fprintf(w, "\n%s %s failed: %s", label(r.server), r.label(), shortError(r.err))
			}
		}
	}
	fmt.Fprintln(w)
}

const smallNote = "Each row: {small_keys} keys (`list:N`, `set:N`, `hash:N`, `zset:N`) of that many elements of " +
	"that many random bytes, written one command per element as applications build them (RPUSH; SADD; HSET " +
	"`hash:N f:I value` with short fields `f:0`, `f:1`, ... and the element bytes as the value; ZADD with a random " +
	"score), element 0 of every key first, then element 1, and so on, by `fill` over {small_conns} connections, every " +
	"reply checked (RPUSH the new length, the others 1), then every key's LLEN, SCARD, HLEN or ZCARD and DBSIZE. " +
	"Fresh servers for every row, loaded one at a time. Bytes per key: (used_memory or VmRSS after the load − the " +
	"same server's, empty) / keys; below 1 in the ratio columns, HotKV uses less. Measured right after the load, not " +
	"settled: HotKV's used_memory still counts the load's garbage until its next collection, where Redis's frees at " +
	"once (the memory section waits for that collection; 32 rows make that too slow here). Encoding is Redis's " +
	"OBJECT ENCODING of key 0."

// writeSmallTable writes one table of bytes per key at the point at gives (false: not measured),
// with the encoding and load times when full, then the count of rows meeting the targets.
func writeSmallTable(w io.Writer, ps []smallPair, at func(*smallRow) (memPoint, bool), full bool) {
	head := "| type | elements | element bytes |"
	if full {
		head += " Redis encoding |"
	}
	head += " Redis B/key (used_memory) | HotKV B/key (used_memory) | HotKV/Redis | Redis B/key (RSS) | HotKV B/key (RSS) | HotKV/Redis |"
	if full {
		head += " Redis load s | HotKV load s |"
	}
	fmt.Fprintf(w, "%s\n|---|---:|---:|%s\n", head, strings.Repeat("---:|", strings.Count(head, "|")-4))
	get := func(r *smallRow, rss bool) (float64, bool) {
		if r == nil || r.err != "" {
			return 0, false
		}
		p, ok := at(r)
		if !ok {
			return 0, false
		}
		return r.perKey(p, rss), true
	}
	var n, usedOK, rssOK int
	for _, p := range ps {
		cells := []string{p.first.typ, strconv.Itoa(p.first.count), strconv.Itoa(p.first.size)}
		if full {
			cells = append(cells, smallEncoding(p.redis))
		}
		var ratios [2]float64
		for i, rss := range []bool{false, true} {
			a, oka := get(p.redis, rss)
			b, okb := get(p.hotkv, rss)
			cells = append(cells, smallBytes(p.redis, a, oka), smallBytes(p.hotkv, b, okb))
			if oka && okb && a > 0 {
				ratios[i] = b / a
				cells = append(cells, fmt.Sprintf("%.2f", b/a))
			} else {
				cells = append(cells, "—")
			}
		}
		if ratios[0] > 0 && ratios[1] > 0 {
			n++
			if ratios[0] <= 1 {
				usedOK++
			}
			if ratios[1] <= 1.1 {
				rssOK++
			}
		}
		if full {
			for _, r := range []*smallRow{p.redis, p.hotkv} {
				if r == nil || r.err != "" {
					cells = append(cells, "—")
				} else {
					cells = append(cells, strconv.FormatFloat(r.seconds, 'f', 1, 64))
				}
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	if n > 0 {
		fmt.Fprintf(w, "\nAgainst issue 14's targets: HotKV's bytes per key by used_memory at most Redis's in %d of %d rows, "+
			"by RSS within 1.1x of Redis's in %d of %d.\n", usedOK, n, rssOK, n)
	}
}

func smallEncoding(r *smallRow) string {
	if r == nil || r.encoding == "" {
		return "—"
	}
	return r.encoding
}

func smallBytes(r *smallRow, v float64, ok bool) string {
	switch {
	case r != nil && r.err != "":
		return "failed"
	case !ok:
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
