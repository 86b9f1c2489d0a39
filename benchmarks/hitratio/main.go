// Command hitratio measures a cache's hit ratio on synthetic traces: Zipf requests over a million
// keys, or Zipf requests interrupted by sequential scans of fresh keys. Each request is a GET and,
// on a miss, a SET of a -value byte value, as a cache-aside client does. The ratio is counted
// after -warmup requests.
//
// With -addr it plays the trace against a live server, pipelined (-pipeline GETs, then the SETs
// of their misses), after FLUSHALL and CONFIG SET of -maxmemory and -policy (empty: leave the
// server's), printing progress every second and, at the end, the server's used_memory, key count
// and evicted_keys. Without -addr it runs in-process models of Redis's sampled allkeys-lru and
// allkeys-lfu and HotKV's sampled allkeys-tinylfu on a cache of -capacity keys.
//
//	hitratio -trace zipf -s 0.99 -capacity 90000                  # the three models
//	hitratio -trace scan -s 0.99 -addr 127.0.0.1:7120 -maxmemory 100mb -policy allkeys-lru
//
// Output: one line per policy, "RESULT key=value ...", for benchmarks/hitratio/run.sh to collect.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

type config struct {
	trace     string
	s         float64
	keys      int
	requests  int64
	warmup    int64
	scanFrac  float64
	scanLen   int
	seed      uint64
	value     int
	addr      string
	pipeline  int
	maxmemory string
	policy    string
	policies  string
	sim       simConfig
	label     string
}

func parseFlags(args []string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("hitratio", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.trace, "trace", "zipf", "zipf, or scan (Zipf plus one-shot sequential scans)")
	fs.Float64Var(&c.s, "s", 0.99, "Zipf exponent")
	fs.IntVar(&c.keys, "keys", 1_000_000, "distinct Zipf keys")
	fs.Int64Var(&c.requests, "requests", 4_000_000, "requests in all, warm-up included")
	fs.Int64Var(&c.warmup, "warmup", 1_000_000, "requests before counting")
	fs.Float64Var(&c.scanFrac, "scan-frac", 0.4, "scan: fraction of requests that are scan requests")
	fs.IntVar(&c.scanLen, "scan-len", 20_000, "scan: fresh keys per scan")
	fs.Uint64Var(&c.seed, "seed", 1, "trace seed")
	fs.IntVar(&c.value, "value", 1000, "bytes of each SET value")
	fs.StringVar(&c.addr, "addr", "", "host:port of a live server (empty: in-process models)")
	fs.IntVar(&c.pipeline, "pipeline", 64, "live: GETs per round trip")
	fs.StringVar(&c.maxmemory, "maxmemory", "", "live: CONFIG SET maxmemory first")
	fs.StringVar(&c.policy, "policy", "", "live: CONFIG SET maxmemory-policy first")
	fs.StringVar(&c.label, "label", "", "live: the server's name in the RESULT line")
	fs.StringVar(&c.policies, "policies", "lru,lfu,tinylfu", "models: which to run")
	fs.IntVar(&c.sim.capacity, "capacity", 90_000, "models: keys the cache holds")
	fs.IntVar(&c.sim.samples, "samples", 5, "models: maxmemory-samples")
	fs.Float64Var(&c.sim.rate, "rate", 50_000, "models: requests a second, for Redis's LRU and LFU clocks")
	fs.Float64Var(&c.sim.logFactor, "lfu-log-factor", 10, "models: lfu-log-factor")
	fs.Int64Var(&c.sim.decayMins, "lfu-decay-time", 1, "models: lfu-decay-time (minutes)")
	fs.BoolVar(&c.sim.tieAdmit, "tie-admit", true, "models: tinylfu admits a new key tying its victim")
	fs.StringVar(&c.sim.pool, "tinylfu-pool", "stale", "models: tinylfu's pool: stale (Redis's), fresh (rescored at each eviction), none")
	fs.IntVar(&c.sim.sketchMul, "sketch-mul", 4, "models: tinylfu's sketch is sized for this many times -capacity keys (and ages as slowly)")
	fs.BoolVar(&c.sim.tieNewer, "tie-newer", false, "models: tinylfu evicts the newer of two equal estimates")
	fs.Float64Var(&c.sim.window, "window", 0, "models: tinylfu with a W-TinyLFU window of this share of -capacity (e.g. 0.01)")
	fs.BoolVar(&c.sim.touchSet, "touch-set", false, "models: tinylfu's SET after a miss touches the sketch again")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.sim.seed = c.seed
	switch {
	case c.trace != "zipf" && c.trace != "scan":
		return c, fmt.Errorf("-trace %q: zipf or scan", c.trace)
	case c.keys < 1 || c.requests < 1 || c.warmup < 0 || c.warmup >= c.requests:
		return c, fmt.Errorf("need keys >= 1 and 0 <= warmup < requests")
	case c.s <= 0:
		return c, fmt.Errorf("-s must be above 0")
	case c.scanFrac <= 0 || c.scanFrac >= 1 || c.scanLen < 1:
		return c, fmt.Errorf("-scan-frac must be in (0, 1) and -scan-len at least 1")
	case c.sim.capacity < 1 || c.sim.samples < 1 || c.sim.rate <= 0:
		return c, fmt.Errorf("-capacity, -samples and -rate must be positive")
	case c.pipeline < 1 || c.value < 0:
		return c, fmt.Errorf("-pipeline must be positive, -value not negative")
	}
	return c, nil
}

