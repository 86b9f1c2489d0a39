package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/persist/rdb"
	"github.com/hotkv/hotkv/tools/hotkv-check-rdb/rdbcheck"
	"github.com/hotkv/hotkv/tools/hotkv-check-rdb/redistest"
)

// writeStrings writes an RDB of n string keys of valueLen bytes (incompressible
// enough to stay raw), with a correct checksum, and returns its size.
func writeStrings(t *testing.T, name string, n, valueLen int) int64 {
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	e := &rdb.Encoder{}
	var crc uint64
	flush := func() {
		crc = rdb.CRC64(crc, e.Buf)
		w.Write(e.Buf)
		e.Buf = e.Buf[:0]
	}
	e.Header(rdb.Version)
	e.Aux("redis-ver", "7.0.15")
	e.SelectDB(0)
	e.ResizeDB(uint64(n), 0)
	val := make([]byte, valueLen)
	x := uint32(1)
	for i := range val {
		x = x*1664525 + 1013904223
		val[i] = byte(x >> 24)
	}
	for i := range n {
		key := fmt.Appendf(nil, "key:%08d", i)
		copy(val, key)
		e.StringValue(key, val)
		if len(e.Buf) > 1<<20 {
			flush()
		}
	}
	flush()
	e.EOF(rdb.CRC64(crc, []byte{rdb.OpEOF})) // the sum covers the end opcode
	w.Write(e.Buf)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	return st.Size()
}

// TestLargeFile generates 200 MB of strings: the command shows its progress
// on stderr (not a terminal here: lines, then the final state at 100%),
// reports every key and exits 0; redis-check-rdb agrees. It logs both rates.
func TestLargeFile(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("writes 200 MB (skipped with -short and -race)")
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "big.rdb")
	const n = 200_000
	size := writeStrings(t, name, n, 1000)
	if size < 200e6 {
		t.Fatalf("only %d bytes", size)
	}
	errf, _ := os.Create(filepath.Join(dir, "stderr"))
	defer errf.Close()
	var out bytes.Buffer
	start := time.Now()
	code := run([]string{"--json", name}, &out, errf)
	secs := time.Since(start).Seconds()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	var rep rdbcheck.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Keys != n || rep.End != size {
		t.Fatalf("report %+v", rep)
	}
	prog, _ := os.ReadFile(errf.Name())
	lines := strings.Split(strings.TrimSpace(string(prog)), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, fmt.Sprintf("progress: %d/%d bytes 100.0%% ", size, size)) || !strings.HasSuffix(last, "MB/s") {
		t.Fatalf("progress output:\n%s", prog)
	}
	t.Logf("hotkv-check-rdb: %d bytes in %.2f s, %.0f MB/s; progress: %q", size, secs, float64(size)/1e6/secs, last)
	start = time.Now()
	if v := redistest.CheckRDB(t, name); !v.OK {
		t.Fatalf("redis-check-rdb:\n%s", v.Output)
	}
	secs = time.Since(start).Seconds()
	t.Logf("redis-check-rdb: %.2f s, %.0f MB/s", secs, float64(size)/1e6/secs)
}

// TestProgressWhileReading: a Progress with a short period, fed by Check over
// 100 MB, writes lines whose byte counts grow and end at the size.
func TestProgressWhileReading(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("writes 100 MB (skipped with -short and -race)")
	}
	name := filepath.Join(t.TempDir(), "mid.rdb")
	size := writeStrings(t, name, 100_000, 1000)
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	p := &rdbcheck.Progress{W: &out, Total: size, Every: 5 * time.Millisecond}
	rep := rdbcheck.Check(name, f, size, rdbcheck.Options{Progress: p.Update})
	p.Finish()
	if !rep.OK {
		t.Fatalf("%+v", rep.Error)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var prev int64 = -1
	for _, l := range lines {
		var done, total int64
		if _, err := fmt.Sscanf(l, "progress: %d/%d bytes", &done, &total); err != nil || total != size || done < prev {
			t.Fatalf("line %q after %d (%v)", l, prev, err)
		}
		prev = done
	}
	if len(lines) < 3 || prev != size {
		t.Fatalf("%d lines, last at %d of %d", len(lines), prev, size)
	}
	t.Logf("%d progress lines in %.2f s", len(lines), rep.Seconds)
}

// TestExitCodes: as redis-check-rdb, 0 for a sound file, 1 for a damaged
// one, a missing one or no argument; --json prints the same verdict.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.rdb")
	writeStrings(t, good, 10, 30)
	b, _ := os.ReadFile(good)
	bad := filepath.Join(dir, "bad.rdb")
	os.WriteFile(bad, b[:len(b)-3], 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{good}, 0, "RDB looks OK"},
		{[]string{"--json", good}, 0, `"ok": true`},
		{[]string{bad}, 1, "truncated at offset"},
		{[]string{bad, "--json"}, 1, `"kind": "truncated"`},
		{[]string{filepath.Join(dir, "none.rdb")}, 1, "Cannot open file"},
		{nil, 1, "Usage:"},
		{[]string{good, bad}, 1, "Usage:"},
	} {
		var out bytes.Buffer
		if code := run(c.args, &out, nil); code != c.code || !strings.Contains(out.String(), c.want) {
			t.Errorf("%q: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, out.String())
		}
	}
	for _, f := range []string{good, bad} {
		if v := redistest.CheckRDB(t, f); v.OK != (f == good) {
			t.Errorf("redis-check-rdb on %s: OK=%v", f, v.OK)
		}
	}
}
