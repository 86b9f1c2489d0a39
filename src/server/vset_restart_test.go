package server

import (
	"fmt"
	"strings"
	"testing"
)

// vsetReads are the reads a restarted server must answer alike about vector sets.
var vsetReads = [][]string{{"VCARD", "v"}, {"VSIM", "v", "VALUES", "3", "1", "0", "0", "WITHSCORES", "WITHATTRIBS"},
	{"VLINKS", "v", "a", "WITHSCORES"}, {"VEMB", "v", "b"}, {"VSIM", "v", "VALUES", "3", "1", "0", "0", "FILTER", ".y > 1990"},
	{"VCARD", "h"}, {"VSIM.SEARCH", "h", "VALUES", "2", "1", "1", "TAGS", "ANY", "1", "t", "WITHSCORES"}, {"TYPE", "h"},
	{"PTTL", "v"}}

// Vector sets survive a restart from the RDB (SAVE), the AOF alone, and a rewritten AOF whose
// base is in command form (RESTORE of the DUMP form) or an RDB preamble.
func TestVsetRestart(t *testing.T) {
	fill := func(t *testing.T, c *testClient) {
		for _, w := range [][]string{
			{"VADD", "v", "VALUES", "3", "1", "0", "0", "a", "SETATTR", `{"y": 1984}`},
			{"VADD", "v", "VALUES", "3", "0", "1", "0", "b", "SETATTR", `{"y": 2001}`},
			{"VADD", "v", "VALUES", "3", "1", "1", "0", "c"}, {"VADD", "v", "VALUES", "3", "1", "1", "1", "d"},
			{"VADD", "v", "VALUES", "3", "2", "0.5", "0", "b"}, {"VREM", "v", "d"}, {"PEXPIRE", "v", "100000000"},
			{"VSIM.CREATEINDEX", "h", "DIM", "2", "METRIC", "L2", "QUANT", "NOQUANT"},
			{"VSIM.SET", "h", "TAGS", "1", "t", "ITEMS", "2", "x", "\x00\x00\x80\x3f\x00\x00\x00\x00", "y", "\x00\x00\x00\x00\x00\x00\x80\x3f"},
		} {
			c.send(respCommand(w...))
			if r := c.reply(); strings.HasPrefix(r, "-") {
				t.Fatalf("%s: %q", w, r)
			}
		}
	}
	late := func(t *testing.T, c *testClient) { c.query("VADD v VALUES 3 0 0 1 late") }
	restartSurvives(t, fill, late, readVsets, "$7\r\nRESTORE\r\n", func(t *testing.T, want []string) {
		if !strings.Contains(want[0], ":3") && !strings.Contains(want[0], ":4") {
			t.Fatalf("VCARD before the restart: %q", want[0])
		}
	})
}

// respCommand encodes args as a RESP array (send adds the last CRLF).
func respCommand(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for i, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s", len(a), a)
		if i < len(args)-1 {
			b.WriteString("\r\n")
		}
	}
	return b.String()
}

func readVsets(t *testing.T, c *testClient) []string {
	t.Helper()
	var out []string
	for _, r := range vsetReads {
		c.send(respCommand(r...))
		reply := c.reply()
		if r[0] == "PTTL" { // counts down: only that it still has one
			reply = reply[:1]
		}
		out = append(out, strings.Join(r, " ")+" -> "+reply)
	}
	return out
}
