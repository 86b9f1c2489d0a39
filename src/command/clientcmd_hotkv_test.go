package command

import "testing"

// TestClientHotKVTranscript replays testdata/hotkv/client.txt (and its RESP3 twin): CLIENT
// subcommands and options newer than Redis 7.0.15, which answers them with errors, so the
// replies were recorded from HotKV (-update-hotkv) and checked by hand.
func TestClientHotKVTranscript(t *testing.T) { hotkvTranscript(t, "client") }
