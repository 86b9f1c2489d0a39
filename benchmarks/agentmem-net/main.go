// Command agentmem-net measures MEM.SEARCH over the network (issue 22): it creates an agent
// memory of -dim dimensions, loads -n memories spread over -users users (pipelined MEM.ADD), then
// runs MEM.SEARCH K 10 with a USER filter (1% of the memories at 100 users: the exact path) and
// without one (the HNSW path) from each client count in -clients for -duration, and prints
// throughput and latency percentiles. HotKV-only: Redis has no MEM.* commands.
//
//	agentmem-net -addr 127.0.0.1:27250 [-n 100000] [-dim 384] [-users 100] [-clients 1,8] [-duration 5s]
//
// Every line of results starts with RESULT. benchmarks/agentmem-net/run.sh starts a HotKV and runs it.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:27250", "server address")
	n := flag.Int("n", 100000, "memories to load")
	dim := flag.Int("dim", 384, "dimensions")
	users := flag.Int("users", 100, "users the memories are spread over")
	clientsFlag := flag.String("clients", "1,8", "client counts")
	duration := flag.Duration("duration", 5*time.Second, "search time per step")
	flag.Parse()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: 64, Protocol: 2})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		fail("cannot reach %s: %v", *addr, err)
	}
	rdb.Del(ctx, "amem")
	if err := rdb.Do(ctx, "MEM.CREATE", "amem", "DIM", *dim).Err(); err != nil {
		fail("MEM.CREATE: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Now()
	for i := 0; i < *n; {
		p := rdb.Pipeline()
		for j := 0; j < 200 && i < *n; j, i = j+1, i+1 {
			p.Do(ctx, "MEM.ADD", "amem", "TEXT", "memory "+strconv.Itoa(i), "VECTOR", "FP32", blob(rng, *dim),
				"USER", "user"+strconv.Itoa(i%*users), "SESSION", "s"+strconv.Itoa(i%1000),
				"IMPORTANCE", strconv.FormatFloat(rng.Float64(), 'f', 3, 64))
		}
		if _, err := p.Exec(ctx); err != nil {
			fail("MEM.ADD: %v", err)
		}
	}
	load := time.Since(t0)
	mem, _ := rdb.Do(ctx, "MEMORY", "USAGE", "amem").Int64()
	fmt.Printf("RESULT load n=%d dim=%d users=%d: %.1f s (%.0f adds/s), MEMORY USAGE %d bytes (%.0f B/memory)\n",
		*n, *dim, *users, load.Seconds(), float64(*n)/load.Seconds(), mem, float64(mem)/float64(*n))
	queries := make([]string, 256)
	for i := range queries {
		queries[i] = blob(rng, *dim)
	}
	for _, cs := range strings.Split(*clientsFlag, ",") {
		c, err := strconv.Atoi(cs)
		if err != nil {
			fail("bad -clients: %v", err)
		}
		step(ctx, rdb, "user-filter-1pct", c, *duration, func(r *rand.Rand) []any {
			return []any{"MEM.SEARCH", "amem", "VECTOR", "FP32", queries[r.IntN(len(queries))], "K", 10,
				"USER", "user" + strconv.Itoa(r.IntN(*users))}
		})
		step(ctx, rdb, "user-filter-1pct-weighted", c, *duration, func(r *rand.Rand) []any {
			return []any{"MEM.SEARCH", "amem", "VECTOR", "FP32", queries[r.IntN(len(queries))], "K", 10,
				"USER", "user" + strconv.Itoa(r.IntN(*users)), "WEIGHTS", 1, 0.3, 0.2, "HALFLIFE", 86400000}
		})
		step(ctx, rdb, "unfiltered-hnsw", c, *duration, func(r *rand.Rand) []any {
			return []any{"MEM.SEARCH", "amem", "VECTOR", "FP32", queries[r.IntN(len(queries))], "K", 10}
		})
	}
}

func step(ctx context.Context, rdb *redis.Client, name string, clients int, d time.Duration, cmd func(*rand.Rand) []any) {
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			var lat []time.Duration
			for time.Now().Before(end) {
				t := time.Now()
				res, err := rdb.Do(ctx, cmd(r)...).Slice()
				if err != nil || len(res) != 10 {
					fail("%s: %d results, %v", name, len(res), err)
				}
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(all)
	pct := func(p float64) float64 { return float64(all[int(float64(len(all)-1)*p)].Microseconds()) / 1000 }
	fmt.Printf("RESULT %s clients=%d: %.0f searches/s, p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms (%d searches)\n",
		name, clients, float64(len(all))/d.Seconds(), pct(0.5), pct(0.9), pct(0.99), pct(0.999), pct(1), len(all))
}

func blob(r *rand.Rand, dim int) string {
	b := make([]byte, 4*dim)
	for i := range dim {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(r.NormFloat64())))
	}
	return string(b)
}

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "agentmem-net: "+f+"\n", a...)
	os.Exit(1)
}
