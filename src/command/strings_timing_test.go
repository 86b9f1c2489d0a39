package command

import (
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
	return newBatchConn(tb, setup, cmd)
}

// newBatchConn prepares a connection, after running setup, whose request is cmds cycled to
// hotBatch commands.
func newBatchConn(tb testing.TB, setup [][]string, cmds ...[]string) *hotConn {
	tc := newTestConn(tb, newTestEngine())
	for _, s := range setup {
		tc.do(s...)
	}
	h := &hotConn{tc: tc}
	for i := range hotBatch {
		h.req = append(h.req, encodeCommand(cmds[i%len(cmds)])...)
	}
	for range 3 { // warm up: buffers reach their steady sizes
		h.run(tb)
	}
	return h
}

// churn is n pairs of commands that add a new element to key and remove it again (add and del
// name the commands, item(i) the element's arguments), so that a batch leaves the key as it was.
func churn(add, del, key string, item func(i int) []string) [][]string {
	var cmds [][]string
	for i := range hotBatch / 2 {
		it := item(i)
		cmds = append(cmds, append([]string{add, key}, it...), []string{del, key, it[0]})
	}
	return cmds
}

// hotReplies serves h's batch once and fails unless it answered hotBatch replies, none an error.
func hotReplies(t *testing.T, name string, h *hotConn) []byte {
	t.Helper()
	h.tc.stream.in = h.req
	out, err := h.tc.send(nil)
	replies := splitReplies(t, out)
	bad := err != nil || len(replies) != hotBatch
	for _, r := range replies {
		bad = bad || strings.HasPrefix(r, "-")
	}
	if bad {
		t.Fatalf("%s: bad replies %.200q, %v", name, out, err)
	}
	return out
}

// checkNoAllocs fails if serving h's batch allocates once warm.
func checkNoAllocs(t *testing.T, name string, h *hotConn) {
	t.Helper()
	// A command slower than slowlog-log-slower-than (10 ms) is logged, and a log entry allocates:
	// under -race on a loaded machine a PFCOUNT of three keys or a GEOSEARCH now and then is. The
	// clock is still read per command; only the entry is out of reach. (CONFIG SET through the
	// engine's settings: the connection's user may not be allowed it.)
	e := h.tc.e
	old := *e.Settings()
	quiet := old
	quiet.SlowlogLogSlowerThan = 60_000_000
	e.SetSettings(quiet)
	defer e.SetSettings(old)
	if n := testing.AllocsPerRun(200, func() { h.run(t) }); n != 0 {
		t.Errorf("%s: %v allocations per batch of %d", name, n, hotBatch)
	}
}

// benchHot serves h's batch b.N times, reporting allocations and the time per command.
func benchHot(b *testing.B, h *hotConn) {
	b.ReportAllocs()
	b.SetBytes(int64(len(h.req)))
	for b.Loop() {
		h.run(b)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*hotBatch), "ns/cmd")
}

// run serves one batch straight from the request bytes and discards the replies.
func (h *hotConn) run(tb testing.TB) {
	if err := h.tc.serveRaw(h.req); err != nil {
		tb.Fatal(err)
	}
	h.tc.stream.out.Reset()
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
		if out := hotReplies(t, hc.name, h); !strings.HasPrefix(string(out), hc.reply) {
			t.Fatalf("%s: replies %.100q, want %q first", hc.name, out, hc.reply)
		}
		checkNoAllocs(t, hc.name, h)
	}
}

func BenchmarkStringsHotPath(b *testing.B) {
	for _, hc := range hotCases {
		b.Run(hc.name, func(b *testing.B) { benchHot(b, newHotConn(b, hc.setup, hc.cmd...)) })
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
	checkNoAllocs(t, "mixed batch across shards", newMixedConn(t))
}

func BenchmarkMixedBatch(b *testing.B) { benchHot(b, newMixedConn(b)) }