func (c config) newTrace() trace {
	z := newZipf(c.keys, c.s, c.seed)
	if c.trace == "scan" {
		return newScanned(z, c.keys, c.scanFrac, c.scanLen)
	}
	return z
}

func (c config) describe() string {
	d := fmt.Sprintf("trace=%s s=%g keys=%d requests=%d warmup=%d", c.trace, c.s, c.keys, c.requests, c.warmup)
	if c.trace == "scan" {
		d += fmt.Sprintf(" scan-frac=%g scan-len=%d", c.scanFrac, c.scanLen)
	}
	return d
}

func main() {
	c, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hitratio:", err)
		os.Exit(2)
	}
	if c.addr != "" {
		err = runLive(c, os.Stdout, os.Stderr)
	} else {
		err = runModels(c, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hitratio:", err)
		os.Exit(1)
	}
}

// runModels plays one trace through each model in turn (the same requests for each).
func runModels(c config, out, progress io.Writer) error {
	for _, name := range strings.Split(c.policies, ",") {
		pol, err := parsePolicy(name)
		if err != nil {
			return err
		}
		r := simulate(c, pol, progress)
		fmt.Fprintf(out, "RESULT model=%s policy=allkeys-%s capacity=%d %s hit=%.4f zipf-hit=%.4f evicted=%d rejected=%d\n",
			"sim", pol, c.sim.capacity, c.describe(), r.ratio(), r.zipfRatio(), r.evicted, r.rejected)
	}
	return nil
}

func simulate(c config, pol policy, progress io.Writer) simResult {
	m := newModel(pol, c.sim)
	t := c.newTrace()
	r := simResult{policy: pol}
	tick := time.Now()
	for i := int64(0); i < c.requests; i++ {
		id, scan := t.next()
		hit := m.access(id)
		if i < c.warmup {
			continue
		}
		r.requests++
		if !scan {
			r.zipfN++
		}
		if hit {
			r.hits++
			if !scan {
				r.zipfHits++
			}
		}
		if progress != nil && time.Since(tick) > time.Second {
			tick = time.Now()
			fmt.Fprintf(progress, "sim %s: %d/%d requests, hit %.4f\n", pol, i+1, c.requests, r.ratio())
		}
	}
	r.evicted, r.rejected = m.evicted, m.rejected
	return r
}
