package pipeline

import "sync/atomic"

// Target says where a routed slot runs.
type Target int32

const (
	// TargetConn runs the slot on the connection while routing; it touches no shard.
	TargetConn Target = -1
	// TargetBarrier runs the slot on the connection after every earlier slot has completed; it
	// may lock any shards it needs through the Group.
	TargetBarrier Target = -2
	// TargetNone marks a slot already answered during routing (an error or a connection command).
	TargetNone Target = -3
)

// Slot is one command of a batch.
type Slot struct {
	// Args are the command's arguments, Args[0] the name. They alias the read buffer and are
	// valid until the batch is released.
	Args [][]byte
	// Cmd is the route stage's resolution of the command, opaque to the pipeline.
	Cmd any
	// Client is the connection's command-layer state.
	Client any
	// Reply receives the encoded reply; its storage is reused across batches.
	Reply []byte
	// Effects receives what the command layer records while the slot runs for the connection to
	// deliver once the slot has completed (Env.Completed): keyspace notifications, in the order
	// they were raised. Opaque to the pipeline; reused like Reply.
	Effects []byte
	// Target is where the slot runs (a shard index when >= 0).
	Target Target
	// KeyHash is the route stage's hash of the command's first key (0 when it has none), kept
	// so that later stages need not hash it again.
	KeyHash uint64
	// DB is the database selected when the slot was routed.
	DB int32
	// Proto is the protocol (2 or 3) in force when the slot was routed.
	Proto int8
	// Silent suppresses the reply (CLIENT REPLY OFF|SKIP).
	Silent bool
	// Shared marks a command that may run without its shard's token, beside other shared
	// commands (shared.go): it only reads, changing nothing but entries' access times.
	Shared bool
	// Own marks a slot that may run long (a script): its shard's work is run by the batch's
	// own goroutine, which waits for the token holding no other, never left in the mailbox
	// for another token holder (a poller among them) to run. Its executor may hand the work
	// back from such a slot on (Work.NeedBarrier).
	Own bool
	// Ends marks a slot that the next slots' routing depends on (EXEC ends MULTI): the
	// segment runs once it is added, before the next slot is routed.
	Ends bool
}

// Batch is the commands parsed from one read, reused by its connection from batch to batch.
type Batch struct {
	// Now is the batch's time (unix ns), read once when it starts: commands of a batch see the
	// same clock, as commands of one event-loop pass do in Redis.
	Now     int64
	Slots   []Slot
	n       int
	works   []Work  // indexed by shard
	touched []int32 // shards with work in the current segment
	held    []int32 // shards of the segment whose token flush took (run without the mailbox)
	shared  []int32 // shards of the segment whose work ran shared
	rest    []int32 // shards of the segment whose work needs the token
	own     []int32 // shards of the segment whose work has an Own slot
	pending atomic.Int32
	wake    chan struct{}
	// Rerun runs a slot handed back by NeedBarrier as a barrier, holding no token (Conn
	// sets it to Env.Barrier).
	Rerun func(s *Slot)
	// panicked is the first panic caught while running the batch's work, on whichever goroutine
	// ran it; flush raises it again once all the work is done.
	panicked atomic.Pointer[caught]
}

// caught holds a recovered panic value.
type caught struct{ v any }

// recordPanic keeps r if it is the batch's first caught panic.
func (b *Batch) recordPanic(r any) { b.panicked.CompareAndSwap(nil, &caught{r}) }

func newBatch(shards int) *Batch {
	b := &Batch{works: make([]Work, shards), wake: make(chan struct{}, 1)}
	for i := range b.works {
		b.works[i].batch = b
		b.works[i].node.Value = &b.works[i]
		b.works[i].reader = -1
		b.works[i].from = -1
	}
	return b
}

// Work returns the batch's work for shard id in the segment being flushed.
func (b *Batch) Work(id int32) *Work { return &b.works[id] }

// Len returns the number of slots in the batch.
func (b *Batch) Len() int { return b.n }

// next returns a cleared slot appended to the batch.
func (b *Batch) next() *Slot {
	if b.n == len(b.Slots) {
		b.Slots = append(b.Slots, Slot{})
	}
	s := &b.Slots[b.n]
	b.n++
	s.Args = s.Args[:0]
	s.Reply = s.Reply[:0]
	s.Effects = s.Effects[:0]
	s.Cmd, s.Target, s.Silent, s.Shared, s.Own, s.Ends = nil, TargetNone, false, false, false, false
	return s
}

// truncate drops the slots from n on, clearing their references into the read buffer.
func (b *Batch) truncate(n int) {
	for i := n; i < b.n; i++ {
		clear(b.Slots[i].Args)
		b.Slots[i].Cmd, b.Slots[i].Client = nil, nil
	}
	b.n = n
}

