package meta

import (
	"slices"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	names := Names()
	if len(names) != 240 { // COMMAND COUNT of Redis 7.0.15
		t.Fatalf("%d top-level commands, want 240", len(names))
	}
	if !slices.IsSorted(names) {
		t.Fatal("names not sorted")
	}
	for _, n := range names {
		c := Lookup(n)
		if c == nil || c.Name != n {
			t.Fatalf("Lookup(%q) = %v", n, c)
		}
		for _, s := range c.Subs {
			if sub := Lookup(s); sub == nil || !strings.HasPrefix(s, n+"|") || len(sub.Subs) != 0 {
				t.Errorf("%s: bad subcommand %q", n, s)
			}
		}
	}
	if Lookup("nosuch") != nil || Lookup("GET") != nil {
		t.Error("Lookup found a command Redis does not have (or ignored case)")
	}
}

func TestFields(t *testing.T) {
	f := func(name string, arity, first, last, step int, flags, acl string) {
		t.Helper()
		c := Lookup(name)
		if c == nil {
			t.Fatalf("%s missing", name)
		}
		if c.Arity != arity || c.FirstKey != first || c.LastKey != last || c.Step != step ||
			strings.Join(c.Flags, " ") != flags || strings.Join(c.ACL, " ") != acl {
			t.Errorf("%s = %d %d %d %d %v %v", name, c.Arity, c.FirstKey, c.LastKey, c.Step, c.Flags, c.ACL)
		}
	}
	f("get", 2, 1, 1, 1, "readonly fast", "@read @string @fast")
	f("mset", -3, 1, -1, 2, "write denyoom", "@write @string @slow")
	f("config|get", -3, 0, 0, 0, "admin noscript loading stale", "@admin @slow @dangerous")
	f("command", -1, 0, 0, 0, "loading stale", "@slow @connection")
	f("object|encoding", 3, 2, 2, 1, "readonly", "@keyspace @read @slow")
	if c := Lookup("config"); len(c.Subs) != 5 {
		t.Errorf("config subcommands %v", c.Subs)
	}
}

// The stored encodings are the exact RESP3 bytes of the recorded replies, split where a caller
// joins them again: INFO fields 1-9, then the subcommands; DOCS pairs, then "subcommands".
func TestEncodings(t *testing.T) {
	get := Lookup("get")
	if want := "$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n"; !strings.HasPrefix(get.Info(3), want) {
		t.Errorf("get RESP3 info %q", get.Info(3))
	}
	if want := "$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n"; !strings.HasPrefix(get.Info(2), want) {
		t.Errorf("get RESP2 info %q", get.Info(2))
	}
	if strings.HasSuffix(get.Info(3), "~0\r\n~0\r\n") {
		t.Error("info includes the subcommands field")
	}
	pairs, n := Lookup("config").Docs(3)
	if n != 4 || strings.Contains(pairs, "subcommands") || !strings.HasPrefix(pairs, "$7\r\nsummary\r\n") {
		t.Errorf("config docs %d %q", n, pairs)
	}
	pairs, n = Lookup("config|get").Docs(2)
	if n != 6 || !strings.Contains(pairs, "$7\r\nhistory\r\n*1\r\n*2\r\n") {
		t.Errorf("config|get RESP2 docs %d %q", n, pairs)
	}
}

func TestToRESP2(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got, err := ToRESP2(in)
		if err != nil || got != want {
			t.Errorf("ToRESP2(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	f("%2\r\n$1\r\na\r\n~1\r\n+x\r\n$4\r\n%1\r\n\r\n:-5\r\n", "*4\r\n$1\r\na\r\n*1\r\n+x\r\n$4\r\n%1\r\n\r\n:-5\r\n")
	f("*0\r\n~0\r\n%0\r\n", "*0\r\n*0\r\n*0\r\n")
	for _, bad := range []string{"_\r\n", "$5\r\nab\r\n", "%x\r\n", "+ok"} {
		if _, err := ToRESP2(bad); err == nil {
			t.Errorf("ToRESP2(%q) accepted", bad)
		}
	}
}

func TestParseRejectsMalformed(t *testing.T) {
	for _, bad := range []string{"*3\r\n$3\r\nget\r\n", "*1\r\n$3\r\nget\r\n", "x\r\n", "*3\r\n$3\r\nget\r\n*0\r\n%0\r\n"} {
		if _, err := parseData(bad); err == nil {
			t.Errorf("parseData(%q) accepted", bad)
		}
	}
}
