// Command subs opens subscriber connections to a Redis-protocol server (SUBSCRIBE -channel, or
// PSUBSCRIBE -pattern), reads and counts every message they receive as fast as it can until it is
// told to stop (SIGTERM or SIGINT, or after -duration), then prints how many messages each
// connection received. benchmarks/run.sh runs it beside the generator in its pubsub section, so
// that the subscribers really read everything the server sends them: a subscriber that fell behind
// would be cut off at client-output-buffer-limit pubsub (32mb, or 8mb for 60 s) and distort the run.
//
//	subs -port 6379 -n 100 -channel bench:channel -ready /tmp/ready   # until SIGTERM
//	subs -port 6379 -n 1 -pattern '__key*__:*' -duration 10s
//
// Once every connection's subscription is confirmed it creates the -ready file (and starts its CPU
// clock). On stop, every connection sends PING and counts what arrives up to the PING's reply:
// the server writes a client's messages in order, so that reply comes after every message
// published before the stop. It then waits -quiet for stragglers. Every frame is parsed: a message
// on another channel or pattern than the one subscribed, an error reply or anything but a message
// fails it.
//
// Output (stdout), one "name value" pair a line, for the harness:
//
//	subscribers 100
//	lost 0           connections that failed (closed by the server, a bad frame)
//	cpu_seconds 0.53 its own user+system time from -ready to the end
//	seconds 5.31     wall time from -ready to the end
//	messages_min 1234, messages_max 1236, messages_total 123450
//	conn 0 1234      one line per connection
//
// Exit status: 0, 1 when a connection failed or did not subscribe (the errors are on stderr),
// 2 for bad flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

type config struct {
	addr     string
	n        int
	channel  string
	pattern  string
	duration time.Duration
	ready    string
	quiet    time.Duration
	timeout  time.Duration
	bufSize  int
}

func main() {
	// Before anything else, so that a SIGTERM right after -ready appears is a stop, not a kill.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "subs:", err)
		os.Exit(2)
	}
	stop := make(chan struct{})
	go func() {
		<-sig
		close(stop)
	}()
	res, err := run(cfg, stop)
	if res != nil {
		res.print(os.Stdout)
		res.summary(os.Stderr, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "subs: FAILED:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("subs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	host := fs.String("host", "127.0.0.1", "server host")
	port := fs.Int("port", 6379, "server port")
	fs.IntVar(&cfg.n, "n", 1, "subscriber connections")
	fs.StringVar(&cfg.channel, "channel", "", "SUBSCRIBE to this channel")
	fs.StringVar(&cfg.pattern, "pattern", "", "PSUBSCRIBE to this pattern (instead of -channel)")
	fs.DurationVar(&cfg.duration, "duration", 0, "stop by itself after this long (default: at SIGTERM or SIGINT only)")
	fs.StringVar(&cfg.ready, "ready", "", "create this file once every connection is subscribed")
	fs.DurationVar(&cfg.quiet, "quiet", 100*time.Millisecond, "on stop, after the PING's reply, wait this long for more messages")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "fail when subscribing, or the reply to the stop's PING, takes longer")
	fs.IntVar(&cfg.bufSize, "buffer", 256<<10, "read buffer bytes per connection (grown for a larger message)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case (cfg.channel == "") == (cfg.pattern == ""):
		return nil, errors.New("give -channel or -pattern (one of them)")
	case cfg.n < 1:
		return nil, errors.New("-n must be at least 1")
	case cfg.duration < 0 || cfg.quiet < 0 || cfg.timeout <= 0:
		return nil, errors.New("-duration and -quiet must not be negative, -timeout must be positive")
	case cfg.bufSize < 64:
		return nil, errors.New("-buffer must be at least 64")
	}
	cfg.addr = net.JoinHostPort(*host, strconv.Itoa(*port))
	return cfg, nil
}

// result is what the subscribers received.
type result struct {
	counts  []int64
	errs    []error // per connection; nil when it received to the end
	cpu     time.Duration
	elapsed time.Duration
}

func (r *result) lost() int {
	n := 0
	for _, err := range r.errs {
		if err != nil {
			n++
		}
	}
	return n
}

