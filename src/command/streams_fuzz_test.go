package command

import (
	"bytes"
	"strings"
	"testing"
)

// streamFuzzCommands are the stream commands FuzzStreamCommands drives (none that blocks: BLOCK
// is dropped from the arguments).
var streamFuzzCommands = []string{"XADD", "XTRIM", "XDEL", "XRANGE", "XREVRANGE", "XLEN", "XSETID",
	"XREAD", "XREADGROUP", "XGROUP", "XACK", "XPENDING", "XCLAIM", "XAUTOCLAIM", "XINFO"}

// streamFuzzWords are arguments the fuzzer picks by one-byte parts, so option parsing is reached.
var streamFuzzWords = []string{"*", "$", ">", "-", "+", "~", "=", "MAXLEN", "MINID", "LIMIT", "NOMKSTREAM",
	"COUNT", "STREAMS", "GROUP", "NOACK", "CREATE", "SETID", "DESTROY", "CREATECONSUMER", "DELCONSUMER",
	"MKSTREAM", "ENTRIESREAD", "IDLE", "TIME", "RETRYCOUNT", "FORCE", "JUSTID", "LASTID", "STREAM", "GROUPS",
	"CONSUMERS", "FULL", "ENTRIESADDED", "MAXDELETEDID", "s", "g", "c", "0", "1-1", "18446744073709551615-18446744073709551615"}

// FuzzStreamCommands runs the stream commands with arguments cut from the fuzzer's bytes (IDs,
// counts, options in any order) on one engine, so state builds up: none may panic (the engine
// would answer "ERR internal error" and close the client).
func FuzzStreamCommands(f *testing.F) {
	f.Add(byte(0), []byte("s\x00\x00\x01f\x00v"))
	f.Add(byte(0), []byte("s\x00MAXLEN\x00\x05\x003\x00\x00\x01f\x00v"))
	f.Add(byte(9), []byte("CREATE\x00s\x00g\x00\x01\x00MKSTREAM"))
	f.Add(byte(8), []byte("GROUP\x00g\x00c\x00STREAMS\x00s\x00\x02"))
	f.Add(byte(12), []byte("s\x00g\x00c\x000\x001-1\x00FORCE\x00LASTID\x0018446744073709551615-18446744073709551615"))
	f.Add(byte(13), []byte("s\x00g\x00c\x000\x00(0\x00COUNT\x007"))
	e := newTestEngine()
	defer e.Close()
	runs := 0
	f.Fuzz(func(t *testing.T, which byte, blob []byte) {
		tc := newTestConn(t, e)
		if runs++; runs%500 == 0 { // state builds up across inputs, but stays small enough to stay fast
			tc.do("FLUSHALL")
		}
		parts := bytes.Split(blob, []byte{0})
		if len(parts) > 20 {
			parts = parts[:20]
		}
		cmd := []string{streamFuzzCommands[int(which)%len(streamFuzzCommands)]}
		for _, p := range parts {
			a := string(p)
			if len(p) == 1 && p[0] < 64 {
				a = streamFuzzWords[int(p[0])%len(streamFuzzWords)]
			}
			if strings.EqualFold(a, "BLOCK") {
				continue
			}
			cmd = append(cmd, a)
		}
		if r := tc.do(cmd...); strings.Contains(r, "internal error") || tc.stream.closed {
			t.Fatalf("%q: %q", cmd, r)
		}
	})
}
