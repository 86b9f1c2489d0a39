// Command hotkv-benchmark is a load generator for Redis-protocol servers, in the spirit of
// memtier_benchmark: connections send pipelined batches of command templates over a key range and
// every reply is parsed and checked against what its template expects (--expect, or inferred from
// the command: a GET must find a value, a SET answer +OK); an error reply or an unexpected one fails
// the run, where redis-benchmark and memtier count both as successes. It prints a progress line a second on stderr and a summary on stdout, and writes the
// whole result as JSON with --json.
//
//	hotkv-benchmark --port 6379 --pipeline 30 --keys 1000000 --prefill \
//	    --command 'SET key:__key__ __data__' --command 'GET key:__key__' --expect data --ratio 1:10 --duration 10s
//
// Exit status: 0 on success, 1 when the run failed (the error is printed, and recorded in the JSON),
// 2 for bad flags.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// commandFlags collects the repeated --command flags and the --expect that follows each.
type commandFlags struct {
	commands []string
	expects  []string // expects[i] is commands[i]'s; "" infers it from the command's name
}

type commandFlag struct{ *commandFlags }

func (c commandFlag) String() string {
	if c.commandFlags == nil {
		return ""
	}
	return strings.Join(c.commands, "; ")
}

func (c commandFlag) Set(s string) error {
	c.commands, c.expects = append(c.commands, s), append(c.expects, "")
	return nil
}

// expectFlag attaches an --expect to the --command before it.
type expectFlag struct{ *commandFlags }

func (e expectFlag) String() string { return "" }

