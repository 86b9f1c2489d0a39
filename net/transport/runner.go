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
// Running Serve on the poller goroutine comes closest to std, but a Serve that blocks (in Peek for
// the rest of a request, in Write on a full socket, or in a blocking command) would then stall
// every conn of that poller, so it stays a benchmark variant. With GOMAXPROCS=1 netpoll fares
// worse still: its pollers block in epoll_wait as ordinary syscalls, holding the only P until
// the runtime's sysmon takes it back.
//
// A fresh goroutine per readable event starts on a small stack and grows it on every Serve (a
// command's call chain is deep): in a server profile under pipelined PING, morestack/copystack
// took 9% of the CPU. The runner therefore keeps goroutines whose stacks have grown: a finished
// task parks its goroutine on the idle list for the next one.
//
// netpoll's own tasks run inline on the poller (see offload.go); the pool runs the workers that take
// over a conn whose Serve would block.
var runTask = workers.run

// runInline is the netpoll runner: a readable conn is served on the poller goroutine.
func runInline(_ context.Context, f func()) { f() }

var workers = &workerPool{}

// pollerTask runs netpoll's tasks; a variable so that benchmarks can compare runners.
var pollerTask = runInline

// maxIdleWorkers bounds the parked goroutines kept for reuse (each holds its grown stack).
const maxIdleWorkers = 256

// workerPool runs tasks on reused goroutines.
type workerPool struct {
	mu   sync.Mutex
	idle []chan func()
}

func (p *workerPool) run(_ context.Context, f func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		ch := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		ch <- f // buffered: never blocks
		return
	}
	p.mu.Unlock()
	go p.work(f)
}

// work runs f and then every task handed to it, until the idle list is full.
func (p *workerPool) work(f func()) {
	ch := make(chan func(), 1)
	for {
		f()
		p.mu.Lock()
		if len(p.idle) >= maxIdleWorkers {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, ch)
		p.mu.Unlock()
		f = <-ch
	}
}

var runnerOnce sync.Once

// configureNetpoll sets netpoll's process-wide options: the runner once, the poller count every time.
func configureNetpoll(loops int) error {
	runnerOnce.Do(func() { netpoll.SetRunner(func(ctx context.Context, f func()) { pollerTask(ctx, f) }) })
	return netpoll.SetNumLoops(loops)
}
