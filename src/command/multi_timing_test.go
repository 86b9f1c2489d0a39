package command

import (
	"strconv"
	"testing"
)

// BenchmarkMulti runs MULTI, SET, INCR, EXEC in-process (parse, route, queue, EXEC's locking
// and calls, encode) and reports allocations per transaction. "pipeline-1" sends one transaction
// a batch, as a client waiting for each EXEC does; "pipeline-30" sends 30 transactions (120
// commands) a batch. The keys are on two shards, so EXEC takes two tokens. "plain-" is the same
// SET and INCR without MULTI and EXEC (PING in their places), the cost without a transaction.
func BenchmarkMulti(b *testing.B) {
	for _, c := range []struct {
		name  string
		depth int
		open  string
		close string
	}{{"pipeline-1", 1, "MULTI", "EXEC"}, {"pipeline-30", 30, "MULTI", "EXEC"}, {"plain-1", 1, "PING", "PING"},
		{"plain-30", 30, "PING", "PING"}} {
		depth := c.depth
		b.Run(c.name, func(b *testing.B) {
			tc := newTestConn(b, newTestEngine())
			k1, k2 := "tx:a", "tx:b"
			for i := 0; tc.client.e.shardOf([]byte(k1)) == tc.client.e.shardOf([]byte(k2)); i++ {
				k2 = "tx:b" + strconv.Itoa(i)
			}
			tc.do("SET", k2, "0")
			var req []byte
			for range depth {
				req = append(req, encodeCommand([]string{c.open})...)
				req = append(req, encodeCommand([]string{"SET", k1, value})...)
				req = append(req, encodeCommand([]string{"INCR", k2})...)
				req = append(req, encodeCommand([]string{c.close})...)
			}
			h := &hotConn{tc: tc, req: req}
			for range 3 {
				h.run(b)
			}
			if out := tc.do("MULTI"); out != "+OK\r\n" {
				b.Fatalf("MULTI = %q", out)
			}
			tc.do("DISCARD")
			b.ReportAllocs()
			for b.Loop() {
				h.run(b)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/tx")
			b.ReportMetric(float64(testing.AllocsPerRun(20, func() { h.run(b) }))/float64(depth), "allocs/tx")
		})
	}
}
