package command

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

var updateHotKV = flag.Bool("update-hotkv", false, "re-record HotKV-only transcripts (testdata/hotkv) from HotKV itself")

// TestTagTranscript replays testdata/hotkv/tags.txt (and its RESP3 twin). The TAG.* commands are
// HotKV's own, so there is no Redis to record from: the file was recorded from HotKV with
// -update-hotkv and each reply checked by hand; the test keeps them from changing unnoticed.
func TestTagTranscript(t *testing.T) { hotkvTranscript(t, "tags") }

// hotkvTranscript replays testdata/hotkv/<name>.txt and its RESP3 twin, both recorded from
// HotKV (-update-hotkv re-records them from the RESP2 file's commands).
func hotkvTranscript(t *testing.T, name string) {
	for _, proto := range []int{2, 3} {
		path := "testdata/hotkv/" + name + ".txt"
		if proto == 3 {
			path = "testdata/hotkv/" + name + ".resp3.txt"
		}
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			src, err := os.ReadFile("testdata/hotkv/" + name + ".txt")
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

// COMMAND describes the TAG.* commands as it describes a module's (group module, module hotkv):
// flags and arity from the table, @keyspace besides the categories the flags imply, and one key
// spec for the key of TAG.SET, GET, DEL and CLEAR (the others take tags, not keys).
func TestTagCommandInfo(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	info := replyStrings(t, tc.do("COMMAND", "LIST", "FILTERBY", "ACLCAT", "keyspace"))
	for _, n := range []string{"tag.set", "tag.get", "tag.del", "tag.clear", "tag.members", "tag.count", "tag.invalidate", "del"} {
		if !slices.Contains(info, n) {
			t.Errorf("FILTERBY ACLCAT keyspace misses %s", n)
		}
	}
	want := map[string]string{
		"tag.set":        "*10\r\n$7\r\ntag.set\r\n:-3\r\n*3\r\n+write\r\n+denyoom\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@keyspace\r\n+@write\r\n+@fast\r\n",
		"tag.get":        "*10\r\n$7\r\ntag.get\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@keyspace\r\n+@read\r\n+@fast\r\n",
		"tag.invalidate": "*10\r\n$14\r\ntag.invalidate\r\n:-2\r\n*1\r\n+write\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@keyspace\r\n+@write\r\n+@slow\r\n",
		"tag.members":    "*10\r\n$11\r\ntag.members\r\n:2\r\n*1\r\n+readonly\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@keyspace\r\n+@read\r\n+@slow\r\n",
	}
	for name, prefix := range want {
		got := tc.do("COMMAND", "INFO", name)
		if !strings.HasPrefix(got, "*1\r\n"+prefix) {
			t.Errorf("COMMAND INFO %s = %q, want it to start %q", name, got, prefix)
		}
	}
	if got := replyStrings(t, tc.do("COMMAND", "GETKEYS", "TAG.SET", "k", "t1", "t2")); !slices.Equal(got, []string{"k"}) {
		t.Errorf("COMMAND GETKEYS TAG.SET k t1 t2 = %v", got)
	}
	if got := tc.do("COMMAND", "INFO", "tag.set"); !strings.Contains(got, "RW") || !strings.Contains(got, "update") {
		t.Errorf("TAG.SET's key spec: %q", got)
	}
}
