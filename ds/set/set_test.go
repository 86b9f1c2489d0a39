package set

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/hotkv/hotkv/ds/strs"
)

var defaultLimits = Limits{Intset: 512, Listpack: 128, ListpackValue: 64}

// members returns the set's members in iteration order, failing on a duplicate.
func members(t testing.TB, s *Set) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	s.Each(func(m []byte) bool {
		if seen[string(m)] {
			t.Fatalf("member %q iterated twice", m)
		}
		seen[string(m)] = true
		out = append(out, string(m))
		return true
	})
	return out
}

// genMember draws members that exercise every encoding boundary: small and wide integers,
// integers outside uint32 and int64, non-canonical integers (distinct strings), short and long
// strings, and members too large to share an arena chunk.
func genMember(r *rand.Rand) string {
	switch r.IntN(12) {
	case 0, 1, 2:
		return strconv.Itoa(r.IntN(300))
	case 3:
		return strconv.FormatInt(r.Int64N(1<<40)-1<<39, 10)
	case 4:
		return []string{"01", "+1", "-0", " 1", "9223372036854775808", "-9223372036854775808",
			"4294967295", "4294967296", "-1", "0", ""}[r.IntN(11)]
	case 5:
		return string(bytes.Repeat([]byte{'x'}, 60+r.IntN(10)))
	case 6:
		if r.IntN(20) == 0 {
			return fmt.Sprintf("%d%s", r.IntN(5), bytes.Repeat([]byte{'L'}, 5000))
		}
		return strconv.Itoa(r.IntN(1 << 20))
	default:
		return fmt.Sprintf("m%d", r.IntN(400))
	}
}

// TestSetModel runs random operations against a map and checks every answer, the iteration
// contents and the encoding Redis would report, under several limits.
func TestSetModel(t *testing.T) {
	for _, lim := range []Limits{defaultLimits, {Intset: 4, Listpack: 3, ListpackValue: 8},
		{Intset: 0, Listpack: 0, ListpackValue: 0}, {Intset: 2000, Listpack: 1000, ListpackValue: 1 << 20},
		{Intset: 8, Listpack: 200, ListpackValue: 2}} { // the last: most members out of line
		t.Run(fmt.Sprintf("%+v", lim), func(t *testing.T) {
			for seed := range uint64(20) {
				runModel(t, lim, seed)
			}
		})
	}
}

// isRedisInt is the model's rule for an intset member: what Redis's string2ll (redis/redis:
// src/util.c) accepts, written out. Decimal digits with an optional leading '-', no '+', no
// spaces, no leading zeros ("-0" neither), within int64.
func isRedisInt(m string) bool {
	digits := strings.TrimPrefix(m, "-")
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" || (digits[0] == '0' && m != "0") {
		return false
	}
	_, err := strconv.ParseInt(m, 10, 64)
	return err == nil
}

// intMember draws canonical integers, the int64 ends among them, and now and then a string that
// only looks like one, which must take an intset out of its encoding.
func intMember(r *rand.Rand) string {
	switch n := r.IntN(400); {
	case n == 0:
		return []string{"01", "+1", "-0", " 1", "1 ", "00", "9223372036854775808", "-9223372036854775809"}[r.IntN(8)]
	case n < 10:
		return []string{"9223372036854775807", "-9223372036854775808", "1000000000000000000"}[r.IntN(3)]
	}
	return strconv.Itoa(r.IntN(600) - 300)
}

