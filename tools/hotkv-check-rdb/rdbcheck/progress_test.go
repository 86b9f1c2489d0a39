package rdbcheck

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressLines: without a terminal one line per Every, with the bytes,
// percent and rate of the clock; Finish adds the final state.
func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(0, 0)
	p := &Progress{W: &out, Total: 100 << 20, Every: time.Second, Now: func() time.Time { return clock }}
	for i := int64(1); i <= 100; i++ {
		clock = clock.Add(100 * time.Millisecond)
		p.Update(i << 20)
	}
	p.Finish()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	// 11 MiB read in the 1 s since the first Update: 11.5 MB/s.
	if lines[0] != "progress: 11534336/104857600 bytes  11.0% 11.5 MB/s" {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.Contains(lines[9], "104857600/104857600 bytes 100.0%") {
		t.Errorf("last line %q", lines[9])
	}
}

// TestProgressTerminal redraws one line in place with a bar.
func TestProgressTerminal(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(0, 0)
	p := &Progress{W: &out, Terminal: true, Total: 1000, Now: func() time.Time { return clock }}
	for i := int64(100); i <= 1000; i += 100 {
		clock = clock.Add(time.Second)
		p.Update(i)
	}
	p.Finish()
	s := out.String()
	if strings.Count(s, "\r[") != 10 || strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		t.Fatalf("%q", s)
	}
	if !strings.Contains(s, "\r[###############...............] 500/1000 bytes  50.0%") {
		t.Errorf("no half bar in %q", s)
	}
}
