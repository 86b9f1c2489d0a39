// Command hotkv-load loads a file of commands or data into HotKV (or Redis) as fast as the server
// takes it: several connections with many commands in flight on each, a progress line on stderr,
// and a final report of the errors by message with the input lines that caused them.
//
//	hotkv-load -p 6379 cmds.resp                       # RESP (what redis-cli --pipe reads) or inline commands
//	hotkv-load -p 6379 -c 4 --key drop drop.txt         # an IP list: IPSET.ADD drop [TTL s] [NOMATCH] [LABEL l] entry
//	hotkv-load -p 6379 --key geo --entries 100 geo.txt   # 100 entries per IPSET.ADD (… LABELS e1 l1 e2 l2 …)
//	hotkv-load --format ip --cmd 'SADD hosts {entry}' hosts.txt.gz   # the same list into a Redis SET
//	hotkv-load --format csv --cmd 'HSET user:{1} name {2}' users.csv
//	hotkv-load --format ndjson --cmd 'SET k:{id} {line}' docs.ndjson
//	hotkv-load --replace drop --key drop drop.txt       # load into a staging key, then RENAME it over drop
//
// Inputs: RESP arrays and inline commands (quotes as redis-cli reads them), CSV records, NDJSON
// objects, IP lists (comments after # or ;, "entry [label]", "entry,label", "lo,hi,label" with IPv4
// as dotted or decimal, ipset save's create/add lines); gzip is detected and read through. An input
// of "-" (the default) is stdin.
//
// A connection lost mid-load is dialled again (--retries times in a row) and the commands it had
// sent without a reply are sent again when their verb is idempotent (SET, SADD, ZADD without INCR,
// HSET, DEL, IPSET.ADD, …); others are reported as errors, since they may or may not have run.
//
// Exit status: 0 when every command succeeded, 1 when some input lines or commands failed (the
// report lists them), 2 when the load could not run (bad flags, unreadable input, no server).
package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

type config struct {
	host, user, pass string
	port, db         int
	conns, inflight  int
	batch            int
	entries          int
	format, cmd, key string
	header           bool
	replace          string
	retries          int
	timeout          time.Duration
	progress         time.Duration
	quiet            bool
	maxLines         int
	input            string
}

