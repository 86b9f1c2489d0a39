package command

import (
	"strings"
	"testing"
)

// TestVsetTranscript replays testdata/hotkv/vset.txt (Redis 8's V* commands; see its header
// for where each reply comes from).
func TestVsetTranscript(t *testing.T) { hotkvTranscript(t, "vset") }

// TestVsimTranscript replays testdata/hotkv/vsim.txt (HotKV's VSIM.* commands).
func TestVsimTranscript(t *testing.T) { hotkvTranscript(t, "vsim") }

// TestVsetCommandModule: Redis 8's V* commands are listed under its module vectorset, VSIM.*
// under hotkv.
func TestVsetCommandModule(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	if got := tc.do("COMMAND", "DOCS", "vadd"); !strings.Contains(got, "$6\r\nmodule\r\n$9\r\nvectorset\r\n") {
		t.Errorf("COMMAND DOCS vadd: %q", got)
	}
	got := tc.do("COMMAND", "LIST", "FILTERBY", "MODULE", "vectorset")
	if !strings.HasPrefix(got, "*13\r\n") || strings.Contains(got, "vsim.") {
		t.Errorf("FILTERBY MODULE vectorset: %q", got)
	}
	if got := tc.do("COMMAND", "LIST", "FILTERBY", "MODULE", "hotkv"); !strings.Contains(got, "vsim.search") || strings.Contains(got, "$4\r\nvadd\r\n") {
		t.Errorf("FILTERBY MODULE hotkv: %q", got)
	}
}
