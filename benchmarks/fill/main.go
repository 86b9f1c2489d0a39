// Command fill loads a fixed dataset into a Redis-protocol server as fast as one pipelined
// connection allows (-conns at once for the small-* datasets), checking every reply (an error reply
// or an unexpected count fails it), with a progress line a second on stderr. benchmarks/run.sh uses
// it for the memory and small-collections tables and to prefill the collections benchmark. Every
// dataset is a function of -seed, so Redis and HotKV get the same bytes.
//
//	fill -port 6379 -dataset strset -n 1000000
//	fill -port 6379 -dataset lists -key plist -n 1000 -members 2500 -size 256
//	fill -port 6379 -dataset sets -key cset -n 1000 -members 1000 -check   # fails unless each holds 1000
//	fill -port 6379 -dataset lists -key plist -n 1000 -members 1 -check -at-least   # fails if a list is empty
//	fill -port 6379 -dataset small-set -key set -n 1000000 -members 5 -size 16 -conns 4   # one SADD per member
//
// Exit status: 0 on success, 1 when loading or the check failed, 2 for bad flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

type config struct {
	addr    string
	dataset string
	opts    options
	check   bool
	atLeast bool
	conns   int
	timeout time.Duration
	quiet   bool
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fill:", err)
		os.Exit(2)
	}
	var progress io.Writer = os.Stderr
	if cfg.quiet {
		progress = nil
	}
	if cfg.check {
		err = checkSizes(cfg)
	} else {
		err = load(cfg, progress)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fill: FAILED:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("fill", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: fill [flags] -dataset NAME\ndatasets:\n%s\nflags:\n", strings.Join(names(), "\n"))
		fs.PrintDefaults()
	}
	cfg := &config{}
	host := fs.String("host", "127.0.0.1", "server host")
	port := fs.Int("port", 6379, "server port")
	fs.StringVar(&cfg.dataset, "dataset", "", "what to load (see the list above)")
	fs.Int64Var(&cfg.opts.n, "n", 1_000_000, "members (memory datasets) or keys (sets, hashes, zsets, lists)")
	fs.Int64Var(&cfg.opts.members, "members", 1000, "members of each key (sets, hashes, zsets, lists)")
	fs.IntVar(&cfg.opts.size, "size", 256, "value bytes (hashes, lists)")
	fs.StringVar(&cfg.opts.key, "key", "", "the key, or the prefix of key:N (default: the dataset's name)")
	fs.Uint64Var(&cfg.opts.seed, "seed", 1, "seed of the random members and values")
	fs.BoolVar(&cfg.check, "check", false, "load nothing: count the members of every key the dataset loads (SCARD, HLEN, ZCARD, LLEN) and fail unless each holds what the load put there")
	fs.BoolVar(&cfg.atLeast, "at-least", false, "with -check: fail only if a key holds fewer than -members (lists a benchmark pops from)")
	fs.IntVar(&cfg.conns, "conns", 1, "connections loading at once (the small-* datasets; the others load over one)")
	fs.DurationVar(&cfg.timeout, "timeout", time.Minute, "fail when a reply takes longer than this")
	fs.BoolVar(&cfg.quiet, "quiet", false, "no progress lines")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cfg.addr = net.JoinHostPort(*host, strconv.Itoa(*port))
	return cfg, cfg.validate(fs.NArg())
}