// runModel runs one seed; odd seeds start with integers only, so that near-integers meet sets
// that are still intsets.
func runModel(t *testing.T, lim Limits, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	s, model := New(), map[string]bool{}
	intsOnly := true
	for op := range 3000 {
		m := genMember(r)
		if seed%2 == 1 && op < 1000 {
			m = intMember(r)
		}
		switch r.IntN(10) {
		case 0, 1, 2, 3, 4:
			if got, want := s.Add([]byte(m), &lim), !model[m]; got != want {
				t.Fatalf("seed %d op %d: Add(%q) = %v, want %v", seed, op, m, got, want)
			}
			model[m] = true
			intsOnly = intsOnly && isRedisInt(m) && len(model) <= lim.Intset
		case 5, 6, 7:
			if got, want := s.Remove([]byte(m)), model[m]; got != want {
				t.Fatalf("seed %d op %d: Remove(%q) = %v, want %v", seed, op, m, got, want)
			}
			delete(model, m)
		default:
			if got := s.Has([]byte(m)); got != model[m] {
				t.Fatalf("seed %d op %d: Has(%q) = %v", seed, op, m, got)
			}
		}
		if s.Len() != len(model) {
			t.Fatalf("seed %d op %d: Len %d, want %d", seed, op, s.Len(), len(model))
		}
		if want := map[bool]string{true: "intset", false: "hashtable"}[intsOnly]; s.Encoding() != want {
			t.Fatalf("seed %d op %d: encoding %s, want %s", seed, op, s.Encoding(), want)
		}
		if op%200 == 0 {
			checkContents(t, s, model)
		}
	}
	checkContents(t, s, model)
}

func checkContents(t *testing.T, s *Set, model map[string]bool) {
	t.Helper()
	got := members(t, s)
	if len(got) != len(model) {
		t.Fatalf("iterated %d members, want %d", len(got), len(model))
	}
	for _, m := range got {
		if !model[m] {
			t.Fatalf("iterated %q, not a member", m)
		}
	}
}

