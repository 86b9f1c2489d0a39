// Command vector-net measures vector-set searches over the network, written with go-redis's
// vector-set commands (VAdd, VSimWithArgs, VInfo) so the same program runs unchanged against a
// Redis 8 server. It loads N vectors (generated clustered data, or the first N of Fashion-MNIST
// with -mnist), checks recall@10 of VSIM against VSIM TRUTH, then runs VSIM COUNT 10 from each
// client count in -clients for -duration, and prints throughput and latency percentiles; last,
// memory per element for each quantization (MEMORY USAGE and INFO used_memory growth).
//
//	vector-net -addr 127.0.0.1:27350 [-n 20000] [-dim 128] [-mnist FILE.gz] [-clients 1,8,32,100]
//	           [-duration 5s] [-memn 5000] [-keep] [-search-only]
//
// Every line of results starts with RESULT. benchmarks/vector-net/run.sh starts a HotKV and runs it.
package main

import (
	"compress/gzip"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
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
	addr := flag.String("addr", "127.0.0.1:27350", "server address")
	n := flag.Int("n", 20000, "vectors to load")
	dim := flag.Int("dim", 128, "dimensions of generated vectors")
	mnist := flag.String("mnist", "", "Fashion-MNIST train-images-idx3-ubyte.gz (784 dimensions) instead of generated data")
	clientsFlag := flag.String("clients", "1,8,32,100", "client counts")
	duration := flag.Duration("duration", 5*time.Second, "search time per client count")
	memN := flag.Int("memn", 5000, "elements per quantization for the memory measurement (0: skip)")
	keep := flag.Bool("keep", false, "leave the loaded key (vnet) in place at the end")
	searchOnly := flag.Bool("search-only", false, "only the searches, on the key a -keep run left (same -n, -dim, -mnist)")
	flag.Parse()

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: 128, Protocol: 2})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		fail("cannot reach %s: %v", *addr, err)
	}
	var data [][]float32
	if *mnist != "" {
		data = loadMNIST(*mnist, *n+1000)
	} else {
		data = generate(*n+1000, *dim)
	}
	base, queries := data[:len(data)-1000], data[len(data)-1000:]
	const key = "vnet"
	if *searchOnly {
		for _, c := range clientCounts(*clientsFlag) {
			search(ctx, rdb, key, queries, c, *duration)
		}
		return
	}
	rdb.Del(ctx, key)
	start := time.Now()
	load(ctx, rdb, key, base, "")
	el := time.Since(start)
	fmt.Printf("RESULT load n=%d dim=%d seconds=%.2f inserts_per_s=%.0f\n", len(base), len(base[0]), el.Seconds(), float64(len(base))/el.Seconds())
	info := rdb.VInfo(ctx, key).Val()
	fmt.Printf("RESULT vinfo %v\n", info)
	recall(ctx, rdb, key, queries[:100])
	for _, c := range clientCounts(*clientsFlag) {
		search(ctx, rdb, key, queries, c, *duration)
	}
	if *memN > 0 {
		memory(ctx, rdb, base[:min(*memN, len(base))])
	}
	if !*keep {
		rdb.Del(ctx, key)
	}
}

func clientCounts(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		c, err := strconv.Atoi(f)
		if err != nil || c < 1 {
			fail("bad -clients %q", s)
		}
		out = append(out, c)
	}
	return out
}

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "vector-net: "+f+"\n", a...)
	os.Exit(1)
}

