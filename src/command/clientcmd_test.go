package command

import (
	"bufio"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline"
)

// clientLineFields are CLIENT LIST's fields in Redis 7.0's order.
var clientLineFields = []string{"id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db",
	"sub", "psub", "ssub", "multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl",
	"oll", "omem", "tot-mem", "events", "cmd", "user", "redir", "resp"}

// newTestConnAt is newTestConn with a chosen peer address.
func newTestConnAt(t testing.TB, e *Engine, addr string) *testConn {
	st := &memStream{}
	cl := e.NewClient(addr, "127.0.0.1:6379", func() { st.closed = true })
	return &testConn{t: t, stream: st, conn: pipeline.NewConn(e.Env(), st, cl), client: cl}
}

// parseClientLines splits CLIENT LIST text into one ordered field list per line.
func parseClientLines(t testing.TB, text string) [][][2]string {
	t.Helper()
	var out [][][2]string
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		var fields [][2]string
		for _, kv := range strings.Split(line, " ") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("bad field %q in %q", kv, line)
			}
			fields = append(fields, [2]string{k, v})
		}
		out = append(out, fields)
	}
	return out
}

func fieldNames(fields [][2]string) []string {
	var names []string
	for _, f := range fields {
		names = append(names, f[0])
	}
	return names
}

func field(fields [][2]string, name string) string {
	for _, f := range fields {
		if f[0] == name {
			return f[1]
		}
	}
	return "<missing>"
}

func TestClientListFields(t *testing.T) {
	e := newTestEngine()
	a, b := newTestConnAt(t, e, "127.0.0.1:50001"), newTestConnAt(t, e, "127.0.0.1:50002")
	b.client.SetFD(9)
	b.do("CLIENT", "SETNAME", "bee")
	b.do("SELECT", "3")
	b.do("CLIENT", "NO-EVICT", "on")
	b.do("PING")
	a.do("HELLO", "3")

	lines := parseClientLines(t, replyText(t, a.do("CLIENT", "LIST")))
	if len(lines) != 2 {
		t.Fatalf("want 2 clients, got %d", len(lines))
	}
	for _, l := range lines {
		if got := fieldNames(l); !slices.Equal(got, clientLineFields) {
			t.Errorf("fields %v\nwant %v", got, clientLineFields)
		}
	}
	self, other := lines[0], lines[1]
	want := map[string]string{"id": fmt.Sprint(a.client.ID), "addr": "127.0.0.1:50001", "cmd": "client|list",
		"flags": "N", "db": "0", "resp": "3", "name": "", "argv-mem": "10", "user": "default"}
	for k, v := range want {
		if got := field(self, k); got != v {
			t.Errorf("self %s=%q, want %q", k, got, v)
		}
	}
	want = map[string]string{"id": fmt.Sprint(b.client.ID), "addr": "127.0.0.1:50002", "fd": "9",
		"name": "bee", "db": "3", "flags": "e", "cmd": "ping", "multi": "-1", "redir": "-1", "resp": "2"}
	for k, v := range want {
		if got := field(other, k); got != v {
			t.Errorf("other %s=%q, want %q", k, got, v)
		}
	}

	// ID filter: in the order asked, unknown ids skipped.
	ids := parseClientLines(t, replyText(t, a.do("CLIENT", "LIST", "ID", fmt.Sprint(b.client.ID), "12345",
		fmt.Sprint(a.client.ID))))
	if len(ids) != 2 || field(ids[0], "name") != "bee" || field(ids[1], "id") != fmt.Sprint(a.client.ID) {
		t.Errorf("CLIENT LIST ID: %v", ids)
	}
	info := parseClientLines(t, replyText(t, b.do("CLIENT", "INFO")))
	if len(info) != 1 || field(info[0], "id") != fmt.Sprint(b.client.ID) || field(info[0], "cmd") != "client|info" {
		t.Errorf("CLIENT INFO: %v", info)
	}
}

// TestClientInfoFieldsMatchRedis compares CLIENT INFO's field list with a real redis-server's.
func TestClientInfoFieldsMatchRedis(t *testing.T) {
	conn, stop := startRedis(t)
	defer stop()
	conn.Write(encodeCommand([]string{"CLIENT", "INFO"}))
	raw, err := resptest.ReadRaw(bufio.NewReader(conn))
	if err != nil {
		t.Fatal(err)
	}
	redisFields := fieldNames(parseClientLines(t, replyText(t, string(raw)))[0])
	tc := newTestConn(t, newTestEngine())
	ours := fieldNames(parseClientLines(t, replyText(t, tc.do("CLIENT", "INFO")))[0])
	if !slices.Equal(ours, redisFields) {
		t.Errorf("CLIENT INFO fields\n ours: %v\nredis: %v", ours, redisFields)
	}
}

