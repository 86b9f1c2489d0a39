package transport

import (
	"context"
	"sync"

	"github.com/cloudwego/netpoll"
)

// runTask starts a worker: a goroutine that serves a netpoll conn which left its poller because Serve
// would block (offload.go), or which a Wake found unserved.
//
// How netpoll runs its tasks (pollerTask) was measured with BenchmarkPing on the 2-vCPU development VM
// (CPU time per request, client included):
//
//	                     P1/C1    P30/C1   P30/C16
//	std                  ~21µs    ~0.8µs   ~0.65µs
//	netpoll, go f()      ~47µs    ~1.4µs   ~0.95µs
//	netpoll, gopool      ~47µs    ~1.4µs   ~1.0µs
//	netpoll, on poller   ~25µs    ~0.9µs   ~0.9µs
//
// Running Serve on the poller goroutine comes closest to std, and it is what ships: a Serve that
// would block there (in Peek for the rest of a request, in Write on a full socket, in a blocking
// command) would stall every conn of that poller, so it moves to a worker instead (offload.go). With
// GOMAXPROCS=1 netpoll fares worse still: its pollers block in epoll_wait as ordinary syscalls,
// holding the only P until the runtime's sysmon takes it back.
//
// A fresh goroutine per task starts on a small stack and grows it on every Serve (a command's call
// chain is deep): in a server profile under pipelined PING, morestack/copystack took 9% of the CPU.
// The pool therefore keeps goroutines whose stacks have grown: a finished task parks its goroutine
// on the idle list for the next one.
var runTask = workers.run

// runInline is how netpoll runs its tasks: a readable conn is served on the poller goroutine.
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
