package main

import (
	"strings"
	"testing"
)

func TestMix63IsABijection(t *testing.T) {
	// Distinct in a range and within [0, 2^63): what makes intset-random's members distinct.
	seen := make(map[uint64]bool, 1<<18)
	for i := range uint64(1 << 18) {
		x := mix63(i, 7)
		if x > mask63 || seen[x] {
			t.Fatalf("mix63(%d) = %d repeats or leaves [0, 2^63)", i, x)
		}
		seen[x] = true
	}
}

func TestWords(t *testing.T) {
	seen := map[string]bool{}
	for i := range uint64(100000) {
		w := string(appendUniqueWord(nil, i, 1))
		if len(w) != 16 || strings.Trim(w, alphabet) != "" || seen[w] {
			t.Fatalf("word %d: %q", i, w)
		}
		seen[w] = true
	}
	long := string(appendWord(nil, 3, 1, 256))
	if len(long) != 256 || strings.Trim(long, alphabet) != "" || strings.Count(long, long[:10]) > 1 {
		t.Fatalf("a 256-byte word repeats itself: %q", long)
	}
	for i := range uint64(10000) {
		if f := unitFloat(i, 1); f < 0 || f >= 1 {
			t.Fatalf("unitFloat(%d) = %v", i, f)
		}
	}
}
