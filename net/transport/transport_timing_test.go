package transport

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bgopool "github.com/bytedance/gopkg/util/gopool"
)

// Runner variants for the netpoll engine, compared against std in BenchmarkPing. "netpoll" is the engine
// as shipped (Serve inline on the poller, see offload.go). "netpoll-pool" hands every readable event to a
// pooled goroutine, "netpoll-gopool" to netpoll's default worker pool.
var benchLoops = 0

var benchRunners = map[string]func(context.Context, func()){
	"netpoll-gopool": bgopool.CtxGo,
	"netpoll-pool":   workers.run,
}

// BenchmarkPing: N clients over loopback each send P pipelined "PING\r\n" and read P "+PONG\r\n";
// one op is one request. Client and server share the process (and the machine's cores).
func BenchmarkPing(b *testing.B) {
	for _, engine := range []string{"std", "netpoll", "netpoll-pool", "netpoll-gopool"} {
		for _, pipe := range []int{1, 30} {
			for _, clients := range []int{1, 16} {
				name := fmt.Sprintf("%s/P%d/C%d", engine, pipe, clients)
				b.Run(name, func(b *testing.B) { benchPing(b, engine, pipe, clients) })
			}
		}
	}
}

func benchPing(b *testing.B, engine string, pipe, clients int) {
	benchLines(b, engine, "PING", pipe, clients, &lineHandler{})
}

// BenchmarkFill: pipelined 256-byte lines, whose batches netpoll reads in pieces, served by a
// handler that calls Fill on a partial line (as the pipeline does) and by one that does not.
func BenchmarkFill(b *testing.B) {
	line := fmt.Sprintf("%0256d", 0)
	for _, fill := range []bool{true, false} {
		for _, clients := range []int{1, 16} {
			name := fmt.Sprintf("fill=%v/P30/C%d", fill, clients)
			b.Run(name, func(b *testing.B) { benchLines(b, "netpoll", line, 30, clients, &lineHandler{fill: fill}) })
		}
	}
}

// benchLines runs N clients over loopback that each send P pipelined copies of line and read the
// P replies; one op is one request. Client and server share the process (and the machine's cores).
func benchLines(b *testing.B, engine, line string, pipe, clients int, h *lineHandler) {
	if run, ok := benchRunners[engine]; ok {
		saved := pollerTask
		pollerTask = run
		defer func() { pollerTask = saved }()
		engine = "netpoll"
	}
	s := startServer(b, Options{Engine: engine, Loops: benchLoops}, h)
	conns := make([]net.Conn, clients)
	for i := range conns {
		conns[i] = dial(b, s)
	}
	var req []byte
	for range pipe {
		req = append(append(req, line...), "\r\n"...)
	}
	replyLen := len(appendReply(nil, []byte(line))) * pipe
	runRequestLoops(b, conns, req, replyLen, pipe)
}

// runRequestLoops shares b.N requests among conns, each sending req (pipe requests) and reading
// replyLen bytes of replies a round, and reports allocations and CPU time per request: CPU time
// (user+sys, client and server together) is steadier than ns/op on a shared machine, and it is
// what decides throughput per core.
func runRequestLoops(b *testing.B, conns []net.Conn, req []byte, replyLen, pipe int) {
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			requestLoop(b, c, req, replyLen, pipe, &left)
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// requestLoop sends batches of pipe requests and reads their replyLen bytes of replies until the
// shared budget of requests is spent.
func requestLoop(b *testing.B, c net.Conn, req []byte, replyLen, pipe int, left *atomic.Int64) {
	reply := make([]byte, replyLen)
	for left.Add(-int64(pipe)) > -int64(pipe) {
		if _, err := c.Write(req); err != nil {
			b.Error(err)
			return
		}
		for got := 0; got < len(reply); {
			n, err := c.Read(reply[got:])
			if err != nil {
				b.Error(err)
				return
			}
			got += n
		}
	}
}
