package main

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp"
)

// listKeys hands out a fixed list of keys, then runs dry.
type listKeys struct{ keys []uint64 }

func (l *listKeys) next() (uint64, bool) {
	if len(l.keys) == 0 {
		return 0, false
	}
	k := l.keys[0]
	l.keys = l.keys[1:]
	return k, true
}

func TestTemplateExpands(t *testing.T) {
	f := func(text string, keys []uint64, want ...string) {
		t.Helper()
		tpl, err := compileTemplate(text, 5)
		if err != nil {
			t.Fatal(err)
		}
		e := expander{keys: &listKeys{keys: keys}, data: []byte("xxxxx")}
		buf, ok := tpl.appendTo([]byte("prefix"), &e)
		if !ok {
			t.Fatalf("%q: keys ran out", text)
		}
		if len(buf)-len("prefix") > tpl.maxSize(0) {
			t.Fatalf("%q: %d bytes, more than maxSize %d", text, len(buf)-6, tpl.maxSize(0))
		}
		// The server's own parser must read back exactly the expected arguments.
		args, n, _, err := resp.Parse(nil, buf[len("prefix"):], nil)
		if err != nil || n != len(buf)-len("prefix") {
			t.Fatalf("%q: Parse consumed %d of %d bytes, err %v", text, n, len(buf)-6, err)
		}
		var got []string
		for _, a := range args {
			got = append(got, string(a))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q expanded to %q, want %q", text, got, want)
		}
	}
	f("PING", nil, "PING")
	f("SET key:__key__ __data__", []uint64{42}, "SET", "key:42", "xxxxx")
	f("MGET k:__key__ k:__key__ k:__key__", []uint64{0, 7, 18446744073709551615},
		"MGET", "k:0", "k:7", "k:18446744073709551615")
	f("HSET h:__key__ f__key__v __data____data__", []uint64{1, 22}, "HSET", "h:1", "f22v", "xxxxxxxxxx")
	f(`SET "a b" "__key__ c"`, []uint64{3}, "SET", "a b", "3 c")
	f("  LPUSH\tl __data__ ", nil, "LPUSH", "l", "xxxxx")
}

