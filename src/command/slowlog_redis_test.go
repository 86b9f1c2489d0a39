package command

import (
	"bufio"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// introspectionScript is run against redis-server 7.0.15 and HotKV alike: what SLOWLOG and
// MONITOR show of it must be the same but for durations, timestamps and client addresses.
var introspectionScript = [][]string{
	{"CLIENT", "SETNAME", "n1"},
	{"SET", "k", "a b\"c\nd\x01\xc3\xa9\\"},
	{"GET", "k"},
	append([]string{"RPUSH", "l"}, strings.Split(strings.Repeat("v,", 39)+"w", ",")...),
	{"SET", "big", strings.Repeat("x", 200)},
	{"AUTH", "wrongpass"},
	{"AUTH", "someuser", "wrongpass"},
	{"HELLO", "2", "AUTH", "default", "wrongpass"},
	{"HELLO", "2", "SETNAME", "n2"},
	{"CONFIG", "SET", "requirepass", ""},
	{"CONFIG", "SET", "masterauth", "secret", "maxmemory-samples", "5"},
	{"MULTI"}, {"SET", "m", "1"}, {"GET", "m"}, {"EXEC"},
	{"EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])", "1", "x", "y"},
	{"SELECT", "3"}, {"SET", "in3", "v"}, {"SELECT", "0"},
	{"PING"},
	{"DEBUG", "SLEEP", "0"},
	{"NOSUCHCOMMAND", "a"},
	{"GET"},
	{"SLOWLOG", "LEN"},
}

// slowlogView is an entry without what differs between servers run at different times.
func slowlogView(t *testing.T, raw string, selfAddr string) []string {
	t.Helper()
	var out []string
	for _, ent := range replyAny(t, raw).([]any) {
		f := ent.([]any)
		if f[1].(int64) < time.Now().Add(-time.Minute).Unix() || f[2].(int64) < 0 {
			t.Errorf("entry %v: bad time or duration", f)
		}
		peer := f[4].(string)
		if peer == selfAddr {
			peer = "self"
		}
		out = append(out, fmt.Sprintf("%d %q %s %q", f[0], f[3], peer, f[5]))
	}
	return out
}

func TestSlowlogAgainstRedis(t *testing.T) {
	conn, stop := startRedis(t)
	defer stop()
	r := bufio.NewReader(conn)
	e := newObsEngine()
	tc := newTestConn(t, e)
	run := func(args ...string) (redis, hotkv string) {
		return redisDo(t, conn, r, args...), tc.do(args...)
	}
	run("CONFIG", "SET", "slowlog-log-slower-than", "0")
	for _, c := range introspectionScript {
		run(c...)
	}
	rw, hw := run("SLOWLOG", "GET", "-1")
	want, got := slowlogView(t, rw, conn.LocalAddr().String()), slowlogView(t, hw, tc.client.Addr)
	if len(want) < len(introspectionScript) {
		t.Fatalf("redis-server logged only %d entries", len(want))
	}
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Errorf("SLOWLOG GET -1:\nredis:\n%s\nhotkv:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	for _, c := range [][]string{{"SLOWLOG", "GET", "2"}, {"SLOWLOG", "GET", "0"}, {"SLOWLOG", "LEN"},
		{"CONFIG", "SET", "slowlog-max-len", "3"}, {"SLOWLOG", "LEN"}, {"SET", "a", "b"}, {"SLOWLOG", "LEN"},
		{"SLOWLOG", "GET", "-2"}, {"SLOWLOG", "GET", "x"}, {"SLOWLOG", "GET", "1", "2"}, {"SLOWLOG", "NOPE"},
		{"SLOWLOG", "LEN", "x"}, {"SLOWLOG", "HELP"}, {"SLOWLOG", "RESET"}, {"SLOWLOG", "LEN"},
		{"CONFIG", "SET", "slowlog-log-slower-than", "-1"}, {"SET", "a", "b"}, {"SLOWLOG", "LEN"}} {
		rr, hr := run(c...)
		if c[1] == "GET" && !strings.HasPrefix(rr, "-") {
			rr = strings.Join(slowlogView(t, rr, conn.LocalAddr().String()), "\n")
			hr = strings.Join(slowlogView(t, hr, tc.client.Addr), "\n")
		}
		if rr != hr {
			t.Errorf("%q: redis %q, hotkv %q", c, rr, hr)
		}
	}
}

var monitorStamp = regexp.MustCompile(`^\+\d{10}\.\d{6} \[(\d+) ([^\]]+)\] (.*)$`)

// monitorView strips a MONITOR line of its timestamp and makes selfAddr "self".
func monitorView(t *testing.T, line, selfAddr string) string {
	t.Helper()
	m := monitorStamp.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("MONITOR line %q", line)
	}
	if m[2] == selfAddr {
		m[2] = "self"
	}
	return m[1] + " " + m[2] + " " + m[3]
}

func TestMonitorAgainstRedis(t *testing.T) {
	addr, stop := startRedisAddr(t)
	defer stop()
	mon, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	mr := bufio.NewReader(mon)
	if got := redisDo(t, mon, mr, "MONITOR"); got != "+OK\r\n" {
		t.Fatalf("MONITOR: %q", got)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)

	e := newObsEngine()
	tm, tc := newTestConn(t, e), newTestConn(t, e)
	tm.client.Addr = "127.0.0.1:50001"
	if got := tm.do("MONITOR"); got != "+OK\r\n" {
		t.Fatalf("HotKV MONITOR: %q", got)
	}
	for _, c := range introspectionScript {
		redisDo(t, conn, r, c...)
		tc.do(c...)
	}
	redisDo(t, conn, r, "ECHO", "end")
	tc.do("ECHO", "end")
	var want []string
	mon.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		line, err := mr.ReadString('\n')
		if err != nil {
			t.Fatalf("reading Redis's MONITOR: %v (so far %q)", err, want)
		}
		want = append(want, monitorView(t, strings.TrimSuffix(line, "\r\n"), conn.LocalAddr().String()))
		if strings.HasSuffix(line, `"ECHO" "end"`+"\r\n") {
			break
		}
	}
	var got []string
	for _, line := range strings.SplitAfter(string(e.TakePushes(tm.client, nil)), "\r\n") {
		if line != "" {
			got = append(got, monitorView(t, strings.TrimSuffix(line, "\r\n"), tc.client.Addr))
		}
	}
	if len(want) < len(introspectionScript)-5 {
		t.Fatalf("redis-server showed only %d lines", len(want))
	}
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Errorf("MONITOR:\nredis:\n%s\nhotkv:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	// The monitoring client itself: keyspace commands refused, others served (and shown), a
	// second MONITOR unanswered, RESET ends it.
	for _, c := range [][]string{{"GET", "k"}, {"SET", "k", "v"}, {"PUBLISH", "ch", "m"}, {"PING"},
		{"CLIENT", "GETNAME"}, {"MONITOR"}, {"RESET"}, {"GET", "k"}} {
		rr := ""
		if c[0] != "MONITOR" {
			rr = redisDo(t, mon, mr, c...)
			for strings.HasPrefix(rr, "+17") || strings.HasPrefix(rr, "+18") { // a line of its own
				raw, err := mr.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				rr = raw
			}
		} else {
			mon.Write(encodeCommand(c))
		}
		hr := tm.do(c...)
		if c[0] == "MONITOR" {
			continue
		}
		e.TakePushes(tm.client, nil)
		if rr != hr {
			t.Errorf("monitoring client %q: redis %q, hotkv %q", c, rr, hr)
		}
	}
}
