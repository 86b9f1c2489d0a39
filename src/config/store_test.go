package config

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hotkvOnly are HotKV's directives, absent from Redis 7.0.15.
var hotkvOnly = map[string]bool{
	"threads": true, "sched-batch": true, "metrics-port": true, "metrics-bind": true, "value-compression": true, "value-compression-threshold": true,
	"set-max-listpack-entries": true, "set-max-listpack-value": true,
	"gc-percent": true, "gc-memory-limit": true, "gc-idle": true,
	"lua-max-memory": true, "lua-strict-keys": true,
}

func readGoldenDefaults(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("testdata/redis-7.0.15-defaults.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		name, val, _ := strings.Cut(sc.Text(), "\t")
		out[name] = val
	}
	return out
}

// TestDefaultsMatchRedis checks CONFIG GET * against a real server's
// answer recorded in testdata: the same names, the same defaults, except
// where HotKV chose differently on purpose.
func TestDefaultsMatchRedis(t *testing.T) {
	golden := readGoldenDefaults(t)
	got := map[string]string{}
	for _, kv := range Default().Get("*") {
		got[kv[0]] = kv[1]
	}
	for name, want := range golden {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s missing from CONFIG GET *", name)
		case name == "dir" || name == "bind":
			// bind: HotKV listens on loopback only; dir: the cwd.
		case g != want:
			t.Errorf("%s = %q, redis has %q", name, g, want)
		}
	}
	for name := range got {
		if _, ok := golden[name]; !ok && !hotkvOnly[name] {
			t.Errorf("%s is not a Redis 7.0.15 directive", name)
		}
	}
	wd, _ := os.Getwd()
	if got["dir"] != wd || got["bind"] != "127.0.0.1 -::1" {
		t.Errorf("dir %q bind %q", got["dir"], got["bind"])
	}
}

func TestGetPatterns(t *testing.T) {
	s := Default()
	names := func(patterns ...string) string {
		var out []string
		for _, kv := range s.GetAll(patterns...) {
			out = append(out, kv[0])
		}
		return strings.Join(out, ",")
	}
	f := func(want string, patterns ...string) {
		t.Helper()
		if got := names(patterns...); got != want {
			t.Errorf("CONFIG GET %q = %s, want %s", patterns, got, want)
		}
	}
	f("port", "port")
	f("PORT", "PORT")                  // exact names answer as asked
	f("port", "Port*")                 // patterns answer with the real name
	f("PORT", "PORT", "port*", "port") // one entry per directive
	f("replica-read-only,slave-read-only", "slave-read-only", "replica-read-only")
	f("", "nonexistent")
	f("", "")
	f("port", "[pq]ort")
	f("", "port?")
	f("use-exit-on-panic", "use-exit-on-panic") // hidden: exact only
	f("", "use-exit-on-pani*")
	f("maxmemory,maxmemory-clients,maxmemory-eviction-tenacity,maxmemory-policy,maxmemory-samples", "maxmemory*")
	// Redis 7.0.15 answers 192 entries; HotKV adds its own directives.
	if n, want := len(s.Get("*")), 192+len(hotkvOnly); n != want {
		t.Errorf("CONFIG GET * has %d entries, want %d", n, want)
	}
}

func setErr(s *Store, pairs ...string) string {
	var p [][2]string
	for i := 0; i+1 < len(pairs); i += 2 {
		p = append(p, [2]string{pairs[i], pairs[i+1]})
	}
	if err := s.Set(p); err != nil {
		return err.Error()
	}
	return "OK"
}

