package aicache

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/benchmarks/aicache/gen"
	"github.com/hotkv/hotkv/persist/rdb"
	"github.com/hotkv/hotkv/src/ai/llmcache"
)

// The semantic GET in-process on the cache benchmarks/aicache/net saved with -dump (the same
// entries, regenerated from the same seed, and the same kinds of query), without RESP, the
// command layer or a socket: what the server spends on one lookup.
//
//	HOTKV_AICACHE_DUMP=/tmp/random-q8.dump flock /tmp/h/bench.lock go test -run TestCacheGet -v .
//	HOTKV_AICACHE_DUMP=/tmp/random-q8.dump go test -run X -bench CacheGet -benchmem -cpuprofile /tmp/cpu.prof .
//
// HOTKV_AICACHE_CLUSTERS=k (net's -clusters) and HOTKV_AICACHE_NOISE=x (net's -noise) describe
// the dump's data; HOTKV_AICACHE_N its size (default 100,000 x 512); HOTKV_AICACHE_EF is GET's
// EF (default: the cache's).

type getBench struct {
	c       *llmcache.Cache
	g       *gen.Gen
	entries [][]float32
	noise   float64
	ef      int
}

func loadGetBench(tb testing.TB) *getBench {
	path := os.Getenv("HOTKV_AICACHE_DUMP")
	if path == "" {
		tb.Skip("set HOTKV_AICACHE_DUMP to a dump written by benchmarks/aicache/net -dump")
	}
	n := 100000
	if s := os.Getenv("HOTKV_AICACHE_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	payload, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	obj, err := rdb.CheckDump(payload, rdb.MaxVersion)
	if err != nil {
		tb.Fatal(err)
	}
	v, err := rdb.DecodeObject(obj)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := llmcache.Decode(v.Str)
	if err != nil {
		tb.Fatal(err)
	}
	b := &getBench{c: c, g: gen.New(c.Config().Dim)}
	if k, _ := strconv.Atoi(os.Getenv("HOTKV_AICACHE_CLUSTERS")); k > 0 {
		b.g.Clusters(k)
	}
	b.noise, _ = strconv.ParseFloat(os.Getenv("HOTKV_AICACHE_NOISE"), 64)
	b.ef, _ = strconv.Atoi(os.Getenv("HOTKV_AICACHE_EF"))
	b.entries = b.g.Entries(n)
	runtime.GC()
	return b
}

// semantic is a query entry j should answer semantically (net's "semantic hit"; net's SETs gave
// entry j the id j+1).
func (b *getBench) semantic() llmcache.Query {
	j := b.g.R.IntN(len(b.entries))
	return llmcache.Query{NS: []byte("gpt"), Prompt: fmt.Appendf(nil, "question number %d?", j),
		Vector: b.g.Near(b.entries[j], b.noise), NowMS: 1, EF: b.ef}
}

// wantID is the id of the entry a semantic query was made from, 0 for a miss.
func wantID(q llmcache.Query) uint64 {
	var j uint64
	if _, err := fmt.Sscanf(string(q.Prompt), "question number %d?", &j); err != nil {
		return 0
	}
	return j + 1
}

// miss is a query no entry should answer (net's "miss").
func (b *getBench) miss() llmcache.Query {
	return llmcache.Query{NS: []byte("gpt"), Prompt: []byte("something else"), Vector: b.g.Miss(), NowMS: 1, EF: b.ef}
}

// TestCacheGetLatency: p50/p99 of Cache.Get for semantic hits and misses, one goroutine, and
// how many lookups had another outcome (a semantic hit that missed or answered another entry).
func TestCacheGetLatency(t *testing.T) {
	b := loadGetBench(t)
	for _, kind := range []struct {
		name string
		q    func() llmcache.Query
		hit  bool
	}{{"semantic hit", b.semantic, true}, {"miss", b.miss, false}} {
		const m = 3000
		qs := make([]llmcache.Query, m)
		for i := range qs {
			qs[i] = kind.q()
		}
		lat := make([]time.Duration, m)
		other := 0
		cpu0 := cpuTime()
		for i, q := range qs {
			t0 := time.Now()
			h, ok, err := b.c.Get(q)
			lat[i] = time.Since(t0)
			if err != nil {
				t.Fatal(err)
			}
			if ok != kind.hit || ok && (!h.Semantic || h.Entry.ID != wantID(q)) {
				other++
			}
		}
		cpu := (cpuTime() - cpu0) / m
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		p := func(f float64) time.Duration { return lat[int(f*float64(m-1))].Round(time.Microsecond) }
		t.Logf("RESULT in-process %-12s p50 %v p90 %v p99 %v max %v, CPU %v a lookup (%d lookups, %d with another outcome)",
			kind.name, p(0.5), p(0.9), p(0.99), lat[m-1].Round(time.Microsecond), cpu.Round(time.Microsecond), m, other)
	}
}

// BenchmarkCacheGet: CPU and allocations of one Cache.Get (queries made ahead, outside the timer).
func BenchmarkCacheGet(bb *testing.B) {
	b := loadGetBench(bb)
	for _, kind := range []struct {
		name string
		q    func() llmcache.Query
	}{{"semantic", b.semantic}, {"miss", b.miss}} {
		qs := make([]llmcache.Query, 1000)
		for i := range qs {
			qs[i] = kind.q()
		}
		bb.Run(kind.name, func(bb *testing.B) {
			bb.ReportAllocs()
			i := 0
			cpu0 := cpuTime()
			for bb.Loop() {
				b.c.Get(qs[i%len(qs)])
				i++
			}
			bb.ReportMetric(float64(cpuTime()-cpu0)/float64(bb.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far: per-lookup CPU is steadier than wall
// time on the shared VM, where other processes take the CPUs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