func (e expectFlag) Set(s string) error {
	last := len(e.commands) - 1
	switch {
	case last < 0:
		return errors.New("--expect must follow the --command whose replies it describes")
	case e.expects[last] != "":
		return fmt.Errorf("--command %q has two --expect", e.commands[last])
	case s == "":
		return errors.New("--expect is empty")
	}
	e.expects[last] = s
	return nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hotkv-benchmark:", err)
		os.Exit(2)
	}
	res, err := run(cfg)
	if res != nil {
		if err != nil {
			res.Error = err.Error()
		}
		res.printSummary(os.Stdout)
		if cfg.jsonPath != "" {
			if jerr := res.writeJSON(cfg.jsonPath); jerr != nil && err == nil {
				err = jerr
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hotkv-benchmark: FAILED:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("hotkv-benchmark", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{progress: stderr}
	cmds := &commandFlags{}
	var keys int64
	fs.StringVar(&cfg.host, "host", "127.0.0.1", "server host")
	fs.IntVar(&cfg.port, "port", 6379, "server port")
	fs.IntVar(&cfg.threads, "threads", 1, "cores the generator uses (GOMAXPROCS)")
	fs.IntVar(&cfg.clients, "clients", 50, "connections per thread")
	fs.IntVar(&cfg.pipeline, "pipeline", 1, "requests per batch; a connection sends a batch in one write and reads all its replies")
	fs.Int64Var(&keys, "keys", 1_000_000, "key range: __key__ is a number in [0, keys)")
	fs.IntVar(&cfg.keyWidth, "key-width", 0, "zero-pad __key__ to this many digits (12 gives redis-benchmark -r's key names)")
	fs.StringVar(&cfg.dist, "distribution", "uniform", "key distribution: uniform, sequential or zipf")
	fs.Float64Var(&cfg.zipfS, "zipf-s", 0.99, "zipf exponent s > 0 (key k has weight 1/(k+1)^s)")
	fs.IntVar(&cfg.dataSize, "data-size", 256, "bytes of __data__")
	fs.BoolVar(&cfg.prefill, "prefill", false, "first run --prefill-command once for every key of the range")
	fs.BoolVar(&cfg.prefillOnly, "prefill-only", false, "prefill, then exit without a run")
	fs.StringVar(&cfg.prefillCommand, "prefill-command", "SET key:__key__ __data__", "the command that loads one key")
	fs.IntVar(&cfg.prefillPipeline, "prefill-pipeline", 64, "pipeline depth of the prefill")
	fs.DurationVar(&cfg.duration, "duration", 0, "how long to run (default 10s unless --requests)")
	fs.Int64Var(&cfg.requests, "requests", 0, "total requests over all connections, instead of --duration")
	fs.Var(commandFlag{cmds}, "command", "command template with __key__, __data__ and __rand__ (repeatable; default SET and GET 1:10)")
	fs.Var(expectFlag{cmds}, "expect", "what every reply to the --command before it must be: any, value, nil, ok, simple:TEXT,\n"+
		"bulk[:N], data, double, int[:N|:>=N|:<=N|:A..B], array[:N|:>=N|:A..B][:ELEMENT] (default: inferred from the command's name)")
	fs.StringVar(&cfg.prefillExpect, "prefill-expect", "", "what every reply to --prefill-command must be (default: inferred)")
	fs.BoolVar(&cfg.allowMisses, "allow-misses", false, "count misses (a null, a null element, 0 for an integer, an empty array) as successes")
	fs.StringVar(&cfg.ratio, "ratio", "", "weights of the --command flags, as a:b:c (default equal)")
	fs.BoolVar(&cfg.inOrder, "in-order", false, "every connection sends the --command schedule from its first command, in order\n"+
		"(a sequence: --command MULTI --command ... --command EXEC with --pipeline a multiple of its length)")
	fs.IntVar(&cfg.resp, "resp", 2, "protocol: 2, or 3 (HELLO 3 on every connection)")
	fs.StringVar(&cfg.jsonPath, "json", "", "write the result to this JSON file")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "fail when no reply arrives for this long")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the key generators and the data")
	fs.StringVar(&cfg.linesPath, "lines", "", "a file whose non-blank lines __line__ draws from, one at random per occurrence")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *quiet {
		cfg.progress = nil
	}
	cfg.commands, cfg.expects = cmds.commands, cmds.expects
	if len(cfg.commands) == 0 {
		cfg.commands = []string{"SET key:__key__ __data__", "GET key:__key__"}
		if cfg.ratio == "" {
			cfg.ratio = "1:10"
		}
	}
	if keys <= 0 {
		return nil, errors.New("--keys must be positive")
	}
	cfg.keys = uint64(keys)
	return cfg, cfg.check()
}

// check rejects settings that cannot run, and fills the default duration.
func (cfg *config) check() error {
	switch {
	case cfg.threads < 1 || cfg.clients < 1:
		return errors.New("--threads and --clients must be at least 1")
	case cfg.pipeline < 1 || cfg.pipeline > 1_000_000 || cfg.prefillPipeline < 1 || cfg.prefillPipeline > 1_000_000:
		return errors.New("--pipeline and --prefill-pipeline must be in 1..1000000")
	case cfg.dataSize < 0:
		return errors.New("--data-size must not be negative")
	case cfg.keyWidth < 0 || cfg.keyWidth > 1000:
		return errors.New("--key-width must be in 0..1000")
	case cfg.resp != 2 && cfg.resp != 3:
		return errors.New("--resp must be 2 or 3")
	case cfg.duration < 0 || cfg.requests < 0:
		return errors.New("--duration and --requests must not be negative")
	case cfg.duration > 0 && cfg.requests > 0:
		return errors.New("give --duration or --requests, not both")
	case cfg.timeout <= 0:
		return errors.New("--timeout must be positive")
	case cfg.dist != "uniform" && cfg.dist != "sequential" && cfg.dist != "zipf":
		return fmt.Errorf("unknown --distribution %q (uniform, sequential or zipf)", cfg.dist)
	case cfg.dist == "zipf" && !(cfg.zipfS > 0):
		return errors.New("--zipf-s must be positive")
	}
	if cfg.prefillOnly {
		cfg.prefill = true
	}
	if cfg.linesPath != "" {
		if err := cfg.loadLines(); err != nil {
			return err
		}
	}
	pre, err := cfg.compilePrefill()
	if err != nil {
		return err
	}
	tpls, _, err := cfg.compile()
	if err != nil {
		return err
	}
	for _, t := range append(tpls, pre) {
		if t.lines > 0 && len(cfg.lines) == 0 {
			return fmt.Errorf("%q uses __line__: give --lines FILE", t.text)
		}
	}
	if cfg.duration == 0 && cfg.requests == 0 {
		cfg.duration = 10 * time.Second
	}
	return nil
}

// loadLines reads --lines: every non-blank line, without its line end.
func (cfg *config) loadLines() error {
	data, err := os.ReadFile(cfg.linesPath)
	if err != nil {
		return fmt.Errorf("--lines: %w", err)
	}
	cfg.lines = cfg.lines[:0]
	for _, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if len(bytes.TrimSpace(l)) > 0 {
			cfg.lines = append(cfg.lines, l)
		}
	}
	if len(cfg.lines) == 0 {
		return fmt.Errorf("--lines %s has no lines", cfg.linesPath)
	}
	return nil
}