func TestSetErrors(t *testing.T) {
	s := Default()
	f := func(want string, pairs ...string) {
		t.Helper()
		if got := setErr(s, pairs...); got != want {
			t.Errorf("CONFIG SET %q:\n got %s\nwant %s", pairs, got, want)
		}
	}
	failed := func(name, msg string) string {
		return "ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + msg
	}
	f(failed("port", "argument couldn't be parsed into an integer"), "port", "abc")
	f(failed("port", "argument must be between 0 and 65535 inclusive"), "port", "70000")
	f(failed("port", "argument couldn't be parsed into an integer"), "PORT", "01")
	f("ERR Unknown option or number of arguments for CONFIG SET - 'foo'", "foo", "bar")
	f("ERR Unknown option or number of arguments for CONFIG SET - 'FOO'", "port", "1", "FOO", "1")
	f(failed("databases", "can't set immutable config"), "databases", "4")
	f(failed("DATABASES", "can't set immutable config"), "port", "abc", "DATABASES", "4")
	f(failed("MAXMEMORY", "duplicate parameter"), "maxmemory", "1kb", "MAXMEMORY", "2kb")
	f(failed("dir", "can't set protected config"), "dir", "/tmp")
	f(failed("dbfilename", "can't set protected config"), "dbfilename", "x.rdb")
	f(failed("slave-priority", "argument couldn't be parsed into an integer"), "Slave-Priority", "x")
	f(failed("maxmemory", "argument must be a memory value"), "maxmemory", "1.5gb")
	f(failed("maxmemory-clients", "percentage argument must be less or equal to 100"), "maxmemory-clients", "200%")
	f(failed("maxmemory-clients", "argument must be a memory or percent value"), "maxmemory-clients", "-5")
	f(failed("proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive"),
		"proto-max-bulk-len", "99999999999999999999")
	f(failed("loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning"), "loglevel", "debug notice")
	f(failed("protected-mode", "argument must be 'yes' or 'no'"), "protected-mode", "maybe")
	f(failed("save", "Invalid save parameters"), "save", "100 1 ")
	f(failed("shutdown-on-sigint", "shutdown options SAVE and NOSAVE can't be used simultaneously"),
		"shutdown-on-sigint", "save nosave")
	f(failed("notify-keyspace-events", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."),
		"notify-keyspace-events", "Q")
	f(failed("bind", "Too many bind addresses specified."), "bind", strings.TrimSpace(strings.Repeat("a ", 17)))
	f(failed("client-output-buffer-limit", "Invalid client class specified in buffer limit configuration."),
		"client-output-buffer-limit", "master 1 2 3")
	f(failed("cluster-announce-hostname", "Hostnames may only contain alphanumeric characters, hyphens or dots"),
		"cluster-announce-hostname", "a_b")
	f(failed("proc-title-template", "template format is invalid or contains unknown variables"), "proc-title-template", "{title}")
	f("OK", "slave-priority", "1", "replica-priority", "2") // alias and name are separate entries
	if got := s.String("replica-priority"); got != "2" {
		t.Errorf("replica-priority = %s, want the later value 2", got)
	}
}

func TestSetValues(t *testing.T) {
	s := Default()
	f := func(name, value, want string) {
		t.Helper()
		if err := s.Set([][2]string{{name, value}}); err != nil {
			t.Fatalf("CONFIG SET %s %q: %v", name, value, err)
		}
		if got := s.String(name); got != want {
			t.Errorf("CONFIG SET %s %q; GET = %q, want %q", name, value, got, want)
		}
	}
	f("maxmemory", "1GB", "1073741824")
	f("maxmemory", "1K", "1000")
	f("maxmemory", "", "0")
	f("maxmemory", "kb", "0")
	f("maxmemory", "99999999999999999999", "18446744073709551615")
	f("maxmemory", "18446744073709551615kb", "18446744073709550592")
	f("maxmemory-clients", "10%", "10%")
	f("maxmemory-clients", "0%", "0")
	f("hz", "0", "1")
	f("hz", "1000", "500")
	f("protected-mode", "NO", "no")
	f("maxmemory-policy", "ALLKEYS-LRU", "allkeys-lru")
	f("oom-score-adj", "relative", "yes")
	f("shutdown-on-sigint", "force now save", "save now force")
	f("shutdown-on-sigint", "default save", "save")
	f("notify-keyspace-events", "KEA", "AKE")
	f("notify-keyspace-events", "An", "A")
	f("notify-keyspace-events", "lg$", "g$l")
	f("save", "100 01", "100 1")
	f("save", "", "")
	f("save", "100 4294967295", "100 -1") // changes is a C int
	f("client-output-buffer-limit", "replica 1mb 2mb 3", "normal 0 0 0 slave 1048576 2097152 3 pubsub 33554432 8388608 60")
	f("client-output-buffer-limit", "", "normal 0 0 0 slave 1048576 2097152 3 pubsub 33554432 8388608 60")
	f("latency-tracking-info-percentiles", "1e1 0.5 50.000001", "10 0.5 50.000001")
	f("latency-tracking-info-percentiles", "", "")
	f("oom-score-adj-values", "+1 02 -3", "1 2 -3")
	f("bind", "", "")
	f("bind", "127.0.0.1 ::1", "127.0.0.1 ::1")
	f("proc-title-template", "{{", "{{")
	f("slowlog-log-slower-than", "-1", "-1")
	f("list-max-ziplist-size", "-5", "-5")
	c := s.Current()
	if c.MaxMemory != 18446744073709550592 || c.MaxMemoryClients != 0 || c.Hz != 500 ||
		c.MaxMemoryPolicy != AllKeysLRU || c.ListMaxListpackSize != -5 || fmt.Sprint(c.Save) != "[{100 -1}]" ||
		c.NotifyKeyspaceEvents != NotifyGeneric|NotifyString|NotifyList ||
		c.ClientOutputLimits[ClassReplica] != (BufferLimit{1 << 20, 2 << 20, 3}) ||
		fmt.Sprint(c.Bind) != "[127.0.0.1 ::1]" || c.ProtectedMode || c.SlowlogLogSlowerThan != -1 {
		t.Errorf("typed snapshot does not follow: %+v", c)
	}
}

// TestSetAtomic checks that a failing multi-directive CONFIG SET changes
// nothing, wherever the failure is.
func TestSetAtomic(t *testing.T) {
	s := Default()
	before := s.Get("*")
	version := s.Current().Version
	for _, pairs := range [][]string{
		{"maxmemory", "1gb", "port", "x"},
		{"maxmemory", "1gb", "hz", "20", "foo", "1"},
		{"maxmemory", "1gb", "databases", "2"},
		{"save", "1 1", "maxmemory", "1gb", "save", "2 2"},
		{"notify-keyspace-events", "KEA", "loglevel", "loud"},
	} {
		if got := setErr(s, pairs...); got == "OK" {
			t.Fatalf("CONFIG SET %q succeeded", pairs)
		}
	}
	if after := s.Get("*"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("a failed CONFIG SET changed the configuration")
	}
	if s.Current().Version != version {
		t.Error("a failed CONFIG SET published a snapshot")
	}
	if got := setErr(s, "maxmemory", "1gb", "hz", "20"); got != "OK" {
		t.Fatal(got)
	}
	if c := s.Current(); c.MaxMemory != 1<<30 || c.Hz != 20 || c.Version != version+1 {
		t.Errorf("multi-set applied partly: %+v", c)
	}
}

func TestHooks(t *testing.T) {
	s := Default()
	var changes []string
	s.OnChange("timeout", func(v string) { changes = append(changes, "timeout="+v) })
	s.OnChange("maxclients", func(v string) { changes = append(changes, "maxclients="+v) })
	var applied []string
	s.OnApply("port", func(v string) error {
		applied = append(applied, v)
		if v == "1" {
			return errors.New("Unable to listen on this port. Check server logs.")
		}
		return nil
	})
	if got := setErr(s, "timeout", "5", "maxclients", "100", "timeout", "5"); got != "ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter" {
		t.Fatal(got)
	}
	if got := setErr(s, "timeout", "5", "maxclients", "10000"); got != "OK" {
		t.Fatal(got)
	}
	if fmt.Sprint(changes) != "[timeout=5]" { // maxclients did not change
		t.Errorf("OnChange calls %q", changes)
	}
	want := "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs."
	if got := setErr(s, "timeout", "7", "port", "1"); got != want {
		t.Fatalf("got %s", got)
	}
	if s.Current().Timeout != 5 || s.Current().Port != 6379 || fmt.Sprint(applied) != "[1 6379]" {
		t.Errorf("failed apply: timeout %d port %d applied %q", s.Current().Timeout, s.Current().Port, applied)
	}
	var resets int
	s.OnResetStat(func() { resets++ })
	s.ResetStat()
	if resets != 1 {
		t.Errorf("resets = %d", resets)
	}
}

func TestProtectedConfigs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		mode  string
		local bool
		ok    bool
	}{{"no", true, false}, {"local", false, false}, {"local", true, true}, {"yes", false, true}} {
		s, err := load([]string{"--enable-protected-configs", tc.mode}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sub := filepath.Join(dir, "sub-"+tc.mode)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		err = s.SetFrom([][2]string{{"dir", sub}, {"dbfilename", "x.rdb"}}, tc.local)
		if (err == nil) != tc.ok {
			t.Errorf("enable-protected-configs %s local %v: %v", tc.mode, tc.local, err)
		}
		if err == nil {
			wd, _ := os.Getwd()
			if wd != sub || s.String("dir") != sub || s.Current().DBFilename != "x.rdb" {
				t.Errorf("dir not applied: cwd %s, dir %s", wd, s.String("dir"))
			}
		}
		t.Chdir(dir)
	}
	s, _ := load([]string{"--enable-protected-configs", "yes"}, nil)
	for value, want := range map[string]string{
		filepath.Join(dir, "missing"): "No such file or directory",
		"/etc/hostname":               "Not a directory",
	} {
		err := s.Set([][2]string{{"dir", value}})
		if err == nil || !strings.HasSuffix(err.Error(), "- "+want) {
			t.Errorf("dir %s: %v", value, err)
		}
	}
	if got := setErr(s, "dbfilename", "a/b"); !strings.HasSuffix(got, "dbfilename can't be a path, just a filename") {
		t.Error(got)
	}
}

