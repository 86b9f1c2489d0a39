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