func main() {
	os.Exit(mainErr(os.Args[1:], os.Stdin, os.Stderr))
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("hotkv-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	fs.StringVar(&c.host, "h", "127.0.0.1", "server host")
	fs.IntVar(&c.port, "p", 6379, "server port")
	fs.StringVar(&c.user, "user", "", "ACL user (with -a)")
	fs.StringVar(&c.pass, "a", "", "password: AUTH on every connection")
	fs.IntVar(&c.db, "n", 0, "database number (SELECT)")
	fs.IntVar(&c.conns, "c", 1, "connections")
	fs.IntVar(&c.inflight, "inflight", 1024, "commands sent ahead of their replies, per connection")
	fs.IntVar(&c.batch, "batch", 128, "commands per write (at most --inflight)")
	fs.IntVar(&c.entries, "entries", 1, "IP lists without --cmd: entries per IPSET.ADD (consecutive lines with the same TTL, NOMATCH\n"+
		"and label-or-not); a failed one is sent again one line per command")
	fs.StringVar(&c.format, "format", "auto", "input: auto, resp (RESP and inline commands), csv, ndjson or ip (auto: ip with --key, else by file extension, else resp)")
	fs.StringVar(&c.cmd, "cmd", "", "command template of csv, ndjson and ip input: {1} {2}… (CSV fields), {name} (JSON fields),\n"+
		"{key} {entry} {label} {ttl} {lo} {hi} {lo_int} {hi_int} (IP lists), {line}; {x?} is dropped when empty")
	fs.StringVar(&c.key, "key", "", "the key of an IP list (IPSET.ADD key …, or {key})")
	fs.BoolVar(&c.header, "header", false, "the CSV's first record is a header: skip it")
	fs.StringVar(&c.replace, "replace", "", "load into a staging key in place of this key, then RENAME the staging key over it (not when anything failed)")
	fs.IntVar(&c.retries, "retries", 5, "reconnections in a row before giving up")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "fail a connection when no reply arrives for this long")
	fs.DurationVar(&c.progress, "progress", time.Second, "progress line interval (0: none)")
	fs.BoolVar(&c.quiet, "q", false, "no progress line")
	fs.IntVar(&c.maxLines, "error-lines", 20, "input line numbers listed per error message")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch fs.NArg() {
	case 0:
		c.input = "-"
	case 1:
		c.input = fs.Arg(0)
	default:
		return nil, errors.New("give one input file (or - for stdin)")
	}
	switch {
	case c.conns < 1 || c.conns > 1024:
		return nil, errors.New("-c must be in 1..1024")
	case c.inflight < 1 || c.inflight > 1<<20:
		return nil, errors.New("--inflight must be in 1..1048576")
	case c.batch < 1 || c.batch > 1<<20:
		return nil, errors.New("--batch must be in 1..1048576")
	case c.entries < 1 || c.entries > 100000:
		return nil, errors.New("--entries must be in 1..100000")
	case c.retries < 0:
		return nil, errors.New("--retries must not be negative")
	case c.timeout <= 0:
		return nil, errors.New("--timeout must be positive")
	case c.maxLines < 0:
		return nil, errors.New("--error-lines must not be negative")
	}
	if c.format == "auto" {
		c.format = guessFormat(c.input, c.key)
	}
	switch c.format {
	case "resp", "inline":
		c.format = "resp"
		if c.cmd != "" {
			return nil, errors.New("--cmd applies to csv, ndjson and ip input, not resp")
		}
	case "csv", "ndjson":
		if c.cmd == "" {
			return nil, fmt.Errorf("%s input needs --cmd", c.format)
		}
	case "ip":
		if c.key == "" && c.replace == "" && (c.cmd == "" || strings.Contains(c.cmd, "{key}")) {
			return nil, errors.New("ip input needs --key (or --replace)")
		}
	default:
		return nil, fmt.Errorf("unknown --format %q (resp, csv, ndjson or ip)", c.format)
	}
	if c.cmd != "" {
		if _, err := parseTemplate(c.cmd); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func guessFormat(path, key string) string {
	if key != "" {
		return "ip"
	}
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".gz")
	switch filepath.Ext(base) {
	case ".csv":
		return "csv"
	case ".ndjson", ".jsonl":
		return "ndjson"
	case ".netset", ".ipset":
		return "ip"
	}
	return "resp"
}

// mainErr runs the tool and returns its exit status.
func mainErr(args []string, stdin io.Reader, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "hotkv-load:", err)
		return 2
	}
	return load(cfg, stdin, stderr, nil)
}

// open returns the input, ungzipped, its counter of compressed bytes read and its size (0: unknown).
func open(path string, stdin io.Reader) (io.Reader, *countingReader, int64, func(), error) {
	var f io.Reader = stdin
	var size int64
	closeFn := func() {}
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return nil, nil, 0, nil, err
		}
		if st, err := file.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		f, closeFn = file, func() { file.Close() }
	}
	cr := &countingReader{r: f}
	br := bufio.NewReaderSize(cr, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			closeFn()
			return nil, nil, 0, nil, err
		}
		return zr, cr, size, closeFn, nil
	}
	return br, cr, size, closeFn, nil
}

func newSource(cfg *config, r io.Reader, key string) source {
	var tpl *cmdTemplate
	if cfg.cmd != "" {
		tpl, _ = parseTemplate(cfg.cmd)
	}
	switch cfg.format {
	case "csv":
		return newCSVSource(r, tpl, cfg.header)
	case "ndjson":
		return &ndjsonSource{br: bufio.NewReaderSize(r, 1<<16), tpl: tpl}
	case "ip":
		return &ipSource{br: bufio.NewReaderSize(r, 1<<16), tpl: tpl, key: key, per: cfg.entries}
	}
	return newRESPSource(r)
}

