package command

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// parallelKeys is the keyspace of BenchmarkParallel: far larger than the caches, like the
// harness's million keys.
const parallelKeys = 1 << 20

// BenchmarkParallel is the execution layer on every core with no network and no load
// generator: each of GOMAXPROCS goroutines serves its own connection's pipelined batches of
// hotBatch commands on random keys of one shared keyspace, with 16 shards per thread as the
// server has. Run it with -cpu 1,2: ns/cmd is wall time per command over all goroutines (two
// cores that scale halve it), cpu-ns/cmd the process's CPU time per command (user and system,
// from getrusage), which coordination between the threads must not raise.
//
// GET-own is the ceiling: each goroutine's keys lie in shards of its own (shard index modulo
// GOMAXPROCS), so no shard is ever touched by two cores; the same process and keyspace as GET,
// so the ratio of the two holds on a machine whose speed swings from run to run.
//
//	go test ./src/command -run '^$' -bench Parallel -cpu 1,2 -benchtime 3s
func BenchmarkParallel(b *testing.B) {
	get := func(k string) []string { return []string{"GET", k} }
	for _, c := range []struct {
		name string
		cmd  func(key string) []string
		own  bool
	}{
		{"GET", get, false},
		{"GET-own", get, true},
		{"SET", func(k string) []string { return []string{"SET", k, value} }, false},
		{"INCR", func(k string) []string { return []string{"INCR", "n" + k} }, false},
		{"MGET", func(k string) []string { // 8 keys, as the harness's MGET
			args := []string{"MGET", k}
			for range 7 {
				args = append(args, fmt.Sprintf("key:%d", rand.IntN(parallelKeys)))
			}
			return args
		}, false},
	} {
		b.Run(c.name, func(b *testing.B) { benchParallel(b, c.cmd, c.own) })
	}
}

// parallelEngines holds one prefilled engine per thread count, built on first use: the
// benchmark function runs several times (b.N grows) and prefilling takes seconds.
var parallelEngines = map[int]*Engine{}

func benchParallel(b *testing.B, cmd func(key string) []string, own bool) {
	threads := runtime.GOMAXPROCS(0)
	e := parallelEngines[threads]
	if e == nil {
		e = NewEngine(Options{Shards: 16 * threads, Databases: 16, Settings: DefaultSettings(),
			Config: testConfigStore()})
		prefillParallel(b, e)
		parallelEngines[threads] = e
	}
	// Each goroutine takes its own connection and request bytes from the pool.
	conns := make(chan *parallelConn, threads)
	for g := range threads {
		conns <- newParallelConn(b, e, g, cmd, own)
	}
	runtime.GC() // the set-up's garbage is not the benchmark's
	cpu0 := cpuSeconds()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		pc := <-conns
		for i := 0; pb.Next(); i++ {
			pc.serve(b, i)
		}
	})
	b.StopTimer()
	cpu := cpuSeconds() - cpu0
	cmds := float64(b.N) * hotBatch
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/cmds, "ns/cmd")
	b.ReportMetric(cpu*1e9/cmds, "cpu-ns/cmd")
}

// prefillParallel stores key:0 .. key:parallelKeys-1 with 256-byte values, one pipelined batch
// of SETs per shard-spread run of keys, from as many goroutines as there are threads.
func prefillParallel(b *testing.B, e *Engine) {
	b.Helper()
	threads := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for g := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tc := newTestConn(b, e)
			var req []byte
			for k := g; k < parallelKeys; k += threads {
				req = append(req, encodeCommand([]string{"SET", fmt.Sprintf("key:%d", k), value})...)
				if len(req) > 64<<10 || k+threads >= parallelKeys {
					if err := tc.serveRaw(req); err != nil {
						b.Error(err)
						return
					}
					tc.stream.out.Reset()
					req = req[:0]
				}
			}
		}()
	}
	wg.Wait()
	n := 0 // DBSIZE; nothing else runs now
	e.eachKeyspace(0, func(ks *keyspace.Keyspace) { n += ks.Len() })
	if n != parallelKeys {
		b.Fatalf("prefill stored %d keys, want %d", n, parallelKeys)
	}
}

// parallelConn is one goroutine's connection and its precomputed batches.
type parallelConn struct {
	tc      *testConn
	batches [][]byte
}

// parallelBatches per connection: enough distinct random keys that a batch's keys are not
// already in the cache from its previous turn.
const parallelBatches = 2048

// newParallelConn makes goroutine g's connection; with own, its keys are only those whose shard
// index is g modulo the thread count.
func newParallelConn(b *testing.B, e *Engine, g int, cmd func(key string) []string, own bool) *parallelConn {
	b.Helper()
	rng := rand.New(rand.NewPCG(uint64(g), 0x9e3779b97f4a7c15))
	threads := runtime.GOMAXPROCS(0)
	pc := &parallelConn{tc: newTestConn(b, e)}
	for range parallelBatches {
		var req []byte
		for n := 0; n < hotBatch; {
			k := fmt.Sprintf("key:%d", rng.IntN(parallelKeys))
			if own && int(e.shardOf([]byte(k)))%threads != g {
				continue
			}
			req = append(req, encodeCommand(cmd(k))...)
			n++
		}
		pc.batches = append(pc.batches, req)
	}
	// One turn through every batch before timing: replies checked, buffers at their sizes.
	for i := range pc.batches {
		st := pc.tc.stream
		if err := pc.tc.serveRaw(pc.batches[i]); err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			replies := splitReplies(b, st.out.Bytes())
			if len(replies) != hotBatch || replies[0][0] == '-' {
				b.Fatalf("batch replies: %.200q", st.out.Bytes())
			}
		}
		st.out.Reset()
	}
	return pc
}

func (pc *parallelConn) serve(b *testing.B, i int) {
	if err := pc.tc.serveRaw(pc.batches[i%parallelBatches]); err != nil {
		b.Error(err)
	}
	pc.tc.stream.out.Reset()
}

// cpuSeconds is the process's user and system CPU time so far, as INFO reports it.
func cpuSeconds() float64 {
	user, sys, _, _ := cpuTimes()
	return user + sys
}
