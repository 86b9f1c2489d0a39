package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture writes a manifest and metadata like run.sh's: SET passes on both servers with known
// numbers, taking turns to go first, LPUSH fails on HotKV in one run of three, SET runs again with
// Redis under SCHED_BATCH, LPOP runs in the collections section, and the proof section compares the
// generators; the pubsub section has subscribers' CPU (the manifest's eighth field).
func fixture(t *testing.T) (manifest, meta string) {
	t.Helper()
	dir := t.TempDir()
	var lines []string
	addSubs := func(section, server, cmd string, n int, ops uint64, secs, serverCPU, p99 float64, errText string, subsCPU float64) {
		res := map[string]any{"ops": ops, "seconds": secs, "ops_per_sec": float64(ops) / secs,
			"generator_cpu_seconds": secs / 2, "latency_us": map[string]float64{"p50": p99 / 4, "p99": p99, "p99.9": 2 * p99},
			"error": errText}
		b, _ := json.Marshal(res)
		path := filepath.Join(dir, fmt.Sprintf("%s-%s-%s-%d.json", section, server, cmd, n))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		status := 0
		if errText != "" {
			status = 1
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%.3f\t%d", section, server, cmd, n, path, serverCPU, status)
		if subsCPU >= -1 {
			line += fmt.Sprintf("\t%.3f", subsCPU)
		}
		lines = append(lines, line)
	}
	add := func(section, server, cmd string, n int, ops uint64, secs, serverCPU, p99 float64, errText string) {
		addSubs(section, server, cmd, n, ops, secs, serverCPU, p99, errText, -2) // seven fields
	}
	// Redis SET: 1M, 3M, 2M ops in 1s with 1 CPU-s per 1M; HotKV twice the ops at half the CPU per
	// request, but 3x in the second run (ratios 2, 3, 2). Redis goes first in runs 1 and 3.
	for i, ops := range []uint64{1e6, 3e6, 2e6} {
		hot := 2 * ops
		if i == 1 {
			hot = 3 * ops
		}
		r := func() { add("throughput", "redis", "SET", i+1, ops, 1, float64(ops)/1e6, 1000*float64(i+1), "") }
		h := func() { add("throughput", "hotkv", "SET", i+1, hot, 1, float64(hot)/2e6, 500, "") }
		if i == 1 {
			h()
			r()
		} else {
			r()
			h()
		}
		// Under SCHED_BATCH Redis does 10% more: the ratio is 2/1.1.
		add("throughput-batch", "redisbatch", "SET", i+1, ops+ops/10, 1, float64(ops)/1e6, 900, "")
		add("throughput-batch", "hotkv", "SET", i+1, 2*ops, 1, float64(ops)/1e6, 500, "")
	}
	for i := range 3 {
		add("throughput", "redis", "LPUSH", i+1, 1e6, 1, 1, 800, "")
		errText := ""
		if i == 1 {
			errText = "error reply to LPUSH: ERR unknown command 'LPUSH', with args beginning with: 'list:1' 'xx'"
		}
		if i == 2 {
			errText = "unexpected reply to LPUSH list:__key__ __data__: :0; expected an integer >= 1 (inferred from LPUSH; " +
				"--expect sets another); is the data loaded (--prefill)? use --allow-misses to count misses as successes"
		}
		add("throughput", "hotkv", "LPUSH", i+1, 1e6, 1, 1, 800, errText)
	}
	// LPOP in the collections section: 1M ops/s on Redis, 3M on HotKV, in the one run.
	add("collections", "rediscoll", "LPOP", 1, 2e6, 2, 2, 400, "")
	add("collections", "hotkvcoll", "LPOP", 1, 6e6, 2, 1, 100, "")
	// pubsub: PUBLISH to 100 subscribers, 1M requests in 2 s; the subscribers take 0.5 CPU-s on
	// Redis (in runs 1 and 2: 0.5 and 1.0), 0.25 on HotKV, which does 2M in 2 s. With no subscribers
	// (-1) there is no subscribers' column value.
	for i, subs := range []float64{0.5, 1.0} {
		addSubs("pubsub", "redis", "PUBLISH to 100 subscribers -P 30", i+1, 1e6, 2, 1, 400, "", subs)
		addSubs("pubsub", "hotkv", "PUBLISH to 100 subscribers -P 30", i+1, 2e6, 2, 1, 200, "", subs/2)
		addSubs("pubsub", "redis", "PUBLISH to 0 subscribers -P 30", i+1, 1e6, 1, 1, 400, "", -1)
		addSubs("pubsub", "hotkv", "PUBLISH to 0 subscribers -P 30", i+1, 1e6, 1, 0.5, 400, "", -1)
	}
	add("proof", "redis-benchmark", "GET -P 30", 1, 3e6, 3, -1, 900, "")
	add("proof", "hotkv-benchmark", "GET -P 30", 1, 3e6, 2, -1, 700, "")
	// A run whose JSON never got written counts as failed, not as a crash of the report.
	lines = append(lines, "latency\tredis\tGET\t1\t"+filepath.Join(dir, "missing.json")+"\t0.5\t1")
	manifest, meta = filepath.Join(dir, "manifest.tsv"), filepath.Join(dir, "meta.txt")
	os.WriteFile(manifest, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.WriteFile(meta, []byte("date=2026-01-02\nredis=7.0.15\nkeys=1000000\npipeline=30\nclients=50\n"+
		"size=256\nruns=3\nrss.redis=102400\nrss.hotkv=51200\nrss.redis=1\ncoll_keys=1000\npop_requests=2000000\n"+
		"rss.rediscoll=20480\nrss.hotkvcoll=10240\nsched.redis=SCHED_OTHER (5 threads)\nsched.hotkv=SCHED_BATCH (4 threads)\n"+
		"sched.redisbatch=SCHED_BATCH (5 threads)\n"), 0o644)
	return manifest, meta
}

func TestReportTables(t *testing.T) {
	manifest, meta := fixture(t)
	dir := t.TempDir()
	md, png := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.png")
	failed, err := build(manifest, meta, tables{}, md, png)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, want := range []string{
		"# HotKV vs Redis 7.0.15, 2026-01-02",
		"## Throughput (pipeline 30, 50 connections, 1,000,000 keys, 256-byte values)",
		"RSS after prefill: Redis 100 MB, HotKV 50 MB.",
		"Scheduling policy (of each thread, read off the running servers after the prefill): Redis SCHED_OTHER (5 threads), HotKV SCHED_BATCH (4 threads).",
		"| command | Redis ops/s | HotKV ops/s | HotKV/Redis | Redis CPU-s per 1M | HotKV CPU-s per 1M | Redis/HotKV CPU | Redis p50 ms |",
		// medians: ops/s 2M vs 4M (ranges 1-3M, 2-9M), ratio 2.00 (runs: 2, 3, 2); CPU per 1M 1.00 vs 0.50,
		// ratio 2.00; p50 0.500 vs 0.125 ms; p99 2 vs 0.5 ms
		"| SET | 2,000,000 (1,000,000–3,000,000) | 4,000,000 (2,000,000–9,000,000) | 2.00 (2.00–3.00) | 1.00 (1.00–1.00) | " +
			"0.50 (0.50–0.50) | 2.00 (2.00–2.00) | 0.500 | 0.125 | 2.000 | 0.500 |",
		"| LPUSH | 1,000,000 (1,000,000–1,000,000) | failed | — | 1.00 (1.00–1.00) | failed | — | 0.200 | failed | 0.800 | failed |",
		"HotKV LPUSH failed in 2 of 3 runs: LPUSH: ERR unknown command 'LPUSH'\n",
		"Run order: Redis went first in 5 of 6 pairs of runs, HotKV in 1.\n",
		"Run order: Redis went first in 3 of 3 pairs of runs, HotKV in 0.\n",
		"**FAILED: 3 run(s) or load(s) failed;",
		"## Throughput with redis-server under SCHED_BATCH",
		"Scheduling policy (of each thread, read off the running servers after the prefill): Redis SCHED_BATCH (5 threads), HotKV SCHED_BATCH (4 threads).",
		"Redis under each policy (the throughput section's Redis: SCHED_OTHER (5 threads); this section's: SCHED_BATCH (5 threads)):",
		"| SET | 2,000,000 (1,000,000–3,000,000) | 2,200,000 (1,100,000–3,300,000) | 1.10 (1.10–1.10) | 1.00 (1.00–1.00) | " +
			"0.91 (0.91–0.91) | 2.00 (2.00–3.00) | 1.82 (1.82–1.82) |",
		"| geometric mean | | | 1.10 | | | 2.00 | 1.82 |",
		"| GET -P 30 | 1,000,000 | 1,500,000 | 1.50 | 0.50 | 0.33 |",
		"Redis GET failed in 1 of 1 runs: no result",
		"![HotKV/Redis ratios](r.png)",
		"## Collections (pipeline 30, 50 connections, 1,000 keys of each type holding 1,000 members, 256-byte values)",
		"LPOP runs 2,000,000 requests (not a duration)",
		"RSS after prefill: Redis 20 MB, HotKV 10 MB.",
		// 2M ops in 2 s against 6M: ratio 3.00; CPU per 1M 1.00 against 0.17, ratio 6; one run: no ranges
		"| LPOP | 1,000,000 | 3,000,000 | 3.00 | 1.00 | 0.17 | 6.00 | 0.100 | 0.025 | 0.400 | 0.100 |",
		"![HotKV/Redis ratios](r-collections.png)",
		// the fixture's generator used half the run's wall time
		"The generator's CPU time was at most 50% of the run's wall time (SET on Redis).",
		"## Pub/sub (50 connections publishing, 256-byte messages)",
		"| command | Redis ops/s | HotKV ops/s | HotKV/Redis | Redis CPU-s per 1M | HotKV CPU-s per 1M | Redis/HotKV CPU | " +
			"Redis subscribers CPU-s per 1M | HotKV subscribers CPU-s per 1M | Redis p50 ms |",
		// subscribers per 1M: Redis 0.5 and 1.0 per 1M (median 0.75), HotKV 0.25 and 0.5 per 2M
		"| PUBLISH to 100 subscribers -P 30 | 500,000 (500,000–500,000) | 1,000,000 (1,000,000–1,000,000) | 2.00 (2.00–2.00) | " +
			"1.00 (1.00–1.00) | 0.50 (0.50–0.50) | 2.00 (2.00–2.00) | 0.75 (0.50–1.00) | 0.19 (0.12–0.25) |",
		"| PUBLISH to 0 subscribers -P 30 | 1,000,000 (1,000,000–1,000,000) | 1,000,000 (1,000,000–1,000,000) | 1.00 (1.00–1.00) | " +
			"1.00 (1.00–1.00) | 0.50 (0.50–0.50) | 2.00 (2.00–2.00) | — | — |",
		// Redis's second run: generator 1 s and subscribers 1 s of 2 s
		"The subscribers' CPU time (on CPU 1 with the generator) was at most 38% of the run's wall time " +
			"(PUBLISH to 100 subscribers -P 30 on Redis); the generator's and the subscribers' together at most 88% " +
			"(PUBLISH to 100 subscribers -P 30 on Redis).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	wantFailed := []string{
		"throughput: LPUSH on hotkv, run 2: error reply to LPUSH: ERR unknown command 'LPUSH', with args beginning with: 'list:1' 'xx'",
		"throughput: LPUSH on hotkv, run 3: unexpected reply to LPUSH list:__key__ __data__: :0; expected an integer >= 1",
		"latency: GET on redis, run 1: no result",
	}
	if len(failed) != len(wantFailed) {
		t.Errorf("failures %q, want %d", failed, len(wantFailed))
	}
	for i := range min(len(failed), len(wantFailed)) {
		if !strings.HasPrefix(failed[i], wantFailed[i]) {
			t.Errorf("failure %d: %q, want %q...", i, failed[i], wantFailed[i])
		}
	}
	if t.Failed() {
		t.Log(out)
	}
	for _, path := range []string{png, filepath.Join(dir, "r-collections.png")} {
		img, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) || len(img) < 1000 {
			t.Fatalf("no PNG chart %s (%d bytes, %v)", path, len(img), err)
		}
	}
}

func TestMedian(t *testing.T) {
	f := func(want float64, v ...float64) {
		t.Helper()
		if got := median(v); got != want {
			t.Fatalf("median(%v) = %v, want %v", v, got, want)
		}
	}
	f(0)
	f(3, 3)
	f(2, 3, 1, 2)
	f(2.5, 4, 1, 2, 3)
}

func TestManifestErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.tsv")
	os.WriteFile(bad, []byte("throughput\tredis\tSET\n"), 0o644)
	if _, err := readManifest(bad); err == nil {
		t.Fatal("a short manifest line was accepted")
	}
	if _, err := readManifest(filepath.Join(dir, "none")); err == nil {
		t.Fatal("a missing manifest was accepted")
	}
}
