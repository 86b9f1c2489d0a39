package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// result is the --json file: the settings, then what was measured. Latencies are in microseconds.
type result struct {
	Host         string          `json:"host"`
	Port         int             `json:"port"`
	Threads      int             `json:"threads"`
	Clients      int             `json:"clients_per_thread"`
	Connections  int             `json:"connections"`
	Pipeline     int             `json:"pipeline"`
	Keys         uint64          `json:"keys"`
	Distribution string          `json:"distribution"`
	DataSize     int             `json:"data_size"`
	RESP         int             `json:"resp"`
	Commands     []string        `json:"commands"`
	Ratio        string          `json:"ratio,omitempty"`
	AllowMisses  bool            `json:"allow_misses,omitempty"`
	Prefill      *prefillResult  `json:"prefill,omitempty"`
	Ops          uint64          `json:"ops"`
	Seconds      float64         `json:"seconds"`
	OpsPerSec    float64         `json:"ops_per_sec"`
	CPUSeconds   float64         `json:"generator_cpu_seconds"`
	Latency      latency         `json:"latency_us"`
	PerCommand   []commandResult `json:"per_command"`
	Error        string          `json:"error,omitempty"`
}

type prefillResult struct {
	Keys    uint64  `json:"keys"`
	Seconds float64 `json:"seconds"`
}

type commandResult struct {
	Command string  `json:"command"`
	Expect  string  `json:"expect"` // what every reply had to be (--expect, or inferred)
	Ops     int64   `json:"ops"`
	Latency latency `json:"latency_us"`
}

type latency struct {
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99.9"`
	P9999 float64 `json:"p99.99"`
	Max   float64 `json:"max"`
}

func newResult(cfg *config) *result {
	return &result{
		Host: cfg.host, Port: cfg.port, Threads: cfg.threads, Clients: cfg.clients,
		Connections: cfg.threads * cfg.clients, Pipeline: cfg.pipeline, Keys: cfg.keys,
		Distribution: cfg.dist, DataSize: cfg.dataSize, RESP: cfg.resp, Commands: cfg.commands, Ratio: cfg.ratio,
		AllowMisses: cfg.allowMisses,
	}
}

// fill adds the run phase's measurements: per-connection histograms merged per command and overall.
func (r *result) fill(tpls []*template, pr phaseResult) {
	r.Ops, r.Seconds = pr.ops, pr.elapsed.Seconds()
	if r.Seconds > 0 {
		r.OpsPerSec = float64(r.Ops) / r.Seconds
	}
	r.CPUSeconds = pr.cpu.Seconds()
	all := hdrhistogram.New(1, maxLatency, 3)
	for i, t := range tpls {
		h := hdrhistogram.New(1, maxLatency, 3)
		for _, hs := range pr.hists {
			h.Merge(hs[i])
		}
		all.Merge(h)
		r.PerCommand = append(r.PerCommand, commandResult{Command: t.text, Expect: t.expect.spec, Ops: h.TotalCount(), Latency: summarize(h)})
	}
	r.Latency = summarize(all)
}

func summarize(h *hdrhistogram.Histogram) latency {
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	if h.TotalCount() == 0 {
		return latency{}
	}
	return latency{
		Mean: h.Mean() / 1e3, P50: us(h.ValueAtQuantile(50)), P90: us(h.ValueAtQuantile(90)),
		P99: us(h.ValueAtQuantile(99)), P999: us(h.ValueAtQuantile(99.9)),
		P9999: us(h.ValueAtQuantile(99.99)), Max: us(h.Max()),
	}
}

func (r *result) writeJSON(path string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // expectations such as int:>=1 stay readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("cannot encode the result: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("cannot write the result: %w", err)
	}
	return nil
}

// printSummary writes the human-readable table: one row per command, then the totals.
func (r *result) printSummary(out io.Writer) {
	fmt.Fprintf(out, "%s:%d  %d thread(s) x %d connection(s)  pipeline %d  %d keys %s  %d-byte data  RESP%d\n",
		r.Host, r.Port, r.Threads, r.Clients, r.Pipeline, r.Keys, r.Distribution, r.DataSize, r.RESP)
	if r.Prefill != nil {
		fmt.Fprintf(out, "prefill: %d keys in %.2fs\n", r.Prefill.Keys, r.Prefill.Seconds)
	}
	if r.Ops == 0 {
		return
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\tops\tops/s\tavg ms\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\t")
	row := func(name string, ops int64, l latency) {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", name, ops, float64(ops)/r.Seconds,
			l.Mean/1e3, l.P50/1e3, l.P99/1e3, l.P999/1e3, l.Max/1e3)
	}
	for _, c := range r.PerCommand {
		row(c.Command, c.Ops, c.Latency)
	}
	if len(r.PerCommand) > 1 {
		row("total", int64(r.Ops), r.Latency)
	}
	tw.Flush()
	fmt.Fprintf(out, "%.2fs, generator CPU %.2fs (%.3f s per million requests)\n", r.Seconds, r.CPUSeconds,
		r.CPUSeconds/max(float64(r.Ops), 1)*1e6)
}

// printProgress writes the once-a-second line. recent is what the last second did.
func printProgress(out io.Writer, p phase, at time.Duration, ops, recent uint64) {
	if out == nil {
		return
	}
	secs := at.Round(time.Second)
	if p.total > 0 {
		fmt.Fprintf(out, "[%s %v] %d/%d (%.0f%%), %d/s now, %.0f/s average\n", p.name, secs, ops, p.total,
			100*float64(ops)/float64(p.total), recent, float64(ops)/at.Seconds())
		return
	}
	fmt.Fprintf(out, "[%s %v] %d requests, %d/s now, %.0f/s average\n", p.name, secs, ops, recent,
		float64(ops)/at.Seconds())
}
