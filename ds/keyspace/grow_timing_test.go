//go:build linux

package keyspace

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// BenchmarkAddWorst fills one keyspace to 1Mi keys and reports the slowest single Add by the
// thread's CPU time (so time the machine's other processes take from it does not count; the
// collector's assists do), the slowest by wall time, and the mean: the table's growth must not
// stall one write for long (issue 14). Run with -benchtime=1x; each iteration fills a fresh
// keyspace.
func BenchmarkAddWorst(b *testing.B) {
	const n = 1 << 20
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%012d", i)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var worstCPU, worstWall, total time.Duration
	for range b.N {
		var epoch uint64
		ks := New()
		ks.SetEpoch(&epoch)
		for _, k := range keys {
			c0, t0 := threadTime(), time.Now()
			ks.Add(k)
			d, c := time.Since(t0), threadTime()-c0
			total += d
			worstWall, worstCPU = max(worstWall, d), max(worstCPU, c)
		}
		runtime.KeepAlive(ks)
	}
	b.ReportMetric(float64(worstCPU.Microseconds()), "worst-add-cpu-µs")
	b.ReportMetric(float64(worstWall.Microseconds()), "worst-add-wall-µs")
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*n), "mean-add-ns")
}

// threadTime is the calling thread's CPU time.
func threadTime() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// BenchmarkHotPaths measures the lookups and writes of a keyspace of 1Mi keys, with a resize
// under way for the "resizing" cases: Find of a present key, Upsert of a present key, and a
// Delete followed by an Add of the same key (the count stays put, so no resize starts; the entry
// is reused once the epoch moves). All must allocate nothing.
func BenchmarkHotPaths(b *testing.B) {
	const n = 1 << 20
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%012d", i)
	}
	for _, resizing := range []bool{false, true} {
		var epoch uint64
		ks := New()
		ks.SetEpoch(&epoch)
		for _, k := range keys[:n/2] {
			ks.Add(k)
		}
		if resizing { // fill to just past a doubling so the move is under way
			for i := n / 2; ks.old == nil; i++ {
				ks.Add(keys[i])
			}
		} else {
			ks.Rehash()
		}
		live := ks.Len()
		name := map[bool]string{false: "settled", true: "resizing"}[resizing]
		b.Run("Find/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				if ks.Find(keys[i%live], 1) == nil {
					b.Fatal("missing")
				}
			}
		})
		b.Run("Upsert/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				ks.Upsert(keys[i%live], 1)
			}
		})
		b.Run("DeleteAdd/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				k := keys[i%live]
				ks.Delete(k, 1)
				ks.Add(k)
				if i%64 == 0 {
					epoch++
					ks.Recycle()
				}
			}
		})
		runtime.KeepAlive(ks)
	}
}
