package main

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in nanoseconds, from 1 ns to maxLatency, to 3 significant digits.
const maxLatency = int64(time.Minute)

// worker drives one connection, redis-benchmark's -P way: it builds a batch of up to pipeline
// requests, sends the batch with one write, and reads every reply before building the next. The batch
// buffer, the reply buffer and the histograms are the worker's own, so the steady state allocates
// nothing and shares nothing but the stop flag and the progress counter.
//
// A request's latency runs from just before its batch's write to the read that brought the last byte
// of its reply.
type worker struct {
	conn     io.ReadWriter
	rd       *replyReader
	wbuf     []byte
	tpls     []*template
	order    []uint8 // the --ratio schedule, cycled
	pos      int
	kinds    []uint8 // the template of each request of the current batch
	exp      expander
	pipeline int
	quota    int64 // requests left; negative means until stop
	stop     *atomic.Bool
	hists    []*hdrhistogram.Histogram // one per template
	ops      paddedCounter
}

// paddedCounter keeps each worker's progress counter on its own cache line, so the progress reader
// and the other workers never contend for it.
type paddedCounter struct {
	_ [64]byte
	n atomic.Uint64
	_ [56]byte
}

// replyError is an error reply from the server: it fails the run.
type replyError struct {
	command string
	msg     string
}

func (e *replyError) Error() string {
	return fmt.Sprintf("error reply to %s: %s", e.command, e.msg)
}

func maxLen(lines [][]byte) int {
	n := 0
	for _, l := range lines {
		n = max(n, len(l))
	}
	return n
}

// newWorker sets up a worker on conn; rd reads conn's replies (nil for a new reader).
func newWorker(conn io.ReadWriter, rd *replyReader, tpls []*template, order []uint8, pipeline int, e expander) *worker {
	size := 0
	for _, t := range tpls {
		size = max(size, t.maxSize(e.width)+t.lines*maxLen(e.lines))
	}
	if rd == nil {
		rd = newReplyReader(conn, 64*1024)
	}
	w := &worker{
		conn: conn, rd: rd, wbuf: make([]byte, 0, size*pipeline),
		tpls: tpls, order: order, kinds: make([]uint8, 0, pipeline), exp: e, pipeline: pipeline, quota: -1,
	}
	for range tpls {
		w.hists = append(w.hists, hdrhistogram.New(1, maxLatency, 3))
	}
	return w
}

// run sends batches until the quota is spent, the key source runs dry, stop is set, or something
// fails; an error reply or an unexpected one fails at once.
func (w *worker) run() error {
	for w.stop == nil || !w.stop.Load() {
		if !w.fill() {
			return nil
		}
		if err := w.roundTrip(); err != nil {
			return err
		}
	}
	return nil
}

// fill builds the next batch; false when there is nothing left to send.
func (w *worker) fill() bool {
	w.wbuf, w.kinds = w.wbuf[:0], w.kinds[:0]
	for len(w.kinds) < w.pipeline && w.quota != 0 {
		kind := w.order[w.pos]
		buf, ok := w.tpls[kind].appendTo(w.wbuf, &w.exp)
		w.wbuf = buf
		if !ok {
			w.quota = 0
			break
		}
		if w.pos++; w.pos == len(w.order) {
			w.pos = 0
		}
		w.kinds = append(w.kinds, kind)
		if w.quota > 0 {
			w.quota--
		}
	}
	return len(w.kinds) > 0
}

// roundTrip writes the batch once and checks and times every reply: an error reply, or one that is
// not what its template expects, fails the run.
func (w *worker) roundTrip() error {
	sent := time.Now()
	if _, err := w.conn.Write(w.wbuf); err != nil {
		return fmt.Errorf("cannot send: %w", err)
	}
	for _, kind := range w.kinds {
		bad, err := w.rd.next(w.tpls[kind].expect)
		if err != nil {
			return fmt.Errorf("cannot read reply: %w", err)
		}
		if bad != nil {
			return w.tpls[kind].failure(bad)
		}
		w.hists[kind].RecordValue(min(int64(w.rd.at.Sub(sent)), maxLatency))
	}
	w.ops.n.Add(uint64(len(w.kinds)))
	return nil
}
