package command

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Eviction quality: what the pool evicts, against a reference model of evict.c's algorithm and
// against what a uniform sampler draws. benchmarks/results/2026-12-04-evict-quality.md has the
// process-level figures beside Redis's.

// evictQualityEngine is an engine of shards shards (16 databases), its budget bytes, under
// policy.
func evictQualityEngine(t testing.TB, shards int, policy string, budget int64) (*Engine, *testConn) {
	st := testConfigStore().(testStore)
	e := NewEngine(Options{Shards: shards, Databases: 16, Settings: DefaultSettings(), Config: st})
	wireMemory(e, st)
	tc := newTestConn(t, e)
	tc.do("CONFIG", "SET", "maxmemory-policy", policy)
	tc.do("CONFIG", "SET", "maxmemory", strconv.FormatInt(budget, 10))
	return e, tc
}

// The eviction sampler draws every key of a shard: of 15,000 keys in one keyspace, 300,000
// draws (20 per key) miss well under 1% (a uniform draw misses e^-20 of them; Sample favours
// keys alone in their bucket chain, so a few more). The engine's shared xorshift, which the
// sampler used, missed 22%: every key but one of each chain.
func TestEvictSamplerCoverage(t *testing.T) {
	e, _ := evictQualityEngine(t, 1, "allkeys-lru", 0)
	d := e.data(0)
	ks := d.dbs[0]
	const n = 15_000
	for i := range n {
		ks.Add([]byte("k:" + strconv.Itoa(i)))
	}
	seen := make(map[string]int, n)
	for range 20 * n {
		seen[ks.Sample(d.mem.rnd.next).Key()]++
	}
	if missed := n - len(seen); missed > n/100 {
		t.Fatalf("%d of %d keys never drawn in %d draws", missed, n, 20*n)
	}
}

// volatile-ttl evicts as well as evict.c's algorithm does: writing keys with TTLs spread over
// [10,000, 110,000) s through a budget that holds a tenth of them, the survivors' mean TTL is
// at least 0.95x what a model of evict.c (one pool of 16, maxmemory-samples uniform draws of
// the keys with an expiry per eviction) keeps from the same writes at the same number of keys.
// Random eviction keeps a mean of 60,000 s; the xorshift sampler (TestEvictSamplerCoverage)
// kept 0.83x the model's. Persistent keys, a quarter of the first tenth, are never sampled.
func TestEvictVolatileTTLAgainstModel(t *testing.T) {
	// Sized so that a shard's keyspace has 256 buckets or more, where the xorshift draws went
	// wrong (smaller tables do not use the bit that decided the chain's entry).
	for _, sc := range []struct{ shards, mb int }{{1, 4}, {16, 8}} {
		t.Run(strconv.Itoa(sc.shards)+"shards", func(t *testing.T) {
			e, tc := evictQualityEngine(t, sc.shards, "volatile-ttl", int64(sc.mb)<<20)
			ttl := func(i int) int { return 10_000 + (i*7919)%100_000 }
			total := sc.mb * 10_000
			persistent := func(i int) bool { return i%4 == 0 && i < total/10 }
			v := strings.Repeat("v", 1000)
			for i := 0; i < total; i += 100 {
				var b []byte
				for j := i; j < i+100; j++ {
					args := [][]byte{[]byte("SET"), []byte("c:" + strconv.Itoa(j)), []byte(v)}
					if !persistent(j) {
						args = append(args, []byte("EX"), []byte(strconv.Itoa(ttl(j))))
					}
					b = appendCommand(b, args)
				}
				tc.stream.out.Reset()
				if err := tc.serveRaw(b); err != nil {
					t.Fatal(err)
				}
			}
			var sum float64
			alive := 0
			for j := range total {
				if !persistent(j) && tc.do("EXISTS", "c:"+strconv.Itoa(j)) == ":1\r\n" {
					sum += float64(ttl(j))
					alive++
				}
			}
			if e.mem.evicted.Load() < int64(total/2) || alive == 0 {
				t.Fatalf("%d evicted, %d keys with an expiry kept: the budget did not bite", e.mem.evicted.Load(), alive)
			}
			var written []int
			for j := range total {
				if !persistent(j) {
					written = append(written, ttl(j))
				}
			}
			got, model := sum/float64(alive), evictTTLModel(written, alive, 5)
			t.Logf("%d keys kept, mean TTL %.0f s; the model's %.0f s (%.3fx)", alive, got, model, got/model)
			if got < 0.95*model {
				t.Fatalf("survivors' mean TTL %.0f s, under 0.95x the model's %.0f s", got, model)
			}
		})
	}
}

// evictTTLModel is evict.c's volatile-ttl over keys written in order with the TTLs ttls, with
// room for capacity of them: before each write that finds them full it draws samples held keys
// uniformly into one pool of 16 (the soonest expiry best; a tie goes behind the candidates
// already in, as evictionPoolPopulate's insertion), and evicts the best candidate still held.
// It returns the survivors' mean TTL.
func evictTTLModel(ttls []int, capacity, samples int) float64 {
	r := rand.New(rand.NewPCG(1, 2))
	var live []int       // the keys held
	pos := map[int]int{} // key -> its index in live
	var pool []int       // candidate keys, the soonest expiry last
	for k := range ttls {
		for len(live) >= capacity {
			for range samples {
				c := live[r.IntN(len(live))]
				at, _ := slices.BinarySearchFunc(pool, c, func(p, c int) int { return ttls[c] - ttls[p] })
				if len(pool) == evictPoolSize {
					if at == 0 {
						continue
					}
					pool, at = pool[1:], at-1
				}
				pool = slices.Insert(pool, at, c)
			}
			for len(pool) > 0 {
				c := pool[len(pool)-1]
				pool = pool[:len(pool)-1]
				if i, ok := pos[c]; ok {
					last := live[len(live)-1]
					live[i], pos[last] = last, i
					live = live[:len(live)-1]
					delete(pos, c)
					break
				}
			}
		}
		pos[k] = len(live)
		live = append(live, k)
	}
	sum := 0.0
	for _, k := range live {
		sum += float64(ttls[k])
	}
	return sum / float64(len(live))
}
