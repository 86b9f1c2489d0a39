package main

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hotkv/hotkv/net/resp"
)

// fakeServer answers each request written to it, in memory and without allocating once warm:
// PING gets +PONG, GET a 256-byte bulk, FAIL an error, anything else +OK.
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
		f.out = f.reply(f.out, string(args[0]))
	}
	return len(p), nil
}

func (f *fakeServer) reply(dst []byte, name string) []byte {
	switch name {
	case "PING":
		return resp.AppendSimple(dst, "PONG")
	case "GET":
		return resp.AppendBulk(dst, f.value)
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
	tpls, order, err := compileCommands(cmds, "", 16)
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

// The steady state of a connection, building a batch, writing it and checking every reply, allocates
// nothing.
func TestWorkerAllocatesNothing(t *testing.T) {
	w := testWorker(t, newFakeServer(), 30, "GET key:__key__", "MSET key:__key__ __data__ key:__key__ __data__", "PING")
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
