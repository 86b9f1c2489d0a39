package command

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateHotKV = flag.Bool("update-hotkv", false, "re-record HotKV-only transcripts (testdata/hotkv) from HotKV itself")

// TestTagTranscript replays testdata/hotkv/tags.txt (and its RESP3 twin). The TAG.* commands are
// HotKV's own, so there is no Redis to record from: the file was recorded from HotKV with
// -update-hotkv and each reply checked by hand; the test keeps them from changing unnoticed.
func TestTagTranscript(t *testing.T) {
	for _, proto := range []int{2, 3} {
		path := "testdata/hotkv/tags.txt"
		if proto == 3 {
			path = "testdata/hotkv/tags.resp3.txt"
		}
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			src, err := os.ReadFile("testdata/hotkv/tags.txt")
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

// recordHotKV writes steps with HotKV's replies, as recordTranscript writes Redis's.
func recordHotKV(t *testing.T, path string, steps []step, proto int) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	if proto == 3 {
		tc.do("HELLO", "3")
	}
	var out strings.Builder
	for _, s := range steps {
		reply, _ := tc.send(encodeArgs(s.args))
		fmt.Fprintf(&out, "%s%s\n%s", s.comment, s.header(), strings.ReplaceAll(string(reply), "\r\n", "\n"))
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
