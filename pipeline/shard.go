package pipeline

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/pipeline/queue"
)

// Shard is an actor over one partition of the data. Its Data is touched only by the goroutine
// holding its token.
//
// Executor (flat combining): a goroutine that has work for a shard pushes it into the shard's
// mailbox and then tries to take the token. The winner drains the mailbox, running everyone's
// work, and before letting go checks the mailbox once more, so work pushed by a goroutine that
// lost the race is never stranded. Uncontended, the submitter runs its own work with no
// goroutine hop; contended, the holder batches the others' work.
type Shard struct {
	token   atomic.Bool
	waiting atomic.Int32 // lock calls past their first failed try; DoPolite defers to them
	mailbox queue.MPSC[*Work]
	ID      int
	// Data is the shard's state, owned by the command layer.
	Data  any
	exec  func(sh *Shard, w *Work)
	group *Group

	// pushed counts work items submitted, ran those run (written only by the token holder): the
	// metrics endpoint's queue depth is their difference (QueueLen).
	pushed, ran atomic.Int64
}

// Work is one batch's slots for one shard. It is owned by its Batch and reused.
type Work struct {
	node   queue.Node[*Work]
	batch  *Batch
	Slots  []int32 // indexes into batch.Slots, in request order
	excl   int32   // slots not marked Shared
	reader int32   // Reader()
	from   int32   // NeedToken's or NeedBarrier's slot, -1 when none
	own    bool    // a slot is Own: the batch's goroutine runs the work itself (runOwn)
}

// Batch returns the batch the work belongs to.
func (w *Work) Batch() *Batch { return w.batch }

// tryLock takes the token if it is free, then waits for shared readers to leave (shared.go).
func (sh *Shard) tryLock() bool {
	if sh.token.Load() || !sh.token.CompareAndSwap(false, true) {
		return false
	}
	sh.waitReaders()
	return true
}

// lock takes the token, waiting for the holder. The holder never blocks while holding it, so
// the wait is short.
func (sh *Shard) lock() {
	if sh.tryLock() {
		return
	}
	sh.waiting.Add(1)
	for i := 0; !sh.tryLock(); i++ {
		backoff(i)
	}
	sh.waiting.Add(-1)
}

// backoff is the i-th pause of a wait for a token: spin, then yield, then sleep briefly.
func backoff(i int) {
	switch {
	case i < 16:
	case i < 1000:
		runtime.Gosched()
	default:
		time.Sleep(20 * time.Microsecond)
	}
}

// waitFree waits until the token looks free, without taking it.
func (sh *Shard) waitFree() {
	for i := 0; sh.token.Load(); i++ {
		backoff(i)
	}
}

// unlock releases the token, first draining the mailbox; if work arrived after the last drain
// and nobody else took the token, it takes it back and drains again.
func (sh *Shard) unlock() {
	for {
		sh.drainLocked()
		sh.token.Store(false)
		if sh.mailbox.Empty() || !sh.tryLock() {
			return
		}
	}
}

func (sh *Shard) drainLocked() {
	for !sh.mailbox.Empty() {
		for n := sh.mailbox.PopAll(); n != nil; {
			next := n.Next() // n may be reused by its batch once done is called
			w := n.Value
			sh.run(w)
			w.batch.done()
			sh.ran.Store(sh.ran.Load() + 1)
			n = next
		}
	}
}

// QueueLen is how many work items wait in the mailbox or run now; read without the token, it
// may be off by the items being pushed or run at that instant.
func (sh *Shard) QueueLen() int64 { return max(sh.pushed.Load()-sh.ran.Load(), 0) }

// WorkItems is how many work items the shard has run.
func (sh *Shard) WorkItems() int64 { return sh.ran.Load() }

// Waiters is how many goroutines wait for the shard's token past a first failed try.
func (sh *Shard) Waiters() int32 { return sh.waiting.Load() }

// run runs w holding the token. A panic is caught here and kept in w's batch, so that the
// token is released and the rest of the mailbox runs (a goroutine stuck on its token would hang
// every client of the shard); the batch's own flush raises it once all its work is done.
func (sh *Shard) run(w *Work) {
	defer func() {
		if r := recover(); r != nil {
			w.batch.recordPanic(r)
		}
	}()
	sh.exec(sh, w)
}

// submit queues w and runs the shard if nobody holds it.
func (sh *Shard) submit(w *Work) {
	sh.pushed.Add(1)
	sh.mailbox.Push(&w.node)
	if sh.tryLock() {
		sh.unlock()
	}
}