// load runs one load; hook (tests) sees every new connection.
func load(cfg *config, stdin io.Reader, stderr io.Writer, d *dialer) int {
	start := time.Now()
	in, counter, size, closeIn, err := open(cfg.input, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "hotkv-load:", err)
		return 2
	}
	defer closeIn()
	if d == nil {
		d = &dialer{}
	}
	d.addr = cfgAddr(cfg)
	d.user, d.pass, d.db, d.timeout, d.retries = cfg.user, cfg.pass, cfg.db, cfg.timeout, cfg.retries
	if d.backoff == 0 {
		d.backoff = 100 * time.Millisecond
	}
	key, staging := cfg.key, ""
	if cfg.replace != "" {
		staging = fmt.Sprintf("%s:hotkv-load-staging:%d", cfg.replace, os.Getpid())
		if key == cfg.replace || key == "" {
			key = staging
		}
		if msg, err := oneCommand(d, "DEL", staging); err != nil || msg != "" {
			fmt.Fprintln(stderr, "hotkv-load: cannot prepare the staging key:", err, msg)
			return 2
		}
	} else {
		// Fail early, with exit status 2, when the server cannot be reached at all.
		c, _, err := d.dial()
		if err != nil {
			fmt.Fprintln(stderr, "hotkv-load:", err)
			return 2
		}
		c.Close()
	}
	st := &stats{maxLines: cfg.maxLines}
	src := newSource(cfg, in, key)
	per := min(cfg.batch, cfg.inflight)
	depth := max(1, cfg.inflight/per)
	free := make(chan *batch, cfg.conns*(depth+3))
	// startConns runs the connections on ch; its result waits for them and gives the first error.
	startConns := func(ch chan *batch) func() error {
		var wg sync.WaitGroup
		connErrs := make([]error, cfg.conns)
		for i := range cfg.conns {
			wg.Add(1)
			c := &conn{d: d, st: st, depth: depth, in: ch, free: free}
			go func() {
				defer wg.Done()
				connErrs[i] = c.run()
			}()
		}
		return func() error {
			wg.Wait()
			for _, e := range connErrs {
				if e != nil {
					return e
				}
			}
			return nil
		}
	}
	ch := make(chan *batch, cfg.conns*2)
	wait := startConns(ch)
	stopProgress := startProgress(cfg, stderr, st, counter, size, start)
	var inputErr error
	var lineErrs int64
	b := &batch{}
	for {
		cmd, err := src.next()
		if err != nil {
			var le *lineError
			if errors.As(err, &le) {
				st.fail(le.msg, le.line)
				lineErrs++
				continue
			}
			if err != io.EOF {
				inputErr = err
			}
			break
		}
		if staging != "" && cfg.format == "resp" && len(cmd.args) > 1 && string(cmd.args[1]) == cfg.replace {
			cmd.args[1] = []byte(staging)
		}
		b.add(cmd.args, cmd.line, cmd.subs)
		if b.n() >= per || len(b.buf) >= 1<<20 {
			ch <- b
			select {
			case b = <-free:
			default:
				b = &batch{}
			}
		}
	}
	if b.n() > 0 {
		ch <- b
	}
	close(ch)
	connErr := wait()
	// The lines of grouped commands that failed go again one per command: the good ones load and
	// each bad one is reported at its line.
	if len(st.split) > 0 && connErr == nil {
		ch = make(chan *batch, cfg.conns*2)
		wait = startConns(ch)
		b = &batch{}
		for _, sc := range st.split {
			b.addEncoded(sc.enc, sc.line)
			if b.n() >= per {
				ch <- b
				b = &batch{}
			}
		}
		if b.n() > 0 {
			ch <- b
		}
		close(ch)
		connErr = wait()
	}
	stopProgress()
	elapsed := time.Since(start)
	nerr := st.errorCount()
	status := 0
	if nerr > 0 {
		status = 1
	}
	renamed := ""
	if staging != "" {
		if nerr == 0 && inputErr == nil && connErr == nil {
			msg, took, err := timedCommand(d, "RENAME", staging, cfg.replace)
			switch {
			case err != nil:
				connErr = err
			case msg == "ERR no such key": // nothing loaded: the key becomes empty, which is no key
				msg, err = oneCommand(d, "DEL", cfg.replace)
				if err != nil || msg != "" {
					connErr = fmt.Errorf("DEL %s: %v %s", cfg.replace, err, msg)
				}
				renamed = fmt.Sprintf("; nothing loaded, %s deleted", cfg.replace)
			case msg != "":
				connErr = fmt.Errorf("RENAME %s %s: %s", staging, cfg.replace, msg)
			default:
				renamed = fmt.Sprintf("; RENAMEd %s over %s in %.3f ms", staging, cfg.replace, float64(took)/1e6)
			}
		} else {
			oneCommand(d, "DEL", staging)
			renamed = fmt.Sprintf("; %s left unchanged (staging key deleted)", cfg.replace)
		}
	}
	replied := st.replied.Load()
	rate := float64(replied) / elapsed.Seconds()
	split := ""
	if st.splits > 0 {
		split = fmt.Sprintf(", %d grouped commands failed and went again one line per command", st.splits)
	}
	fmt.Fprintf(stderr, "hotkv-load: %d commands in %.3fs (%s/s), %d errors (%d bad input lines), %d sent again after a lost connection%s%s\n",
		replied, elapsed.Seconds(), human(rate), nerr, lineErrs, st.retried.Load(), split, renamed)
	st.report(stderr)
	if inputErr != nil {
		fmt.Fprintln(stderr, "hotkv-load: input:", inputErr)
		return 2
	}
	if connErr != nil {
		fmt.Fprintln(stderr, "hotkv-load: server:", connErr)
		return 2
	}
	return status
}

