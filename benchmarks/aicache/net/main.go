// Command net measures LLMCACHE.GET over a socket (go-redis, one connection, one request at a
// time): it loads n entries of dim random unit vectors into one cache with pipelined
// LLMCACHE.SET, then times GETs that hit exactly, hit semantically (an entry's vector under a
// slightly different prompt; with -noise, a vector at cosine about 1-noise²/2 from it, as a
// paraphrase's) and miss (a fresh random vector). Embedding is not involved: vectors are sent.
// -base and -clusters replace the random vectors by neighbourhoods of base vectors (package gen);
// -conns sends GETs from several connections at once (shared reads of the one key).
// With -dump FILE the loaded cache is kept in FILE (DUMP's payload) and later runs RESTORE it
// instead of loading (the vectors are regenerated from the same seed). -quant and -ef are
// CREATE's QUANT and EF. benchmarks/aicache/run-net.sh starts the server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/hotkv/hotkv/benchmarks/aicache/gen"
	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:27200", "server address")
	n := flag.Int("n", 100000, "entries")
	dim := flag.Int("dim", 512, "dimensions")
	m := flag.Int("m", 3000, "GETs of each kind")
	dump := flag.String("dump", "", "DUMP payload file: RESTOREd when present, else written after loading")
	quant := flag.String("quant", "", "CREATE QUANT (NOQUANT, Q8); empty: the default")
	ef := flag.Int("ef", 0, "CREATE EF; 0: the default")
	noise := flag.Float64("noise", 0, "semantic hits: Gaussian noise of this norm added to the entry's vector")
	baseFile := flag.String("base", "", "float32 vectors of -dim (benchmarks/aicache/data/mock.f32): entry j is base j mod len plus noise of sd 0.02 a component; misses base plus sd 0.06")
	clusters := flag.Int("clusters", 0, "Gaussian clusters: this many random unit centres as the bases (as -base)")
	conns := flag.Int("conns", 1, "connections sending GETs at once (one request at a time each); latencies of all")
	flag.Parse()
	g := gen.New(*dim)
	switch {
	case *baseFile != "":
		if err := g.LoadBases(*baseFile); err != nil {
			fail(err)
		}
		fmt.Printf("%d base vectors from %s\n", len(g.Bases), *baseFile)
	case *clusters > 0:
		g.Clusters(*clusters)
		fmt.Printf("%d Gaussian clusters\n", *clusters)
	}
	ctx := context.Background()
	// No retries, and long reads: a RESTORE of 100,000 entries takes seconds, and a retried one
	// would answer BUSYKEY.
	rdb := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: max(1, *conns), MaxRetries: -1, ReadTimeout: 10 * time.Minute})
	r := g.R
	rdb.Del(ctx, "llm")
	entries := g.Entries(*n)
	vecs := make([][]byte, *n)
	for j, v := range entries {
		vecs[j] = gen.Blob(v)
	}
	start := time.Now()
	if payload, err := os.ReadFile(*dump); *dump != "" && err == nil {
		if err := rdb.Restore(ctx, "llm", 0, string(payload)).Err(); err != nil {
			fail(err)
		}
		fmt.Printf("restored %d entries of %d dims from %s in %v\n", *n, *dim, *dump, time.Since(start).Round(time.Millisecond))
	} else {
		create := []any{"LLMCACHE.CREATE", "llm", "DIM", *dim, "THRESHOLD", 0.9}
		if *quant != "" {
			create = append(create, "QUANT", *quant)
		}
		if *ef != 0 {
			create = append(create, "EF", *ef)
		}
		if err := rdb.Do(ctx, create...).Err(); err != nil {
			fail(err)
		}
		for i := 0; i < *n; i += 500 {
			p := rdb.Pipeline()
			for j := i; j < min(*n, i+500); j++ {
				p.Do(ctx, "LLMCACHE.SET", "llm", "NS", "gpt", "PROMPT", fmt.Sprintf("question number %d", j), "RESPONSE", "answer",
					"VECTOR", "FP32", vecs[j], "TOKENS", 10, 100)
			}
			if _, err := p.Exec(ctx); err != nil {
				fail(err)
			}
		}
		fmt.Printf("loaded %d entries of %d dims in %v\n", *n, *dim, time.Since(start).Round(time.Millisecond))
		if *dump != "" {
			payload, err := rdb.Dump(ctx, "llm").Result()
			if err != nil {
				fail(err)
			}
			if err := os.WriteFile(*dump, []byte(payload), 0o644); err != nil {
				fail(err)
			}
		}
	}

	kinds := []struct {
		name string
		args func(i int) []any
		want string
	}{
		{"exact hit", func(i int) []any {
			return []any{"LLMCACHE.GET", "llm", "NS", "gpt", "PROMPT", fmt.Sprintf("Question number %d", r.IntN(*n))}
		}, "exact"},
		{"semantic hit", func(i int) []any {
			j := r.IntN(*n)
			return []any{"LLMCACHE.GET", "llm", "NS", "gpt", "PROMPT", fmt.Sprintf("question number %d?", j), "VECTOR", "FP32", gen.Blob(g.Near(entries[j], *noise))}
		}, "semantic"},
		{"miss", func(i int) []any {
			return []any{"LLMCACHE.GET", "llm", "NS", "gpt", "PROMPT", "something else", "VECTOR", "FP32", gen.Blob(g.Miss())}
		}, ""},
	}
	for _, k := range kinds {
		// The requests are made first, so -conns goroutines share no generator.
		reqs := make([][]any, *m)
		for i := range reqs {
			reqs[i] = k.args(i)
		}
		lat := make([]time.Duration, *m)
		bad := make([]int, *conns)
		var wg sync.WaitGroup
		t0 := time.Now()
		for w := range *conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < *m; i += *conns {
					t0 := time.Now()
					res, err := rdb.Do(ctx, reqs[i]...).Result()
					lat[i] = time.Since(t0)
					got := ""
					if err == nil {
						if a, ok := res.([]any); ok && len(a) == 5 {
							got, _ = a[2].(string)
						}
					} else if err != redis.Nil {
						fail(err)
					}
					if got != k.want {
						bad[w]++
					}
				}
			}()
		}
		wg.Wait()
		wall := time.Since(t0)
		nbad := 0
		for _, b := range bad {
			nbad += b
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		q := func(f float64) time.Duration { return lat[int(f*float64(len(lat)-1))] }
		fmt.Printf("%-12s p50 %v  p90 %v  p99 %v  max %v  (%d GETs, %d with another outcome; %d conns, %.0f GETs/s)\n",
			k.name, q(0.5), q(0.9), q(0.99), lat[len(lat)-1], len(lat), nbad, *conns, float64(*m)/wall.Seconds())
	}
	info, _ := rdb.Do(ctx, "MEMORY", "USAGE", "llm").Result()
	fmt.Printf("MEMORY USAGE llm: %v bytes\n", info)
	rdb.Del(ctx, "llm")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
