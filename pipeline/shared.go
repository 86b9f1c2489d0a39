package pipeline

import (
	"sync/atomic"
	_ "unsafe" // go:linkname
)

// Shared reads. A work item whose slots are all marked Shared (commands that only read: they
// change nothing but an entry's access time) runs without the shard's token, beside such work of
// other batches on other cores; a barrier that only reads (MGET over several shards) does the
// same through Share. On two cores a token is a cache line that changes hands on most
// batches (about 250 ns a crossing on the test VM): with every GET taking tokens, two cores
// served less than one; without them, GET on shared shards runs as fast as on shards of its own
// (BenchmarkParallel/GET against GET-own).
//
// A reader registers in a counter of the P it runs on (so registering writes a line that stays
// on its core), then checks that the token is free; a token taker, once its CAS succeeded, waits
// until no P's counter for the shard is raised. Both sides write then read with sequentially
// consistent atomics, so either the reader sees the token taken (and goes the token's way) or the
// taker sees the reader and waits for it to finish. A reader never waits while registered, so the
// wait is as short as one batch's reads. It leaves the counter it raised, even if its goroutine
// has moved to another P since: a counter is zero exactly when none of its readers is inside.
// (The goroutine is not pinned to its P: a panic while pinned ends the process.)

// procPin and procUnpin are pulled from the runtime, which lists them as allowed to be (Go 1.23+
// refuses other pulls at link time). What breaks if that changes, and why readers stay correct
// whatever non-negative number procPin returns: docs/decisions.md, "Go runtime and system calls".
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// readerSlot returns the P the goroutine runs on now, the counters it registers in.
func readerSlot() int {
	p := procPin()
	procUnpin()
	return p
}

// readerPad keeps one P's counters off the cache lines of another's.
const readerPad = 16

// newReaders makes one counter per shard for each of procs Ps.
func newReaders(procs, shards int) [][]atomic.Int32 {
	r := make([][]atomic.Int32, procs)
	for p := range r {
		r[p] = make([]atomic.Int32, shards+2*readerPad)[readerPad : readerPad+shards]
	}
	return r
}

// waitReaders waits until no shared reader is inside the shard. The caller holds its token, so
// no new reader gets in.
func (sh *Shard) waitReaders() {
	for _, r := range sh.group.readers {
		for i := 0; r[sh.ID].Load() != 0; i++ {
			backoff(i)
		}
	}
}

// enter registers a shared reader of shard id on counters r; it fails when the token is taken.
func (g *Group) enter(r []atomic.Int32, id int32) bool {
	c := &r[id]
	c.Add(1)
	if g.Shards[id].token.Load() {
		c.Add(-1)
		return false
	}
	return true
}

// Share registers the caller as a shared reader of the given shards when none of their tokens is
// taken, so that a read of keys on several shards (MGET) runs beside other readers. It returns
// the counters' P to pass to Unshare, or false, holding nothing, when a token was taken. Between
// the two the caller must not block.
func (g *Group) Share(ids []int32) (p int, ok bool) {
	if p = readerSlot(); p < len(g.readers) {
		r := g.readers[p]
		n := 0
		for n < len(ids) && g.enter(r, ids[n]) {
			n++
		}
		if n == len(ids) {
			return p, true
		}
		leave(r, ids[:n])
	}
	return 0, false
}

// Unshare ends what Share began.
func (g *Group) Unshare(p int, ids []int32) { leave(g.readers[p], ids) }

// leave lowers the counters r of the given shards, which their readers had raised.
func leave(r []atomic.Int32, ids []int32) {
	for _, id := range ids {
		r[id].Add(-1)
	}
}

// runShared runs the segment's all-shared work items without tokens and returns the shards whose
// work still needs the token: work with an exclusive slot, work whose token was taken, and what
// an executor handed back (NeedToken).
func (b *Batch) runShared(g *Group) []int32 {
	some := false
	for _, id := range b.touched {
		some = some || b.works[id].excl == 0
	}
	if !some {
		return b.touched
	}
	p := readerSlot()
	if p >= len(g.readers) { // GOMAXPROCS grew after the group was made
		return b.touched
	}
	r := g.readers[p]
	in, rest := b.shared[:0], b.rest[:0]
	for _, id := range b.touched {
		if w := &b.works[id]; w.excl == 0 && g.enter(r, id) {
			w.reader, w.from = int32(p), -1
			in = append(in, id)
		} else {
			rest = append(rest, id)
		}
	}
	if len(in) > 0 {
		if g.Warm != nil {
			b.warm(g, in)
		}
		for _, id := range in {
			g.Shards[id].run(&b.works[id])
		}
		leave(r, in)
	}
	for _, id := range in {
		w := &b.works[id]
		w.reader = -1
		if w.from >= 0 {
			w.Slots = w.Slots[:copy(w.Slots, w.Slots[w.from:])]
			rest = append(rest, id)
		}
	}
	b.shared, b.rest = in, rest
	return rest
}

// Readers returns the number of Ps that can run shared work.
func (g *Group) Readers() int { return len(g.readers) }

// Reader returns the P whose counters the work registered in when it runs shared, -1 when it
// runs holding the token. Executors keep per-P state for shared work, since two cores may run
// shared work of one shard at once; the goroutine may have moved to another P since it
// registered, so that state must be changed with atomic adds.
func (w *Work) Reader() int { return int(w.reader) }

// NeedToken is called by the executor of shared work that cannot go on without the token (a
// read that found an expired key to delete): Slots from k on then run again holding it. The
// executor must stop at k and leave nothing changed by slot k.
func (w *Work) NeedToken(k int) { w.from = int32(k) }

// NeedBarrier is called by the executor of work with an Own slot (holding the token) when slot
// k cannot run on the shard after all (a script that met a key of another shard): slot k then
// runs as a barrier (Batch.Rerun) and the slots after it run again on the shard. The executor
// must stop at k and leave nothing changed by slot k.
func (w *Work) NeedBarrier(k int) { w.from = int32(k) }
