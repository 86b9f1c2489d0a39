package resptest

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		v, err := Parse([]byte(raw))
		if err != nil {
			t.Fatalf("Parse(%q): %v", raw, err)
		}
		if got := v.String(); got != want {
			t.Errorf("Parse(%q) = %s, want %s", raw, got, want)
		}
	}
	f("+OK\r\n", `+"OK"`)
	f("-ERR x\r\n", `-"ERR x"`)
	f(":-3\r\n", `:"-3"`)
	f("$-1\r\n", "(nil)")
	f("*-1\r\n", "(nil)")
	f("_\r\n", "(nil)")
	f("$0\r\n\r\n", `$""`)
	f("$4\r\na\r\nb\r\n", `$"a\r\nb"`)
	f("*2\r\n*1\r\n$1\r\nx\r\n:5\r\n", `*[*[$"x"] :"5"]`)
	f("%1\r\n+k\r\n~2\r\n_\r\n,1.5\r\n", `%[+"k" ~[(nil) ,"1.5"]]`)
	f("|1\r\n+a\r\n#t\r\n:7\r\n", `:"7"`)
	f("=7\r\ntxt:abc\r\n", `="txt:abc"`)
	f(">2\r\n$7\r\nmessage\r\n$1\r\nc\r\n", `>[$"message" $"c"]`)
}

func TestParseRejects(t *testing.T) {
	for _, bad := range []string{"?x\r\n", "$3\r\nabcd\r\n", "+OK\n", "*x\r\n", "*2\r\n:1\r\n", "$5\r\nab\r\n",
		"%-1\r\n", "*99999999999\r\n", "+OK\r\n+OK\r\n"} {
		if v, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) = %s, want an error", bad, v)
		}
	}
}

func TestAccessors(t *testing.T) {
	v, _ := Parse([]byte("*3\r\n$1\r\na\r\n+b\r\n=6\r\ntxt:cd\r\n"))
	s, err := v.Strings()
	if err != nil || strings.Join(s, ",") != "a,b,cd" {
		t.Errorf("Strings = %q, %v", s, err)
	}
	n, err := Value{Kind: ':', Str: "42"}.Int()
	if err != nil || n != 42 {
		t.Errorf("Int = %d, %v", n, err)
	}
	if _, err := (Value{Kind: '$', Null: true}).Text(); err == nil {
		t.Error("Text of a null reply succeeded")
	}
	if _, err := (Value{Kind: '+', Str: "x"}).Int(); err == nil {
		t.Error("Int of a simple string succeeded")
	}
	vs, err := ParseAll([]byte(":1\r\n$-1\r\n"))
	if err != nil || len(vs) != 2 || !vs[1].Null {
		t.Errorf("ParseAll = %v, %v", vs, err)
	}
}

func TestReadRaw(t *testing.T) {
	in := "|1\r\n+a\r\n#t\r\n:7\r\n*2\r\n$1\r\nx\r\n%1\r\n+k\r\n_\r\n+OK\r\n"
	r := bufio.NewReader(strings.NewReader(in))
	for _, want := range []string{"|1\r\n+a\r\n#t\r\n:7\r\n", "*2\r\n$1\r\nx\r\n%1\r\n+k\r\n_\r\n", "+OK\r\n"} {
		got, err := ReadRaw(r)
		if err != nil || string(got) != want {
			t.Errorf("ReadRaw = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := ReadRaw(r); err != io.EOF {
		t.Errorf("ReadRaw at the end: %v, want EOF", err)
	}
}
