// Package smallbench holds what every family's BenchmarkSmallCollections shares: the shapes of
// issue 14's small-collections table (benchmarks/README.md, "Small collections") and the live
// heap they are measured by. It is for benchmarks only.
package smallbench

import (
	"fmt"
	"runtime"
	"testing"
)

// Counts and Sizes are the table's elements per collection and element bytes.
var (
	Counts = []int{1, 2, 5, 20}
	Sizes  = []int{16, 256}
)

// Run runs fn as the sub-benchmark "<count>x<size>" for every shape, in the table's order, with
// allocations reported.
func Run(b *testing.B, fn func(b *testing.B, count, size int)) {
	for _, count := range Counts {
		for _, size := range Sizes {
			b.Run(fmt.Sprintf("%dx%d", count, size), func(b *testing.B) {
				b.ReportAllocs()
				fn(b, count, size)
			})
		}
	}
}

// LiveHeap returns the heap's bytes after a full collection (two: the second frees what the
// first only found dead through finalizers or weak references).
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