// An intset iterates in ascending order and keeps Redis's memory: one width for all members.
func TestIntsetOrderAndWidth(t *testing.T) {
	s := New()
	f := func(m string, width int) {
		t.Helper()
		s.Add([]byte(m), &defaultLimits)
		if w := s.is().w(); w != width {
			t.Fatalf("after %s: width %d, want %d", m, w, width)
		}
		if len(s.b) != s.Len()*width {
			t.Fatalf("after %s: %d bytes for %d members", m, len(s.b), s.Len())
		}
	}
	f("5", 2)
	f("-3", 2)
	f("70000", 4)
	f("-9223372036854775808", 8)
	f("12", 8)
	s.Remove([]byte("-9223372036854775808")) // Redis never narrows an intset
	f("13", 8)
	want := []string{"-3", "5", "12", "13", "70000"}
	if got := members(t, s); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// A small set of strings iterates in insertion order; passing a limit converts it.
func TestListpackOrderAndConversion(t *testing.T) {
	s := New()
	lim := Limits{Intset: 512, Listpack: 4, ListpackValue: 10}
	for _, m := range []string{"1", "b", "a", "2"} {
		s.Add([]byte(m), &lim)
	}
	if s.enc != encListpack {
		t.Fatalf("encoding %d, want listpack", s.enc)
	}
	if got := members(t, s); !slices.Equal(got, []string{"1", "b", "a", "2"}) {
		t.Fatalf("order %v", got)
	}
	s.Add([]byte("c"), &lim)
	if s.enc != encBig || s.Len() != 5 {
		t.Fatalf("after the fifth member: encoding %d, len %d", s.enc, s.Len())
	}
	// A member past ListpackValue stays in the listpack, out of line, up to lpExtMax of them.
	s2 := New()
	s2.Add([]byte("a"), &lim)
	s2.Add([]byte("12345678901"), &lim)
	if s2.enc != encListpack || s2.lp().extLen() != 1 || !s2.Has([]byte("12345678901")) {
		t.Fatalf("a long member of a short listpack: encoding %d", s2.enc)
	}
	wide := Limits{Intset: 512, Listpack: 1000, ListpackValue: 10}
	for i := range lpExtMax - 1 {
		s2.Add(fmt.Appendf(nil, "long-member-%d", i), &wide)
	}
	if s2.enc != encListpack || s2.lp().extLen() != lpExtMax {
		t.Fatalf("%d long members: encoding %d", lpExtMax, s2.enc)
	}
	s2.Add([]byte("one-long-member-too-many"), &wide)
	if s2.enc != encBig || s2.Len() != lpExtMax+2 || !s2.Has([]byte("a")) || !s2.Has([]byte("long-member-0")) {
		t.Fatalf("past lpExtMax long members: encoding %d, len %d", s2.enc, s2.Len())
	}
	// An intset meeting a long member converts by the same rule.
	s3 := New()
	s3.Add([]byte("7"), &lim)
	s3.Add([]byte("12345678901x"), &lim)
	if s3.enc != encListpack || !slices.Equal(members(t, s3), []string{"7", "12345678901x"}) {
		t.Fatalf("intset with a long member: encoding %d", s3.enc)
	}
}

// Out-of-line members keep the listpack's insertion order and their ext indexes through
// removals from the front, middle and back, and a clone shares none of them.
func TestListpackOutOfLine(t *testing.T) {
	lim := Limits{Intset: 512, Listpack: 128, ListpackValue: 4}
	s := New()
	var want []string
	for i := range 12 {
		m := fmt.Sprint("m", i)
		if i%3 == 0 {
			m = fmt.Sprint("long-", i, strings.Repeat("x", i*40))
		}
		s.Add([]byte(m), &lim)
		want = append(want, m)
	}
	if got := s.lp().extLen(); got != 4 {
		t.Fatalf("%d members out of line, want 4", got)
	}
	c := s.Clone().(*Set)
	for _, i := range []int{0, 5, 9, 2, 3} { // the first, a middle one, the last, long ones
		if !s.Remove([]byte(want[i])) || s.Has([]byte(want[i])) {
			t.Fatalf("remove %q", want[i])
		}
		want = slices.Delete(slices.Clone(want), i, i+1)
		if got := members(t, s); !slices.Equal(got, want) {
			t.Fatalf("after removing: %q, want %q", got, want)
		}
	}
	if c.Len() != 12 || !c.Has([]byte("long-0")) {
		t.Fatalf("the clone changed: len %d", c.Len())
	}
}

// Entry headers of one, two and three bytes, inline and out of line, decode alike in every walk.
func TestListpackHeaderWidths(t *testing.T) {
	for _, lim := range []Limits{{Intset: 512, Listpack: 128, ListpackValue: 1 << 20},
		{Intset: 512, Listpack: 128, ListpackValue: 10}} {
		s := New()
		var want []string
		for _, n := range []int{1, 63, 64, 100, 8191, 8192, 20000, 5} {
			m := fmt.Sprint(n, ":", strings.Repeat("h", n))
			s.Add([]byte(m), &lim)
			want = append(want, m)
		}
		if s.enc != encListpack || !slices.Equal(members(t, s), want) {
			t.Fatalf("%+v: encoding %d, members differ", lim, s.enc)
		}
		for i, m := range want {
			if !s.Has([]byte(m)) || s.Has([]byte(m+"x")) || string(s.lp().at(i)) != m {
				t.Fatalf("%+v: member %d (%d bytes) not found where it is", lim, i, len(m))
			}
		}
		for _, m := range want {
			if !s.Remove([]byte(m)) || s.Has([]byte(m)) {
				t.Fatalf("%+v: remove %d bytes", lim, len(m))
			}
		}
		if s.Len() != 0 || len(s.b) != 0 || s.lp().extLen() != 0 {
			t.Fatalf("%+v: emptied listpack keeps %d members, %d bytes", lim, s.Len(), len(s.b))
		}
	}
}

// Small sets cost what they hold: a Set is 48 bytes, a listpack's or intset's buffer keeps at
// most append's slack, a long member costs its own bytes and a 4-byte entry, and a big set's
// first arena chunk and table start at one member's need.
func TestSizedToNeed(t *testing.T) {
	if size := unsafe.Sizeof(Set{}); size > 48 {
		t.Fatalf("a Set takes %d bytes, past the 48-byte size class", size)
	}
	classOf := func(n int) int { return cap(append([]byte(nil), make([]byte, n)...)) }
	s, want := New(), 0
	for i := range 40 {
		m := fmt.Appendf(nil, "member-%03d", i)
		s.Add(m, &defaultLimits)
		want += 1 + len(m)
		if len(s.b) != want || cap(s.b) > max(classOf(want), 2*want) {
			t.Fatalf("%d members: listpack len %d cap %d, want %d", i+1, len(s.b), cap(s.b), want)
		}
	}
	if one := New(); one.Add([]byte("only"), &defaultLimits) && cap(one.b) != classOf(5) {
		t.Fatalf("one member: listpack cap %d", cap(one.b))
	}
	is := New()
	for i := range 100 {
		is.Add([]byte(strconv.Itoa(i)), &defaultLimits)
		if cap(is.b) > max(classOf(len(is.b)), 2*len(is.b)) {
			t.Fatalf("%d integers: intset len %d cap %d", i+1, len(is.b), cap(is.b))
		}
	}
	long := New()
	for i := range 5 {
		long.Add(fmt.Appendf(nil, "%d%s", i, bytes.Repeat([]byte{'m'}, 255)), &defaultLimits)
		if len(long.b) != 4*(i+1) || cap((*long.ext)[i]) != 256 {
			t.Fatalf("%d long members: listpack %d bytes, member %d", i+1, len(long.b), cap((*long.ext)[i]))
		}
	}
	lim := Limits{Intset: 512, Listpack: 0, ListpackValue: 64}
	b := New()
	b.Add(bytes.Repeat([]byte{'m'}, 256), &lim)
	tb := &b.big.strs
	if len(tb.slots) != minSlots || tb.mem.bytes() != classOf(entrySize(256)) {
		t.Fatalf("one-member table: %d slots, %d arena bytes", len(tb.slots), tb.mem.bytes())
	}
}

func TestClone(t *testing.T) {
	for _, n := range []int{3, 100, 5000} {
		s := New()
		for i := range n {
			s.Add([]byte(fmt.Sprint("k", i)), &defaultLimits)
			s.Add([]byte(fmt.Sprint(i)), &defaultLimits)
		}
		c := s.Clone().(*Set)
		c.Add([]byte("new"), &defaultLimits)
		c.Remove([]byte("k0"))
		c.Remove([]byte("0"))
		if !s.Has([]byte("k0")) || !s.Has([]byte("0")) || s.Has([]byte("new")) || s.Len() != 2*n {
			t.Fatalf("n=%d: the clone shares state with the original", n)
		}
		if c.Len() != 2*n-1 || c.Encoding() != s.Encoding() {
			t.Fatalf("n=%d: clone len %d encoding %s", n, c.Len(), c.Encoding())
		}
	}
}

func TestParseInt(t *testing.T) {
	for in, want := range map[string]bool{"0": true, "-1": true, "123": true, "01": false, "-0": false,
		"+1": false, "": false, "-": false, "1a": false, " 1": false, "9223372036854775807": true,
		"9223372036854775808": false, "-9223372036854775808": true, "-9223372036854775809": false,
		"99999999999999999999": false} {
		v, ok := strs.ParseInt([]byte(in))
		if ok != want || (ok && strconv.FormatInt(v, 10) != in) {
			t.Errorf("strs.ParseInt(%q) = %d, %v", in, v, ok)
		}
	}
	for in, want := range map[string]bool{"0": true, "4294967295": true, "4294967296": false,
		"-1": false, "007": false, "12345678901": false} {
		if _, ok := parseUint32([]byte(in)); ok != want {
			t.Errorf("parseUint32(%q) ok = %v", in, ok)
		}
	}
}
