package resp

import "testing"

func TestSplitArgs(t *testing.T) {
	f := func(line string, want ...string) {
		t.Helper()
		args, ok := splitArgs(nil, []byte(line))
		if !ok || !sameArgs(args, want) {
			t.Fatalf("splitArgs(%q) = %q, %v; want %q", line, args, ok, want)
		}
	}
	bad := func(line string) {
		t.Helper()
		if args, ok := splitArgs(nil, []byte(line)); ok {
			t.Fatalf("splitArgs(%q) = %q, want unbalanced quotes", line, args)
		}
	}
	f("")
	f(" \t\v\f\r ")
	f("a", "a")
	f("a b\tc\rd", "a", "b", "c", "d")
	f("a\vb a\fb", "a\vb", "a\fb")
	f(`"a" "b"`, "a", "b")
	f(`"a"	'b'`, "a", "b")
	f(`"a"`+"\v"+`b`, "a", "b")
	f(`x"y"`, "xy")
	f(`x'y z'`, "xy z")
	f(`"\x00\xff"`, "\x00\xff")
	f(`"\x"`, "x")
	f(`"\\x41"`, `\x41`)
	f(`"'"`, "'")
	f(`'"'`, `"`)
	f(`'\x41\n\\ '`, `\x41\n\\ `)
	f(`'\'\''`, "''")
	f(`"\"\""`, `""`)
	f(`"\z\0"`, "z0")
	bad(`"`)
	bad(`'`)
	bad(`""""`)
	bad(`"a"'b'`)
	bad(`'a\'`)
	bad(`'a\\'`) // the second backslash escapes the quote
	bad(`"a\"`)
	bad(`a"b`)
	bad(`"a"x`)
}

// Parsing leaves the input as it arrived, so the same bytes parsed again give the same arguments:
// netpoll serves a batch that must block again from the top on a worker (BLPOP k ' 1' answered
// "unbalanced quotes" there, because the first parse had unescaped the quotes in place).
func TestParseInlineTwice(t *testing.T) {
	for _, line := range []string{"BLPOP k ' 1'\r\n", `SET "a\x41" 'b\'c' d` + "\n", "GET plain\r\n"} {
		buf := []byte(line)
		first, n1, _, err1 := parseInline(nil, buf)
		if string(buf) != line {
			t.Fatalf("parseInline changed its input: %q, was %q", buf, line)
		}
		second, n2, _, err2 := parseInline(nil, buf)
		if err1 != nil || err2 != nil || n1 != len(line) || n2 != n1 || !sameArgs(second, argStrings(first)) {
			t.Fatalf("%q parsed twice: %q (%v), then %q (%v)", line, first, err1, second, err2)
		}
	}
}

func argStrings(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}
