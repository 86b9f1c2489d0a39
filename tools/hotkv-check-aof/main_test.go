package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/tools/hotkv-check-aof/aofcheck"
	"github.com/hotkv/hotkv/tools/hotkv-check-rdb/redistest"
)

// TestLargeAOF generates a 100 MB old-style AOF of SETs: the checker counts
// every command, shows its progress on stderr (lines, ending at 100%), and
// redis-check-aof agrees. It logs both rates.
func TestLargeAOF(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("writes 100 MB (skipped with -short and -race)")
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "big.aof")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	val := strings.Repeat("v", 1000)
	const n = 100_000
	for i := range n {
		fmt.Fprintf(w, "*3\r\n$3\r\nSET\r\n$12\r\nkey:%08d\r\n$%d\r\n%s\r\n", i, len(val), val)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(name)
	errf, _ := os.Create(filepath.Join(dir, "stderr"))
	defer errf.Close()
	var out bytes.Buffer
	start := time.Now()
	code := aofcheck.Main([]string{name}, strings.NewReader(""), &out, errf)
	secs := time.Since(start).Seconds()
	if code != 0 || !strings.Contains(out.String(), fmt.Sprintf("%d commands", n)) {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	prog, _ := os.ReadFile(errf.Name())
	lines := strings.Split(strings.TrimSpace(string(prog)), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, fmt.Sprintf("progress: %d/%d bytes 100.0%% ", st.Size(), st.Size())) {
		t.Fatalf("progress:\n%s", prog)
	}
	t.Logf("hotkv-check-aof: %d bytes in %.2f s, %.0f MB/s; %q", st.Size(), secs, float64(st.Size())/1e6/secs, last)
	start = time.Now()
	if v := redistest.CheckAOF(t, "", name); !v.OK {
		t.Fatalf("redis-check-aof:\n%s", v.Output)
	}
	secs = time.Since(start).Seconds()
	t.Logf("redis-check-aof: %.2f s, %.0f MB/s", secs, float64(st.Size())/1e6/secs)
}