func blob(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// load VADDs the vectors in pipelines of 100, with quant ("", NOQUANT, Q8, BIN).
func load(ctx context.Context, rdb *redis.Client, key string, vs [][]float32, quant string) {
	for i := 0; i < len(vs); i += 100 {
		p := rdb.Pipeline()
		for j := i; j < min(i+100, len(vs)); j++ {
			a := &redis.VAddArgs{}
			switch quant {
			case "NOQUANT":
				a.NoQuant = true
			case "BIN":
				a.Bin = true
			case "Q8":
				a.Q8 = true
			}
			p.VAddWithArgs(ctx, key, "e"+strconv.Itoa(j), &redis.VectorFP32{Val: blob(vs[j])}, a)
		}
		if _, err := p.Exec(ctx); err != nil {
			fail("VADD: %v", err)
		}
	}
}

// recall compares VSIM COUNT 10 (EF default) with VSIM COUNT 10 TRUTH.
func recall(ctx context.Context, rdb *redis.Client, key string, qs [][]float32) {
	hits, total := 0, 0
	for _, q := range qs {
		v := &redis.VectorFP32{Val: blob(q)}
		got := rdb.VSimWithArgs(ctx, key, v, &redis.VSimArgs{Count: 10}).Val()
		want := rdb.VSimWithArgs(ctx, key, v, &redis.VSimArgs{Count: 10, Truth: true}).Val()
		for _, g := range got {
			if slices.Contains(want, g) {
				hits++
			}
		}
		total += len(want)
	}
	fmt.Printf("RESULT recall@10 queries=%d recall=%.4f\n", len(qs), float64(hits)/float64(max(total, 1)))
}

// search runs VSIM COUNT 10 from c clients for d and prints throughput and latency percentiles.
func search(ctx context.Context, rdb *redis.Client, key string, qs [][]float32, c int, d time.Duration) {
	blobs := make([]*redis.VectorFP32, len(qs))
	for i, q := range qs {
		blobs[i] = &redis.VectorFP32{Val: blob(q)}
	}
	lats := make([][]time.Duration, c)
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	start := time.Now()
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for time.Now().Before(deadline) {
				t0 := time.Now()
				res := rdb.VSimWithArgs(ctx, key, blobs[r.IntN(len(blobs))], &redis.VSimArgs{Count: 10})
				if res.Err() != nil {
					fail("VSIM: %v", res.Err())
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	all := slices.Concat(lats...)
	slices.Sort(all)
	pct := func(p float64) float64 {
		return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
	}
	fmt.Printf("RESULT vsim clients=%d requests=%d qps=%.0f p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f\n",
		c, len(all), float64(len(all))/el.Seconds(), pct(0.50), pct(0.99), pct(0.999))
}

// memory loads n vectors per quantization into its own key and reports bytes per element from
// MEMORY USAGE and from INFO used_memory's growth.
func memory(ctx context.Context, rdb *redis.Client, vs [][]float32) {
	for _, q := range []string{"NOQUANT", "Q8", "BIN"} {
		key := "vnet:mem:" + q
		rdb.Del(ctx, key)
		before := usedMemory(ctx, rdb)
		load(ctx, rdb, key, vs, q)
		after := usedMemory(ctx, rdb)
		usage, _ := rdb.MemoryUsage(ctx, key, 0).Result()
		fmt.Printf("RESULT memory quant=%s n=%d dim=%d memory_usage_per_elem=%.1f used_memory_per_elem=%.1f\n",
			q, len(vs), len(vs[0]), float64(usage)/float64(len(vs)), float64(after-before)/float64(len(vs)))
		rdb.Del(ctx, key)
	}
}

func usedMemory(ctx context.Context, rdb *redis.Client) int64 {
	s, _ := rdb.Info(ctx, "memory").Result()
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// generate makes n clustered vectors of dim dimensions (64 Gaussian clusters).
func generate(n, dim int) [][]float32 {
	r := rand.New(rand.NewPCG(1, 2))
	centers := make([][]float32, 64)
	for i := range centers {
		centers[i] = make([]float32, dim)
		for j := range centers[i] {
			centers[i][j] = float32(r.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centers[r.IntN(len(centers))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64())*0.6
		}
		out[i] = v
	}
	return out
}

// loadMNIST reads up to n images of an idx3 file (gzip) as 784-dimension vectors.
func loadMNIST(path string, n int) [][]float32 {
	f, err := os.Open(path)
	if err != nil {
		fail("%v", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		fail("%v", err)
	}
	var hdr [16]byte
	if _, err := io.ReadFull(z, hdr[:]); err != nil || binary.BigEndian.Uint32(hdr[:]) != 0x803 {
		fail("%s: not an idx3 file", path)
	}
	count := int(binary.BigEndian.Uint32(hdr[4:]))
	dim := int(binary.BigEndian.Uint32(hdr[8:]) * binary.BigEndian.Uint32(hdr[12:]))
	n = min(n, count)
	out := make([][]float32, n)
	buf := make([]byte, dim)
	for i := range out {
		if _, err := io.ReadFull(z, buf); err != nil {
			fail("%s: %v", path, err)
		}
		v := make([]float32, dim)
		for j, b := range buf {
			v[j] = float32(b) / 255
		}
		out[i] = v
	}
	return out
}
