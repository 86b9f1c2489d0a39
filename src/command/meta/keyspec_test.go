package meta

import (
	"fmt"
	"strings"
	"testing"
)

// keys runs the key specs of a recorded command over an inline command line and returns
// "pos:flags" for each key found, or "invalid".
func keys(t *testing.T, line string, partial bool) string {
	t.Helper()
	var args [][]byte
	for _, f := range strings.Fields(line) {
		args = append(args, []byte(f))
	}
	c := Lookup(strings.ToLower(line[:strings.IndexByte(line+" ", ' ')]))
	if c == nil {
		t.Fatalf("no metadata for %q", line)
	}
	refs, ok := Keys(c.KeySpecs, args, partial, nil)
	if !ok {
		return "invalid"
	}
	var out []string
	for _, r := range refs {
		out = append(out, fmt.Sprintf("%d:%s", r.Pos, strings.Join(c.KeySpecs[r.Spec].Flags, ",")))
	}
	return strings.Join(out, " ")
}

func TestKeys(t *testing.T) {
	f := func(line, want string) {
		t.Helper()
		if got := keys(t, line, false); got != want {
			t.Errorf("%s: got %q, want %q", line, got, want)
		}
	}
	f("get k", "1:RO,access")
	f("mset a 1 b 2", "1:OW,update 3:OW,update")
	f("lmove a b left right", "1:RW,access,delete 2:RW,insert")
	f("zunionstore d 2 a b", "1:OW,update 3:RO,access 4:RO,access")
	f("zunionstore d 5 a b", "invalid")  // more keys declared than given
	f("zunionstore d x a b", "invalid")  // count not a number
	f("zunionstore d -1 a b", "invalid") // negative count
	f("eval s 0", "invalid")             // zero keys: the range ends before it starts
	f("eval s 2 k1 k2 a1", "3:RW,access,update 4:RW,access,update")
	f("georadius k 0 0 1 km STORE d", "1:RO,access 7:OW,update")
	f("georadius k 0 0 1 km", "1:RO,access") // keyword absent: that spec finds nothing
	f("publish ch msg", "")                  // not_key specs are skipped
	f("blpop a b 0", "1:RW,access,delete 2:RW,access,delete")
	f("sort k store d", "invalid") // 'unknown' specs fail a full search
	f("migrate h p k 0 5", "3:RW,access,delete")
	f("xread count 1 streams a b 0 0", "4:RO,access 5:RO,access")
	if got := keys(t, "sort k store d", true); got != "1:RO,access" {
		t.Errorf("partial sort: %q", got)
	}
}

func TestParseCount(t *testing.T) {
	for in, want := range map[string]int{"0": 0, "7": 7, "123456789": 123456789} {
		if n, ok := parseCount([]byte(in)); !ok || n != want {
			t.Errorf("parseCount(%q) = %d %v", in, n, ok)
		}
	}
	for _, bad := range []string{"", "01", "+1", "-1", "1a", "1234567890"} {
		if _, ok := parseCount([]byte(bad)); ok {
			t.Errorf("parseCount(%q) accepted", bad)
		}
	}
}
