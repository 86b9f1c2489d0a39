package main

import (
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hotkv/hotkv/net/resp"
)

// fakeServer answers each request written to it, in memory and without allocating once warm:
// PING gets +PONG, GET its value (256 bytes unless set), MGET an array of it, MISS a nil, FAIL an
// error, anything else +OK.
type fakeServer struct {
	args     [][]byte
	out      []byte
	r        int
	requests int
	value    []byte
}

func newFakeServer() *fakeServer {
	return &fakeServer{value: []byte(strings.Repeat("v", 256))}
}

func (f *fakeServer) Write(p []byte) (int, error) {
	for off := 0; off < len(p); {
		args, n, _, err := resp.Parse(f.args[:0], p[off:], nil)
		if err != nil || n == 0 {
			return off, errors.New("fakeServer: bad request")
		}
		f.args, off = args, off+n
		f.requests++
		f.out = f.reply(f.out, string(args[0]), len(args))
	}
	return len(p), nil
}

func (f *fakeServer) reply(dst []byte, name string, args int) []byte {
	switch name {
	case "PING":
		return resp.AppendSimple(dst, "PONG")
	case "GET":
		return resp.AppendBulk(dst, f.value)
	case "MGET":
		dst = resp.AppendArrayLen(dst, args-1)
		for range args - 1 {
			dst = resp.AppendBulk(dst, f.value)
		}
		return dst
	case "MISS":
		return resp.AppendNull(dst, 2)
	case "FAIL":
		return resp.AppendError(dst, "ERR failing on purpose")
	}
	return resp.AppendSimple(dst, "OK")
}

func (f *fakeServer) Read(p []byte) (int, error) {
	n := copy(p, f.out[f.r:])
	if f.r += n; f.r == len(f.out) {
		f.out, f.r = f.out[:0], 0
	}
	return n, nil
}

func testWorker(t *testing.T, srv *fakeServer, pipeline int, cmds ...string) *worker {
	t.Helper()
	var args []string
	for _, c := range cmds {
		args = append(args, "--command", c)
	}
	return testWorkerArgs(t, srv, pipeline, args...)
}

// testWorkerArgs sets up a worker with 16-byte data from hotkv-benchmark's flags (--command,
// --expect, --allow-misses).
func testWorkerArgs(t *testing.T, srv *fakeServer, pipeline int, args ...string) *worker {
	t.Helper()
	cfg, err := parseFlags(append([]string{"--data-size", "16"}, args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tpls, order, err := cfg.compile()
	if err != nil {
		t.Fatal(err)
	}
	return newWorker(srv, nil, tpls, order, pipeline, expander{keys: &uniformKeys{n: 1000}, data: makeData(16, 1)})
}

func TestWorkerSpendsItsQuota(t *testing.T) {
	srv := newFakeServer()
	w := testWorker(t, srv, 7, "SET k:__key__ __data__", "GET k:__key__")
	w.quota = 100
	if err := w.run(); err != nil {
		t.Fatal(err)
	}
	if srv.requests != 100 || w.ops.n.Load() != 100 {
		t.Fatalf("server saw %d requests, worker counted %d; want 100", srv.requests, w.ops.n.Load())
	}
	if w.hists[0].TotalCount() != 50 || w.hists[1].TotalCount() != 50 {
		t.Fatalf("per-command counts %d and %d, want 50 each", w.hists[0].TotalCount(), w.hists[1].TotalCount())
	}
}

func TestWorkerStopsOnFlag(t *testing.T) {
	var stop atomic.Bool
	stop.Store(true)
	srv := newFakeServer()
	w := testWorker(t, srv, 5, "PING")
	w.stop = &stop
	if err := w.run(); err != nil || srv.requests != 0 {
		t.Fatalf("a stopped worker sent %d requests (err %v)", srv.requests, err)
	}
}

func TestWorkerFailsOnErrorReply(t *testing.T) {
	w := testWorker(t, newFakeServer(), 10, "PING", "FAIL x")
	w.quota = 1000
	err := w.run()
	var re *replyError
	if !errors.As(err, &re) || re.command != "FAIL" || re.msg != "ERR failing on purpose" {
		t.Fatalf("err = %v, want the error reply to FAIL", err)
	}
	if got := err.Error(); got != "error reply to FAIL: ERR failing on purpose" {
		t.Fatalf("message %q", got)
	}
}

// A GET answered with a nil fails the run, naming the reply, unless --allow-misses; so does a value
// that is not __data__ where the template expects it.
func TestWorkerFailsOnMisses(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		srv := newFakeServer()
		srv.value = makeData(16, 1)
		w := testWorkerArgs(t, srv, 10, args...)
		w.quota = 100
		err := w.run()
		var ue *unexpectedReply
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", args, err)
		case want != "" && (!errors.As(err, &ue) || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("%q: err = %v, want %q", args, err, want)
		}
	}
	f("unexpected reply to MISS k:__key__: $-1 (nil); expected a bulk string; is the data loaded",
		"--command", "PING", "--command", "MISS k:__key__", "--expect", "bulk")
	f("", "--command", "PING", "--command", "MISS k:__key__", "--expect", "bulk", "--allow-misses")
	f("", "--command", "GET k:__key__", "--expect", "data", "--command", "MGET k:__key__ k:__key__", "--expect", "array:2:data")
	f("unexpected reply to GET k:__key__: $16 whose bytes differ from __data__ from byte 0 on",
		"--data-size", "16", "--seed", "2", "--command", "GET k:__key__", "--expect", "data")
	f("unexpected reply to MGET k:__key__: *1; expected an array of 2 elements",
		"--command", "MGET k:__key__", "--expect", "array:2:bulk")
}

// The steady state of a connection, building a batch, writing it and checking every reply against
// its expectation, allocates nothing.
func TestWorkerAllocatesNothing(t *testing.T) {
	srv := newFakeServer()
	srv.value = makeData(16, 1)
	w := testWorkerArgs(t, srv, 30, "--command", "GET key:__key__", "--expect", "data",
		"--command", "MGET key:__key__ key:__key__ key:__key__", "--expect", "array:3:data",
		"--command", "MSET key:__key__ __data__ key:__key__ __data__", "--command", "SET list:__key__ __rand__",
		"--command", "PING", "--command", "MISS x", "--allow-misses")
	for range 10 { // warm up the fake server's buffers
		w.fill()
		if err := w.roundTrip(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(200, func() {
		w.fill()
		if err := w.roundTrip(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("one batch of 30 requests allocates %v times", allocs)
	}
}
