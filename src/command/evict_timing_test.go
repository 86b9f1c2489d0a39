package command

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkEvictSet is the cost of a SET of a new key that evicts one first: 32 shards at
// maxmemory 16mb, full, each SET a new 1,000-byte key with an EX (TTLs spread, for
// volatile-ttl), 100 a batch. ns/SET includes the gate, the sampling and the eviction.
func BenchmarkEvictSet(b *testing.B) {
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-ttl", "allkeys-tinylfu"} {
		b.Run(policy, func(b *testing.B) {
			e, tc := evictQualityEngine(b, 32, policy, 16<<20)
			v := []byte(strings.Repeat("v", 1000))
			next := 0
			batch := func() {
				var req []byte
				for range 100 {
					k := []byte("c:" + strconv.Itoa(next))
					ex := []byte(strconv.Itoa(10_000 + (next*7919)%100_000))
					req = appendCommand(req, [][]byte{[]byte("SET"), k, v, []byte("EX"), ex})
					next++
				}
				if err := tc.serveRaw(req); err != nil {
					b.Fatal(err)
				}
				tc.stream.out.Reset()
			}
			for e.mem.evicted.Load() < 20_000 {
				batch()
			}
			b.ReportAllocs() // per batch of 100, building the request included (keys, TTLs)
			b.ResetTimer()
			for range b.N {
				batch()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/SET")
		})
	}
}
