package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// config is the parsed command line.
type config struct {
	host            string
	port            int
	threads         int // GOMAXPROCS: the cores the generator may use
	clients         int // connections per thread
	pipeline        int
	keys            uint64
	dist            string
	zipfS           float64
	dataSize        int
	prefill         bool
	prefillOnly     bool
	prefillCommand  string
	prefillPipeline int
	duration        time.Duration
	requests        int64 // total over all connections; 0 means run for duration
	commands        []string
	expects         []string // per command; "" infers the expectation from the command's name
	prefillExpect   string
	allowMisses     bool
	ratio           string
	inOrder         bool // every connection starts the schedule at its first command (--in-order)
	resp            int
	jsonPath        string
	timeout         time.Duration // fail when no reply arrives for this long
	seed            uint64
	keyWidth        int
	linesPath       string    // --lines: the file __line__ draws from
	lines           [][]byte  // its non-blank lines
	progress        io.Writer // once-a-second lines; nil for none
}

// client is one connection and its reader, kept across the prefill and the run.
type client struct {
	conn net.Conn
	rd   *replyReader
}

// phase is one stretch of load: the prefill or the measured run.
type phase struct {
	name     string
	tpls     []*template
	order    []uint8
	pipeline int
	inOrder  bool // every connection starts at order[0]
	oneKey   bool // every __key__ of a request is the same key
	keys     func(i int) (keySource, error)
	quota    func(i int) int64 // per connection; negative until stop
	duration time.Duration
	total    uint64 // expected requests, for progress percentages; 0 if unknown
}

// phaseResult is what a phase measured.
type phaseResult struct {
	ops     uint64
	elapsed time.Duration
	cpu     time.Duration // the generator's own user+system time
	hists   [][]*hdrhistogram.Histogram
}

// run loads the server as cfg says and returns the measured result; the error of a failed run (an
// error reply, a dropped connection, a server that stopped answering) comes with what was measured.
func run(cfg *config) (*result, error) {
	runtime.GOMAXPROCS(cfg.threads)
	tpls, order, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	clients, err := dialAll(cfg)
	defer closeAll(clients)
	if err != nil {
		return nil, err
	}
	res := newResult(cfg)
	if cfg.prefill {
		pr, err := runPhase(cfg, clients, prefillPhase(cfg))
		res.Prefill = &prefillResult{Keys: pr.ops, Seconds: pr.elapsed.Seconds()}
		if err != nil {
			return res, fmt.Errorf("prefill: %w", err)
		}
	}
	if cfg.prefillOnly {
		return res, nil
	}
	pr, err := runPhase(cfg, clients, mainPhase(cfg, tpls, order, len(clients)))
	res.fill(tpls, pr)
	return res, err
}

// compile builds the run's templates, each with its expectation, and the --ratio schedule.
func (cfg *config) compile() ([]*template, []uint8, error) {
	tpls, order, err := compileCommands(cfg.commands, cfg.ratio, cfg.dataSize)
	if err != nil {
		return nil, nil, err
	}
	data := makeData(cfg.dataSize, cfg.seed)
	for i, t := range tpls {
		spec := ""
		if i < len(cfg.expects) {
			spec = cfg.expects[i]
		}
		if err := cfg.expectOn(t, spec, data); err != nil {
			return nil, nil, fmt.Errorf("--command %q: %w", t.text, err)
		}
	}
	return tpls, order, nil
}

// compilePrefill builds the --prefill-command template with its expectation.
func (cfg *config) compilePrefill() (*template, error) {
	t, err := compileTemplate(cfg.prefillCommand, cfg.dataSize)
	if err == nil {
		err = cfg.expectOn(t, cfg.prefillExpect, makeData(cfg.dataSize, cfg.seed))
	}
	if err != nil {
		return nil, fmt.Errorf("--prefill-command %q: %w", cfg.prefillCommand, err)
	}
	return t, nil
}

func (cfg *config) expectOn(t *template, spec string, data []byte) error {
	if err := t.setExpect(spec, data); err != nil {
		return err
	}
	if cfg.allowMisses {
		t.expect.allowMisses()
	}
	return nil
}

func compileCommands(cmds []string, ratio string, dataSize int) ([]*template, []uint8, error) {
	if len(cmds) > 255 {
		return nil, nil, errors.New("at most 255 --command flags")
	}
	var tpls []*template
	for _, c := range cmds {
		t, err := compileTemplate(c, dataSize)
		if err != nil {
			return nil, nil, fmt.Errorf("--command %q: %w", c, err)
		}
		tpls = append(tpls, t)
	}
	weights, err := parseRatio(ratio, len(tpls))
	if err != nil {
		return nil, nil, err
	}
	return tpls, schedule(weights), nil
}

// prefillPhase SETs every key of the range exactly once, connections taking chunks of a shared
// sequence; every __key__ of one prefill command is that command's key.
func prefillPhase(cfg *config) phase {
	tpl, err := cfg.compilePrefill()
	if err != nil {
		panic("BUG: prefill command checked in parseFlags: " + err.Error())
	}
	seq := &sequence{n: cfg.keys}
	return phase{
		name: "prefill", tpls: []*template{tpl}, order: []uint8{0}, pipeline: cfg.prefillPipeline, oneKey: true,
		keys:  func(int) (keySource, error) { return &seqKeys{seq: seq}, nil },
		quota: func(int) int64 { return -1 },
		total: cfg.keys,
	}
}

