package set

import (
	"fmt"
	"testing"
)

func testSets() map[string]*Set {
	mk := func(ms ...string) *Set {
		s := New()
		for _, m := range ms {
			s.Add([]byte(m), &defaultLimits)
		}
		return s
	}
	var strs, mixed, ints []string
	for i := range 40 {
		strs = append(strs, fmt.Sprint("s", i))
		ints = append(ints, fmt.Sprint(i*7-100))
	}
	for i := range 2000 {
		mixed = append(mixed, fmt.Sprint(i), fmt.Sprint("m", i), fmt.Sprint(-i-1))
	}
	return map[string]*Set{"intset": mk(ints...), "listpack": mk(strs...), "big": mk(mixed...)}
}

// Random choices are members, distinct when asked, and cover the set.
func TestRandom(t *testing.T) {
	for name, s := range testSets() {
		hits := map[string]int{}
		for i := range uint64(20 * s.Len()) {
			m := s.Random(i*0x9e3779b97f4a7c15, nil)
			if !s.Has(m) {
				t.Fatalf("%s: Random returned non-member %q", name, m)
			}
			hits[string(m)]++
		}
		if len(hits) != s.Len() {
			t.Fatalf("%s: %d draws per member reached only %d of %d members", name, 20, len(hits), s.Len())
		}
		for _, n := range []int{1, 2, s.Len() / 3, s.Len()/3 + 1, s.Len() - 1} {
			got := map[string]bool{}
			s.RandomDistinct(n, uint64(n), func(m []byte) {
				if got[string(m)] || !s.Has(m) {
					t.Fatalf("%s: RandomDistinct(%d) returned %q twice or a non-member", name, n, m)
				}
				got[string(m)] = true
			})
			if len(got) != n {
				t.Fatalf("%s: RandomDistinct(%d) returned %d members", name, n, len(got))
			}
		}
		k := 0
		s.RandomRepeat(3*s.Len(), 5, func(m []byte) bool {
			k++
			if !s.Has(m) {
				t.Fatalf("%s: RandomRepeat returned %q", name, m)
			}
			return true
		})
		if k != 3*s.Len() {
			t.Fatalf("%s: RandomRepeat returned %d members", name, k)
		}
	}
}

// Pop and PopN remove exactly what they return, by either strategy, and PopN's rebuild gives
// the remaining members the encoding a new set of them would have.
func TestPop(t *testing.T) {
	for name := range testSets() {
		for _, frac := range []int{1, 2, 10, 90, 99} {
			s := testSets()[name]
			before := map[string]bool{}
			for _, m := range members(t, s) {
				before[m] = true
			}
			n := max(1, s.Len()*frac/100)
			popped := map[string]bool{}
			s.PopN(n, uint64(frac), &defaultLimits, func(m []byte) {
				if popped[string(m)] || !before[string(m)] {
					t.Fatalf("%s: PopN returned %q twice or a non-member", name, m)
				}
				popped[string(m)] = true
			})
			rest := members(t, s)
			if len(popped) != n || len(rest) != len(before)-n {
				t.Fatalf("%s %d%%: popped %d, %d left of %d", name, frac, len(popped), len(rest), len(before))
			}
			for _, m := range rest {
				if popped[m] || !before[m] {
					t.Fatalf("%s: %q both popped and kept", name, m)
				}
			}
			rebuilt := Union([]*Set{s}, &defaultLimits)
			if (s.Len()*5 <= n) && s.Encoding() != rebuilt.Encoding() {
				t.Fatalf("%s: after a rebuilding PopN encoding %s, want %s", name, s.Encoding(), rebuilt.Encoding())
			}
			for s.Len() > 0 {
				if m := s.Pop(uint64(s.Len()), nil); popped[string(m)] {
					t.Fatalf("%s: Pop returned %q again", name, m)
				}
			}
		}
	}
}

// A big set of integers whose few survivors of SPOP are integers becomes an intset again, as
// Redis's rebuild makes it.
func TestPopNRebuildsIntset(t *testing.T) {
	s := New()
	for i := range 1000 {
		s.Add(fmt.Append(nil, i), &defaultLimits)
	}
	s.PopN(990, 1, &defaultLimits, func([]byte) {})
	if s.Encoding() != "intset" || s.Len() != 10 {
		t.Fatalf("encoding %s len %d", s.Encoding(), s.Len())
	}
}
