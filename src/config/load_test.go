package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// inDir writes files into a fresh directory and makes it the working
// directory for the rest of the test.
func inDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return dir
}

func TestLoadFile(t *testing.T) {
	dir := inDir(t, map[string]string{
		"hotkv.conf": "# a comment\n" +
			"   \n" +
			"PORT 7000\n" +
			"  maxmemory 100mb  \r\n" +
			`requirepass "p w\"x\x41"` + "\n" +
			`masterauth 'it\'s'` + "\n" +
			"save 900 1\n" +
			"save 300 10\n" +
			"bind \"127.0.0.1 ::1\"\n" +
			"slave-read-only no\n" +
			"include inc/*.conf\n" +
			"include none/*.conf\n" +
			"list-max-ziplist-entries 5\n" +
			"rename-command DEBUG \"\"\n" +
			"user alice on >pw ~* +@all\n",
		"inc/a.conf": "hz 20\n",
		"inc/b.conf": "hz 30\ntimeout 5\n",
	})
	s, err := load([]string{"hotkv.conf", "--timeout", "6", "--save", "--loglevel", "warning"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Current()
	if c.Port != 7000 || c.MaxMemory != 100<<20 || c.RequirePass != `p w"xA` || c.Hz != 30 ||
		c.Timeout != 6 || len(c.Save) != 0 || c.LogLevel != LogWarning || c.ReplicaReadOnly ||
		strings.Join(c.Bind, ",") != "127.0.0.1,::1" {
		t.Errorf("loaded %+v", c)
	}
	if got := s.String("masterauth"); got != "it's" {
		t.Errorf("masterauth %q", got)
	}
	if s.ConfigFile() != filepath.Join(dir, "hotkv.conf") {
		t.Errorf("ConfigFile %q", s.ConfigFile())
	}
	if r := s.Renames(); len(r) != 1 || r[0] != [2]string{"DEBUG", ""} {
		t.Errorf("renames %q", r)
	}
	if u := s.Users(); len(u) != 1 || strings.Join(u[0], " ") != "alice on >pw ~* +@all" {
		t.Errorf("users %q", u)
	}
}

func TestLoadSaveLines(t *testing.T) {
	inDir(t, map[string]string{
		"a.conf": "save 900 1\nsave 300 2\n",
		"b.conf": "save 900 1\nsave 300 2\nsave \"\"\n",
		"c.conf": "port 1\n",
	})
	f := func(want string, args ...string) {
		t.Helper()
		s, err := load(args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.String("save"); got != want {
			t.Errorf("%q: save %q, want %q", args, got, want)
		}
	}
	f("900 1 300 2", "a.conf")
	f("", "b.conf")
	f("3600 1 300 100 60 10000", "c.conf")
	f("100 1", "c.conf", "--save", "100 1")
	f("100 1 50 2", "c.conf", "--save", "100", "1", "50", "2")
	f("", "a.conf", "--save", "")
	f("", "a.conf", "--save")
	f("", "--save", "--port", "5")
}

func TestLoadStdin(t *testing.T) {
	inDir(t, map[string]string{"f.conf": "port 5\nhz 5\n"})
	s, err := load([]string{"f.conf", "--hz", "7", "-"}, strings.NewReader("hz 6\ntimeout 9\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Current(); c.Port != 5 || c.Hz != 7 || c.Timeout != 9 {
		t.Errorf("port %d hz %d timeout %d", c.Port, c.Hz, c.Timeout)
	}
	s, err = load([]string{"-"}, strings.NewReader("hz 6"))
	if err != nil || s.Current().Hz != 6 || s.ConfigFile() != "" {
		t.Errorf("stdin only: %v", err)
	}
}

func TestCommandLine(t *testing.T) {
	f := func(args []string, file string, stdin bool, options string) {
		t.Helper()
		cl := parseCommandLine(args)
		if cl.file != file || cl.stdin != stdin || cl.options != options {
			t.Errorf("%q: got %+v", args, cl)
		}
	}
	f(nil, "", false, "")
	f([]string{"a.conf"}, "a.conf", false, "")
	f([]string{"-"}, "", true, "")
	f([]string{"a.conf", "-", "--port", "1"}, "a.conf", false, `"-" `+"\nport "+`"1" `)
	f([]string{"--port", "1", "-"}, "", true, `port "1" `)
	f([]string{"--bind", "a", "b", "--hz", "1 2"}, "", false, `bind "a" "b" `+"\n"+`hz "1 2" `)
	f([]string{"--notify-keyspace-events", "--port", "1"}, "", false, `notify-keyspace-events "--port" "1" `)
	f([]string{"--save", "--port", "1"}, "", false, `save ""`+"\n"+`port "1" `)
	f([]string{"--port 1", "--hz", "2"}, "", false, "port 1 \nhz \"2\" ")
	f([]string{"--hz"}, "", false, "hz ")
	f([]string{"--requirepass", "a\"b\n"}, "", false, `requirepass "a\"b\n" `)
}

func loadErr(t *testing.T, args ...string) *LoadError {
	t.Helper()
	_, err := load(args, strings.NewReader(""))
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("%q: want a *LoadError, got %v", args, err)
	}
	return le
}

func TestLoadErrors(t *testing.T) {
	inDir(t, map[string]string{
		"bad.conf":   "port 7000\nfoo \"bar\n",
		"inc.conf":   "# c\n\ninclude sub.conf\n",
		"sub.conf":   "hz 5\nhz x\n",
		"loop.conf":  "include loop.conf\n",
		"quote.conf": "port 1\n'abc'def\n",
	})
	f := func(want string, args ...string) {
		t.Helper()
		if got := loadErr(t, args...).Report(); got != want {
			t.Errorf("%q:\n got %q\nwant %q", args, got, want)
		}
	}
	block := func(line int, text, msg string) string {
		return "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line " +
			strconv.Itoa(line) + "\n>>> '" + text + "'\n" + msg + "\n"
	}
	f(block(2, `foo "bar"`, "Bad directive or wrong number of arguments"), "--foo", "bar")
	f(block(2, `port "abc"`, "argument couldn't be parsed into an integer"), "--port", "abc")
	f(block(2, `foo "bar`, "Unbalanced quotes in configuration line"), "bad.conf")
	f(block(2, `'abc'def`, "Unbalanced quotes in configuration line"), "quote.conf")
	f(block(2, "hz x", "argument couldn't be parsed into an integer"), "inc.conf")
	f(block(2, "port", "wrong number of arguments"), "--port")
	f(block(3, `hz "5" "6"`, "wrong number of arguments"), "--port", "1", "--hz", "5", "6")
	f(block(2, `save "900"`, "Invalid save parameters"), "--save", "900")
	f(block(2, `databases "0"`, "argument must be between 1 and 2147483647 inclusive"), "--databases", "0")
	f(block(2, `unixsocketperm "800"`, "argument couldn't be parsed as an octal number"), "--unixsocketperm", "800")
	f(block(2, `replicaof "a" "b"`, "Invalid master port"), "--replicaof", "a", "b")
	f(block(2, `dir "/nonexistent"`, "No such file or directory"), "--dir", "/nonexistent")
	f("\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nCan't open the log file: No such file or directory\n",
		"--logfile", "/nonexistent/dir/x.log")
	f("\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nreplicaof directive not allowed in cluster mode\n",
		"--cluster-enabled", "yes", "--replicaof", "a", "1")
	wd, _ := os.Getwd()
	f("Fatal error, can't open config file '"+filepath.Join(wd, "missing.conf")+"': No such file or directory\n", "missing.conf")
	f("Fatal error, can't open config file 'nowhere.conf': No such file or directory\n", "--include", "nowhere.conf")
	if le := loadErr(t, "loop.conf"); le.Msg != "include nesting too deep" {
		t.Errorf("include loop: %q", le.Report())
	}
}

// TestLoadErrorsMatchRedis runs redis-server on configurations it must
// refuse and compares what it prints with LoadError.Report.
func TestLoadErrorsMatchRedis(t *testing.T) {
	dir := inDir(t, map[string]string{
		"bad.conf":   "port 7000\nfoo \"bar\n",
		"wrong.conf": "port 7000\n  port  \"7001\" x  \n",
		"inc.conf":   "# c\n\ninclude sub.conf\n",
		"sub.conf":   "hz 5\nhz x\n",
		"save.conf":  "save 900 1\nsave 0 1\n",
		"depr.conf":  "list-max-ziplist-entries 5\nlua-replicate-commands yes\nPORT abc\n",
	})
	for _, args := range [][]string{
		{"--foo", "bar"}, {"--port", "abc"}, {"--port"}, {"--port", "7395", "--hz"},
		{"bad.conf"}, {"wrong.conf"}, {"inc.conf"}, {"save.conf"}, {"depr.conf"},
		{"wrong.conf", "--port", "1"}, {"--save", "900", "--port", "7395", "abc"},
		{"--port", "7395 x"}, {"--logfile", "/nonexistent/dir/x.log"}, {"--dir", "/nonexistent"},
		{"--socket-mark-id", "-1"}, {"--unixsocketperm", "1000"}, {"--io-threads", "0"},
		{"--maxmemory-clients", "101%"}, {"--notify-keyspace-events", "--port", "7398"},
		{"--client-output-buffer-limit", "normal", "1", "2"}, {"--replicaof", "a", "b"},
		{"--cluster-enabled", "yes", "--replicaof", "a", "1"}, {"--enable-protected-configs", "maybe"},
		{"--shutdown-on-sigint", "save", "nosave"}, {"--oom-score-adj-values", "1", "2"},
		{"--proc-title-template", "{x}"}, {"--appendfilename", "a/b"}, {"--tls-auth-clients", "x"},
		{"--bind", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17"},
	} {
		want, code := runRedisServer(t, dir, args...)
		if code != 1 {
			t.Errorf("%q: redis-server exited %d: %s", args, code, want)
			continue
		}
		if got := loadErr(t, args...).Report(); got != want {
			t.Errorf("%q:\nredis %q\nhotkv %q", args, want, got)
		}
	}
	// The open failure is a log line in Redis; compare its text.
	want, _ := runRedisServer(t, dir, "missing.conf")
	got := loadErr(t, "missing.conf").Report()
	if withoutLogLines(want) != got {
		t.Errorf("missing file:\nredis %q\nhotkv %q", want, got)
	}
}

// TestLoadMatchesRedis starts redis-server and a Store from the same
// files, stdin and arguments, and compares every CONFIG GET value.
func TestLoadMatchesRedis(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		args  []string
		stdin string
	}{
		{"file and options", map[string]string{"c.conf": "maxmemory 100mb\nsave 900 1\nsave 300 10\n" +
			"bind \"127.0.0.1 ::1\"\nhz 3\ninclude i.conf\n"}, []string{"c.conf", "--hz", "4", "--timeout", "7"}, ""},
		{"include glob", map[string]string{"c.conf": "include d/*.conf\nsave \"\"\n", "d/a.conf": "hz 11\n",
			"d/b.conf": "hz 12\nnotify-keyspace-events KEA\n"}, []string{"c.conf"}, ""},
		{"stdin", nil, []string{"-", "--maxmemory-clients", "5%"}, "hz 33\nsave 60 5\n"},
		{"quoted", map[string]string{"c.conf": `masterauth "a b\tc\x41"` + "\n" + `masteruser 'x\'y'` +
			"\nlatency-tracking-info-percentiles \"50 99.99 1e1\"\nclient-output-buffer-limit replica 1mb 2mb 3 pubsub 0 0 0\n"},
			[]string{"c.conf"}, ""},
		{"save flag", nil, []string{"--save", "--appendfsync", "always", "--shutdown-on-sigterm", "nosave", "now"}, ""},
		{"aliases", map[string]string{"c.conf": "slave-read-only no\nhash-max-ziplist-entries 5\nlua-time-limit 7\n" +
			"slave-priority 3\nreplica-priority 4\nhz 0\n"}, []string{"c.conf"}, ""},
		{"bind split", nil, []string{"--bind", "127.0.0.1 ::1", "--oom-score-adj-values", "1 2 3"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"i.conf": "timeout 3\n"}
			for k, v := range tc.files {
				files[k] = v
			}
			dir := inDir(t, files)
			args := append(append([]string{}, tc.args...), "--daemonize", "no", "--logfile", "")
			s, err := load(args, strings.NewReader(tc.stdin))
			if err != nil {
				t.Fatal(err)
			}
			rc := launchRedis(t, dir, tc.stdin, args, freePort(t))
			for name, want := range rc.configGet(t, "*") {
				if name == "port" || name == "pidfile" {
					continue
				}
				if name == "bind" && want == "* -::*" {
					want = DefaultBind // HotKV's own default
				}
				if got := s.String(name); got != want {
					t.Errorf("%s: redis %q, hotkv %q", name, want, got)
				}
			}
		})
	}
}
