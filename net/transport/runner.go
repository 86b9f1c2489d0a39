package transport

import (
	"context"
	"sync"

	"github.com/cloudwego/netpoll"
)

// runTask is the netpoll runner: how a poller hands a readable connection to a goroutine.
//
// Measured with BenchmarkPing on the 2-vCPU development VM (CPU time per request, client included):
//
//	                     P1/C1    P30/C1   P30/C16
//	std                  ~21µs    ~0.8µs   ~0.65µs
//	netpoll, go f()      ~47µs    ~1.4µs   ~0.95µs
//	netpoll, gopool      ~47µs    ~1.4µs   ~1.0µs
//	netpoll, on poller   ~25µs    ~0.9µs   ~0.9µs
//
// A fresh goroutine costs what netpoll's pool costs and allocates less, so it is the runner. Running
// Serve on the poller goroutine comes closest to std, but a Serve that blocks (in Peek for the rest of a
// request, or in Write on a full socket) would then stall or deadlock every conn of that poller, so it
// stays a benchmark variant. With GOMAXPROCS=1 netpoll fares worse still: its pollers block in
// epoll_wait as ordinary syscalls, holding the only P until the runtime's sysmon takes it back.
var runTask = func(_ context.Context, f func()) { go f() }

var runnerOnce sync.Once

// configureNetpoll sets netpoll's process-wide options: the runner once, the poller count every time.
func configureNetpoll(loops int) error {
	runnerOnce.Do(func() { netpoll.SetRunner(func(ctx context.Context, f func()) { runTask(ctx, f) }) })
	return netpoll.SetNumLoops(loops)
}
