package pipeline

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkLineCrossing measures what the execution layer's design turns on: the price of one
// cache line moving between two cores. Two goroutines hand a counter back and forth, each writing
// it only when the other has; one op is one hand-off. Run it with -cpu 2 on an idle machine and
// compare with a cache miss to memory: on the 2-vCPU VM of benchmarks/results a hand-off costs
// 260 ns, as much as a miss, so every shard token or reply that crosses cores costs a lookup.
//
//	go test ./pipeline -run '^$' -bench LineCrossing -cpu 2
func BenchmarkLineCrossing(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs two cores: on one, each hand-off waits for a preemption")
	}
	var x atomic.Int64
	var wg sync.WaitGroup
	n := int64(b.N)
	for p := range int64(2) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				v := x.Load()
				if v >= n {
					return
				}
				if v%2 == p {
					x.Store(v + 1)
				}
			}
		}()
	}
	wg.Wait()
}
