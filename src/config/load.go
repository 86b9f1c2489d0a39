package config

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RedisVersion is the Redis release whose configuration behaviour HotKV
// reproduces, and which its start-up errors name as Redis's do.
const RedisVersion = "7.0.15"

// maxIncludeDepth bounds nested include directives; Redis has no bound and
// would overflow its stack on a file that includes itself.
const maxIncludeDepth = 32

// LoadError is a configuration error at start-up. Report gives the exact
// text redis-server prints before exiting with status 1.
type LoadError struct {
	Line int    // 1-based line of the parsed text; 0 when no line is to blame
	Text string // that line, trimmed
	Msg  string
	// Plain errors are not about the content (a file that cannot be opened)
	// and print as Redis's one-line log message instead of the FATAL block.
	Plain bool
}

// Report is the error as redis-server writes it to stderr.
func (e *LoadError) Report() string {
	if e.Plain {
		return e.Msg + "\n"
	}
	var b strings.Builder
	b.WriteString("\n*** FATAL CONFIG FILE ERROR (Redis " + RedisVersion + ") ***\n")
	if e.Line > 0 {
		b.WriteString("Reading the configuration file, at line " + strconv.Itoa(e.Line) + "\n")
		b.WriteString(">>> '" + e.Text + "'\n")
	}
	b.WriteString(e.Msg + "\n")
	return b.String()
}

func (e *LoadError) Error() string { return strings.TrimSpace(e.Report()) }

// Load builds the configuration from the command line, os.Args[1:], the way
// redis-server does: an optional config file first, "-" (first or last) to
// read more configuration from stdin, then --name value... options, which
// are appended as lines after the file so they override it. The returned
// error is a *LoadError; main prints its Report and exits with status 1.
// --help and --version are main's to handle before calling Load.
func Load(args []string) (*Store, error) { return load(args, os.Stdin) }

func load(args []string, stdin io.Reader) (*Store, error) {
	cl := parseCommandLine(args)
	var text strings.Builder
	file := ""
	if cl.file != "" {
		abs, err := filepath.Abs(cl.file)
		if err != nil {
			abs = cl.file
		}
		file = abs
		content, err := readConfig(abs)
		if err != nil {
			return nil, err
		}
		text.WriteString(content)
	}
	if cl.stdin {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, &LoadError{Plain: true, Msg: "Fatal error, can't read config from stdin: " + strerror(err)}
		}
		text.Write(b)
	}
	text.WriteString("\n" + cl.options)
	l := &loader{vals: defaultValues()}
	l.ctx = &setCtx{loading: true, vals: l.vals, file: file}
	if err := l.parse(text.String(), 0); err != nil {
		return nil, err
	}
	if err := l.finish(); err != nil {
		return nil, err
	}
	s := newStore(l.vals, file)
	s.renames, s.users = l.renames, l.users
	return s, nil
}

// readConfig returns a config file's content. A path with glob characters
// reads every match in order and matching nothing is no error (an empty
// conf.d); a directory reads as empty, as fopen+fgets do on Linux.
func readConfig(path string) (string, error) {
	paths := []string{path}
	if strings.ContainsAny(path, "*?[") {
		paths, _ = filepath.Glob(path)
	}
	var b strings.Builder
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return "", &LoadError{Plain: true, Msg: "Fatal error, can't open config file '" + p + "': " + strerror(err)}
		}
		b.Write(data)
	}
	return b.String(), nil
}

// loader applies configuration text to a set of values.
type loader struct {
	vals    []value
	ctx     *setCtx
	renames [][2]string
	users   [][]string
}

// parse applies text line by line; line numbers in errors are relative to
// text, so an included file reports its own line numbers, as in Redis.
func (l *loader) parse(text string, depth int) error {
	for i, raw := range strings.Split(text, "\n") {
		line := strings.Trim(raw, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		fail := func(msg string) error { return &LoadError{Line: i + 1, Text: line, Msg: msg} }
		argv, ok := SplitArgs(line)
		if !ok {
			return fail("Unbalanced quotes in configuration line")
		}
		if len(argv) == 0 {
			continue
		}
		if e, ok := lookupEntry(argv[0]); ok {
			if msg := l.directive(e, argv); msg != "" {
				return fail(msg)
			}
			continue
		}
		if err := l.other(argv, depth); err != nil {
			var le *LoadError
			if errors.As(err, &le) {
				return err
			}
			return fail(err.Error())
		}
	}
	return nil
}

var errBadDirective = errors.New("Bad directive or wrong number of arguments")

// CheckRenames, when set (by the server, which knows the command table), checks the config's
// rename-command lines so far, the last one just read: its error fails loading at that line, as
// Redis's "No such command in rename-command" does.
var CheckRenames func(pairs [][2]string) error

// directive applies a line naming a table directive and returns Redis's
// error text, or "".
func (l *loader) directive(e entry, argv []string) string {
	d := table[e.dir]
	if !d.isMulti() && len(argv) != 2 {
		return "wrong number of arguments"
	}
	args := argv[1:]
	if d.isMulti() && len(argv) == 2 && argv[1] != "" {
		// `--bind "a b"` and `save "900 1"` arrive as one quoted argument.
		args, _ = SplitArgs(argv[1])
	}
	v, msg := d.setArgs(l.ctx, l.vals[e.dir], args)
	if msg == "" {
		l.vals[e.dir] = v
	}
	return msg
}

// deprecated directives Redis still accepts and ignores, with their
// accepted argument counts (directive name included).
var deprecated = map[string][2]int{
	"list-max-ziplist-entries": {2, 2},
	"list-max-ziplist-value":   {2, 2},
	"lua-replicate-commands":   {2, 2},
}

// other handles the lines that are not table directives.
func (l *loader) other(argv []string, depth int) error {
	name := asciiLower(argv[0])
	if r, ok := deprecated[name]; ok && len(argv) >= r[0] && len(argv) <= r[1] {
		return nil
	}
	switch {
	case name == "include" && len(argv) == 2:
		if depth >= maxIncludeDepth {
			return errors.New("include nesting too deep")
		}
		content, err := readConfig(argv[1])
		if err != nil {
			return err
		}
		return l.parse(content, depth+1)
	case name == "rename-command" && len(argv) == 3:
		l.renames = append(l.renames, [2]string{argv[1], argv[2]})
		if CheckRenames != nil {
			return CheckRenames(l.renames) // its message is the line's FATAL CONFIG FILE ERROR
		}
	case name == "user" && len(argv) >= 2:
		l.users = append(l.users, append([]string(nil), argv[1:]...))
	default:
		return errBadDirective
	}
	return nil
}

// finish runs Redis's checks of the whole configuration.
func (l *loader) finish() error {
	if logfile := l.vals[mustDir("logfile")].s; logfile != "" {
		f, err := os.OpenFile(logfile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
		if err != nil {
			return &LoadError{Msg: "Can't open the log file: " + strerror(err)}
		}
		_ = f.Close()
	}
	if l.vals[mustDir("cluster-enabled")].n != 0 && l.vals[mustDir("replicaof")].s != "" {
		return &LoadError{Msg: "replicaof directive not allowed in cluster mode"}
	}
	return nil
}