func (cfg *config) validate(extra int) error {
	o := &cfg.opts
	if _, ok := datasets[cfg.dataset]; !ok {
		return fmt.Errorf("unknown -dataset %q; one of:\n%s", cfg.dataset, strings.Join(names(), "\n"))
	}
	switch {
	case extra > 0:
		return errors.New("unexpected arguments")
	case o.n < 1 || o.members < 1:
		return errors.New("-n and -members must be positive")
	case o.size < 0:
		return errors.New("-size must not be negative")
	case cfg.atLeast && !cfg.check:
		return errors.New("-at-least needs -check")
	case cfg.timeout <= 0:
		return errors.New("-timeout must be positive")
	case cfg.conns < 1 || cfg.conns > 1000:
		return errors.New("-conns must be in 1..1000")
	case cfg.conns > 1 && !datasets[cfg.dataset].split:
		return fmt.Errorf("-dataset %s loads over one connection; -conns is for the small-* datasets", cfg.dataset)
	case (cfg.dataset == "small-set" || cfg.dataset == "small-zset") && o.size < 16:
		return errors.New("-size must be at least 16 for small-set and small-zset: shorter random members may collide")
	}
	if o.key == "" {
		o.key = cfg.dataset
	}
	return nil
}

// load runs the dataset's commands and waits for every reply: over -conns connections at once for a
// dataset that splits its keys among them, each connection's replies checked in order.
func load(cfg *config, progress io.Writer) error {
	d := datasets[cfg.dataset]
	conns := max(cfg.conns, 1)
	pipes := make([]*pipe, conns)
	for i := range pipes {
		p, err := dial(cfg.addr, cfg.timeout)
		if err != nil {
			for _, q := range pipes[:i] {
				q.close()
			}
			return err
		}
		pipes[i] = p
	}
	acked := func() int64 {
		var n int64
		for _, p := range pipes {
			n += p.acked.Load()
		}
		return n
	}
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		report(progress, cfg.dataset, d.total(cfg.opts), acked, stop)
	}()
	errs := make(chan error, conns)
	for i, p := range pipes {
		o := cfg.opts
		o.part, o.parts = i, conns
		go func() {
			err := d.load(p, o)
			if cerr := p.close(); err == nil || cerr != nil {
				err = cerr // the reader's error explains a failed write better than the write does
			}
			errs <- err
		}()
	}
	var err error
	for range pipes {
		if e := <-errs; err == nil {
			err = e
		}
	}
	close(stop)
	<-finished
	return err
}

// report prints a progress line a second, and a last one when stop closes; acked counts the members
// answered so far.
func report(w io.Writer, name string, total int64, acked func() int64, stop <-chan struct{}) {
	if w == nil {
		return
	}
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	line := func() {
		n := acked()
		fmt.Fprintf(w, "fill %s: %s of %s members (%.0f%%) in %.1fs\n", name, thousands(n), thousands(total),
			100*float64(n)/float64(max(total, 1)), time.Since(start).Seconds())
	}
	for {
		select {
		case <-tick.C:
			line()
		case <-stop:
			line()
			return
		}
	}
}

// checkSizes counts the members of every key the dataset loads, over one pipelined connection, and
// fails unless each holds what the load put there (with -at-least: at least -members), so that a
// benchmark never measures a server that lost or never got its data.
func checkSizes(cfg *config) error {
	d, o := datasets[cfg.dataset], cfg.opts
	sh := d.shape(o)
	p, err := dial(cfg.addr, cfg.timeout)
	if err != nil {
		return err
	}
	want := sh.each
	if cfg.atLeast {
		want = anyReply
	}
	for c := range sh.keys {
		name := o.key
		if !sh.single {
			name += ":" + strconv.FormatInt(c, 10)
		}
		p.begin(2)
		p.argString(d.count)
		p.argString(name)
		if err := p.endExpect(expect{cmd: d.count + " " + name, want: want}, 0); err != nil {
			p.close()
			return err
		}
	}
	if err := p.close(); err != nil {
		return err
	}
	what := o.key
	if !sh.single {
		what = fmt.Sprintf("%s:0..%d", o.key, sh.keys-1)
	}
	if cfg.atLeast && p.minInt < sh.each {
		return fmt.Errorf("the smallest of %s holds %d, want at least %d", what, p.minInt, sh.each)
	}
	if !cfg.quiet {
		fmt.Fprintf(os.Stderr, "fill: %s checked, the smallest holds %d\n", what, p.minInt)
	}
	return nil
}

// thousands formats n as 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
