package command

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// IP set reads on a pipelined batch of hotBatch: CONTAINS, MATCH and MCONTAINS allocate nothing
// once warm, and MCONTAINS on one key scales from -cpu 1 to -cpu 2 (shared reads):
//
//	go test ./src/command -run '^$' -bench IPSet -cpu 1,2 -benchtime 2s

const (
	ipsetBenchHosts  = 200_000
	ipsetBenchRanges = 20_000
)

// ipsetBenchSetup fills key with ipsetBenchHosts random IPv4 hosts (seeded) in 10.0.0.0/8 and
// 172.16.0.0/12, ipsetBenchRanges labelled /24s and a few hundred IPv6 /48s.
func ipsetBenchSetup(key string) [][]string {
	rng := rand.New(rand.NewPCG(21, 1))
	var out [][]string
	cmd := []string{"IPSET.ADD", key}
	flush := func() {
		if len(cmd) > 2 && cmd[len(cmd)-1] != "LABELS" {
			out = append(out, cmd)
		}
	}
	for i := range ipsetBenchHosts {
		a := rng.Uint32N(1<<24) | 10<<24
		cmd = append(cmd, fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&255, a>>8&255, a&255))
		if i%2000 == 1999 {
			flush()
			cmd = []string{"IPSET.ADD", key}
		}
	}
	flush()
	cmd = []string{"IPSET.ADD", key, "LABELS"}
	for i := range ipsetBenchRanges {
		a := rng.Uint32N(1<<20)<<8 | 172<<24 | 16<<16
		cmd = append(cmd, fmt.Sprintf("%d.%d.%d.0/24", a>>24, a>>16&255, a>>8&255), fmt.Sprint("L", i%200))
		if i%1000 == 999 {
			flush()
			cmd = []string{"IPSET.ADD", key, "LABELS"}
		}
	}
	flush()
	cmd = []string{"IPSET.ADD", key}
	for i := range 500 {
		cmd = append(cmd, fmt.Sprintf("2001:db8:%x::/48", i*7))
	}
	return append(out, cmd)
}

// ipsetQueries returns n query addresses: about half hits.
func ipsetQueries(rng *rand.Rand, n int) []string {
	q := make([]string, n)
	for i := range q {
		var a uint32
		if i%2 == 0 {
			a = rng.Uint32N(1<<24) | 10<<24 // a host hit about 1.2% of the time
		} else {
			a = rng.Uint32N(1<<20)<<4 | 172<<24 // a /24 hit often
		}
		q[i] = fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&255, a>>8&255, a&255)
	}
	return q
}

var ipsetHotCases = []struct {
	name string
	cmd  []string
}{
	{"CONTAINS-host", []string{"IPSET.CONTAINS", "ips", "10.1.2.3"}},
	{"CONTAINS-v6", []string{"IPSET.CONTAINS", "ips", "2001:db8:7::1"}},
	{"MATCH-range", []string{"IPSET.MATCH", "ips", "172.16.5.9"}},
	{"MCONTAINS-100", append([]string{"IPSET.MCONTAINS", "ips"}, ipsetQueries(rand.New(rand.NewPCG(3, 3)), 100)...)},
}

var ipsetHotSetup [][]string

func ipsetSetupOnce() [][]string {
	if ipsetHotSetup == nil {
		ipsetHotSetup = ipsetBenchSetup("ips")
	}
	return ipsetHotSetup
}

func TestIPSetHotPathAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 200k entries")
	}
	for _, hc := range ipsetHotCases {
		h := newHotConn(t, ipsetSetupOnce(), hc.cmd...)
		hotReplies(t, hc.name, h)
		checkNoAllocs(t, hc.name, h)
	}
}

func BenchmarkIPSetHotPath(b *testing.B) {
	for _, hc := range ipsetHotCases {
		b.Run(hc.name, func(b *testing.B) { benchHot(b, newHotConn(b, ipsetSetupOnce(), hc.cmd...)) })
	}
}

// BenchmarkIPSetParallelMContains: GOMAXPROCS goroutines, each its own connection, send
// pipelined batches of hotBatch MCONTAINS of 100 addresses to one key. Shared reads let them
// run at once; ns/cmd is wall time per command over all goroutines, cpu-ns/cmd the process's CPU.
func BenchmarkIPSetParallelMContains(b *testing.B) {
	threads := runtime.GOMAXPROCS(0)
	e := newTestEngine()
	setup := newTestConn(b, e)
	for _, s := range ipsetSetupOnce() {
		setup.do(s...)
	}
	conns := make(chan *parallelConn, threads)
	for g := range threads {
		rng := rand.New(rand.NewPCG(uint64(g), 7))
		pc := &parallelConn{tc: newTestConn(b, e)}
		for range 64 {
			var req []byte
			for range hotBatch {
				req = append(req, encodeCommand(append([]string{"IPSET.MCONTAINS", "ips"}, ipsetQueries(rng, 100)...))...)
			}
			pc.batches = append(pc.batches, req)
		}
		for i := range 4 {
			ipsetServe(b, pc, i)
		}
		conns <- pc
	}
	runtime.GC()
	cpu0 := cpuSeconds()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		pc := <-conns
		for i := 0; pb.Next(); i++ {
			ipsetServe(b, pc, i)
		}
	})
	b.StopTimer()
	cpu := cpuSeconds() - cpu0
	cmds := float64(b.N) * hotBatch
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/cmds, "ns/cmd")
	b.ReportMetric(cpu*1e9/cmds, "cpu-ns/cmd")
}

func ipsetServe(b *testing.B, pc *parallelConn, i int) {
	if err := pc.tc.serveRaw(pc.batches[i%len(pc.batches)]); err != nil {
		b.Error(err)
	}
	pc.tc.stream.out.Reset()
}
