package resp

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unsafe"
)

func TestParseResult(t *testing.T) {
	f := func(in string, wantArgs []string, wantN, wantNeed int) {
		t.Helper()
		args, n, need, err := Parse(nil, []byte(in), nil)
		if err != nil {
			t.Fatalf("Parse(%q): unexpected error %v", in, err)
		}
		if n != wantN || need != wantNeed || !sameArgs(args, wantArgs) {
			t.Fatalf("Parse(%q) = %q, n=%d, need=%d; want %q, n=%d, need=%d",
				in, args, n, need, wantArgs, wantN, wantNeed)
		}
	}
	f("", nil, 0, 1)
	f("*1\r\n$4\r\nPING\r\n", []string{"PING"}, 14, 0)
	f("*1\r\n$4\r\nPING\r\n*1\r\n", []string{"PING"}, 14, 0)
	f("*2\r\n$3\r\nGET\r\n$0\r\n\r\n", []string{"GET", ""}, 19, 0)
	f("*0\r\n", nil, 4, 0)
	f("*-1\r\nPING\r\n", nil, 5, 0)
	f("PING\r\n", []string{"PING"}, 6, 0)
	f("\n", nil, 1, 0)
	f(" a  b\tc \r\nX", []string{"a", "b", "c"}, 10, 0)
	// Incomplete: need is exact while a body is awaited, len+1 otherwise.
	f("*", nil, 0, 2)
	f("*1", nil, 0, 3)
	f("*1\r", nil, 0, 4)
	f("*1\r\n", nil, 0, 5)
	f("*1\r\n$4\r", nil, 0, 8)
	f("*1\r\n$4\r\n", nil, 0, 14)
	f("*1\r\n$4\r\nPI", nil, 0, 14)
	f("*1\r\n$4\r\nPING\r", nil, 0, 14)
	f("*2\r\n$4\r\nPING\r\n$100\r\nab", nil, 0, 14+6+102)
	f("*1\r\n$536870912\r\n", nil, 0, 16+536870912+2)
	f("PING", nil, 0, 5)
	f("PING\r", nil, 0, 6)
	// A NUL hides the line end: only the "too big" error can follow, once 64KB+1 bytes are there.
	f("*1\x00\r\n", nil, 0, inlineMax+1)
	f("*1\r\n$1\x00\r\n", nil, 0, 4+inlineMax+1)
	f("PI\x00NG\r\n", nil, 0, inlineMax+1)
}

func sameArgs(args [][]byte, want []string) bool {
	if len(args) != len(want) {
		return false
	}
	for i := range args {
		if string(args[i]) != want[i] {
			return false
		}
	}
	return true
}

func TestParseErrorResult(t *testing.T) {
	dst := [][]byte{[]byte("kept")}
	for _, in := range []string{"*x\r\n", "*2\r\n$1\r\na\r\n$-1\r\n", "\"\r\n", "a 'b\r\n"} {
		args, n, need, err := Parse(dst, []byte(in), nil)
		if _, ok := err.(*ProtocolError); !ok || n != 0 || need != 0 || len(args) != 1 || string(args[0]) != "kept" {
			t.Errorf("Parse(%q) = %q, %d, %d, %v; want dst unchanged, 0, 0 and a *ProtocolError", in, args, n, need, err)
		}
	}
}

func TestParseKeepsDst(t *testing.T) {
	dst := [][]byte{[]byte("x")}
	args, n, _, _ := Parse(dst, []byte("*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\n"), nil)
	if n != 0 || len(args) != 1 || string(args[0]) != "x" {
		t.Fatalf("incomplete: args=%q n=%d, want dst back unchanged", args, n)
	}
	args, n, _, _ = Parse(args, []byte("*2\r\n$1\r\na\r\n$1\r\nb\r\n"), nil)
	if n != 18 || !sameArgs(args, []string{"x", "a", "b"}) {
		t.Fatalf("complete: args=%q n=%d, want x a b appended", args, n)
	}
}

func TestParseArgsAliasBuf(t *testing.T) {
	buf := []byte("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n")
	args, _, _, _ := Parse(nil, buf, nil)
	for i, a := range args {
		if !within(buf, a) {
			t.Fatalf("arg %d is not a sub-slice of buf", i)
		}
		if cap(a) != len(a) {
			t.Fatalf("arg %d has capacity %d past its length %d: appending to it would clobber buf", i, cap(a), len(a))
		}
	}
}

