package metrics

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hotkv/hotkv/src/command"
)

// TestCumulativeAgainstDurations: for random durations, the exported bucket at each bound counts
// the durations below it, whatever buckets the engine's list skips or stops at (its last bucket
// counts every call, as CommandLatency's does).
func TestCumulativeAgainstDurations(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 1 + r.IntN(300)
		ds := make([]time.Duration, n)
		for i := range ds {
			ds[i] = time.Duration(r.ExpFloat64() * float64(time.Duration(1+r.IntN(5000))*time.Microsecond/100))
		}
		below := func(le time.Duration) uint64 {
			var c uint64
			for _, d := range ds {
				if d < le {
					c++
				}
			}
			return c
		}
		// The engine's list: bounds 1024 ns·2^k up to the first that counts all, some dropped.
		var got []command.LatencyBucket
		for le := 1024 * time.Nanosecond; ; le *= 2 {
			c := below(le)
			if c == uint64(n) || r.IntN(3) > 0 {
				got = append(got, command.LatencyBucket{Le: le, Count: c})
			}
			if c == uint64(n) {
				break
			}
		}
		out := cumulative(uint64(n), got)
		if len(out) != len(latencyBounds) {
			t.Fatalf("%d buckets, want %d", len(out), len(latencyBounds))
		}
		for _, le := range latencyBounds {
			want := below(le)
			if le > slices.Max(ds) {
				want = uint64(n)
			}
			if i := slices.IndexFunc(got, func(b command.LatencyBucket) bool { return b.Le == le }); i < 0 && want != uint64(n) {
				// A bound the engine dropped reports the bucket below it.
				want = 0
				for _, b := range got {
					if b.Le < le {
						want = b.Count
					}
				}
			}
			if out[le.Seconds()] != want {
				t.Fatalf("round %d: le %v: %d, want %d (durations %v, engine %v)", round, le, out[le.Seconds()], want, ds, got)
			}
		}
	}
}
