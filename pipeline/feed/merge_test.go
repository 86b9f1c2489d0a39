package feed

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// merge against a sort, with the numbers dense (the placing path) and with gaps (the picking
// path), some of them at or above the watermark (kept pending, bytes copied).
func TestMergeAgainstSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 500 {
		rings := 1 + r.IntN(8)
		rd := &Reader{pend: make([][]Entry, rings)}
		n := r.IntN(40)
		var seqs []uint64
		for s := uint64(1); len(seqs) < n; s++ {
			if round%2 == 1 && r.IntN(3) == 0 {
				continue // a gap
			}
			seqs = append(seqs, s)
		}
		for _, s := range seqs {
			i := r.IntN(rings)
			rd.pend[i] = append(rd.pend[i], Entry{Seq: s, Cmd: []byte(fmt.Sprint(s))})
		}
		w := uint64(r.IntN(n + 2))
		var want []uint64
		for _, s := range seqs {
			if s < w {
				want = append(want, s)
			}
		}
		var got []uint64
		for _, e := range rd.merge(w) {
			if string(e.Cmd) != fmt.Sprint(e.Seq) {
				t.Fatalf("round %d: entry %d holds %q", round, e.Seq, e.Cmd)
			}
			got = append(got, e.Seq)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d (w %d): got %v, want %v", round, w, got, want)
		}
		left := 0
		for _, p := range rd.pend {
			for _, e := range p {
				if e.Seq < w || string(e.Cmd) != fmt.Sprint(e.Seq) {
					t.Fatalf("round %d: kept %d %q below w %d", round, e.Seq, e.Cmd, w)
				}
				left++
			}
		}
		if left != len(seqs)-len(want) {
			t.Fatalf("round %d: %d kept, want %d", round, left, len(seqs)-len(want))
		}
	}
}
