package set

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// scanAll runs a whole scan with count, calling between after every call, and returns how often
// each member was returned.
func scanAll(s *Set, count int, between func()) map[string]int {
	seen := map[string]int{}
	cursor := uint64(0)
	for calls := 0; ; calls++ {
		cursor = s.Scan(cursor, count, func(m []byte) { seen[string(m)]++ })
		if cursor == 0 || calls > 1_000_000 {
			return seen
		}
		between()
	}
}

func bigSet(ints, strs int) *Set {
	s := New()
	for i := range ints {
		s.Add(fmt.Append(nil, i*3), &defaultLimits)
	}
	for i := range strs {
		s.Add(fmt.Appendf(nil, "s%d", i), &defaultLimits)
	}
	return s
}

// Without changes a scan returns every member exactly once.
func TestScanComplete(t *testing.T) {
	for _, count := range []int{1, 7, 100, 100000} {
		s := bigSet(3000, 3000)
		seen := scanAll(s, count, func() {})
		if len(seen) != s.Len() {
			t.Fatalf("count %d: scan returned %d of %d members", count, len(seen), s.Len())
		}
		for m, n := range seen {
			if n != 1 || !s.Has([]byte(m)) {
				t.Fatalf("count %d: %q returned %d times", count, m, n)
			}
		}
	}
	small := New()
	small.Add([]byte("a"), &defaultLimits)
	if c := small.Scan(12345, 1, func([]byte) {}); c != 0 {
		t.Fatalf("a listpack scan returned cursor %d", c)
	}
}

// Members present for the whole scan are returned however the set grows and shrinks between
// calls (Redis's SCAN guarantee).
func TestScanGuaranteeUnderResize(t *testing.T) {
	for seed := range uint64(5) {
		r := rand.New(rand.NewPCG(seed, 3))
		s := bigSet(2000, 2000)
		stable := members(t, s)
		extra := 0
		grow := true
		seen := scanAll(s, 5+r.IntN(20), func() {
			if r.IntN(10) == 0 {
				grow = !grow
			}
			for range r.IntN(150) {
				if grow {
					s.Add(fmt.Appendf(nil, "x%d", extra), &defaultLimits)
					s.Add(fmt.Append(nil, 1_000_000+extra), &defaultLimits)
					extra++
				} else if extra > 0 {
					extra--
					s.Remove(fmt.Appendf(nil, "x%d", extra))
					s.Remove(fmt.Append(nil, 1_000_000+extra))
				}
			}
		})
		for _, m := range stable {
			if seen[m] == 0 {
				t.Fatalf("seed %d: stable member %q never returned", seed, m)
			}
		}
	}
}

// Any cursor a client sends is safe: a garbage cursor ends or continues the scan normally.
func TestScanGarbageCursor(t *testing.T) {
	s := bigSet(100, 100)
	for _, c := range []uint64{1, 2, 1 << 40, 1<<64 - 1, 1<<64 - 2, 12345} {
		for range 1000 {
			if c = s.Scan(c, 10, func([]byte) {}); c == 0 {
				break
			}
		}
		if c != 0 {
			t.Fatalf("scan from a garbage cursor did not end")
		}
	}
}
