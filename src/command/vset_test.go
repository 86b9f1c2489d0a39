package command

import "testing"

// TestVsetTranscript replays testdata/hotkv/vset.txt (Redis 8's V* commands; see its header
// for where each reply comes from).
func TestVsetTranscript(t *testing.T) { hotkvTranscript(t, "vset") }

// TestVsimTranscript replays testdata/hotkv/vsim.txt (HotKV's VSIM.* commands).
func TestVsimTranscript(t *testing.T) { hotkvTranscript(t, "vsim") }
