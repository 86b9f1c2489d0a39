package command

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline"
)

// memStream is an in-memory pipeline.Stream: tests push request bytes and read replies.
type memStream struct {
	in     []byte
	off    int // bytes skipped
	out    bytes.Buffer
	closed bool
}

func (m *memStream) Len() int { return len(m.in) - m.off }
func (m *memStream) Peek(n int) ([]byte, error) {
	if n > m.Len() {
		return nil, io.ErrUnexpectedEOF // tests send whole commands; a wait would block forever
	}
	return m.in[m.off : m.off+n], nil
}
func (m *memStream) Skip(n int) error     { m.off += n; return nil }
func (m *memStream) Release() error       { m.in, m.off = m.in[m.off:], 0; return nil }
func (*memStream) Inline() bool           { return false }
func (*memStream) Fill() bool             { return false }
func (m *memStream) Write(p []byte) error { m.out.Write(p); return nil }

// testConn is a client connected to an in-process engine with no sockets.
type testConn struct {
	t      testing.TB
	e      *Engine
	stream *memStream
	conn   *pipeline.Conn
	client *Client
}

func newTestEngine() *Engine {
	st := testConfigStore().(testStore)
	e := NewEngine(Options{Shards: 8, Databases: 16, Settings: DefaultSettings(), Config: st})
	wireMemory(e, st) // memory_test.go
	// CONFIG SET of these reaches the engine's settings, as src/server wires them.
	st.OnChange("notify-keyspace-events", func(string) {
		s := *e.Settings()
		s.NotifyKeyspaceEvents = st.Int("notify-keyspace-events")
		e.SetSettings(s)
	})
	st.OnChange("lazyfree-lazy-expire", func(string) {
		s := *e.Settings()
		s.LazyfreeLazyExpire = st.Bool("lazyfree-lazy-expire")
		e.SetSettings(s)
	})
	for _, name := range []string{"value-compression", "value-compression-threshold"} {
		st.OnChange(name, func(string) {
			s := *e.Settings()
			s.ValueCompression = st.Int("value-compression")
			s.ValueCompressionThreshold = st.Int("value-compression-threshold")
			e.SetSettings(s)
		})
	}
	return e
}

// newNotifyAllEngine is a test engine with notify-keyspace-events KEA (every class but m and n),
// for the effects tests.
func newNotifyAllEngine() *Engine {
	e := newTestEngine()
	s := *e.Settings()
	s.NotifyKeyspaceEvents = int64(NotifyKeyspace | NotifyKeyevent | NotifyGeneric | NotifyString |
		NotifyList | NotifySet | NotifyHash | NotifyZSet | NotifyExpired | NotifyEvicted | NotifyStream)
	e.SetSettings(s)
	return e
}

func newTestConn(t testing.TB, e *Engine) *testConn {
	st := &memStream{}
	cl := e.NewClient("127.0.0.1:50000", "127.0.0.1:6379", func() { st.closed = true })
	return &testConn{t: t, e: e, stream: st, conn: pipeline.NewConn(e.Env(), st, cl), client: cl}
}

// serveRaw serves req as the bytes of one read, leaving the replies in tc.stream.out: the
// benchmarks' way to replay a prepared batch without copying it.
func (tc *testConn) serveRaw(req []byte) error {
	tc.stream.in, tc.stream.off = req, 0
	return tc.conn.Serve()
}

// send writes raw request bytes and returns every reply byte the server wrote.
func (tc *testConn) send(raw []byte) ([]byte, error) {
	tc.stream.in = append(tc.stream.in, raw...)
	err := tc.conn.Serve()
	out := bytes.Clone(tc.stream.out.Bytes())
	tc.stream.out.Reset()
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	return out, err
}

// do sends one command given as arguments and returns its raw reply.
func (tc *testConn) do(args ...string) string {
	tc.t.Helper()
	out, err := tc.send(encodeCommand(args))
	if err != nil && !errors.Is(err, pipeline.ErrClose) {
		tc.t.Fatalf("%q: %v", args, err)
	}
	return string(out)
}

func encodeCommand(args []string) []byte {
	b := resp.AppendArrayLen(nil, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	return b
}

// Reply helpers: every test reads replies through net/resp/resptest, the tests' one parser.

// splitReplies splits a reply stream into single replies, each its exact bytes.
func splitReplies(t testing.TB, b []byte) []string {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(b))
	var out []string
	for {
		raw, err := resptest.ReadRaw(r)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("bad reply stream %q: %v", b, err)
		}
		out = append(out, string(raw))
	}
}

// replyOf decodes one reply.
func replyOf(t testing.TB, raw string) resptest.Value {
	t.Helper()
	v, err := resptest.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// replyAny decodes a reply made of arrays, strings and integers: arrays become []any, strings
// string, integers int64, a null nil. It fails the test on anything else.
func replyAny(t testing.TB, raw string) any {
	t.Helper()
	return valueAny(t, replyOf(t, raw))
}

func valueAny(t testing.TB, v resptest.Value) any {
	t.Helper()
	switch {
	case v.Null:
		return nil
	case v.Kind == ':':
		n, err := v.Int()
		if err != nil {
			t.Fatal(err)
		}
		return n
	case v.Kind == '$' || v.Kind == '+':
		return v.Str
	case v.Kind == '*':
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = valueAny(t, e)
		}
		return out
	}
	t.Fatalf("unexpected reply %s", v)
	return nil
}

// replyStrings decodes an aggregate of strings.
func replyStrings(t testing.TB, raw string) []string {
	t.Helper()
	s, err := replyOf(t, raw).Strings()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replyText decodes a bulk, simple or verbatim string.
func replyText(t testing.TB, raw string) string {
	t.Helper()
	s, err := replyOf(t, raw).Text()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replyElems splits an aggregate reply into its elements' exact bytes.
func replyElems(t testing.TB, raw string) []string {
	t.Helper()
	hdr, rest, ok := strings.Cut(raw, "\r\n")
	if !ok || hdr == "" || !strings.ContainsRune("*~%", rune(hdr[0])) {
		t.Fatalf("not an aggregate: %q", raw)
	}
	return splitReplies(t, []byte(rest))
}