func (r *result) print(w io.Writer) {
	lo, hi, total := int64(0), int64(0), int64(0)
	for i, c := range r.counts {
		if i == 0 || c < lo {
			lo = c
		}
		hi, total = max(hi, c), total+c
	}
	fmt.Fprintf(w, "subscribers %d\nlost %d\ncpu_seconds %.3f\nseconds %.3f\nmessages_min %d\nmessages_max %d\nmessages_total %d\n",
		len(r.counts), r.lost(), r.cpu.Seconds(), r.elapsed.Seconds(), lo, hi, total)
	for i, c := range r.counts {
		fmt.Fprintf(w, "conn %d %d\n", i, c)
	}
}

func (r *result) summary(w io.Writer, cfg *config) {
	for i, err := range r.errs {
		if err != nil {
			fmt.Fprintf(w, "subs: connection %d: %v\n", i, err)
		}
	}
	var total int64
	for _, c := range r.counts {
		total += c
	}
	what := "channel " + cfg.channel
	if cfg.pattern != "" {
		what = "pattern " + cfg.pattern
	}
	fmt.Fprintf(w, "subs: %d subscriber(s) of %s received %d messages in %.1f s, %.2f CPU-s; %d lost\n",
		len(r.counts), what, total, r.elapsed.Seconds(), r.cpu.Seconds(), r.lost())
}

// run subscribes every connection, counts until stop (or -duration), drains and reports. The
// result comes with the error when connections failed.
func run(cfg *config, stop <-chan struct{}) (*result, error) {
	subs := make([]*subscriber, cfg.n)
	defer func() {
		for _, s := range subs {
			if s != nil {
				s.conn.Close()
			}
		}
	}()
	subscribed := make(chan error, cfg.n)
	for i := range subs {
		c, err := net.DialTimeout("tcp", cfg.addr, cfg.timeout)
		if err != nil {
			return nil, fmt.Errorf("cannot connect to %s: %w", cfg.addr, err)
		}
		s := newSubscriber(i, c, cfg, subscribed)
		subs[i] = s
		c.SetWriteDeadline(time.Now().Add(cfg.timeout))
		if _, err := c.Write(s.subscribeCommand()); err != nil {
			return nil, fmt.Errorf("connection %d: cannot subscribe: %w", i, err)
		}
		go s.read()
	}
	if err := waitSubscribed(subs, subscribed, stop, cfg.timeout); err != nil {
		return nil, err
	}
	cpu0, start := cpuTime(), time.Now()
	if cfg.ready != "" {
		if err := os.WriteFile(cfg.ready, []byte("ready\n"), 0o644); err != nil {
			return nil, err
		}
	}
	var timer <-chan time.Time
	if cfg.duration > 0 {
		timer = time.After(cfg.duration)
	}
	select {
	case <-stop:
	case <-timer:
	}
	// The barrier: every connection's PING reply comes after the messages queued before it.
	for _, s := range subs {
		s.conn.SetReadDeadline(time.Now().Add(cfg.timeout))
		s.conn.SetWriteDeadline(time.Now().Add(cfg.timeout))
		if _, err := s.conn.Write(pingCommand); err != nil {
			s.conn.Close() // its reader fails and says why
		}
	}
	res := &result{}
	for _, s := range subs {
		<-s.done
		res.counts, res.errs = append(res.counts, s.messages), append(res.errs, s.err)
	}
	res.cpu, res.elapsed = cpuTime()-cpu0, time.Since(start)
	if n := res.lost(); n > 0 {
		return res, fmt.Errorf("%d of %d subscriber connections failed", n, len(subs))
	}
	return res, nil
}

// waitSubscribed waits until every connection's subscription is confirmed: each reader sends nil
// on subscribed when its confirmation arrives, or why it failed before that.
func waitSubscribed(subs []*subscriber, subscribed <-chan error, stop <-chan struct{}, timeout time.Duration) error {
	deadline := time.After(timeout)
	for n := 0; n < len(subs); n++ {
		select {
		case err := <-subscribed:
			if err != nil {
				return err
			}
		case <-stop:
			return errors.New("stopped before every connection was subscribed")
		case <-deadline:
			return fmt.Errorf("%d of %d connections subscribed within %v", n, len(subs), timeout)
		}
	}
	return nil
}

var pingCommand = []byte("*1\r\n$4\r\nPING\r\n")

// cpuTime is this process's user plus system time, all threads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
