package command

import (
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/pipeline"
)

// Shared work (pipeline/shared.go) runs without the shard's token, possibly on two cores at
// once, so it must not write the shard's Ctx or counters: it runs in its client's Ctx (the one
// its barriers use) and counts in its P's. Only commands whose Spec is marked shared run this
// way (GET, MGET, STRLEN, GETRANGE, SCARD, SISMEMBER, SMISMEMBER, ZCARD, ZSCORE); they read
// through FindRead and change nothing but entries' access times,
// which keyspace stores atomically.

// readerState is one P's counters for shared work: two goroutines may run shared work of one
// shard at once, so they cannot count in the shard's counters, and counting in common ones
// would move a line between cores on every batch. Counts are atomic adds: a goroutine may move
// to another P while it reads, and INFO reads them while readers run.
type readerState struct {
	cmds         []readCounter // by Spec.id
	hits, misses atomic.Int64
	done         atomic.Int64
	works        atomic.Int64
	sink         atomic.Uint64 // keeps warm's loads from being optimised away
	_            [64]byte      // off the next P's lines
}

type readCounter struct{ calls, nsec, failed atomic.Int64 }

func newReaders(n int) []readerState {
	r := make([]readerState, n)
	for i := range r {
		r[i].cmds = make([]readCounter, numSpecs)
	}
	return r
}

// execShared runs one batch's slots for one shard without its token, counting in r. A slot
// that finds it needs the token (FindRead met an expired key) hands it and the rest back.
func (e *Engine) execShared(r *readerState, w *pipeline.Work) {
	b := w.Batch()
	// The client's own Ctx: only its goroutine runs its shared work, and never beside a
	// barrier or connection command of its own.
	c := &b.Slots[w.Slots[0]].Client.(*Client).ctx
	c.rstats = r
	defer func() { c.rstats = nil }()
	timed := r.works.Add(1)%timeSample == 0
	var start time.Time
	if timed {
		start = time.Now()
	}
	ran := len(w.Slots)
	for k, i := range w.Slots {
		e.call(c, &b.Slots[i], b.Now)
		if c.needToken {
			c.needToken = false
			w.NeedToken(k)
			ran = k
			break
		}
	}
	r.done.Add(int64(ran))
	if timed && ran > 0 {
		per := int64(time.Since(start)) * timeSample / int64(ran)
		for _, i := range w.Slots[:ran] {
			r.cmds[b.Slots[i].Cmd.(*Spec).id].nsec.Add(per)
		}
	}
}

func (st *readerState) count(spec *Spec, failed bool) {
	c := &st.cmds[spec.id]
	c.calls.Add(1)
	if failed {
		c.failed.Add(1)
	}
}

// runKeysShared runs a shared command whose keys span shards (MGET) as a reader of them all,
// without their tokens. It reports false, having changed nothing, when a token was taken or a
// key must be deleted; the caller then runs it holding the tokens.
func (e *Engine) runKeysShared(c *Ctx, s *pipeline.Slot, cl *Client, now int64) bool {
	p, ok := e.Group.Share(cl.shards)
	if !ok {
		return false
	}
	defer e.Group.Unshare(p, cl.shards)
	r := &e.readers[p]
	r.sink.Add(e.warmKeys(s, cl.keyPos))
	c.rstats = r
	e.call(c, s, now)
	undone := c.needToken
	c.rstats, c.needToken = nil, false
	return !undone
}

// readerCalls sums every P's counters of spec.
func (e *Engine) readerCalls(spec *Spec) (calls, nsec, failed int64) {
	for i := range e.readers {
		c := &e.readers[i].cmds[spec.id]
		calls, nsec, failed = calls+c.calls.Load(), nsec+c.nsec.Load(), failed+c.failed.Load()
	}
	return
}

// readerTotals sums every P's keyspace hits and misses and commands run.
func (e *Engine) readerTotals() (hits, misses, done int64) {
	for i := range e.readers {
		st := &e.readers[i]
		hits, misses, done = hits+st.hits.Load(), misses+st.misses.Load(), done+st.done.Load()
	}
	return
}

// resetReaderStats clears the P counters (CONFIG RESETSTAT); a reader counting at that moment
// may keep its count.
func (e *Engine) resetReaderStats() {
	for i := range e.readers {
		st := &e.readers[i]
		for j := range st.cmds {
			c := &st.cmds[j]
			c.calls.Store(0)
			c.nsec.Store(0)
			c.failed.Store(0)
		}
		st.hits.Store(0)
		st.misses.Store(0)
	}
}
