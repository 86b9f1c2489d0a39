package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// memFixture writes a memory table like run.sh's: intset measured on both servers (settled), zset
// measured as loaded only (--quick), smallhash failing on HotKV.
func memFixture(t *testing.T) string {
	t.Helper()
	lines := []string{
		// Redis: 1 MiB empty, +50 B per member of a million; RSS 10 MiB empty, +60 B per member.
		"intset\tredis\t1000000\t1048576\t10485760\t51048576\t70485760\t51048576\t70485760\t1.5\t",
		// HotKV: +10 B loaded, +4 B settled; RSS +30 B loaded, +12 B settled.
		"intset\thotkv\t1000000\t2097152\t8388608\t12097152\t38388608\t6097152\t20388608\t0.5\t",
		"zset\tredis\t1000\t1000000\t10000000\t1100000\t10200000\t-1\t-1\t0.1\t",
		"zset\thotkv\t1000\t2000000\t8000000\t2050000\t8100000\t-1\t-1\t0.1\t",
		"smallhash\tredis\t1000\t1000000\t10000000\t1300000\t10400000\t1300000\t10400000\t0.2\t",
		"smallhash\thotkv\t1000\t2000000\t8000000\t\t\t\t\t0.1\tfill: FAILED: cannot read the reply to HSET: EOF",
	}
	path := filepath.Join(t.TempDir(), "memory.tsv")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMemoryTable(t *testing.T) {
	rows, err := readMemory(memFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeMarkdown(&buf, input{mem: rows, meta: map[string]string{"redis": "7.0.15", "date": "2026-01-02", "mem_settle": "150"}}, nil)
	out := buf.String()
	for _, want := range []string{
		"# HotKV vs Redis 7.0.15, 2026-01-02",
		"Each dataset was loaded once into fresh servers",
		"## Memory after loading one dataset into fresh servers",
		"*settled* is after each HotKV's first garbage collection that followed its load (at most 150 s later)",
		"Empty servers (first dataset's): Redis used_memory 1.0 MB, RSS 10.0 MB; HotKV used_memory 2.0 MB, RSS 8.0 MB.",
		"used_memory, bytes per member:",
		"| intset: set of the integers 0..999,999 | 50.0 | 50.0 | 10.0 | 4.0 | 0.20 | 0.08 |",
		"RSS, bytes per member:",
		"| intset: set of the integers 0..999,999 | 60.0 | 60.0 | 30.0 | 12.0 | 0.50 | 0.20 |",
		// not settled: those cells and their ratio are empty
		"| zset: sorted set of 1,000 members member:N, random scores | 100.0 | — | 50.0 | — | 0.50 | — |",
		"| smallhash: 100 hashes of 10 fields, 10-byte values | 300.0 | 300.0 | failed | failed | — | — |",
		"| intset | 48.7 MB | 5.8 MB | 67.2 MB | 19.4 MB | 1.5 | 0.5 |",
		"| zset | 1.0 MB | 2.0 MB | 9.7 MB | 7.7 MB | 0.1 | 0.1 |",
		"HotKV smallhash failed: fill: FAILED: cannot read the reply to HSET: EOF",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(out, "median") {
		t.Error("a memory-only report speaks of medians of runs")
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestMemoryTableErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.tsv")
	os.WriteFile(bad, []byte("intset\tredis\t1000\n"), 0o644)
	if _, err := readMemory(bad); err == nil {
		t.Fatal("a short memory line was accepted")
	}
	if _, err := readMemory(filepath.Join(dir, "none")); err == nil {
		t.Fatal("a missing memory table was accepted")
	}
	if rows, err := readMemory(""); err != nil || rows != nil {
		t.Fatalf("no memory section: %v %v", rows, err)
	}
	// a row whose server died has no numbers: it fails alone
	odd := filepath.Join(dir, "odd.tsv")
	os.WriteFile(odd, []byte("hash\thotkv\t1000\t1\t1\t\t\t-1\t-1\t0.1\t\n"), 0o644)
	rows, err := readMemory(odd)
	if err != nil || len(rows) != 1 || !strings.HasPrefix(rows[0].err, "no measurement") {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
}
