package command

import (
	"bufio"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline"
)

// putString stores a string key directly in the engine's data (tests only: no shard is
// running concurrently). expireAt is unix ns, 0 for none.
func putString(e *Engine, db int, key, val string, expireAt int64) *keyspace.Entry {
	ks := e.keyspace(db, []byte(key))
	ent, _ := ks.Upsert([]byte(key), time.Now().UnixNano())
	ent.Kind = keyspace.KindString
	ent.SetBytes([]byte(val))
	if expireAt != 0 {
		ks.SetExpire(ent, expireAt)
	}
	return ent
}

func TestDBSizeAndFlush(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	for i := range 100 {
		putString(e, 0, fmt.Sprint("k", i), "v", 0)
	}
	for i := range 7 {
		putString(e, 2, fmt.Sprint("k", i), "v", 0)
	}
	steps := []struct{ cmd, want string }{
		{"DBSIZE", ":100\r\n"},
		{"SELECT 2", "+OK\r\n"},
		{"DBSIZE", ":7\r\n"},
		{"FLUSHDB ASYNC", "+OK\r\n"},
		{"DBSIZE", ":0\r\n"},
		{"SELECT 0", "+OK\r\n"},
		{"DBSIZE", ":100\r\n"},
		{"FLUSHALL bogus", "-ERR syntax error\r\n"},
		{"DBSIZE", ":100\r\n"},
		{"FLUSHALL", "+OK\r\n"},
		{"DBSIZE", ":0\r\n"},
	}
	for _, s := range steps {
		if got := tc.do(strings.Fields(s.cmd)...); got != s.want {
			t.Errorf("%s: %q, want %q", s.cmd, got, s.want)
		}
	}
	putString(e, 5, "x", "y", 0)
	tc.do("FLUSHALL", "SYNC")
	if got := tc.do("SELECT", "5"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := tc.do("DBSIZE"); got != ":0\r\n" {
		t.Errorf("FLUSHALL left db 5 with %q", got)
	}
}

func TestTimeAndLastsave(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	before := time.Now()
	r := bufio.NewReader(strings.NewReader(tc.do("TIME")))
	var parts []int64
	if hdr, _ := r.ReadString('\n'); hdr != "*2\r\n" {
		t.Fatalf("TIME header %q", hdr)
	}
	for range 2 {
		r.ReadString('\n')
		line, _ := r.ReadString('\n')
		n, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, n)
	}
	got := time.Unix(parts[0], parts[1]*1000)
	if parts[1] < 0 || parts[1] >= 1e6 || got.Before(before.Truncate(time.Microsecond)) || got.After(time.Now()) {
		t.Errorf("TIME %v outside [%v, now]", parts, before)
	}
	if got, want := tc.do("LASTSAVE"), fmt.Sprintf(":%d\r\n", e.started.Unix()); got != want {
		t.Errorf("LASTSAVE %q, want %q", got, want)
	}
}

func TestShutdown(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	if got := tc.do("SHUTDOWN"); got != "-ERR Errors trying to SHUTDOWN. Check logs.\r\n" {
		t.Errorf("SHUTDOWN without a hook: %q", got)
	}
	var calls [][4]bool
	e.Hooks.Shutdown = func(save, nosave, now, force bool) error {
		calls = append(calls, [4]bool{save, nosave, now, force})
		if force {
			return nil
		}
		return errors.New("ERR Errors trying to SHUTDOWN. Check logs.")
	}
	if got := tc.do("SHUTDOWN", "SAVE", "NOW"); got != "-ERR Errors trying to SHUTDOWN. Check logs.\r\n" {
		t.Errorf("refused SHUTDOWN: %q", got)
	}
	out, err := tc.send(encodeCommand([]string{"shutdown", "nosave", "force"}))
	if len(out) != 0 || !errors.Is(err, pipeline.ErrClose) {
		t.Errorf("SHUTDOWN NOSAVE FORCE: reply %q, err %v; want no reply and a close", out, err)
	}
	want := [][4]bool{{true, false, true, false}, {false, true, false, true}}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("hook calls %v, want %v", calls, want)
	}
}

func TestDebugSleep(t *testing.T) {
	e := newTestEngine()
	sleeper, other := newTestConn(t, e), newTestConn(t, e)
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		out, _ := sleeper.send(encodeCommand([]string{"DEBUG", "SLEEP", "0.1"}))
		if string(out) != "+OK\r\n" {
			done <- -1
			return
		}
		done <- time.Since(start)
	}()
	time.Sleep(10 * time.Millisecond)
	start := time.Now()
	if got := other.do("DBSIZE"); got != ":0\r\n" {
		t.Fatalf("DBSIZE during DEBUG SLEEP: %q", got)
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("another connection waited %v during DEBUG SLEEP", d)
	}
	if d := <-done; d < 100*time.Millisecond || d > time.Second {
		t.Errorf("DEBUG SLEEP 0.1 took %v", d)
	}
	start = time.Now()
	for _, arg := range []string{"0", "-1", "abc", "0.00x"} {
		if got := sleeper.do("DEBUG", "SLEEP", arg); got != "+OK\r\n" {
			t.Errorf("DEBUG SLEEP %s: %q", arg, got)
		}
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("zero sleeps took %v", d)
	}
}

