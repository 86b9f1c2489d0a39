package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestSplitInline(t *testing.T) {
	good := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"SET k v", []string{"SET", "k", "v"}},
		{"  SET\tk   v  ", []string{"SET", "k", "v"}},
		{`SET "a b" 'c d'`, []string{"SET", "a b", "c d"}},
		{`SET k "\x41\x7a\n\t\"\\"`, []string{"SET", "k", "Az\n\t\"\\"}},
		{`SET k "\x4"`, []string{"SET", "k", "x4"}}, // not two hex digits: the x is literal
		{`SET k 'it\'s'`, []string{"SET", "k", "it's"}},
		{`SET k 'a\nb'`, []string{"SET", "k", `a\nb`}},
		{`SET k ""`, []string{"SET", "k", ""}},
	}
	for _, c := range good {
		var arena []byte
		got, err := splitInline([]byte(c.in), nil, &arena)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if !equalArgs(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
	for _, in := range []string{`SET "k`, `SET 'k`, `SET "a"b`, `SET 'a'b`} {
		var arena []byte
		if _, err := splitInline([]byte(in), nil, &arena); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func equalArgs(got [][]byte, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if string(got[i]) != want[i] {
			return false
		}
	}
	return true
}

func collect(t *testing.T, s source) (cmds [][]string, lines []int64, bad []*lineError, err error) {
	t.Helper()
	for range 1_000_000 {
		c, e := s.next()
		var le *lineError
		if errors.As(e, &le) {
			bad = append(bad, le)
			continue
		}
		if e != nil {
			if e == io.EOF {
				e = nil
			}
			return cmds, lines, bad, e
		}
		var strs []string
		for _, a := range c.args {
			strs = append(strs, string(a))
		}
		cmds = append(cmds, strs)
		lines = append(lines, c.line)
	}
	t.Fatal("source does not end")
	return
}

func TestRESPSource(t *testing.T) {
	in := "*3\r\n$4\r\nSADD\r\n$1\r\ns\r\n$3\r\na\nb\r\nPING\r\n\r\n*1\r\n$4\r\nPING\r\nSET \"x\r\n*2\r\n$3\r\nGET\r\n$0\r\n\r\n"
	cmds, lines, bad, err := collect(t, newRESPSource(strings.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"SADD", "s", "a\nb"}, {"PING"}, {"PING"}, {"GET", ""}}
	if len(cmds) != len(want) {
		t.Fatalf("got %q", cmds)
	}
	for i := range want {
		if !slices.Equal(cmds[i], want[i]) {
			t.Errorf("command %d: got %q, want %q", i, cmds[i], want[i])
		}
	}
	// Lines: *3 is line 1 (its body "a\nb" spans lines 7-8), PING line 9, blank 10, *1 line 11,
	// the bad inline line 14, *2 line 15.
	if !slices.Equal(lines, []int64{1, 9, 11, 15}) {
		t.Errorf("lines %v", lines)
	}
	if len(bad) != 1 || bad[0].line != 14 || !strings.Contains(bad[0].msg, "unbalanced") {
		t.Errorf("bad lines %v", bad)
	}
}

func TestRESPSourceTruncatedAndHuge(t *testing.T) {
	for _, in := range []string{"*2\r\n$3\r\nGET\r\n", "*1\r\n$3\r\nGE", "*1\r\n$3\r\nGETxx", "*1\r\n:3\r\n", "*x\r\n", "*1\r\n$-1\r\n"} {
		_, _, _, err := collect(t, newRESPSource(strings.NewReader(in)))
		if err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	// A declared 500 MB bulk with 10 bytes behind it: an error, and nothing reserved for it.
	s := newRESPSource(strings.NewReader("*1\r\n$500000000\r\n0123456789"))
	if _, err := s.next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("got %v", err)
	}
	if cap(s.arena) > 1<<20 {
		t.Fatalf("arena grew to %d bytes for 10 bytes read", cap(s.arena))
	}
	if _, err := newRESPSource(strings.NewReader("*2000000\r\n")).next(); err == nil || !strings.Contains(err.Error(), "multibulk") {
		t.Fatalf("got %v", err)
	}
}

func TestParseIPLine(t *testing.T) {
	cases := []struct {
		in    string
		skip  bool
		want  ipEntry
		fails bool
	}{
		{in: "# a comment", skip: true},
		{in: "   ", skip: true},
		{in: "1.10.16.0/20 ; SBL256894", want: ipEntry{entry: "1.10.16.0/20"}},
		{in: "10.0.0.1", want: ipEntry{entry: "10.0.0.1"}},
		{in: "10.0.0.0/8 DE", want: ipEntry{entry: "10.0.0.0/8", label: "DE"}},
		{in: "10.0.0.0/8,DE", want: ipEntry{entry: "10.0.0.0/8", label: "DE"}},
		{in: "16777216,16777471,AU", want: ipEntry{entry: "1.0.0.0-1.0.0.255", label: "AU"}},
		{in: "2001:2::,2001:2:0:ffff:ffff:ffff:ffff:ffff,JP", want: ipEntry{entry: "2001:2::-2001:2:0:ffff:ffff:ffff:ffff:ffff", label: "JP"}},
		{in: "create blocklist hash:net family inet hashsize 1024 maxelem 65536 timeout 0", skip: true},
		{in: "add blocklist 192.168.0.0/16 timeout 300 nomatch", want: ipEntry{entry: "192.168.0.0/16", ttl: "300", nomatch: true}},
		{in: `add blocklist 10.1.1.1 comment "bad host" packets 3`, want: ipEntry{entry: "10.1.1.1", label: "bad host"}},
		{in: "99999999999,1,X", fails: true},
		{in: "a b c d", fails: true},
		{in: "add blocklist", fails: true},
	}
	for _, c := range cases {
		e, skip, err := parseIPLine(c.in)
		if c.fails {
			if err == nil {
				t.Errorf("%q: no error", c.in)
			}
			continue
		}
		if err != nil || skip != c.skip {
			t.Errorf("%q: skip %v err %v", c.in, skip, err)
			continue
		}
		e.line = ""
		if !skip && e != c.want {
			t.Errorf("%q: got %+v, want %+v", c.in, e, c.want)
		}
	}
}

func TestIPSourceCommands(t *testing.T) {
	in := "# list\n1.2.3.4\n10.0.0.0/8 DE\nadd x 192.168.0.0/16 timeout 300 nomatch\n1,2,3,4\n"
	cmds, lines, bad, err := collect(t, &ipSource{br: bufioReader(in), key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"IPSET.ADD", "k", "1.2.3.4"},
		{"IPSET.ADD", "k", "LABEL", "DE", "10.0.0.0/8"},
		{"IPSET.ADD", "k", "TTL", "300", "NOMATCH", "192.168.0.0/16"},
	}
	for i := range want {
		if i >= len(cmds) || !slices.Equal(cmds[i], want[i]) {
			t.Fatalf("got %q, want %q", cmds, want)
		}
	}
	if !slices.Equal(lines, []int64{2, 3, 4}) || len(bad) != 1 || bad[0].line != 5 {
		t.Fatalf("lines %v bad %v", lines, bad)
	}
	tpl, err := parseTemplate("ZADD geo {hi_int} {entry}{label?} {label?}")
	if err != nil {
		t.Fatal(err)
	}
	cmds, _, bad, err = collect(t, &ipSource{br: bufioReader("1.0.0.0/24 AU\n::/127\n1.2.3.4-1.2.3.1\n"), tpl: tpl, key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 2 || !slices.Equal(cmds[0], []string{"ZADD", "geo", "16777471", "1.0.0.0/24AU", "AU"}) ||
		!slices.Equal(cmds[1], []string{"ZADD", "geo", "1", "::/127"}) {
		t.Fatalf("got %q", cmds)
	}
	if len(bad) != 1 || bad[0].msg != "ERR invalid IP set entry '1.2.3.4-1.2.3.1'" {
		t.Fatalf("bad %v", bad)
	}
}

func TestCSVAndNDJSON(t *testing.T) {
	tpl, _ := parseTemplate("HSET u:{1} name {2} all {line}")
	cmds, lines, bad, err := collect(t, newCSVSource(strings.NewReader("id,name\n1,\"Ann, B\"\n2\n3,Cy\n"), tpl, true))
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 2 || !slices.Equal(cmds[0], []string{"HSET", "u:1", "name", "Ann, B", "all", "1,Ann, B"}) || !slices.Equal(lines, []int64{2, 4}) {
		t.Fatalf("got %q lines %v", cmds, lines)
	}
	if len(bad) != 1 || bad[0].line != 3 || bad[0].msg != "no field {2}" {
		t.Fatalf("bad %v", bad)
	}
	tpl, _ = parseTemplate("SET k:{id} {v}")
	cmds, lines, bad, err = collect(t, &ndjsonSource{br: bufioReader("{\"id\":7,\"v\":\"x y\"}\n\n{\"id\":\"a\",\"v\":[1, 2]}\nnot json\n"), tpl: tpl})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 2 || !slices.Equal(cmds[0], []string{"SET", "k:7", "x y"}) || !slices.Equal(cmds[1], []string{"SET", "k:a", "[1, 2]"}) ||
		!slices.Equal(lines, []int64{1, 3}) || len(bad) != 1 || bad[0].line != 4 {
		t.Fatalf("got %q lines %v bad %v", cmds, lines, bad)
	}
}

func TestGroupKey(t *testing.T) {
	if g := groupKey("ERR invalid IP set entry '1.2.3'"); g != "ERR invalid IP set entry '*'" {
		t.Fatal(g)
	}
	if g := groupKey("ERR it's odd"); g != "ERR it's odd" {
		t.Fatal(g)
	}
}

// quoteArg spells an argument so that splitInline reads it back.
func quoteArg(a []byte) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range a {
		if c == '"' || c == '\\' || c < ' ' || c > '~' {
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(c)>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(c)&15, 16))
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzSplitInline: no panic on any line; any argument list survives quoting and splitting.
func FuzzSplitInline(f *testing.F) {
	f.Add([]byte(`SET "a b" 'c\'d' "\x41"`))
	f.Add([]byte(`"unbalanced`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var arena []byte
		args, err := splitInline(in, nil, &arena)
		if err != nil {
			return
		}
		var line []string
		for _, a := range args {
			line = append(line, quoteArg(a))
		}
		var arena2 []byte
		back, err := splitInline([]byte(strings.Join(line, " ")), nil, &arena2)
		if err != nil || len(back) != len(args) {
			t.Fatalf("%q: quoted %q back %q %v", in, line, back, err)
		}
		for i := range back {
			if !bytes.Equal(back[i], args[i]) {
				t.Fatalf("%q: arg %d %q came back %q", in, i, args[i], back[i])
			}
		}
	})
}

// FuzzRESPSource: no panic; what it accepts re-encodes into a stream that reads back the same.
func FuzzRESPSource(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n"))
	f.Add([]byte("*1\r\n$99999999\r\nab"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s := newRESPSource(bytes.NewReader(in))
		var enc []byte
		var all [][]string
		for range 10_000 {
			c, err := s.next()
			if err != nil {
				var le *lineError
				if errors.As(err, &le) {
					continue
				}
				break
			}
			enc = appendCommand(enc, c.args)
			var strs []string
			for _, a := range c.args {
				strs = append(strs, string(a))
			}
			all = append(all, strs)
		}
		back, _, _, err := collect(t, newRESPSource(bytes.NewReader(enc)))
		if err != nil || len(back) != len(all) {
			t.Fatalf("re-encoded %q: %v, %d of %d", enc, err, len(back), len(all))
		}
		for i := range back {
			if !slices.Equal(back[i], all[i]) {
				t.Fatalf("command %d: %q came back %q", i, all[i], back[i])
			}
		}
	})
}

// FuzzParseIPLine: no panic; an entry whose bounds are computed agrees with net/netip.
func FuzzParseIPLine(f *testing.F) {
	for _, s := range []string{"1.2.3.4", "10.0.0.0/8 DE", "16777216,16777471,AU", "add s 1.2.3.0/24 timeout 5 nomatch", "::ffff:1.2.3.4", "1.2.3.4-1.2.3.9", "fe80::1%eth0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		e, skip, err := parseIPLine(in)
		if err != nil || skip {
			return
		}
		lo, hi, err := bounds(e.entry)
		if err != nil {
			return
		}
		if hi.Less(lo) || lo.BitLen() != hi.BitLen() {
			t.Fatalf("%q: bounds %v %v", in, lo, hi)
		}
		if strings.Contains(e.entry, "/") {
			p, perr := netip.ParsePrefix(e.entry)
			if perr != nil || p.Masked().Addr() != lo || !p.Contains(hi) {
				t.Fatalf("%q: %v %v vs netip %v %v", in, lo, hi, p, perr)
			}
		} else if !strings.Contains(e.entry, "-") {
			a, aerr := netip.ParseAddr(e.entry)
			if aerr != nil || a != lo || a != hi {
				t.Fatalf("%q: %v vs netip %v %v", in, lo, a, aerr)
			}
		}
	})
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

func TestIPSourceGroups(t *testing.T) {
	in := "1.1.1.1\n2.2.2.2\n3.3.3.3\n4.4.4.4\n5.0.0.0/8 DE\n6.0.0.0/8 FR\nbad,line,x,y\n7.7.7.7\nadd s 8.8.8.8 timeout 5\n"
	s := &ipSource{br: bufioReader(in), key: "k", per: 3}
	var got []string
	var subs [][]int64
	var bad []int64
	for range 100 {
		c, err := s.next()
		if err == io.EOF {
			break
		}
		if le, ok := err.(*lineError); ok {
			bad = append(bad, le.line)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var strs []string
		for _, a := range c.args {
			strs = append(strs, string(a))
		}
		got = append(got, fmt.Sprintf("%d:%s", c.line, strings.Join(strs, " ")))
		var ls []int64
		for _, sc := range c.subs {
			ls = append(ls, sc.line)
			if !bytes.HasPrefix(sc.enc, []byte("*3\r\n$9\r\nIPSET.ADD\r\n$1\r\nk\r\n")) && !bytes.Contains(sc.enc, []byte("LABEL")) && !bytes.Contains(sc.enc, []byte("TTL")) {
				t.Errorf("sub %q", sc.enc)
			}
		}
		subs = append(subs, ls)
	}
	want := []string{
		"1:IPSET.ADD k 1.1.1.1 2.2.2.2 3.3.3.3",
		"4:IPSET.ADD k 4.4.4.4",
		"5:IPSET.ADD k LABELS 5.0.0.0/8 DE 6.0.0.0/8 FR",
		"8:IPSET.ADD k 7.7.7.7",
		"9:IPSET.ADD k TTL 5 8.8.8.8",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(bad, []int64{7}) {
		t.Fatalf("bad lines %v", bad)
	}
	if !slices.Equal(subs[0], []int64{1, 2, 3}) || subs[1] != nil || !slices.Equal(subs[2], []int64{5, 6}) {
		t.Fatalf("subs %v", subs)
	}
}