// within reports whether b lies inside buf's memory.
func within(buf, b []byte) bool {
	if len(b) == 0 {
		return true
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(buf))
}

// A quoted inline command is unescaped in a copy: the input stays as it arrived (a connection may
// parse the same bytes twice, TestParseInlineTwice), and unquoted commands still alias the input.
func TestParseInlineLeavesInput(t *testing.T) {
	line := `SET "k\x41y" 'it\'s' plain` + "\r\n"
	buf := []byte(line)
	args, n, _, err := Parse(nil, buf, nil)
	if err != nil || n != len(buf) || !sameArgs(args, []string{"SET", "kAy", "it's", "plain"}) {
		t.Fatalf("got %q n=%d err=%v", args, n, err)
	}
	if string(buf) != line {
		t.Fatalf("quoted inline command modified: %q", buf)
	}
	for i, a := range args {
		if within(buf, a) || cap(a) != len(a) {
			t.Fatalf("arg %d aliases the input or has spare capacity", i)
		}
	}
	plain := []byte("GET key\r\n")
	orig := bytes.Clone(plain)
	args, _, _, _ = Parse(nil, plain, nil)
	if !bytes.Equal(plain, orig) || !within(plain, args[1]) || cap(args[1]) != len(args[1]) {
		t.Fatalf("unquoted inline command: modified (%q) or not aliased", plain)
	}
}

func TestParseLimits(t *testing.T) {
	lim := Limits{MaxBulkLen: 3}
	if _, n, _, err := Parse(nil, []byte("*1\r\n$3\r\nabc\r\n"), &lim); err != nil || n != 13 {
		t.Fatalf("bulk at MaxBulkLen: n=%d err=%v", n, err)
	}
	if _, _, _, err := Parse(nil, []byte("*1\r\n$4\r\n"), &lim); err == nil || err.Error() != msgInvalidBulk {
		t.Fatalf("bulk over MaxBulkLen: err=%v", err)
	}
	// A limit above what int holds must still bound need, not overflow it.
	huge := Limits{MaxBulkLen: math.MaxInt64}
	_, _, need, err := Parse(nil, []byte("*1\r\n$9223372036854775807\r\n"), &huge)
	if err != nil || need != math.MaxInt {
		t.Fatalf("huge bulk: need=%d err=%v, want need=MaxInt", need, err)
	}
	if d := DefaultLimits(); d.MaxBulkLen != 512<<20 || d.Unauthenticated {
		t.Fatalf("DefaultLimits() = %+v", d)
	}
}

func TestProtocolErrorAppend(t *testing.T) {
	_, _, _, err := Parse(nil, []byte("*1\r\n:1\r\n"), nil)
	pe, ok := err.(*ProtocolError)
	if !ok {
		t.Fatalf("err = %v, want *ProtocolError", err)
	}
	if got := string(pe.Append([]byte("+OK\r\n"))); got != "+OK\r\n-ERR Protocol error: expected '$', got ':'\r\n" {
		t.Fatalf("Append = %q", got)
	}
	if pe.Error() != pe.Msg {
		t.Fatalf("Error() = %q, want Msg %q", pe.Error(), pe.Msg)
	}
}

func TestAtoi(t *testing.T) {
	f := func(s string, want int64, wantOK bool) {
		t.Helper()
		got, ok := atoi([]byte(s))
		if got != want || ok != wantOK {
			t.Fatalf("atoi(%q) = %d, %v; want %d, %v", s, got, ok, want, wantOK)
		}
	}
	f("0", 0, true)
	f("7", 7, true)
	f("-7", -7, true)
	f("9223372036854775807", math.MaxInt64, true)
	f("-9223372036854775808", math.MinInt64, true)
	f("9223372036854775808", 0, false)
	f("-9223372036854775809", 0, false)
	f("18446744073709551615", 0, false)
	f("18446744073709551616", 0, false)
	f("99999999999999999999", 0, false)
	f("-"+strings.Repeat("1", 20), 0, false) // 21 bytes
	f("", 0, false)
	f("-", 0, false)
	f("-0", 0, false)
	f("00", 0, false)
	f("01", 0, false)
	f("+1", 0, false)
	f(" 1", 0, false)
	f("1 ", 0, false)
	f("1a", 0, false)
}