func TestClientKill(t *testing.T) {
	e := newTestEngine()
	a := newTestConnAt(t, e, "127.0.0.1:50001")
	b := newTestConnAt(t, e, "127.0.0.1:50002")
	c := newTestConnAt(t, e, "127.0.0.1:50003")
	d := newTestConnAt(t, e, "127.0.0.1:50004")

	if got := a.do("CLIENT", "KILL", "ID", fmt.Sprint(b.client.ID)); got != ":1\r\n" {
		t.Fatalf("KILL ID: %q", got)
	}
	if !b.stream.closed || !b.client.killed.Load() {
		t.Fatal("killed client's connection was not closed")
	}
	if c.stream.closed || d.stream.closed || a.stream.closed {
		t.Fatal("KILL ID closed other connections")
	}
	e.RemoveClient(b.client) // the transport does this once the connection is gone

	if got := a.do("CLIENT", "KILL", "127.0.0.1:50003"); got != "+OK\r\n" || !c.stream.closed {
		t.Fatalf("old-form KILL: %q closed=%v", got, c.stream.closed)
	}
	e.RemoveClient(c.client)
	if got := a.do("CLIENT", "KILL", "127.0.0.1:50003"); got != "-ERR No such client\r\n" {
		t.Fatalf("old-form KILL of a gone client: %q", got)
	}

	// New form skips the caller by default.
	if got := a.do("CLIENT", "KILL", "TYPE", "normal"); got != ":1\r\n" || !d.stream.closed {
		t.Fatalf("KILL TYPE normal: %q", got)
	}
	e.RemoveClient(d.client)
	if a.stream.closed {
		t.Fatal("KILL with SKIPME yes closed the caller")
	}

	// SKIPME no kills the caller too, after its reply.
	out, err := a.send(encodeCommand([]string{"CLIENT", "KILL", "USER", "default", "SKIPME", "no"}))
	if string(out) != ":1\r\n" || !errors.Is(err, pipeline.ErrClose) {
		t.Fatalf("self kill: %q %v", out, err)
	}
}

func TestClientKillOldFormSelf(t *testing.T) {
	e := newTestEngine()
	a := newTestConnAt(t, e, "127.0.0.1:50001")
	out, err := a.send(encodeCommand([]string{"CLIENT", "KILL", "127.0.0.1:50001"}))
	if string(out) != "+OK\r\n" || !errors.Is(err, pipeline.ErrClose) {
		t.Fatalf("old-form self kill: %q %v", out, err)
	}
}

