package command

import "testing"

// TestMemTranscript replays testdata/hotkv/mem.txt (HotKV's MEM.*, on a fake clock).
func TestMemTranscript(t *testing.T) { clockTranscript(t, "mem") }
