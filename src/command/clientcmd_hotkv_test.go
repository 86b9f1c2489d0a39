package command

import (
	"fmt"
	"os"
	"testing"
)

// TestClientHotKVTranscript replays testdata/hotkv/client.txt (and its RESP3 twin): CLIENT
// subcommands and options newer than Redis 7.0.15, which answers them with errors, so the
// replies were recorded from HotKV (-update-hotkv) and checked by hand.
func TestClientHotKVTranscript(t *testing.T) {
	for _, proto := range []int{2, 3} {
		path := "testdata/hotkv/client.txt"
		if proto == 3 {
			path = "testdata/hotkv/client.resp3.txt"
		}
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			src, err := os.ReadFile("testdata/hotkv/client.txt")
			if err != nil {
				t.Fatal(err)
			}
			if *updateHotKV {
				recordHotKV(t, path, parseTranscript(t, src), proto)
				return
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("missing transcript (run with -update-hotkv): %v", err)
			}
			checkTranscript(t, parseTranscript(t, data), proto, false)
		})
	}
}
