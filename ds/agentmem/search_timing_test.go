package agentmem

import (
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkSearchUserFilter: MEM.SEARCH's data operation at N memories of 384 dimensions held by
// 100 users (a user filter selects 1%, the exact path), K 10, with and without recency and
// importance weights; and unfiltered (the HNSW path). Reports p50/p99 latency per search beside
// ns/op. N is 10,000 by default; HOTKV_AGENTMEM_LONG=1 makes it the 100,000 (building that
// index takes about a minute on the shared 2-vCPU box).
func BenchmarkSearchUserFilter(b *testing.B) {
	n := 10000
	if os.Getenv("HOTKV_AGENTMEM_LONG") == "1" {
		n = 100000
	}
	const dim, users = 384, 100
	rng := rand.New(rand.NewPCG(1, 1))
	s := must(New(Config{Dim: dim}))
	now := int64(1.8e12)
	for i := range n {
		r := &Record{ID: strconv.Itoa(i), Text: []byte("memory text"), Vec: must(s.Normalize(randVec(rng, dim))),
			User: "user" + strconv.Itoa(i%users), Session: "s" + strconv.Itoa(i%1000), Importance: rng.Float64(),
			EventTime: now - rng.Int64N(3e10), Created: now}
		must(s.Put(r))
	}
	queries := make([][]float32, 256)
	for i := range queries {
		queries[i] = must(s.Normalize(randVec(rng, dim)))
	}
	run := func(name string, q func(i int) *Query) {
		b.Run(name+"/n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if len(s.Search(q(i), now)) != 10 {
					b.Fatal("fewer than 10 results")
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
		})
	}
	run("user1pct", func(i int) *Query {
		return &Query{Vec: queries[i%len(queries)], K: 10, MinSim: -2, Weights: DefaultWeights,
			Filter: Filter{User: "user" + strconv.Itoa(i%users), HasUser: true}}
	})
	run("user1pct-weighted", func(i int) *Query {
		return &Query{Vec: queries[i%len(queries)], K: 10, MinSim: -2,
			Weights: Weights{Sim: 1, Recency: 0.3, Importance: 0.2, HalfLife: 86400000},
			Filter:  Filter{User: "user" + strconv.Itoa(i%users), HasUser: true}}
	})
	run("unfiltered-hnsw", func(i int) *Query {
		return &Query{Vec: queries[i%len(queries)], K: 10, MinSim: -2, Weights: DefaultWeights}
	})
}