func TestTemplatePadsKeys(t *testing.T) {
	tpl, err := compileTemplate("GET key:__key__", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := expander{keys: &listKeys{keys: []uint64{42, 123456789012345}}, width: 12}
	buf, _ := tpl.appendTo(nil, &e)
	buf, _ = tpl.appendTo(buf, &e)
	want := "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n*2\r\n$3\r\nGET\r\n$19\r\nkey:123456789012345\r\n"
	if string(buf) != want {
		t.Fatalf("padded keys: %q, want %q", buf, want)
	}
}

func TestTemplateKeepsWholeCommands(t *testing.T) {
	tpl, err := compileTemplate("MSET a:__key__ __data__ b:__key__ __data__", 3)
	if err != nil {
		t.Fatal(err)
	}
	e := expander{keys: &listKeys{keys: []uint64{1}}, data: []byte("abc")}
	buf, ok := tpl.appendTo([]byte("*1\r\n$4\r\nPING\r\n"), &e)
	if ok || string(buf) != "*1\r\n$4\r\nPING\r\n" {
		t.Fatalf("a command cut short by the keys left %q (ok %v)", buf, ok)
	}
}

// __rand__ is --data-size printable bytes drawn afresh for every request from the connection's
// seeded generator: requests differ from each other, and the same seed sends the same ones again.
func TestTemplateRand(t *testing.T) {
	const size = 37 // not a multiple of the ten characters a draw gives
	tpl, err := compileTemplate("SADD s:__key__ __rand__ x__rand__", size)
	if err != nil {
		t.Fatal(err)
	}
	expand := func(seed uint64, conn int) [][]string {
		e := expander{keys: &uniformKeys{n: 10}, data: make([]byte, size), rng: randStream(seed, conn)}
		var out [][]string
		var buf []byte
		for range 100 {
			buf, _ = tpl.appendTo(buf[:0], &e)
			if len(buf) > tpl.maxSize(0) {
				t.Fatalf("%d bytes, more than maxSize %d", len(buf), tpl.maxSize(0))
			}
			args, n, _, err := resp.Parse(nil, buf, nil)
			if err != nil || n != len(buf) || len(args) != 4 {
				t.Fatalf("%q: Parse consumed %d of %d bytes, %d args, err %v", buf, n, len(buf), len(args), err)
			}
			var got []string
			for _, a := range args {
				got = append(got, string(a))
			}
			out = append(out, got)
		}
		return out
	}
	a, b, other, conn := expand(1, 3), expand(1, 3), expand(2, 3), expand(1, 4)
	seen := map[string]bool{}
	for i, args := range a {
		member, second := args[2], args[3]
		if len(member) != size || strings.Trim(member, randAlphabet) != "" || len(second) != size+1 || second[0] != 'x' {
			t.Fatalf("request %d: %q", i, args)
		}
		if seen[member] || member == second[1:] {
			t.Fatalf("request %d repeats %q", i, member)
		}
		seen[member] = true
		if !slices.Equal(args, b[i]) {
			t.Fatalf("request %d: %q, then %q with the same seed", i, args, b[i])
		}
		if args[2] == other[i][2] || args[2] == conn[i][2] {
			t.Fatalf("request %d: two seeds or two connections both sent %q", i, args[2])
		}
	}
	// Every character of the alphabet turns up: the draw is not stuck in part of it.
	all := strings.Join(slices.Collect(maps.Keys(seen)), "")
	for _, c := range randAlphabet {
		if !strings.ContainsRune(all, c) {
			t.Fatalf("%q never drawn", c)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	for _, text := range []string{"", "   ", `GET "unclosed`} {
		if _, err := compileTemplate(text, 1); err == nil {
			t.Fatalf("%q compiled", text)
		}
	}
}

func TestTemplateAllocatesNothing(t *testing.T) {
	tpl, err := compileTemplate("MSET key:__key__ __data__ key:__key__ __rand__", 256)
	if err != nil {
		t.Fatal(err)
	}
	e := expander{keys: &uniformKeys{n: 1 << 40}, data: []byte(strings.Repeat("d", 256))}
	buf := make([]byte, 0, tpl.maxSize(0))
	allocs := testing.AllocsPerRun(1000, func() {
		buf, _ = tpl.appendTo(buf[:0], &e)
	})
	if allocs != 0 {
		t.Fatalf("appendTo allocates %v times per request", allocs)
	}
}

func TestRatioSchedule(t *testing.T) {
	w, err := parseRatio("1:3:0", 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := schedule(w); !slices.Equal(got, []uint8{0, 1, 1, 1}) {
		t.Fatalf("schedule(1:3:0) = %v", got)
	}
	if w, _ := parseRatio("", 2); !slices.Equal(schedule(w), []uint8{0, 1}) {
		t.Fatalf("empty ratio gives %v", schedule(w))
	}
	for _, bad := range []string{"1", "1:x", "0:0", "1:-1", "1:" + strconv.Itoa(1001)} {
		if _, err := parseRatio(bad, 2); err == nil {
			t.Fatalf("parseRatio(%q) accepted", bad)
		}
	}
}

// __line__ draws one of the --lines at random per occurrence; the bulk lengths and maxSize (with
// the longest line per __line__) hold, and every line is drawn in time.
func TestTemplateLines(t *testing.T) {
	tpl, err := compileTemplate("SMISMEMBER s __line__ x__line__y", 0)
	if err != nil {
		t.Fatal(err)
	}
	if tpl.lines != 2 {
		t.Fatalf("%d __line__ counted", tpl.lines)
	}
	lines := [][]byte{[]byte("1.2.3.4"), []byte("::1"), []byte("10.0.0.0")}
	e := expander{keys: &listKeys{}, lines: lines, rng: randStream(1, 0)}
	seen := map[string]bool{}
	for range 200 {
		buf, ok := tpl.appendTo(nil, &e)
		if !ok {
			t.Fatal("ran out")
		}
		if len(buf) > tpl.maxSize(0)+tpl.lines*maxLen(lines) {
			t.Fatalf("%d bytes, more than the bound", len(buf))
		}
		args, n, _, err := resp.Parse(nil, buf, nil)
		if err != nil || n != len(buf) || len(args) != 4 {
			t.Fatalf("Parse: %d of %d, %v", n, len(buf), err)
		}
		a, b := string(args[2]), string(args[3])
		if !slices.ContainsFunc(lines, func(l []byte) bool { return string(l) == a }) ||
			!strings.HasPrefix(b, "x") || !strings.HasSuffix(b, "y") {
			t.Fatalf("expanded to %q", args)
		}
		seen[a] = true
	}
	if len(seen) != len(lines) {
		t.Fatalf("drew only %v", seen)
	}
}
