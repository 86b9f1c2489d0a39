package command

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The histogram's buckets hold what they say: every duration falls in a bucket whose bounds
// contain it, buckets are no wider than 1/64 of their lower bound, and indexes grow with the
// duration.
func TestHistBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	prevRow, prevSub := 0, 0
	for v := int64(0); v < 1<<14; v++ {
		row, sub := histIndex(v)
		if row < prevRow || row == prevRow && sub < prevSub {
			t.Fatalf("index of %d (%d,%d) below that of %d (%d,%d)", v, row, sub, v-1, prevRow, prevSub)
		}
		prevRow, prevSub = row, sub
	}
	for range 200000 {
		v := rng.Int64N(1 << uint(rng.IntN(40)+1))
		row, sub := histIndex(v)
		lo, hi := histBounds(row, sub)
		capped := min(v, 1<<histMaxBit-1)
		if capped < lo || capped > hi {
			t.Fatalf("%d in bucket (%d,%d) = [%d,%d]", v, row, sub, lo, hi)
		}
		if lo >= histSub && float64(hi-lo+1) > float64(lo)/histSub {
			t.Fatalf("bucket [%d,%d] wider than 1/64 of its bound", lo, hi)
		}
	}
}

// Percentiles and power-of-two buckets against a sorted slice of the same durations.
func TestHistAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 50 {
		var h latencyHist
		n := 1 + rng.IntN(5000)
		ref := make([]int64, n)
		for i := range ref {
			// Log-uniform from 1 ns to ~1 s, as command durations spread.
			ref[i] = int64(math.Pow(2, rng.Float64()*30))
			if round%5 == 0 {
				ref[i] = rng.Int64N(3000)
			}
			h.record(ref[i])
		}
		slices.Sort(ref)
		var m histCounts
		m.add(&h)
		if m.total != uint64(n) || h.count.Load() != uint64(n) {
			t.Fatalf("total %d, count %d, want %d", m.total, h.count.Load(), n)
		}
		for _, p := range []float64{0, 1, 50, 90, 99, 99.9, 100} {
			rank := max(int(p/100*float64(n)+0.5), 1)
			want := ref[rank-1]
			got := m.percentile(p)
			if got < want || float64(got) > float64(want)*(1+1.0/histSub)+1 {
				t.Fatalf("round %d p%v = %d, reference %d (n %d)", round, p, got, want, n)
			}
		}
		buckets := m.powerBuckets()
		if last := buckets[len(buckets)-1]; last.Count != uint64(n) {
			t.Fatalf("last bucket %v, want all %d", last, n)
		}
		for i, b := range buckets {
			if b.Le != time.Duration(1024<<i) {
				t.Fatalf("bucket %d bound %v", i, b.Le)
			}
			below := uint64(0)
			for _, v := range ref {
				if v < int64(b.Le) {
					below++
				}
			}
			if b.Count != below {
				t.Fatalf("below %v: %d, reference %d", b.Le, b.Count, below)
			}
		}
	}
}

// Recording allocates nothing once a duration's row exists.
func TestHistRecordAllocs(t *testing.T) {
	var h latencyHist
	h.record(1500)
	if n := testing.AllocsPerRun(1000, func() { h.record(1500 + int64(len(h.rows))) }); n != 0 {
		t.Fatalf("record allocates %v times", n)
	}
}

// HDR's bucket labels as redis-server 7.0.15 printed them in LATENCY HISTOGRAM for GET, SET
// and DEBUG SLEEP calls (recorded by hand): bound index -> label in µs.
func TestHdrUsecLabel(t *testing.T) {
	recorded := map[int]int64{0: 1, 3: 8, 4: 16, 8: 264, 9: 528, 11: 2113, 12: 4227}
	for i, w := range recorded {
		if got := hdrUsecLabel(1024 << i); got != w {
			t.Errorf("bound %d: %d, want %d", 1024<<i, got, w)
		}
	}
}