// Group is the set of shards of one server.
type Group struct {
	Shards []*Shard
	// Warm, when set, is called by a batch holding the tokens of the given shards (or
	// registered as their shared reader) just before it runs their work (Batch.Work(id)): it
	// may read those shards' data to bring it into the cache, and must not change it, block or
	// panic.
	Warm func(b *Batch, held []int32)
	// readers are the shared readers' counters, per P and shard (shared.go).
	readers [][]atomic.Int32
}

// NewGroup makes n shards running exec for each work item; data(i) gives shard i its state.
func NewGroup(n int, exec func(sh *Shard, w *Work), data func(i int) any) *Group {
	g := &Group{Shards: make([]*Shard, n)}
	g.readers = newReaders(max(runtime.GOMAXPROCS(0), runtime.NumCPU()), n)
	for i := range g.Shards {
		sh := &Shard{ID: i, exec: exec, Data: data(i), group: g}
		sh.mailbox = queue.MPSC[*Work]{}
		g.Shards[i] = sh
	}
	return g
}

// Lock takes the tokens of the given shards, which must be sorted ascending without duplicates.
// The caller must not block until Unlock.
//
// It never waits while holding a token: when one is taken it releases what it holds, waits for
// that shard, and starts over. Holding tokens while waiting would let a descheduled waiter stall
// every shard it holds (a convoy); with more goroutines than cores that dominated multi-key
// commands.
func (g *Group) Lock(ids []int32) {
	for {
		n := 0
		for n < len(ids) && g.Shards[ids[n]].tryLock() {
			n++
		}
		if n == len(ids) {
			return
		}
		for i := n - 1; i >= 0; i-- {
			g.Shards[ids[i]].unlock()
		}
		g.Shards[ids[n]].waitFree()
	}
}

// TryLock takes shard id's token if it is free (a script adding a shard below those it holds,
// which must not wait for it: src/command/scripting.go). Unlock releases it.
func (g *Group) TryLock(id int32) bool { return g.Shards[id].tryLock() }

// Unlock releases what Lock took.
func (g *Group) Unlock(ids []int32) {
	for i := len(ids) - 1; i >= 0; i-- {
		g.Shards[ids[i]].unlock()
	}
}

// lockAllTries is how many times LockAll starts over before it waits holding tokens.
const lockAllTries = 8

// LockAll takes every shard's token (FLUSHALL, SWAPDB, DBSIZE, KEYS, a snapshot's instant).
//
// Like Lock it does not wait while holding tokens, at first: when a shard is taken it releases
// what it holds, waits for that shard (counted as its waiter, so DoPolite lets it go first) and
// starts over. Waiting while holding shards 0..n-1 stalled every client of those shards behind
// shard n: during a snapshot walk, which takes a shard over and over, GETs on the other shards
// all but stopped while a barrier waited. After lockAllTries rounds it takes the tokens in order,
// waiting holding what it has, so that under a load that keeps some shard busy it still gets
// through.
func (g *Group) LockAll() {
	var marked *Shard // the shard waited for last, marked until the next round ends
	defer func() {
		if marked != nil {
			marked.waiting.Add(-1)
		}
	}()
	for range lockAllTries {
		n := 0
		for n < len(g.Shards) && g.Shards[n].tryLock() {
			n++
		}
		if n == len(g.Shards) {
			return
		}
		for i := n - 1; i >= 0; i-- {
			g.Shards[i].unlock()
		}
		if marked != nil {
			marked.waiting.Add(-1)
		}
		marked = g.Shards[n]
		marked.waiting.Add(1)
		marked.waitFree()
	}
	for _, sh := range g.Shards {
		sh.lock()
	}
}

// UnlockAll releases what LockAll took.
func (g *Group) UnlockAll() {
	for i := len(g.Shards) - 1; i >= 0; i-- {
		g.Shards[i].unlock()
	}
}

// Do runs fn holding shard id's token (background work such as the expiry sweep).
func (g *Group) Do(id int, fn func(sh *Shard)) {
	sh := g.Shards[id]
	sh.lock()
	defer sh.unlock()
	fn(sh)
}

// politeWait bounds how long DoPolite lets waiters go first.
const politeWait = 2 * time.Millisecond

// DoPolite is Do for background work that takes one shard over and over (the snapshot walk):
// while another goroutine waits for the token (a LockAll that holds the shards below it
// meanwhile, so their clients wait too), it lets that one take it first, for up to politeWait.
// Do's caller would win every race against a waiter that backs off by sleeping.
func (g *Group) DoPolite(id int, fn func(sh *Shard)) {
	sh := g.Shards[id]
	if sh.waiting.Load() > 0 {
		deadline := time.Now().Add(politeWait)
		for i := 0; sh.waiting.Load() > 0 && time.Now().Before(deadline); i++ {
			backoff(i)
		}
	}
	g.Do(id, fn)
}
