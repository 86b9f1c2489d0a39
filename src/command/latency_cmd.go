package command

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

const latencyFlags = Admin | NoScript | Loading | Stale

var latencyCommands = []*Spec{
	(&Spec{Name: "latency", Arity: -2}).sub(
		&Spec{Name: "latency|latest", Arity: 2, Flags: latencyFlags, Scope: ScopeConn, Run: latencyLatest},
		&Spec{Name: "latency|history", Arity: 3, Flags: latencyFlags, Scope: ScopeConn, Run: latencyHistory},
		&Spec{Name: "latency|reset", Arity: -2, Flags: latencyFlags, Scope: ScopeConn, Run: latencyReset},
		&Spec{Name: "latency|doctor", Arity: 2, Flags: latencyFlags, Scope: ScopeConn, Run: latencyDoctor},
		&Spec{Name: "latency|graph", Arity: 3, Flags: latencyFlags, Scope: ScopeConn, Run: latencyGraph},
		&Spec{Name: "latency|histogram", Arity: -2, Flags: latencyFlags, Scope: ScopeConn, Run: latencyHistogram},
		&Spec{Name: "latency|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: latencyHelp},
	),
}

// introspectionCommands are SLOWLOG, LATENCY and MONITOR: one family line in table.go.
var introspectionCommands = append(append(append([]*Spec(nil), slowlogCommands...), latencyCommands...),
	monitorCommands...)

// LATENCY LATEST
func latencyLatest(c *Ctx) {
	ev := &c.E.lat.events
	ev.mu.Lock()
	defer ev.mu.Unlock()
	names := ev.sortedNames()
	c.ArrayLen(len(names))
	for _, name := range names {
		ts := ev.series[name]
		last := ts.samples[(ts.idx+latencyTSLen-1)%latencyTSLen]
		c.ArrayLen(4)
		c.BulkString(name)
		c.Int(last.unix)
		c.Int(last.ms)
		c.Int(ts.max)
	}
}

// LATENCY HISTORY event
func latencyHistory(c *Ctx) {
	ev := &c.E.lat.events
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ts := ev.series[string(c.Args[2])]
	if ts == nil {
		c.ArrayLen(0)
		return
	}
	h := ts.history()
	c.ArrayLen(len(h))
	for _, s := range h {
		c.ArrayLen(2)
		c.Int(s.unix)
		c.Int(s.ms)
	}
}

// LATENCY RESET [event ...]
func latencyReset(c *Ctx) { c.Int(int64(c.E.lat.events.reset(c.Args[2:]))) }

// LATENCY GRAPH event
func latencyGraph(c *Ctx) {
	ev := &c.E.lat.events
	ev.mu.Lock()
	defer ev.mu.Unlock()
	name := string(c.Args[2])
	ts := ev.series[name]
	if ts == nil {
		c.Errf(ErrLatencyNoSamples, c.Args[2])
		return
	}
	c.Verbatim(latencyGraphText(name, ts, time.Now().Unix()))
}

// latencyGraphText draws a series as latencyCommandGenSparkeline does: a title, a rule of 80
// dashes, and a 4-row sparkline of the samples labelled with how long ago each happened.
func latencyGraphText(name string, ts *latencySeries, now int64) []byte {
	h := ts.history()
	var seq sparkSeq
	var lo, hi int64
	for i, s := range h {
		if i == 0 {
			lo, hi = s.ms, s.ms
		}
		lo, hi = min(lo, s.ms), max(hi, s.ms)
		seq.add(float64(s.ms), agoLabel(now-s.unix))
	}
	out := []byte(name + " - high " + strconv.FormatInt(hi, 10) + " ms, low " + strconv.FormatInt(lo, 10) +
		" ms (all time high " + strconv.FormatInt(ts.max, 10) + " ms)\n")
	out = append(out, strings.Repeat("-", 80)+"\n"...)
	return seq.render(out, 80, 4)
}

func agoLabel(elapsed int64) string {
	switch {
	case elapsed < 60:
		return strconv.FormatInt(elapsed, 10) + "s"
	case elapsed < 3600:
		return strconv.FormatInt(elapsed/60, 10) + "m"
	case elapsed < 86400:
		return strconv.FormatInt(elapsed/3600, 10) + "h"
	}
	return strconv.FormatInt(elapsed/86400, 10) + "d"
}

// sparkSeq is a sequence of labelled samples drawn as Redis's sparkline.c draws them, with its
// fill charset.
type sparkSeq struct {
	values   []float64
	labels   []string
	lo, hi   float64
	nlabeled int
}

func (s *sparkSeq) add(v float64, label string) {
	if len(s.values) == 0 {
		s.lo, s.hi = v, v
	} else if v < s.lo {
		s.lo = v
	} else if v > s.hi {
		s.hi = v
	}
	s.values = append(s.values, v)
	s.labels = append(s.labels, label)
	if label != "" {
		s.nlabeled++
	}
}

func (s *sparkSeq) render(out []byte, columns, rows int) []byte {
	for j := 0; j < len(s.values); j += columns {
		if j != 0 {
			out = append(out, '\n')
		}
		out = s.renderRange(out, rows, j, min(columns, len(s.values)-j))
	}
	return out
}

// renderRange draws samples offset..offset+n: rows of bars ('_', 'o', '#' for the three steps
// of a row, '|' below a bar's top), a blank line, then the labels written downwards.
func (s *sparkSeq) renderRange(out []byte, rows, offset, n int) []byte {
	const fill, marginTop = "_o#", 1
	steps := len(fill) * rows
	rel := s.hi - s.lo
	if rel == 0 {
		rel = 1
	}
	chars := make([]byte, n)
	for row := 0; ; row++ {
		more := false
		for j := range chars {
			chars[j] = ' '
		}
		for j := range n {
			i := j + offset
			step := int(float64(int((s.values[i]-s.lo)*float64(steps))) / rel)
			step = min(max(step, 0), steps-1)
			if row < rows {
				more = true
				idx := step - (rows-row-1)*len(fill)
				if idx >= 0 && idx < len(fill) {
					chars[j] = fill[idx]
				} else if idx >= len(fill) {
					chars[j] = '|'
				}
				continue
			}
			if s.nlabeled > 0 && row-rows < marginTop {
				more = true
				break
			}
			if l := s.labels[i]; l != "" && len(l) > row-rows-marginTop {
				more = true
				chars[j] = l[row-rows-marginTop]
			}
		}
		if !more {
			return out
		}
		out = append(append(out, chars...), '\n')
	}
}

// LATENCY HISTOGRAM [command ...]: each command's calls and the cumulative count below each
// power-of-two bound in microseconds, the bounds shown as Redis's HDR histogram shows them.
// Unknown names and commands never timed are left out; container commands name their
// subcommands.
func latencyHistogram(c *Ctx) {
	var specs []*Spec
	if len(c.Args) == 2 {
		eachSpec(func(s *Spec) { specs = append(specs, s) })
		slices.SortFunc(specs, func(a, b *Spec) int { return strings.Compare(a.Name, b.Name) })
	} else {
		seen := map[*Spec]bool{}
		for _, a := range c.Args[2:] {
			s := specNamed(string(a))
			if s == nil {
				continue
			}
			group := []*Spec{s}
			if s.Subs != nil {
				group = group[:0]
				for _, sub := range s.Subs {
					group = append(group, sub)
				}
			}
			for _, g := range group {
				if !seen[g] {
					seen[g] = true
					specs = append(specs, g)
				}
			}
		}
	}
	type hist struct {
		name    string
		total   uint64
		buckets []LatencyBucket
	}
	var hs []hist
	for _, s := range specs {
		var m histCounts
		c.E.latencyOf(s, &m)
		if m.total > 0 {
			hs = append(hs, hist{s.Name, m.total, m.powerBuckets()})
		}
	}
	c.MapLen(len(hs))
	for _, h := range hs {
		c.BulkString(h.name)
		c.MapLen(2)
		c.BulkString("calls")
		c.Int(int64(h.total))
		c.BulkString("histogram_usec")
		var shown []LatencyBucket
		var prev uint64
		for _, b := range h.buckets {
			if b.Count > prev {
				shown = append(shown, b)
			}
			prev = b.Count
		}
		c.MapLen(len(shown))
		for _, b := range shown {
			c.Int(hdrUsecLabel(int64(b.Le)))
			c.Int(int64(b.Count))
		}
	}
}

// hdrUsecLabel is the bucket bound Redis prints for a power of two ns of at least 256: the
// highest value its HDR histogram (2 significant digits, 256 sub-buckets) holds in the
// bound's bucket, in microseconds.
func hdrUsecLabel(ns int64) int64 { return (ns + ns/128 - 1) / 1000 }

// LATENCY HELP
func latencyHelp(c *Ctx) { replyHelpLines(c, latencyHelpLines) }

var latencyHelpLines = []string{
	"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return a human readable latency analysis report.",
	"GRAPH <event>",
	"    Return an ASCII latency graph for the <event> class.",
	"HISTORY <event>",
	"    Return time-latency samples for the <event> class.",
	"LATEST",
	"    Return the latest latency samples for all events.",
	"RESET [<event> ...]",
	"    Reset latency data of one or more <event> classes.",
	"    (default: reset all data for all event classes)",
	"HISTOGRAM [COMMAND ...]",
	"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
	"    If no commands are specified then all histograms are replied.",
	"HELP",
	"    Prints this help.",
}
