package list

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/ds/strs"
)

// Every kind of entry reads back as written, forwards and backwards, and the matcher agrees
// with byte equality.
func TestEntryRoundTrip(t *testing.T) {
	vals := []string{"", "a", "0", "7", "127", "128", "-1", "-128", "-129", "255", "32767", "-32768",
		"4095", "4096", "-4096", "-4097", "8388607", "2147483648", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "007", "-0", "+1", " 1", "1 ", "1.5", strings.Repeat("x", 63),
		strings.Repeat("y", 64), strings.Repeat("z", 127), strings.Repeat("w", 200),
		strings.Repeat("u", 4095), strings.Repeat("t", 4096), strings.Repeat("v", 20000)}
	var buf []byte
	var offs []int
	for _, v := range vals {
		e := encode([]byte(v))
		offs = append(offs, len(buf))
		buf = append(buf, make([]byte, e.size)...)
		e.put(buf[len(buf)-e.size:])
	}
	var sc [maxIntLen]byte
	r := 0
	for i, v := range vals {
		got, next := decode(buf, r, sc[:])
		if string(got) != v || r != offs[i] || skip(buf, r) != next {
			t.Fatalf("entry %d: got %q at %d, want %q at %d", i, got, r, v, offs[i])
		}
		r = next
	}
	end := len(buf)
	for i := len(vals) - 1; i >= 0; i-- {
		if end = entryStart(buf, end); end != offs[i] {
			t.Fatalf("backwards: entry %d at %d, want %d", i, end, offs[i])
		}
	}
	for _, a := range vals {
		m := newMatcher([]byte(a))
		for i, b := range vals {
			if m.at(buf, offs[i]) != (a == b) {
				t.Errorf("match %q against %q: %v", a, b, !(a == b))
			}
		}
	}
}

// Canonical integers take the integer form, in the fewest bytes; everything else is a string.
func TestEntryIntegerForm(t *testing.T) {
	f := func(v string, size int) {
		t.Helper()
		if e := encode([]byte(v)); e.size != size {
			t.Errorf("%q: %d bytes, want %d", v, e.size, size)
		}
	}
	// The sizes of Redis 7.0's listpack entries.
	f("5", 2)
	f("127", 2)
	f("128", 3)
	f("4095", 3)
	f("4096", 4)
	f("-1", 3)
	f("-4096", 3)
	f("-4097", 4)
	f("32767", 4)
	f("1000000", 5)
	f("2147483647", 6)
	f(strconv.FormatInt(math.MaxInt64, 10), 10)
	f("007", 5)
	f("abc", 5)
	f(strings.Repeat("x", 63), 1+63+1)
	f(strings.Repeat("x", 64), 2+64+1)
	f(strings.Repeat("x", 256), 2+256+2)
	f(strings.Repeat("x", 4095), 2+4095+2)
	f(strings.Repeat("x", 4096), 1+2+4096+2)
	f(strings.Repeat("x", 20000), 1+3+20000+3)
}

func TestParseInt(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "9223372036854775807", "-9223372036854775808", "120"} {
		if n, ok := strs.ParseInt([]byte(s)); !ok || strconv.FormatInt(n, 10) != s {
			t.Errorf("%q: %d %v", s, n, ok)
		}
	}
	for _, s := range []string{"", "-", "-0", "01", "+1", " 1", "1 ", "9223372036854775808",
		"-9223372036854775809", "1a", "99999999999999999999"} {
		if _, ok := strs.ParseInt([]byte(s)); ok {
			t.Errorf("%q parsed", s)
		}
	}
}
