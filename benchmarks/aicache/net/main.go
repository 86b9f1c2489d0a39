// Command net measures LLMCACHE.GET over a socket (go-redis, one connection, one request at a
// time): it loads n entries of dim random unit vectors into one cache with pipelined
// LLMCACHE.SET, then times GETs that hit exactly, hit semantically (an entry's vector under a
// slightly different prompt) and miss (a fresh random vector). Embedding is not involved:
// vectors are sent. benchmarks/aicache/run-net.sh starts the server.
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
	flag.Parse()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: 1})
	r := rand.New(rand.NewPCG(3, 4))
	vec := func() []byte {
		v := make([]float32, *dim)
		var s float64
		for i := range v {
			v[i] = float32(r.NormFloat64())
			s += float64(v[i]) * float64(v[i])
		}
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x/float32(math.Sqrt(s))))
		}
		return b
	}
	rdb.Del(ctx, "llm")
	if err := rdb.Do(ctx, "LLMCACHE.CREATE", "llm", "DIM", *dim, "THRESHOLD", 0.9).Err(); err != nil {
		fail(err)
	}
	vecs := make([][]byte, *n)
	start := time.Now()
	for i := 0; i < *n; i += 500 {
		p := rdb.Pipeline()
		for j := i; j < min(*n, i+500); j++ {
			vecs[j] = vec()
			p.Do(ctx, "LLMCACHE.SET", "llm", "NS", "gpt", "PROMPT", fmt.Sprintf("question number %d", j), "RESPONSE", "answer",
				"VECTOR", "FP32", vecs[j], "TOKENS", 10, 100)
		}
		if _, err := p.Exec(ctx); err != nil {
			fail(err)
		}
	}
	fmt.Printf("loaded %d entries of %d dims in %v\n", *n, *dim, time.Since(start).Round(time.Millisecond))
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
			return []any{"LLMCACHE.GET", "llm", "NS", "gpt", "PROMPT", fmt.Sprintf("question number %d?", j), "VECTOR", "FP32", vecs[j]}
		}, "semantic"},
		{"miss", func(i int) []any {
			return []any{"LLMCACHE.GET", "llm", "NS", "gpt", "PROMPT", "something else", "VECTOR", "FP32", vec()}
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
