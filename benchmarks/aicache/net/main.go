// Command net measures LLMCACHE.GET over a socket (go-redis, one connection, one request at a
// time): it loads n entries of dim random unit vectors into one cache with pipelined
// LLMCACHE.SET, then times GETs that hit exactly, hit semantically (an entry's vector under a
// slightly different prompt; with -noise, a vector at cosine about 1-noise²/2 from it, as a
// paraphrase's) and miss (a fresh random vector). Embedding is not involved: vectors are sent.
// With -dump FILE the loaded cache is kept in FILE (DUMP's payload) and later runs RESTORE it
// instead of loading (the vectors are regenerated from the same seed). -quant and -ef are
// CREATE's QUANT and EF. benchmarks/aicache/run-net.sh starts the server.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"time"

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
	flag.Parse()
	var bases [][]float32
	if *baseFile != "" {
		raw, err := os.ReadFile(*baseFile)
		if err != nil {
			fail(err)
		}
		for o := 0; o+4**dim <= len(raw); o += 4 * *dim {
			v := make([]float32, *dim)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[o+4*i:]))
			}
			bases = append(bases, v)
		}
		fmt.Printf("%d base vectors from %s\n", len(bases), *baseFile)
	}
	ctx := context.Background()
	// No retries, and long reads: a RESTORE of 100,000 entries takes seconds, and a retried one
	// would answer BUSYKEY.
	rdb := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 10 * time.Minute})
	r := rand.New(rand.NewPCG(3, 4))
	unit := func(v []float32) []byte {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x/float32(math.Sqrt(s))))
		}
		return b
	}
	vec := func() []byte {
		v := make([]float32, *dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return unit(v)
	}
	around := func(j int, sd float64) []byte {
		v := make([]float32, *dim)
		for i, x := range bases[j%len(bases)] {
			v[i] = x + float32(sd*r.NormFloat64())
		}
		return unit(v)
	}
	// near is a paraphrase's vector: b plus Gaussian noise of norm about noise, renormalized.
	near := func(b []byte) []byte {
		if *noise == 0 {
			return b
		}
		v := make([]float32, *dim)
		sd := *noise / math.Sqrt(float64(*dim))
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) + float32(sd*r.NormFloat64())
		}
		return unit(v)
	}
	rdb.Del(ctx, "llm")
	vecs := make([][]byte, *n)
	for j := range vecs {
		if bases != nil {
			vecs[j] = around(j, 0.02)
		} else {
			vecs[j] = vec()
		}
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
			return []any{"LLMCACHE.GET", "llm", "NS", "gpt", "PROMPT", fmt.Sprintf("question number %d?", j), "VECTOR", "FP32", near(vecs[j])}
		}, "semantic"},
		{"miss", func(i int) []any {
			v := vec()
			if bases != nil {
				v = around(r.IntN(len(bases)), 0.06)
			}
			return []any{"LLMCACHE.GET", "llm", "NS", "gpt", "PROMPT", "something else", "VECTOR", "FP32", v}
		}, ""},
	}
	for _, k := range kinds {
		lat := make([]time.Duration, 0, *m)
		bad := 0
		for i := range *m {
			args := k.args(i)
			t0 := time.Now()
			res, err := rdb.Do(ctx, args...).Result()
			lat = append(lat, time.Since(t0))
			got := ""
			if err == nil {
				if a, ok := res.([]any); ok && len(a) == 5 {
					got, _ = a[2].(string)
				}
			} else if err != redis.Nil {
				fail(err)
			}
			if got != k.want {
				bad++
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		q := func(f float64) time.Duration { return lat[int(f*float64(len(lat)-1))] }
		fmt.Printf("%-12s p50 %v  p90 %v  p99 %v  max %v  (%d GETs, %d with another outcome)\n", k.name, q(0.5), q(0.9), q(0.99), lat[len(lat)-1], len(lat), bad)
	}
	info, _ := rdb.Do(ctx, "MEMORY", "USAGE", "llm").Result()
	fmt.Printf("MEMORY USAGE llm: %v bytes\n", info)
	rdb.Del(ctx, "llm")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
