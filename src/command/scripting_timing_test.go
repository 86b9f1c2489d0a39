package command

import (
	"runtime"
	"testing"
)

const incrScript = "return redis.call('INCR', KEYS[1])"

// BenchmarkEvalSHA runs EVALSHA of return redis.call('INCR', KEYS[1]) in-process (parse, route,
// the barrier, the script's locking, the Lua run, redis.call through call, encode) and reports
// allocations per EVALSHA; "pipeline-30" sends 30 a batch. "INCR-" rows are the plain command.
//
//	go test ./src/command -run '^$' -bench EvalSHA -benchtime 2s
func BenchmarkEvalSHA(b *testing.B) {
	for _, c := range []struct {
		name  string
		depth int
		eval  bool
	}{{"pipeline-1", 1, true}, {"pipeline-30", 30, true}, {"INCR-1", 1, false}, {"INCR-30", 30, false}} {
		b.Run(c.name, func(b *testing.B) {
			e := newTestEngine()
			defer e.Close()
			tc := newTestConn(b, e)
			sha := replyText(b, tc.do("SCRIPT", "LOAD", incrScript))
			var req []byte
			for range c.depth {
				if c.eval {
					req = append(req, encodeCommand([]string{"EVALSHA", sha, "1", "counter"})...)
				} else {
					req = append(req, encodeCommand([]string{"INCR", "counter"})...)
				}
			}
			h := &hotConn{tc: tc, req: req}
			for range 3 {
				h.run(b)
			}
			b.ReportAllocs()
			for b.Loop() {
				h.run(b)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.depth), "ns/cmd")
			b.ReportMetric(float64(testing.AllocsPerRun(20, func() { h.run(b) }))/float64(c.depth), "allocs/cmd")
		})
	}
}

// BenchmarkEvalParallel is BenchmarkParallel's measure for scripts: each of GOMAXPROCS
// goroutines serves its own connection's batches of hotBatch EVALSHA (INCR of a random key of
// shards of its own, so the threads share no token); "INCR-own" is the plain command. Run with
// -cpu 1,2: ns/cmd is wall time per command over all goroutines, so two cores that scale
// halve it.
//
//	go test ./src/command -run '^$' -bench EvalParallel -cpu 1,2 -benchtime 2s
func BenchmarkEvalParallel(b *testing.B) {
	for _, eval := range []bool{true, false} {
		name := "EVALSHA-own"
		if !eval {
			name = "INCR-own"
		}
		b.Run(name, func(b *testing.B) {
			threads := runtime.GOMAXPROCS(0)
			e := NewEngine(Options{Shards: 16 * threads, Databases: 16, Settings: DefaultSettings(),
				Config: testConfigStore()})
			defer e.Close()
			s, _ := e.Scripts().Compile([]byte(incrScript))
			cmd := func(k string) []string {
				if eval {
					return []string{"EVALSHA", s.SHA, "1", k}
				}
				return []string{"INCR", k}
			}
			conns := make(chan *parallelConn, threads)
			for g := range threads {
				conns <- newParallelConn(b, e, g, cmd, true)
			}
			runtime.GC()
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
			cmds := float64(b.N) * hotBatch
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/cmds, "ns/cmd")
			b.ReportMetric((cpuSeconds()-cpu0)*1e9/cmds, "cpu-ns/cmd")
		})
	}
}
