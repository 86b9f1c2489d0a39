package command

import (
	"errors"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/src/config"
)

// fakeStore is a ConfigStore over a map, recording what CONFIG asks of it.
type fakeStore struct {
	vals       map[string]string
	sets       [][][2]string
	local      []bool
	setErr     error
	rewriteErr error
	rewrites   int
	resets     int
}

func (f *fakeStore) Get(pattern string) [][2]string {
	var out [][2]string
	if !strings.ContainsAny(pattern, "*?[") {
		if v, ok := f.vals[strings.ToLower(pattern)]; ok {
			out = append(out, [2]string{pattern, v})
		}
		return out
	}
	for _, k := range []string{"maxmemory", "maxmemory-policy", "port", "timeout"} {
		if strs.Glob([]byte(pattern), []byte(k), true) {
			out = append(out, [2]string{k, f.vals[k]})
		}
	}
	return out
}

func (f *fakeStore) SetFrom(pairs [][2]string, local bool) error {
	f.sets = append(f.sets, pairs)
	f.local = append(f.local, local)
	return f.setErr
}
func (f *fakeStore) Set(pairs [][2]string) error { return f.SetFrom(pairs, false) }
func (f *fakeStore) Rewrite() error              { f.rewrites++; return f.rewriteErr }
func (f *fakeStore) ResetStat()                  { f.resets++ }

func newFakeStore() *fakeStore {
	return &fakeStore{vals: map[string]string{"maxmemory": "0", "maxmemory-policy": "noeviction",
		"port": "6379", "timeout": "0"}}
}

func TestConfigGet(t *testing.T) {
	e := newTestEngine()
	e.Config = newFakeStore()
	tc := newTestConn(t, e)
	f := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(append([]string{"CONFIG", "GET"}, args...)...); got != want {
			t.Errorf("CONFIG GET %v = %q, want %q", args, got, want)
		}
	}
	f("*2\r\n$4\r\nport\r\n$4\r\n6379\r\n", "port")
	f("*2\r\n$4\r\nPORT\r\n$4\r\n6379\r\n", "PORT")
	f("*2\r\n$4\r\nPORT\r\n$4\r\n6379\r\n", "PORT", "port", "p*") // listed once, as first matched
	f("*4\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n", "max*", "maxmemory")
	f("*0\r\n", "nosuch", "nosuch*")
	tc.do("HELLO", "3")
	f("%2\r\n$4\r\nport\r\n$4\r\n6379\r\n$7\r\ntimeout\r\n$1\r\n0\r\n", "port", "timeout")
	f("%0\r\n", "nosuch")
}

func TestConfigSet(t *testing.T) {
	e := newTestEngine()
	fs := newFakeStore()
	e.Config = fs
	tc := newTestConn(t, e)
	if got := tc.do("CONFIG", "SET", "timeout", "5", "port", "7000"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET = %q", got)
	}
	if len(fs.sets) != 1 || len(fs.sets[0]) != 2 || fs.sets[0][0] != [2]string{"timeout", "5"} ||
		fs.sets[0][1] != [2]string{"port", "7000"} {
		t.Errorf("store got %v", fs.sets)
	}
	if !fs.local[0] {
		t.Error("a 127.0.0.1 client is local")
	}
	if got := tc.do("CONFIG", "SET", "timeout", "5", "port"); got != "-ERR syntax error\r\n" {
		t.Errorf("odd CONFIG SET = %q", got)
	}
	if got := tc.do("CONFIG", "SET", "timeout"); got != "-ERR wrong number of arguments for 'config|set' command\r\n" {
		t.Errorf("short CONFIG SET = %q", got)
	}
	fs.setErr = errors.New("ERR CONFIG SET failed (possibly related to argument 'port') - nope")
	if got := tc.do("CONFIG", "SET", "port", "x"); got != "-ERR CONFIG SET failed (possibly related to argument 'port') - nope\r\n" {
		t.Errorf("failed CONFIG SET = %q", got)
	}
	if len(fs.sets) != 2 {
		t.Errorf("%d sets reached the store, want 2", len(fs.sets))
	}
}