func cfgAddr(cfg *config) string {
	if strings.Contains(cfg.host, ":") {
		return "[" + cfg.host + "]:" + strconv.Itoa(cfg.port)
	}
	return cfg.host + ":" + strconv.Itoa(cfg.port)
}

// oneCommand sends one command on a fresh connection: msg is its error reply, if any.
func oneCommand(d *dialer, args ...string) (string, error) {
	msg, _, err := timedCommand(d, args...)
	return msg, err
}

// timedCommand is oneCommand that also returns the time from writing the command to reading its
// reply (the dial not included).
func timedCommand(d *dialer, args ...string) (string, time.Duration, error) {
	c, rd, err := d.dial()
	if err != nil {
		return "", 0, err
	}
	defer c.Close()
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	c.SetWriteDeadline(time.Now().Add(d.timeout))
	t0 := time.Now()
	if _, err := c.Write(appendCommand(nil, bs)); err != nil {
		return "", 0, err
	}
	msg, err := readReply(rd)
	return msg, time.Since(t0), err
}

func startProgress(cfg *config, w io.Writer, st *stats, counter *countingReader, size int64, start time.Time) func() {
	if cfg.quiet || cfg.progress <= 0 {
		return func() {}
	}
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(cfg.progress)
		defer t.Stop()
		var last int64
		lastAt := start
		for {
			select {
			case <-done:
				if tty {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			case now := <-t.C:
				n := st.replied.Load()
				rate := float64(n-last) / now.Sub(lastAt).Seconds()
				last, lastAt = n, now
				line := fmt.Sprintf("%d done, %s/s, %d errors", n, human(rate), st.errorCount())
				if size > 0 {
					read := min(counter.n, size) // bufio reads ahead; close enough
					frac := float64(read) / float64(size)
					eta := "?"
					if frac > 0 {
						eta = (time.Duration(float64(now.Sub(start)) * (1 - frac) / frac)).Round(time.Second).String()
					}
					line = fmt.Sprintf("%.1f%%, %s, ETA %s", 100*frac, line, eta)
				}
				if tty {
					fmt.Fprintf(w, "\r\033[K%s", line)
				} else {
					fmt.Fprintln(w, line)
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func human(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}
