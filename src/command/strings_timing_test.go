package command

import (
	"bytes"
	"strings"
	"testing"
)

// The hot string commands must allocate nothing per call once warm: the whole in-process path
// (parse, route, execute on the shard, encode, write) runs on a pipelined batch of 30 commands,
// as a loaded client sends them.

const hotBatch = 30

// hotConn is a test connection with a prepared pipelined request.
type hotConn struct {
	tc  *testConn
	req []byte
}

func newHotConn(tb testing.TB, setup [][]string, cmd ...string) *hotConn {
	tc := newTestConn(tb, newTestEngine())
	for _, s := range setup {
		tc.do(s...)
	}
	h := &hotConn{tc: tc, req: bytes.Repeat(encodeCommand(cmd), hotBatch)}
	for range 3 { // warm up: buffers reach their steady sizes
		h.run(tb)
	}
	return h
}

// run serves one batch straight from the request bytes and discards the replies.
func (h *hotConn) run(tb testing.TB) {
	st := h.tc.stream
	st.in, st.off = h.req, 0
	if err := h.tc.conn.Serve(); err != nil {
		tb.Fatal(err)
	}
	st.out.Reset()
}

// value is a 256-byte value, the size the design's probe measured with.
var value = strings.Repeat("v", 256)

var hotCases = []struct {
	name  string
	setup [][]string
	cmd   []string
	reply string
}{
	{"GET", [][]string{{"SET", "key:1", value}}, []string{"GET", "key:1"}, "$256\r\n" + value + "\r\n"},
	{"SET", [][]string{{"SET", "key:1", value}}, []string{"SET", "key:1", value}, "+OK\r\n"},
	{"INCR", [][]string{{"SET", "counter", "1000000"}}, []string{"INCR", "counter"}, ":"},
}

func TestStringsHotPathAllocatesNothing(t *testing.T) {
	for _, hc := range hotCases {
		h := newHotConn(t, hc.setup, hc.cmd...)
		h.tc.stream.in = h.req
		out, err := h.tc.send(nil)
		if err != nil || !strings.HasPrefix(string(out), hc.reply) || len(splitReplies(t, out)) != hotBatch {
			t.Fatalf("%s: bad replies %.100q, %v", hc.name, out, err)
		}
		if n := testing.AllocsPerRun(200, func() { h.run(t) }); n != 0 {
			t.Errorf("%s: %v allocations per batch of %d", hc.name, n, hotBatch)
		}
	}
}

func BenchmarkStringsHotPath(b *testing.B) {
	for _, hc := range hotCases {
		b.Run(hc.name, func(b *testing.B) {
			h := newHotConn(b, hc.setup, hc.cmd...)
			b.ReportAllocs()
			for b.Loop() {
				h.run(b)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*hotBatch), "ns/cmd")
		})
	}
}

// newMixedConn prepares a batch of GET, SET and INCR over 30 keys spread across the shards.
func newMixedConn(tb testing.TB) *hotConn {
	tc := newTestConn(tb, newTestEngine())
	var req []byte
	for i := range hotBatch {
		key := "key:" + strings.Repeat("x", i%7) + string(rune('a'+i))
		switch i % 3 {
		case 0:
			tc.do("SET", key, value)
			req = append(req, encodeCommand([]string{"GET", key})...)
		case 1:
			req = append(req, encodeCommand([]string{"SET", key, value})...)
		default:
			tc.do("SET", key, "1000")
			req = append(req, encodeCommand([]string{"INCR", key})...)
		}
	}
	h := &hotConn{tc: tc, req: req}
	for range 3 {
		h.run(tb)
	}
	return h
}

func TestMixedBatchAllocatesNothing(t *testing.T) {
	h := newMixedConn(t)
	if n := testing.AllocsPerRun(200, func() { h.run(t) }); n != 0 {
		t.Errorf("%v allocations per mixed batch of %d across shards", n, hotBatch)
	}
}

func BenchmarkMixedBatch(b *testing.B) {
	h := newMixedConn(b)
	b.ReportAllocs()
	for b.Loop() {
		h.run(b)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*hotBatch), "ns/cmd")
}
