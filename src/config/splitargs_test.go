package config

import (
	"math/rand"
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	f := func(line string, want ...string) {
		t.Helper()
		got, ok := SplitArgs(line)
		if !ok {
			t.Errorf("SplitArgs(%q) failed", line)
			return
		}
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("SplitArgs(%q) = %q, want %q", line, got, want)
		}
	}
	bad := func(line string) {
		t.Helper()
		if got, ok := SplitArgs(line); ok {
			t.Errorf("SplitArgs(%q) = %q, want failure", line, got)
		}
	}
	f("")
	f("   \t ")
	f("set a b", "set", "a", "b")
	f("  set\ta\r\nb  ", "set", "a", "b")
	f(`"a b" 'c d'`, "a b", "c d")
	f(`"\x41\x4a\x4A\n\r\t\b\a\"\\\q"`, "AJJ\n\r\t\b\a\"\\q")
	f(`"\x4"`, "x4")
	f(`'it\'s' 'a\b'`, "it's", `a\b`)
	f(`ab"cd"`, "abcd") // a quote may open in the middle of an argument
	f(`""`, "")
	f("a\vb", "a\vb") // \v separates only between arguments
	f("a\x00b c", "a")
	bad(`"abc`)
	bad(`'abc`)
	bad(`"a"b`)
	bad(`'a'b`)
	bad(`"\"`)
}

func TestRepr(t *testing.T) {
	if got := Repr("a\"b\\c\n\r\t\a\b\x00\xff "); got != `"a\"b\\c\n\r\t\a\b\x00\xff "` {
		t.Errorf("Repr = %s", got)
	}
}

// TestReprRoundTrip: whatever Repr writes, SplitArgs reads back as one
// argument with the same bytes (what CONFIG REWRITE relies on).
func TestReprRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.Intn(12))
		for j := range b {
			b[j] = byte(r.Intn(256))
		}
		got, ok := SplitArgs("x " + Repr(string(b)) + " y")
		if !ok || len(got) != 3 || got[1] != string(b) {
			t.Fatalf("round trip of %q: %q %v", b, got, ok)
		}
	}
}

func FuzzSplitArgs(f *testing.F) {
	f.Add(`set "a\x41" 'b\''`)
	f.Fuzz(func(t *testing.T, line string) {
		args, ok := SplitArgs(line)
		if !ok {
			return
		}
		// Re-quoting every argument must give the same arguments back.
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = Repr(a)
		}
		again, ok := SplitArgs(strings.Join(quoted, " "))
		if !ok || strings.Join(again, "\x00") != strings.Join(args, "\x00") || len(again) != len(args) {
			t.Fatalf("%q: %q then %q", line, args, again)
		}
	})
}
