package meta

import (
	"strings"
	"testing"
)

// A synthesized key spec is encoded exactly as Redis encodes the same spec.
func TestSynthKeySpecMatchesRedis(t *testing.T) {
	for _, name := range []string{"get", "incr", "mget", "mset", "strlen", "lcs"} {
		r := Lookup(name)
		flags := r.Flags
		s := New(name, r.Arity, flags, r.FirstKey, r.LastKey, r.Step, "hotkv")
		if len(s.KeySpecs) != 1 || len(r.KeySpecs) != 1 {
			t.Fatalf("%s: %d/%d key specs", name, len(s.KeySpecs), len(r.KeySpecs))
		}
		// Redis's own flags for the spec may be finer than the guess; encode with them.
		s.KeySpecs[0].Flags = r.KeySpecs[0].Flags
		for _, proto := range []int{2, 3} {
			want := afterTips(t, r.Info(proto))
			got := afterTips(t, string(s.appendInfo(nil, proto)))
			if got != want {
				t.Errorf("%s RESP%d key specs:\n got %q\nwant %q", name, proto, got, want)
			}
		}
	}
}

// afterTips returns the key-spec field (the 9th) of an encoded INFO.
func afterTips(t *testing.T, info string) string {
	pos := 0
	for range 8 {
		var err error
		if _, pos, err = parseValue(info, pos); err != nil {
			t.Fatalf("bad info %q: %v", info, err)
		}
	}
	return info[pos:]
}

func TestSynth(t *testing.T) {
	c := New("nexpire", -3, []string{"write", "fast"}, 1, 1, 1, "hotkv")
	if got := strings.Join(c.ACL, " "); got != "@write @fast" {
		t.Errorf("ACL %q", got)
	}
	want3 := "$7\r\nnexpire\r\n:-3\r\n~2\r\n+write\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~2\r\n+@write\r\n+@fast\r\n~0\r\n~1\r\n" +
		"%3\r\n$5\r\nflags\r\n~3\r\n+RW\r\n+access\r\n+update\r\n" +
		"$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n" +
		"$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n"
	if c.Info(3) != want3 {
		t.Errorf("RESP3 info %q", c.Info(3))
	}
	if conv, _ := ToRESP2(want3); c.Info(2) != conv {
		t.Errorf("RESP2 info %q", c.Info(2))
	}
	pairs, n := c.Docs(3)
	if n != 2 || pairs != "$5\r\ngroup\r\n$6\r\nmodule\r\n$6\r\nmodule\r\n$5\r\nhotkv\r\n" {
		t.Errorf("docs %d %q", n, pairs)
	}
	ro := New("nttl", 2, []string{"readonly", "fast"}, 1, 1, 1, "hotkv")
	if strings.Join(ro.ACL, " ") != "@read @fast" || strings.Join(ro.KeySpecs[0].Flags, " ") != "RO access" {
		t.Errorf("nttl %v %v", ro.ACL, ro.KeySpecs[0].Flags)
	}
	adm := New("x", 1, []string{"admin", "blocking"}, 0, 0, 0, "hotkv")
	if strings.Join(adm.ACL, " ") != "@admin @slow @blocking @dangerous" || adm.KeySpecs != nil {
		t.Errorf("admin %v %v", adm.ACL, adm.KeySpecs)
	}
	if !ACLCategory("Read") || ACLCategory("@read") || ACLCategory("nosuch") {
		t.Error("ACLCategory")
	}
}
