package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// growFixture writes a manifest, metadata and growing table like run.sh's growing section at 1,000
// keys, two rounds: SET and LPUSH on both servers, LPUSH failing its DBSIZE check on HotKV in round
// 2, then GET at pipeline 1.
func growFixture(t *testing.T) (manifest, meta, growPath string) {
	t.Helper()
	dir := t.TempDir()
	var lines []string
	add := func(section, server, cmd string, round int, ops uint64, serverCPU, p99 float64, errText string) {
		res := map[string]any{"ops": ops, "seconds": 1.0, "ops_per_sec": float64(ops), "generator_cpu_seconds": 0.25,
			"latency_us": map[string]float64{"p50": p99 / 4, "p99": p99, "p99.9": 2 * p99}, "error": errText}
		b, _ := json.Marshal(res)
		path := filepath.Join(dir, fmt.Sprintf("%s-%s-%s-%d.json", strings.ReplaceAll(section, ":", "_"), server, cmd, round))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		status := 0
		if errText != "" {
			status = 1
		}
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%.3f\t%d", section, server, cmd, round, path, serverCPU, status))
	}
	var grow []string
	sample := func(round int, server, step string, dbsize, usedMB, rssMB float64) {
		grow = append(grow, fmt.Sprintf("1000\t%d\t%s\t%s\t%.0f\t%.0f\t%.0f", round, server, step, dbsize, usedMB*(1<<20), rssMB*(1<<20)))
	}
	for round := 1; round <= 2; round++ {
		sample(round, "redisgrow", "prefill", 1000, 10, 20)
		sample(round, "hotkvgrow", "prefill", 1000, 8, 16)
		// SET: Redis 1M ops/s at 1 CPU-s per 1M, HotKV 2M at 0.5 (round 2: 0.25), p99 1 ms against 2 ms.
		add("growing:1000", "redisgrow", "SET", round, 1e6, 1, 1000, "")
		sample(round, "redisgrow", "SET", 1000, 10, 20)
		add("growing:1000", "hotkvgrow", "SET", round, 2e6, 1/float64(round), 2000, "")
		sample(round, "hotkvgrow", "SET", 1000, 8, 16)
		// LPUSH: Redis grows to 1,500 keys and 30 MB (round 2: 40), HotKV to 1,400 keys and 60 MB RSS.
		add("growing:1000", "redisgrow", "LPUSH", round, 1e6, 1, 1000, "")
		sample(round, "redisgrow", "LPUSH", 1500, 25, 20+10*float64(round))
		errText := ""
		if round == 2 {
			errText = "DBSIZE fell from 1000 to 900 during LPUSH"
		}
		add("growing:1000", "hotkvgrow", "LPUSH", round, 1e6, 2, 500, errText)
		sample(round, "hotkvgrow", "LPUSH", 1400, 30, 60)
		add("growing-latency:1000", "hotkvgrow", "GET", round, 5e4, 1, 300, "")
		add("growing-latency:1000", "redisgrow", "GET", round, 4e4, 1, 400, "")
	}
	// A server that died answers nothing: its sample has empty fields.
	grow = append(grow, "1000\t3\thotkvgrow\tSET\t\t\t")
	manifest, meta, growPath = filepath.Join(dir, "manifest.tsv"), filepath.Join(dir, "meta.txt"), filepath.Join(dir, "growing.tsv")
	os.WriteFile(manifest, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.WriteFile(growPath, []byte(strings.Join(grow, "\n")+"\n"), 0o644)
	os.WriteFile(meta, []byte("date=2026-01-02\nredis=7.0.15\npipeline=30\nclients=50\nsize=256\nruns=3\ngrow_runs=2\n"+
		"duration=5s\nsched.redisgrow=SCHED_OTHER (5 threads)\nsched.hotkvgrow=SCHED_BATCH (4 threads)\n"), 0o644)
	return manifest, meta, growPath
}

func TestGrowingTables(t *testing.T) {
	manifest, meta, grow := growFixture(t)
	md := filepath.Join(t.TempDir(), "r.md")
	failed, err := build(manifest, meta, tables{growing: grow}, md, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(md)
	out := string(b)
	for _, want := range []string{
		"Each number is the median of 2 run(s) of 5s", // the rounds, not RUNS: only growing runs here
		"**FAILED: 1 run(s) or load(s) failed;",
		"## Growing data: the commands one after another on 1,000 prefilled keys, nothing deleted (pipeline 30, 50 connections, 256-byte values)",
		"Medians of 2 round(s) of 5s per command",
		"RSS after prefill: Redis 20.0 MB (20.0 MB–20.0 MB), HotKV 16.0 MB (16.0 MB–16.0 MB).",
		"Scheduling policy (of each thread, read off the running servers after the prefill): Redis SCHED_OTHER (5 threads), HotKV SCHED_BATCH (4 threads).",
		"| command | Redis ops/s | HotKV ops/s | HotKV/Redis | Redis CPU-s per 1M | HotKV CPU-s per 1M | Redis/HotKV CPU | " +
			"Redis p50 ms | HotKV p50 ms | Redis p99 ms | HotKV p99 ms | Redis p99.9 ms | HotKV p99.9 ms |",
		// HotKV's CPU per 1M: 0.5 and 0.25 (1 and 0.5 CPU-s for 2M), median 0.375; ratios 2 and 4, of the medians 2.67
		"| SET | 1,000,000 (1,000,000–1,000,000) | 2,000,000 (2,000,000–2,000,000) | 2.00 (2.00–2.00) | 1.00 (1.00–1.00) | " +
			"0.38 (0.25–0.50) | 2.67 (2.00–4.00) | 0.250 | 0.500 | 1.000 | 2.000 | 2.000 | 4.000 |",
		"| LPUSH | 1,000,000 (1,000,000–1,000,000) | failed | — |",
		"| geometric mean | | | 2.00 | | | 2.67 | | | | | | |",
		"HotKV LPUSH failed in 1 of 2 runs: DBSIZE fell from 1000 to 900 during LPUSH",
		"| after | Redis used_memory | HotKV used_memory | HotKV/Redis | Redis RSS | HotKV RSS | HotKV/Redis | Redis DBSIZE | HotKV DBSIZE |",
		"| prefill | 10.0 MB (10.0 MB–10.0 MB) | 8.0 MB (8.0 MB–8.0 MB) | 0.80 (0.80–0.80) | 20.0 MB (20.0 MB–20.0 MB) | " +
			"16.0 MB (16.0 MB–16.0 MB) | 0.80 (0.80–0.80) | 1,000 (1,000–1,000) | 1,000 (1,000–1,000) |",
		// Redis's RSS 30 and 40 MB, median 35; HotKV 60: ratio 1.71 (2.00 and 1.50)
		"| LPUSH | 25.0 MB (25.0 MB–25.0 MB) | 30.0 MB (30.0 MB–30.0 MB) | 1.20 (1.20–1.20) | 35.0 MB (30.0 MB–40.0 MB) | " +
			"60.0 MB (60.0 MB–60.0 MB) | 1.71 (1.50–2.00) | 1,500 (1,500–1,500) | 1,400 (1,400–1,400) |",
		"After the whole sequence (after LPUSH): Redis used_memory 25.0 MB (25.0 MB–25.0 MB), RSS 35.0 MB (30.0 MB–40.0 MB), " +
			"1,500 (1,500–1,500) keys; HotKV used_memory 30.0 MB (30.0 MB–30.0 MB), RSS 60.0 MB (60.0 MB–60.0 MB), " +
			"1,400 (1,400–1,400) keys; HotKV/Redis RSS 1.71 (1.50–2.00), used_memory 1.20 (1.20–1.20).",
		"Against issue 14's targets: Redis/HotKV CPU per request at least 1 on 1 of 1 commands; geometric mean 2.67 (target 1.5); " +
			"HotKV's p99 at most Redis's on 0 of 1 (not: SET 2.000 against 1.000 ms); HotKV/Redis RSS after the sequence 1.71 (1.50–2.00) (target at most 1).",
		"### Latency at pipeline 1 after the sequence (50 connections, 1,000 keys and everything the commands wrote still loaded)",
		"| GET | 40,000 (40,000–40,000) | 50,000 (50,000–50,000) | 1.25 (1.25–1.25) | 0.100 | 0.075 | 0.400 | 0.300 | 0.800 | 0.600 |",
		"Run order: Redis went first in 0 of 2 pairs of runs, HotKV in 2.",
		"p99.9 of GET at pipeline 1, HotKV 0.600 ms against Redis 0.800 ms, at most Redis's: met.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "growing:1000: LPUSH on hotkvgrow, run 2: DBSIZE fell") {
		t.Errorf("failures %q", failed)
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestGrowingTableErrors(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"1000\t1\tredisgrow\n", "1000\tx\tredisgrow\tSET\t1\t1\t1\n"} {
		path := filepath.Join(dir, "bad.tsv")
		os.WriteFile(path, []byte(bad), 0o644)
		if _, err := readGrowing(path); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
	if rows, err := readGrowing(""); err != nil || rows != nil {
		t.Fatalf("no growing section: %v %v", rows, err)
	}
}
