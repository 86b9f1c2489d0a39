package command

import (
	"sync/atomic"
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
	hists        histSet       // latency histograms by Spec.id (stats_hist.go)
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
		r[i].cmds, r[i].hists = make([]readCounter, numSpecs), newHistSet()
	}
	return r
}

func (st *readerState) count(spec *Spec, failed bool) {
	c := &st.cmds[spec.id]
	c.calls.Add(1)
	if failed {
		c.failed.Add(1)
	}
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