// unparse drops the last slot (an empty command).
func (b *Batch) unparse() { b.n-- }

func (b *Batch) reset() {
	for i := range b.Slots[:b.n] {
		s := &b.Slots[i]
		// Drop references into the read buffer and to large replies so they can be collected.
		clear(s.Args)
		if cap(s.Reply) > 64<<10 {
			s.Reply = nil
		}
		if cap(s.Effects) > 64<<10 {
			s.Effects = nil
		}
		s.Cmd, s.Client = nil, nil
	}
	b.n = 0
}

// add puts slot i into its shard's work for the current segment.
func (b *Batch) add(i int, shard int32) {
	w := &b.works[shard]
	if len(w.Slots) == 0 {
		b.touched = append(b.touched, shard)
	}
	w.Slots = append(w.Slots, int32(i))
	if !b.Slots[i].Shared {
		w.excl++
	}
	w.own = w.own || b.Slots[i].Own
}

// flush hands the segment's work to the shards and waits until all of it has run. Work that
// may run shared runs first, without tokens (shared.go); the rest runs holding them.
//
// When the group has a Warm hook, flush first takes every token that is free and runs those
// shards' work itself, after Warm has loaded what that work will touch: a batch's lookups then
// wait on memory together instead of one after another (the keys of a pipelined batch spread over
// the shards, so a single shard's work is too short to overlap anything). Shards whose token is
// held go through the mailbox as before; nothing waits while holding a token but for shared
// readers to leave, and they never wait.
func (b *Batch) flush(g *Group) {
	if len(b.touched) == 0 {
		return
	}
	b.exclusive(g, b.runShared(g))
	for _, id := range b.touched {
		w := &b.works[id]
		w.Slots, w.excl, w.own = w.Slots[:0], 0, false
	}
	b.touched = b.touched[:0]
	if p := b.panicked.Swap(nil); p != nil {
		// Every token is released and no goroutine holds the batch's work any more (its
		// arguments alias the read buffer): Conn.run may now close the connection.
		panic(p.v)
	}
}

// exclusive runs the work of the given shards holding their tokens and waits until all of it
// has run.
func (b *Batch) exclusive(g *Group, touched []int32) {
	if len(touched) == 0 {
		return
	}
	b.pending.Store(int32(len(touched)) + 1)
	held, own := b.held[:0], b.own[:0]
	for _, id := range touched {
		sh := g.Shards[id]
		if b.works[id].own {
			own = append(own, id)
			continue
		}
		if g.Warm != nil && sh.tryLock() {
			held = append(held, id)
			continue
		}
		sh.submit(&b.works[id])
	}
	b.held = held
	if len(held) > 0 {
		b.warm(g, held)
		for _, id := range held {
			sh := g.Shards[id]
			sh.run(&b.works[id])
			sh.unlock()
		}
		b.pending.Add(-int32(len(held)))
	}
	b.own = own
	for _, id := range own {
		b.runOwn(g.Shards[id], &b.works[id])
		b.pending.Add(-1)
	}
	if b.pending.Add(-1) != 0 {
		<-b.wake
	}
}

// runOwn runs w, which has an Own slot, on this goroutine: it waits for the token holding no
// other (every token taken above has been let go), so no order of takers can deadlock. When the
// executor hands the work back at a slot (NeedBarrier), that slot runs through Rerun with no
// token held, and the slots after it run again holding the token.
func (b *Batch) runOwn(sh *Shard, w *Work) {
	for len(w.Slots) > 0 {
		w.from = -1
		sh.lock()
		sh.run(w)
		sh.unlock()
		k := w.from
		if k < 0 {
			return
		}
		w.from = -1
		s := &b.Slots[w.Slots[k]]
		s.Target = TargetBarrier
		b.rerunSlot(s)
		w.Slots = w.Slots[:copy(w.Slots, w.Slots[k+1:])]
	}
}

// rerunSlot calls Rerun for s, keeping a panic for the end of flush as run does.
func (b *Batch) rerunSlot(s *Slot) {
	defer func() {
		if r := recover(); r != nil {
			b.recordPanic(r)
		}
	}()
	b.Rerun(s)
}

// warm calls the Group's Warm hook for the held shards; a panic there is kept for the end of
// flush, and the work then runs without it.
func (b *Batch) warm(g *Group, held []int32) {
	defer func() {
		if r := recover(); r != nil {
			b.recordPanic(r)
		}
	}()
	g.Warm(b, held)
}

// done is called by a shard when it has run one work item of the batch.
func (b *Batch) done() {
	if b.pending.Add(-1) == 0 {
		b.wake <- struct{}{}
	}
}
