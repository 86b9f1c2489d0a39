package command

import (
	"fmt"
	"testing"
)

// BenchmarkBudgetTake serves pipelined batches of 32 BUDGET.TAKE through the pipeline (no
// sockets): one key, and a two-key chain whose keys are on different shards (a multi-shard
// call), with ReportAllocs; allocs/op is per batch of 32.
func BenchmarkBudgetTake(b *testing.B) {
	for _, chain := range []int{1, 2} {
		b.Run(fmt.Sprint("keys=", chain), func(b *testing.B) {
			e := newTestEngine()
			tc := newTestConn(b, e)
			tc.do("BUDGET.SET", "tenant", "LIMIT", "1000000000000000", "PER", "1s")
			var req []byte
			for i := 0; i < 32; i++ {
				k := fmt.Sprint("b:", i)
				tc.do("BUDGET.SET", k, "LIMIT", "1000000000000000", "PER", "1s")
				if chain == 1 {
					req = append(req, encodeCommand([]string{"BUDGET.TAKE", "1", k})...)
				} else {
					req = append(req, encodeCommand([]string{"BUDGET.TAKE", "1", "tenant", k})...)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := tc.serveRaw(req); err != nil {
					b.Fatal(err)
				}
				tc.stream.out.Reset()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*32), "ns/cmd")
		})
	}
}

// BenchmarkThrottle serves pipelined batches of 32 CL.THROTTLE (allowed, so each writes its
// key) through the pipeline, with ReportAllocs; allocs/op is per batch of 32.
func BenchmarkThrottle(b *testing.B) {
	e := newTestEngine()
	tc := newTestConn(b, e)
	var req []byte
	for i := 0; i < 32; i++ {
		req = append(req, encodeCommand([]string{"CL.THROTTLE", fmt.Sprint("lim:", i), "1000000", "1000000000", "1"})...)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := tc.serveRaw(req); err != nil {
			b.Fatal(err)
		}
		tc.stream.out.Reset()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*32), "ns/cmd")
}
