package strs

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// lcsReference is Redis's algorithm written plainly: the full table of lengths, then the walk
// back reading it.
func lcsReference(a, b []byte, minMatch int) LCSResult {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
		for j := 1; i > 0 && j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				t[i][j] = t[i-1][j-1] + 1
			} else {
				t[i][j] = max(t[i-1][j], t[i][j-1])
			}
		}
	}
	res := LCSResult{Len: t[len(a)][len(b)]}
	var seq []byte
	var open *Match
	i, j := len(a), len(b)
	flush := func() {
		if open != nil && open.Len() >= minMatch {
			res.Matches = append(res.Matches, *open)
		}
		open = nil
	}
	for i > 0 && j > 0 {
		if a[i-1] == b[j-1] {
			seq = append(seq, a[i-1])
			if open != nil && open.AStart == i && open.BStart == j {
				open.AStart, open.BStart = i-1, j-1
			} else {
				flush()
				open = &Match{i - 1, i - 1, j - 1, j - 1}
			}
			i, j = i-1, j-1
			if i == 0 || j == 0 {
				flush()
			}
			continue
		}
		flush()
		if t[i-1][j] > t[i][j-1] {
			i--
		} else {
			j--
		}
	}
	slices.Reverse(seq)
	res.Seq = seq
	return res
}

func TestLCSMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	str := func() []byte {
		b := make([]byte, rng.IntN(40))
		alpha := 1 + rng.IntN(4)
		for i := range b {
			b[i] = byte('a' + rng.IntN(alpha))
		}
		return b
	}
	for range 3000 {
		a, b := str(), str()
		min := rng.IntN(4)
		want := lcsReference(a, b, min)
		got, err := LCS(a, b, 1<<30, LCSOptions{Seq: true, Matches: true, MinMatch: int64(min)})
		if err != nil {
			t.Fatal(err)
		}
		if got.Len != want.Len || string(got.Seq) != string(want.Seq) || !slices.Equal(got.Matches, want.Matches) {
			t.Fatalf("LCS(%q, %q, min %d) = %+v, want %+v", a, b, min, got, want)
		}
		onlyLen, _ := LCS(a, b, 1<<30, LCSOptions{})
		if onlyLen.Len != want.Len || onlyLen.Seq != nil || onlyLen.Matches != nil {
			t.Fatalf("length-only LCS(%q, %q) = %+v", a, b, onlyLen)
		}
	}
}

func TestLCSRedisExample(t *testing.T) {
	got, _ := LCS([]byte("ohmytext"), []byte("mynewtext"), 1<<20, LCSOptions{Seq: true, Matches: true})
	want := []Match{{4, 7, 5, 8}, {2, 3, 0, 1}}
	if string(got.Seq) != "mytext" || got.Len != 6 || !slices.Equal(got.Matches, want) {
		t.Fatalf("got %+v", got)
	}
}

func TestLCSLimit(t *testing.T) {
	a, b := make([]byte, 9), make([]byte, 9)
	if _, err := LCS(a, b, 400, LCSOptions{}); err != nil {
		t.Fatalf("10*10*4 bytes within 400: %v", err)
	}
	if _, err := LCS(a, b, 399, LCSOptions{}); err != ErrLCSMemory {
		t.Fatalf("10*10*4 bytes over 399: %v", err)
	}
	if _, err := LCS(nil, make([]byte, 1000), 4003, LCSOptions{}); err != ErrLCSMemory {
		t.Fatalf("an empty side still counts its row: %v", err)
	}
}

func TestLCSWalkBackIsBoundedWhateverTheLimit(t *testing.T) {
	// 70000 x 70000 cells need 612 MB of bits: refused before allocating, even with a limit
	// that lets Redis try.
	a := make([]byte, 70000)
	for _, o := range []LCSOptions{{Seq: true}, {Matches: true}} {
		if _, err := LCS(a, a, 1<<62, o); err != ErrLCSAlloc {
			t.Fatalf("walk back over the bound: %v", err)
		}
	}
}