func mainPhase(cfg *config, tpls []*template, order []uint8, conns int) phase {
	seq := &sequence{n: cfg.keys, wrap: true}
	p := phase{
		name: "run", tpls: tpls, order: order, pipeline: cfg.pipeline, duration: cfg.duration, inOrder: cfg.inOrder,
		keys: func(i int) (keySource, error) {
			return newKeySource(cfg.dist, cfg.keys, cfg.zipfS, seq, cfg.seed, i)
		},
		quota: func(int) int64 { return -1 },
	}
	if cfg.requests > 0 {
		per, extra := cfg.requests/int64(conns), cfg.requests%int64(conns)
		p.quota = func(i int) int64 { return per + b2i(int64(i) < extra) }
		p.total, p.duration = uint64(cfg.requests), 0
	}
	return p
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// dialAll opens threads*clients connections and, for --resp 3, switches each to RESP3.
func dialAll(cfg *config) ([]*client, error) {
	addr := net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port))
	var clients []*client
	for range cfg.threads * cfg.clients {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return clients, fmt.Errorf("cannot connect: %w", err)
		}
		cl := &client{conn: c, rd: newReplyReader(c, 64*1024)}
		clients = append(clients, cl)
		if cfg.resp == 3 {
			if err := hello3(cl, cfg.timeout); err != nil {
				return clients, err
			}
		}
	}
	return clients, nil
}

func hello3(cl *client, timeout time.Duration) error {
	cl.conn.SetDeadline(time.Now().Add(timeout))
	defer cl.conn.SetDeadline(time.Time{})
	if _, err := io.WriteString(cl.conn, "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n"); err != nil {
		return fmt.Errorf("cannot send HELLO 3: %w", err)
	}
	bad, err := cl.rd.next(nil)
	if err != nil {
		return fmt.Errorf("cannot read the reply to HELLO 3: %w", err)
	}
	if bad != nil {
		return &replyError{command: "HELLO", msg: string(bad.errText)}
	}
	return nil
}

func closeAll(clients []*client) {
	for _, c := range clients {
		c.conn.Close()
	}
}

// runPhase runs one worker per connection until they finish or one fails; the first failure stops
// the others after their current batch.
func runPhase(cfg *config, clients []*client, p phase) (phaseResult, error) {
	var stop atomic.Bool
	workers, err := newWorkers(cfg, clients, p, &stop)
	if err != nil {
		return phaseResult{}, err
	}
	cpu0, start := cpuTime(), time.Now()
	var firstErr error
	var once sync.Once
	fail := func(err error) { once.Do(func() { firstErr = err; stop.Store(true) }) }
	if p.duration > 0 {
		t := time.AfterFunc(p.duration, func() { stop.Store(true) })
		defer t.Stop()
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			if err := w.run(); err != nil {
				fail(err)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if err := watch(cfg, p, workers, done, start); err != nil {
		fail(err)         // first, so the workers' failing reads do not take the blame
		closeAll(clients) // ends the reads the workers are blocked in
		<-done
	}
	pr := phaseResult{elapsed: time.Since(start), cpu: cpuTime() - cpu0}
	for _, w := range workers {
		pr.ops += w.ops.n.Load()
		pr.hists = append(pr.hists, w.hists)
	}
	return pr, firstErr
}

// newWorkers sets up one worker per connection, each starting at its own place in the --ratio
// schedule so that the connections' batches mix the commands alike, or all at its start with
// --in-order (a sequence such as MULTI, SET, INCR, EXEC must be sent from its first command).
func newWorkers(cfg *config, clients []*client, p phase, stop *atomic.Bool) ([]*worker, error) {
	workers := make([]*worker, len(clients))
	data := makeData(cfg.dataSize, cfg.seed)
	for i, cl := range clients {
		keys, err := p.keys(i)
		if err != nil {
			return nil, err
		}
		e := expander{keys: keys, oneKey: p.oneKey, data: data, lines: cfg.lines, width: cfg.keyWidth, rng: randStream(cfg.seed, i)}
		w := newWorker(cl.conn, cl.rd, p.tpls, p.order, p.pipeline, e)
		w.quota, w.stop, w.pos = p.quota(i), stop, i%len(p.order)
		if p.inOrder {
			w.pos = 0
		}
		workers[i] = w
	}
	return workers, nil
}

// randStream is connection i's generator of __rand__ bytes: a function of --seed, apart from the
// key generators' streams, so a run sends the same members again with the same seed.
func randStream(seed uint64, i int) rand.PCG {
	return *rand.NewPCG(seed^0x72616e64, uint64(i)*0x9E3779B97F4A7C15+2)
}

// watch prints progress once a second until done, and gives up when no reply has arrived for
// cfg.timeout.
func watch(cfg *config, p phase, workers []*worker, done <-chan struct{}, start time.Time) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last uint64
	lastMove := start
	for {
		select {
		case <-done:
			return nil
		case now := <-tick.C:
			ops := sumOps(workers)
			if ops != last {
				lastMove = now
			} else if now.Sub(lastMove) >= cfg.timeout {
				return fmt.Errorf("no reply for %v: the server stopped answering", cfg.timeout)
			}
			printProgress(cfg.progress, p, now.Sub(start), ops, ops-last)
			last = ops
		}
	}
}

func sumOps(workers []*worker) uint64 {
	var n uint64
	for _, w := range workers {
		n += w.ops.n.Load()
	}
	return n
}

// cpuTime is this process's user plus system time, all threads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// makeData is the __data__ value: printable bytes that look random, the same for every request.
func makeData(n int, seed uint64) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	x := seed | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = alphabet[x%uint64(len(alphabet))]
	}
	return b
}