func TestClientPauseWriteBlocksWritesOnly(t *testing.T) {
	e := newTestEngine()
	admin, reader, writer := newTestConn(t, e), newTestConn(t, e), newTestConn(t, e)
	if got := admin.do("CLIENT", "PAUSE", "5000", "WRITE"); got != "+OK\r\n" {
		t.Fatalf("PAUSE: %q", got)
	}
	type result struct {
		out string
		at  time.Time
	}
	run := func(tc *testConn, args ...string) chan result {
		ch := make(chan result, 1)
		go func() {
			out, _ := tc.send(encodeCommand(args))
			ch <- result{string(out), time.Now()}
		}()
		return ch
	}
	write := run(writer, "FLUSHDB")
	select {
	case r := <-run(reader, "DBSIZE"):
		if r.out != ":0\r\n" {
			t.Fatalf("read during pause: %q", r.out)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a read command blocked during CLIENT PAUSE WRITE")
	}
	select {
	case r := <-write:
		t.Fatalf("write ran during CLIENT PAUSE WRITE: %q", r.out)
	case <-time.After(100 * time.Millisecond):
	}
	unpaused := time.Now()
	admin.do("CLIENT", "UNPAUSE")
	select {
	case r := <-write:
		if r.out != "+OK\r\n" || r.at.Before(unpaused) {
			t.Fatalf("write after unpause: %q at %v (unpause %v)", r.out, r.at, unpaused)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("write still blocked after CLIENT UNPAUSE")
	}
}

func TestClientPauseExpires(t *testing.T) {
	e := newTestEngine()
	admin, writer := newTestConn(t, e), newTestConn(t, e)
	start := time.Now()
	admin.do("CLIENT", "PAUSE", "150")
	if got := writer.do("FLUSHALL"); got != "+OK\r\n" {
		t.Fatalf("FLUSHALL: %q", got)
	}
	if d := time.Since(start); d < 140*time.Millisecond || d > 2*time.Second {
		t.Fatalf("write waited %v for a 150ms pause", d)
	}
	// An overflowing timeout pauses nothing, as in Redis.
	admin.do("CLIENT", "PAUSE", "9223372036854775807")
	done := make(chan string, 1)
	go func() { out, _ := writer.send(encodeCommand([]string{"FLUSHALL"})); done <- string(out) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		admin.do("CLIENT", "UNPAUSE")
		t.Fatal("an overflowing pause timeout paused clients")
	}
}

func TestClientReplyOffSkip(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	steps := []struct{ cmd, want string }{
		{"CLIENT REPLY OFF", ""},
		{"PING", ""},
		{"CLIENT REPLY SKIP", ""}, // SKIP is ignored while OFF
		{"ECHO x", ""},
	}
	for _, s := range steps {
		if got := tc.do(strings.Fields(s.cmd)...); got != s.want {
			t.Errorf("%s: %q, want %q", s.cmd, got, s.want)
		}
	}
	tc.client.replyMode = replyOn // what CLIENT REPLY ON does; its own reply is TestClientReplyOn's

	steps = []struct{ cmd, want string }{
		{"CLIENT REPLY SKIP", ""},
		{"PING", ""},
		{"ECHO a", "$1\r\na\r\n"},
		{"CLIENT REPLY SKIP", ""},
		{"CLIENT REPLY SKIP", ""}, // skipped itself, then skips the next one
		{"ECHO b", ""},
		{"ECHO c", "$1\r\nc\r\n"},
	}
	for _, s := range steps {
		if got := tc.do(strings.Fields(s.cmd)...); got != s.want {
			t.Errorf("%s: %q, want %q", s.cmd, got, s.want)
		}
	}

	// Within one batch.
	batch := append(encodeCommand([]string{"CLIENT", "REPLY", "SKIP"}), encodeCommand([]string{"ECHO", "1"})...)
	batch = append(batch, encodeCommand([]string{"ECHO", "2"})...)
	if out, _ := tc.send(batch); string(out) != "$1\r\n2\r\n" {
		t.Errorf("pipelined SKIP: %q", out)
	}
}

// TestClientReplyOn: ON answers +OK even after OFF or SKIP silenced its slot.
func TestClientReplyOn(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	tc.do("CLIENT", "REPLY", "OFF")
	if got := tc.do("CLIENT", "REPLY", "ON"); got != "+OK\r\n" {
		t.Fatalf("CLIENT REPLY ON after OFF: %q", got)
	}
	tc.do("CLIENT", "REPLY", "SKIP")
	if got := tc.do("CLIENT", "REPLY", "ON"); got != "+OK\r\n" {
		t.Fatalf("CLIENT REPLY ON after SKIP: %q", got)
	}
	if got := tc.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after ON: %q", got)
	}
}

func TestClientSetInfoAndNoTouch(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	steps := []struct{ cmd, want string }{
		{"CLIENT SETINFO LIB-NAME go-redis(,go1.22)", "+OK\r\n"},
		{"CLIENT SETINFO lib-ver 9.0.5", "+OK\r\n"},
		{"CLIENT SETINFO LIB-VER", "-ERR wrong number of arguments for 'client|setinfo' command\r\n"},
		{"CLIENT SETINFO color red", "-ERR Unrecognized option 'color'\r\n"},
		{"CLIENT NO-TOUCH on", "+OK\r\n"},
		{"CLIENT NO-TOUCH maybe", "-ERR syntax error\r\n"},
	}
	for _, s := range steps {
		if got := tc.do(strings.Fields(s.cmd)...); got != s.want {
			t.Errorf("%s: %q, want %q", s.cmd, got, s.want)
		}
	}
	if got := tc.do("CLIENT", "SETINFO", "lib-name", "bad name"); got !=
		"-ERR lib-name cannot contain spaces, newlines or special characters.\r\n" {
		t.Errorf("SETINFO with a space: %q", got)
	}
	if name, ver := tc.client.Lib(); name != "go-redis(,go1.22)" || ver != "9.0.5" {
		t.Errorf("Lib() = %q, %q", name, ver)
	}
	if !tc.client.noTouch {
		t.Error("NO-TOUCH on did not set the flag")
	}
	tc.do("CLIENT", "NO-TOUCH", "OFF")
	if tc.client.noTouch {
		t.Error("NO-TOUCH off did not clear the flag")
	}
	// SETINFO values stay out of CLIENT LIST: its fields are Redis 7.0's.
	line := replyText(t, tc.do("CLIENT", "INFO"))
	if strings.Contains(line, "lib-name") || strings.Contains(line, "go-redis") {
		t.Errorf("CLIENT INFO shows SETINFO values: %q", line)
	}
}

func TestClientIDsAreDistinct(t *testing.T) {
	e := newTestEngine()
	a, b := newTestConn(t, e), newTestConn(t, e)
	ida, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(a.do("CLIENT", "ID"), ":")))
	idb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(b.do("CLIENT", "ID"), ":")))
	if ida == idb || uint64(ida) != a.client.ID || uint64(idb) != b.client.ID {
		t.Errorf("CLIENT ID: %d and %d for clients %d and %d", ida, idb, a.client.ID, b.client.ID)
	}
}