func TestLoadingRefusesSome(t *testing.T) {
	s := Default()
	s.SetLoading(true)
	if got := setErr(s, "appendonly", "yes"); got != "LOADING Redis is loading the dataset in memory" {
		t.Error(got)
	}
	s.SetLoading(false)
	if got := setErr(s, "appendonly", "yes"); got != "OK" {
		t.Error(got)
	}
}

func TestTypedReads(t *testing.T) {
	s := Default()
	if s.Int("port") != 6379 || !s.Bool("protected-mode") || s.String("loglevel") != "notice" ||
		s.Int("maxmemory-policy") != int64(NoEviction) || !IsSensitive("requirepass") || IsSensitive("port") {
		t.Error("typed reads disagree with defaults")
	}
	if v, ok := s.Lookup("SLAVE-READ-ONLY"); !ok || v != "yes" {
		t.Errorf("Lookup = %q %v", v, ok)
	}
	defer func() {
		if recover() == nil {
			t.Error("Int of an unknown name did not panic")
		}
	}()
	s.Int("no-such-thing")
}

// TestConcurrentUse runs readers against writers; run with -race.
func TestConcurrentUse(t *testing.T) {
	s := Default()
	var readers, writers sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 4; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := s.Current()
				// Both values of one snapshot come from the same Set.
				if c.MaxMemory != 0 && uint64(c.Hz)<<20 != c.MaxMemory {
					t.Errorf("torn snapshot: hz %d maxmemory %d", c.Hz, c.MaxMemory)
					return
				}
				_ = s.Get("*max*")
				_ = s.Int("maxmemory")
			}
		}()
	}
	for w := 0; w < 2; w++ {
		writers.Add(1)
		go func(w int) {
			defer writers.Done()
			for i := 0; i < 300; i++ {
				v := fmt.Sprint(1 + (i+w)%100)
				if err := s.Set([][2]string{{"hz", v}, {"maxmemory", v + "mb"}}); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	if v := s.Current().Version; v != 601 {
		t.Errorf("version %d after 600 sets, want 601", v)
	}
}
