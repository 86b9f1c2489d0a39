package config

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// Differential tests: the same CONFIG commands against a real Redis 7.0.15
// and against a Store must answer the same bytes.

// notCompared are directives whose CONFIG SET has effects in Redis that
// HotKV leaves to the server or does not have: changing them would cut the
// test's connection, need certificates, or hit a Debian build limit.
var notCompared = map[string]bool{
	"port": true, "bind": true, "requirepass": true, "dir": true, "appendonly": true,
	"tls-port": true, "tls-replication": true, "tls-cluster": true,
	"activedefrag": true, // Debian's Redis lacks the jemalloc needed to turn it on
}

var probes = []string{
	"abc", "-1", "0", "1", "yes", "no", "YES", "", " ", "99999999999999999999",
	"18446744073709551615", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
	"1kb", "1K", "3Gb", "1b", "kb", "5%", "0%", "101%", "%", "-2", "65536", "2147483648",
	"4294967296", "777", "0777", "Ag$", "Km", "KEA", "An", "normal 1 2 3", "slave 1mb 2mb 3",
	"pubsub 1 2 -3", "replica 1 2 4294967296", "1 2 3", "1 2 3000", "100 1", "100 1 200",
	"100 1 ", "3600 1 300 100", "a b", " 1", "1 ", "01", "+1", "1.5", "1e1", "save nosave",
	"nosave now", "DEFAULT", "allkeys-LRU", "debug notice", "{title}", "x{port}", "{{", "a}",
	"a.b-c", "a_b", "x.rdb", "a/b", "50 99.9", "1e400", "0x10", "nan", "inf",
}

func TestSetMatchesRedis(t *testing.T) {
	rc := startRedis(t)
	s := Default()
	orig := rc.configGet(t, "*")
	names := make([]string, 0, len(orig))
	for n := range orig {
		if !notCompared[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	reply := func(err error) string {
		if err != nil {
			return "-" + err.Error()
		}
		return "OK"
	}
	for _, name := range names {
		for _, p := range probes {
			if name == "maxclients" && (p == "65536" || p == "2147483648") {
				// Redis asks the OS for that many descriptors, 16 at a time,
				// for minutes; HotKV leaves descriptor limits to the server.
				continue
			}
			want := fmt.Sprint(rc.do(t, "CONFIG", "SET", name, p))
			got := reply(s.Set([][2]string{{name, p}}))
			if got != want {
				t.Errorf("CONFIG SET %s %q:\n redis %s\nhotkv %s", name, p, want, got)
				continue
			}
			if got != "OK" {
				continue
			}
			if r, h := rc.configGet(t, name)[name], s.String(name); r != h {
				t.Errorf("CONFIG SET %s %q then GET: redis %q, hotkv %q", name, p, r, h)
			}
			rc.do(t, "CONFIG", "SET", name, orig[name])
			if err := s.Set([][2]string{{name, orig[name]}}); err != nil {
				t.Fatalf("restoring %s: %v", name, err)
			}
		}
	}
}

// TestMultiSetMatchesRedis compares multi-directive CONFIG SET, where the
// order of checks decides which error is reported.
func TestMultiSetMatchesRedis(t *testing.T) {
	rc := startRedis(t)
	s := Default()
	for _, args := range [][]string{
		{"maxmemory", "1kb", "maxmemory", "2kb"},
		{"maxmemory", "1kb", "MAXMEMORY", "2kb"},
		{"maxmemory", "1kb", "port", "x"},
		{"foo", "1", "port", "abc"},
		{"port", "abc", "foo", "1"},
		{"databases", "1", "port", "abc"},
		{"port", "abc", "databases", "1"},
		{"maxmemory", "1", "maxmemory", "2", "foo", "3"},
		{"foo", "1", "databases", "2", "maxmemory", "1", "maxmemory", "1"},
		{"dbfilename", "x", "databases", "1"},
		{"slave-priority", "1", "replica-priority", "2"},
		{"hz", "15", "timeout", "10", "maxmemory", "2mb"},
		{"save", "1 2", "save", "3 4"},
		{"loglevel", "warning", "loglevel", "bad"},
	} {
		cmd := append([]string{"CONFIG", "SET"}, args...)
		want := fmt.Sprint(rc.do(t, cmd...))
		got := setErr(s, args...)
		if got != "OK" {
			got = "-" + got
		}
		if got != want {
			t.Errorf("CONFIG SET %q:\n redis %s\nhotkv %s", args, want, got)
		}
	}
	for _, name := range []string{"hz", "timeout", "maxmemory", "slave-priority", "replica-priority", "loglevel"} {
		if r, h := rc.configGet(t, name)[name], s.String(name); r != h {
			t.Errorf("after the sets, %s: redis %q hotkv %q", name, r, h)
		}
	}
}

// TestGetMatchesRedis compares the names CONFIG GET patterns select.
func TestGetMatchesRedis(t *testing.T) {
	rc := startRedis(t)
	s := Default()
	for _, p := range []string{
		"*", "*max*", "port", "PORT", "Port*", "[pq]ort", "port?", "*-?ax*", "slave*", "*[",
		"", "maxmemory*", "*a*b*c*", "[^a-l]*", "*\\-*", "use-exit-on-panic", "*delay*",
		"hash-max-ziplist-*", "?", "??", "*[0-9]*", "lua-time-limit", "SLAVEOF", "*_*",
	} {
		var want []string
		for n := range rc.configGet(t, p) {
			want = append(want, n)
		}
		var got []string
		for _, kv := range s.Get(p) {
			if !hotkvOnly[kv[0]] {
				got = append(got, kv[0])
			}
		}
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("CONFIG GET %q:\n redis %v\nhotkv %v", p, want, got)
		}
	}
	// The defaults of a freshly started server, except what startRedis set.
	started := map[string]bool{"port": true, "bind": true, "dir": true, "save": true}
	for n, want := range rc.configGet(t, "*") {
		if got := s.String(n); !started[n] && got != want {
			t.Errorf("%s: redis %q hotkv %q", n, want, got)
		}
	}
}