func TestLeadingFloat(t *testing.T) {
	f := func(in string, want float64) {
		t.Helper()
		if got := leadingFloat([]byte(in)); got != want {
			t.Errorf("leadingFloat(%q) = %v, want %v", in, got, want)
		}
	}
	f("0.25", 0.25)
	f("1.5abc", 1.5)
	f("abc", 0)
	f("", 0)
	f("-2", -2)
	f("3e-1s", 0.3)
}

var debugObjectRE = regexp.MustCompile(`^\+Value at:0x[0-9a-f]+ refcount:(\d+) encoding:(\S+) ` +
	`serializedlength:(\d+) lru:(\d+) lru_seconds_idle:(\d+)\r\n$`)

func TestDebugObject(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	now := uint32(time.Now().Unix())
	cases := []struct {
		val, refcount, enc, serialized string
	}{
		{"hello", "1", "embstr", "6"},
		{"123", "2147483647", "int", "2"},
		{"-5", "1", "int", "2"},
		{"1234567", "1", "int", "5"},
		{"0123", "1", "embstr", "5"},
		{strings.Repeat("x", 44), "1", "embstr", "45"},
		{strings.Repeat("x", 100), "1", "raw", "102"},
	}
	for i, c := range cases {
		key := fmt.Sprint("key", i)
		ent := putString(e, 0, key, c.val, 0)
		ent.Access = now - 7
		m := debugObjectRE.FindStringSubmatch(tc.do("DEBUG", "OBJECT", key))
		if m == nil {
			t.Fatalf("%q: bad DEBUG OBJECT reply", c.val)
		}
		if m[1] != c.refcount || m[2] != c.enc || m[3] != c.serialized {
			t.Errorf("%q: refcount %s encoding %s serializedlength %s, want %s %s %s", c.val, m[1], m[2], m[3],
				c.refcount, c.enc, c.serialized)
		}
		if idle, _ := strconv.Atoi(m[5]); idle < 7 || idle > 9 {
			t.Errorf("%q: lru_seconds_idle %d, want about 7", c.val, idle)
		}
		if lru, _ := strconv.Atoi(m[4]); uint32(lru) != (now-7)&lruClockMax {
			t.Errorf("%q: lru %d", c.val, lru)
		}
	}
	if got := tc.do("DEBUG", "OBJECT", "missing"); got != "-ERR no such key\r\n" {
		t.Errorf("missing key: %q", got)
	}
}

// TestDebugObjectMatchesRedis checks the fields DEBUG OBJECT shares with a real redis-server
// (encoding, refcount, serializedlength) for strings Redis does not compress.
func TestDebugObjectMatchesRedis(t *testing.T) {
	conn, stop := startRedis(t)
	defer stop()
	r := bufio.NewReader(conn)
	do := func(args ...string) string {
		conn.Write(encodeCommand(args))
		raw, err := resptest.ReadRaw(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	e := newTestEngine()
	tc := newTestConn(t, e)
	for _, v := range []string{"hello", "7", "9999", "10000", "-1", "70000", "4294967296", "0123", "abc def",
		strings.Repeat("q", 20), "12345678901234567890", "123456789012345678901"} {
		do("SET", "k", v)
		putString(e, 0, "k", v, 0)
		want := debugObjectRE.FindStringSubmatch(do("DEBUG", "OBJECT", "k"))
		got := debugObjectRE.FindStringSubmatch(tc.do("DEBUG", "OBJECT", "k"))
		if want == nil || got == nil {
			t.Fatalf("%q: unparsable replies", v)
		}
		if got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
			t.Errorf("%q: refcount/encoding/serializedlength %v, redis %v", v, got[1:4], want[1:4])
		}
	}
}

// fakeConfig is a ConfigStore holding fixed values.
type fakeConfig map[string]string

func (f fakeConfig) Get(pattern string) [][2]string {
	if v, ok := f[pattern]; ok {
		return [][2]string{{pattern, v}}
	}
	return nil
}
func (f fakeConfig) Set([][2]string) error { return nil }
func (f fakeConfig) Rewrite() error        { return nil }

func TestDebugEnableCommand(t *testing.T) {
	f := func(mode, addr string, allowed bool) {
		t.Helper()
		e := newTestEngine()
		e.Config = fakeConfig{"enable-debug-command": mode}
		got := newTestConnAt(t, e, addr).do("DEBUG", "SLEEP", "0")
		if want := map[bool]string{true: "+OK\r\n", false: "-" + ErrDebugDisabled + "\r\n"}[allowed]; got != want {
			t.Errorf("mode %s from %s: %q", mode, addr, got)
		}
	}
	f("no", "127.0.0.1:5000", false)
	f("yes", "10.1.2.3:5000", true)
	f("local", "127.0.0.1:5000", true)
	f("local", "[::1]:5000", true)
	f("local", "10.1.2.3:5000", false)
}

func TestDebugHelp(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	got := splitReplies(t, []byte(tc.do("DEBUG", "HELP")))
	if len(got) != 1 {
		t.Fatalf("DEBUG HELP: %q", got)
	}
	for _, sub := range []string{"OBJECT <key>", "SLEEP <seconds>", "HELP"} {
		if !strings.Contains(got[0], "\r\n+"+sub+"\r\n") {
			t.Errorf("DEBUG HELP lacks %s: %q", sub, got[0])
		}
	}
	if !strings.HasPrefix(got[0], fmt.Sprintf("*%d\r\n+DEBUG <subcommand>", len(debugHelpLines))) {
		t.Errorf("DEBUG HELP header: %q", got[0])
	}
}