func TestConfigWithoutStore(t *testing.T) {
	e := newTestEngine()
	e.Config = nil
	tc := newTestConn(t, e)
	f := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Errorf("%v = %q, want %q", args, got, want)
		}
	}
	f("*0\r\n", "CONFIG", "GET", "*")
	f("-ERR Unknown option or number of arguments for CONFIG SET - 'Port'\r\n", "CONFIG", "SET", "Port", "1")
	f("-ERR The server is running without a config file\r\n", "CONFIG", "REWRITE")
	f("+OK\r\n", "CONFIG", "RESETSTAT")
}

func TestConfigRewriteResetHelp(t *testing.T) {
	e := newTestEngine()
	fs := newFakeStore()
	e.Config = fs
	tc := newTestConn(t, e)
	if got := tc.do("CONFIG", "REWRITE"); got != "+OK\r\n" || fs.rewrites != 1 {
		t.Errorf("CONFIG REWRITE = %q (%d)", got, fs.rewrites)
	}
	fs.rewriteErr = errors.New("ERR Rewriting config file: Permission denied")
	if got := tc.do("CONFIG", "REWRITE"); got != "-ERR Rewriting config file: Permission denied\r\n" {
		t.Errorf("failed CONFIG REWRITE = %q", got)
	}
	tc.do("PING")
	ping := Commands()["ping"]
	if ping.stats.calls.Load() == 0 {
		t.Fatal("PING not counted")
	}
	if got := tc.do("CONFIG", "RESETSTAT"); got != "+OK\r\n" || fs.resets != 1 {
		t.Errorf("CONFIG RESETSTAT = %q (%d store resets)", got, fs.resets)
	}
	if n := ping.stats.calls.Load(); n != 0 {
		t.Errorf("PING calls after RESETSTAT = %d", n)
	}
	help := tc.do("CONFIG", "HELP")
	if !strings.HasPrefix(help, "*11\r\n+CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GET <pattern>\r\n") {
		t.Errorf("CONFIG HELP = %q", help)
	}
}

func TestLocalClient(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:5": true, "[::1]:5": true, "10.0.0.1:5": false,
		"/tmp/redis.sock:0": true, "[2001:db8::1]:6379": false,
		"127.0.0.2:5": false, "[::ffff:127.0.0.1]:5": false} { // Redis compares the address strings
		if got := localClient(&Client{Addr: addr}); got != want {
			t.Errorf("localClient(%q) = %v", addr, got)
		}
	}
}

// testStore adapts config.Store to the engine's ConfigStore: CONFIG REWRITE rewrites the file the
// configuration was loaded from.
type testStore struct{ *config.Store }

func (s testStore) Rewrite() error { return s.Store.Rewrite("") }

// testConfigStore is the configuration of the transcript recorder's redis-server (see
// startRedis), so that CONFIG GET answers alike.
func testConfigStore() ConfigStore {
	s, err := config.Load([]string{"--save", "", "--appendonly", "no", "--enable-debug-command", "yes"})
	if err != nil {
		panic(err)
	}
	return testStore{s}
}

func TestConfigRealStore(t *testing.T) {
	e := newTestEngine()
	e.Config = testStore{config.Default()}
	tc := newTestConn(t, e)
	f := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Errorf("%v = %q, want %q", args, got, want)
		}
	}
	f("*2\r\n$4\r\nport\r\n$4\r\n6379\r\n", "CONFIG", "GET", "port")
	f("+OK\r\n", "CONFIG", "SET", "maxmemory", "1mb", "maxmemory-policy", "allkeys-lru")
	f("*4\r\n$9\r\nmaxmemory\r\n$7\r\n1048576\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lru\r\n",
		"CONFIG", "GET", "maxmemory", "maxmemory-policy")
	f("-ERR CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer\r\n",
		"CONFIG", "SET", "port", "abc")
	f("-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n", "CONFIG", "SET", "foo", "bar")
	f("-ERR The server is running without a config file\r\n", "CONFIG", "REWRITE")
}
