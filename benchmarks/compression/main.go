// Command compression fills a server with JSON-like values and measures pipelined GET and SET
// rates against it, for benchmarks/compression.sh (value-compression's measurements).
//
//	compression -addr 127.0.0.1:7221 -mode fill -keys 1000000 -size 2048
//	compression -addr 127.0.0.1:7221 -mode get -clients 8 -pipeline 30 -duration 5s
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	addr     = flag.String("addr", "127.0.0.1:7221", "server address")
	mode     = flag.String("mode", "fill", "fill, get or set")
	keys     = flag.Int("keys", 1_000_000, "keys key:0 .. key:N-1")
	size     = flag.Int("size", 2048, "value size in bytes")
	clients  = flag.Int("clients", 8, "connections (get, set)")
	pipeline = flag.Int("pipeline", 30, "commands per round trip")
	duration = flag.Duration("duration", 5*time.Second, "run time (get, set)")
	pool     = flag.Int("pool", 4096, "distinct values (each key takes one)")
)

// jsonValue is n bytes of JSON-like text: an array of user records with repeated field names
// and varying values, as a cache of API responses holds.
func jsonValue(r *rand.Rand, n int) []byte {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for b.Len() < n {
		fmt.Fprintf(&b, `{"id":%d,"name":"user%04d","email":"u%d@example.com","active":%t,"score":%.2f,"tags":["t%d","t%d"]},`,
			r.IntN(1e7), r.IntN(10000), r.IntN(1e6), r.IntN(2) == 0, r.Float64()*100, r.IntN(50), r.IntN(50))
	}
	return []byte(b.String()[:n])
}

func appendCmd(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// skipReply reads one simple, integer, error or bulk reply; errors are fatal.
func skipReply(r *bufio.Reader) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		fail(err)
	}
	switch line[0] {
	case '-':
		fail(fmt.Errorf("server error: %s", line))
	case '$':
		n, _ := strconv.Atoi(strings.TrimSpace(string(line[1:])))
		if n >= 0 {
			if _, err := r.Discard(n + 2); err != nil {
				fail(err)
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "compression:", err)
	os.Exit(1)
}

func main() {
	flag.Parse()
	vals := make([][]byte, *pool)
	for i := range vals {
		vals[i] = jsonValue(rand.New(rand.NewPCG(uint64(i), 7)), *size)
	}
	switch *mode {
	case "fill":
		fill(vals)
	case "get", "set":
		rate := load(vals, *mode == "set")
		fmt.Printf("%.0f\n", rate)
	default:
		fail(fmt.Errorf("unknown mode %q", *mode))
	}
}

// fill SETs every key, pipelined, over one connection per client.
func fill(vals [][]byte) {
	var wg sync.WaitGroup
	per := (*keys + *clients - 1) / *clients
	for c := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", *addr)
			if err != nil {
				fail(err)
			}
			defer conn.Close()
			r := bufio.NewReaderSize(conn, 1<<16)
			var buf []byte
			for lo := c * per; lo < min((c+1)*per, *keys); lo += *pipeline {
				hi := min(lo+*pipeline, (c+1)*per, *keys)
				buf = buf[:0]
				for k := lo; k < hi; k++ {
					buf = appendCmd(buf, []byte("SET"), []byte("key:"+strconv.Itoa(k)), vals[k%len(vals)])
				}
				if _, err := conn.Write(buf); err != nil {
					fail(err)
				}
				for k := lo; k < hi; k++ {
					skipReply(r)
				}
			}
		}()
	}
	wg.Wait()
}

// load runs GETs (or SETs) of random keys from every client for the duration and returns the
// commands answered per second.
func load(vals [][]byte, set bool) float64 {
	var done atomic.Int64
	stop := time.Now().Add(*duration)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", *addr)
			if err != nil {
				fail(err)
			}
			defer conn.Close()
			r := bufio.NewReaderSize(conn, 1<<16)
			rng := rand.New(rand.NewPCG(uint64(c), 9))
			var buf []byte
			for time.Now().Before(stop) {
				buf = buf[:0]
				for range *pipeline {
					k := rng.IntN(*keys)
					key := []byte("key:" + strconv.Itoa(k))
					if set {
						buf = appendCmd(buf, []byte("SET"), key, vals[rng.IntN(len(vals))])
					} else {
						buf = appendCmd(buf, []byte("GET"), key)
					}
				}
				if _, err := conn.Write(buf); err != nil {
					fail(err)
				}
				for range *pipeline {
					skipReply(r)
				}
				done.Add(int64(*pipeline))
			}
		}()
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds()
}
