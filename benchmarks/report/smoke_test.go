package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHarnessSmoke runs the whole harness, run.sh --quick (about three minutes: small key range, 1s
// runs, one run each, small memory datasets and collections), and checks that it passes (every reply
// and every prefill checked) and that the report has a row for every command of every section, every
// memory dataset and every small-collections row. It starts
// servers and pins processes, so it runs only when asked: HOTKV_BENCH_SMOKE=1 go test ./benchmarks/report
func TestHarnessSmoke(t *testing.T) {
	if os.Getenv("HOTKV_BENCH_SMOKE") == "" || testing.Short() {
		t.Skip("set HOTKV_BENCH_SMOKE=1 to run the benchmark harness end to end")
	}
	results := t.TempDir()
	cmd := exec.Command("bash", "../run.sh", "--quick")
	cmd.Env = append(os.Environ(), "RESULTS="+results, "MACHINE=smoke")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run.sh --quick: %v\n%s", err, out)
	}
	mds, _ := filepath.Glob(filepath.Join(results, "*-smoke-quick.md"))
	pngs, _ := filepath.Glob(filepath.Join(results, "*-smoke-quick.png"))
	if len(mds) != 1 || len(pngs) != 1 {
		t.Fatalf("results: %v %v\n%s", mds, pngs, out)
	}
	b, err := os.ReadFile(mds[0])
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	for _, want := range []string{"## Throughput", "## HotKV --threads 1", "## Latency at pipeline 1",
		"## Throughput with redis-server under SCHED_BATCH", "Redis under each policy", "Scheduling policy", "## Collections",
		"## Pub/sub", "## Memory after loading", "## Growing data", "What each server held after each step",
		"After the whole sequence", "### Latency at pipeline 1 after the sequence", "## Small collections"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks the section %q", want)
		}
	}
	for _, c := range []string{"SET", "GET", "MGET", "SETNX", "APPEND", "INCR", "LPUSH", "RPUSH", "SADD", "HSET", "MSET", "PING",
		"LPOP", "SISMEMBER", "HGET", "ZADD", "ZRANGE", "ZSCORE"} {
		if !strings.Contains(report, "\n| "+c+" | ") {
			t.Errorf("the report has no row for %s", c)
		}
	}
	for _, row := range []string{"PUBLISH to 0 subscribers -P 30", "PUBLISH to 1 subscriber -P 30", "PUBLISH to 100 subscribers -P 30",
		"PUBLISH to 0 subscribers -P 1", "PUBLISH to 1 subscriber -P 1", "PUBLISH to 100 subscribers -P 1",
		"SET with KEA, 1 pattern subscriber -P 30", "SET with KEA, 1 pattern subscriber -P 1"} {
		if !strings.Contains(report, "\n| "+row+" | ") {
			t.Errorf("the report has no row %q", row)
		}
	}
	for _, ds := range []string{"intset", "intset-random", "strset", "hash", "zset", "smallhash"} {
		if !strings.Contains(report, "\n| "+ds+": ") || !strings.Contains(report, "\n| "+ds+" | ") {
			t.Errorf("the memory tables have no row for %s", ds)
		}
	}
	for _, typ := range []string{"list", "set", "hash", "zset"} {
		for _, n := range []string{"1", "2", "5", "20"} {
			for _, size := range []string{"16", "256"} {
				if !strings.Contains(report, "\n| "+typ+" | "+n+" | "+size+" | ") {
					t.Errorf("the small-collections table has no row for %s of %s %s-byte elements", typ, n, size)
				}
			}
		}
	}
	// Redis runs every command and loads every dataset: none of its cells may say failed.
	for _, line := range strings.Split(report, "\n") {
		if strings.HasPrefix(line, "Redis ") && (strings.Contains(line, " failed in ") || strings.Contains(line, "failed:")) {
			t.Errorf("Redis failed: %s", line)
		}
	}
	if strings.Contains(report, "**FAILED") {
		t.Error("the report says runs failed")
	}
	if t.Failed() {
		t.Log(report)
	}
}
