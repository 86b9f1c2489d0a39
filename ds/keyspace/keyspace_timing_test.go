//go:build unix

package keyspace

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCollect measures what a full collection costs per key of a large keyspace of
// 256-byte string values: the collector's CPU time (user+system of the process during
// runtime.GC, so its background workers count) divided by the keys. Run with -benchtime=1x;
// the keyspace is built once, outside the timer.
func BenchmarkCollect(b *testing.B) {
	for _, n := range []int{1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var epoch uint64
			ks := New()
			ks.SetEpoch(&epoch)
			key := make([]byte, 0, 32)
			for i := range n {
				key = fmt.Appendf(key[:0], "key:%012d", i)
				ks.Add(key).SetBytes(make([]byte, 256))
			}
			runtime.GC()
			b.ResetTimer()
			var spent time.Duration
			for range b.N {
				c0 := cpuTime()
				runtime.GC()
				spent += cpuTime() - c0
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N)/float64(n), "gc-cpu-ns/key")
			runtime.KeepAlive(ks)
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
