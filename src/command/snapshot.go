package command

// Point-in-time snapshots without fork (issue 17 item 2): the engine side. The glue layer (RDB,
// AOF rewrite) calls StartSnapshot with a Serializer per shard and writes the chunks Next hands
// it; this file knows nothing of RDB.
//
// Ordering invariants:
//
//  1. The instant: StartSnapshot holds every shard's token at once (Group.LockAll), reads the
//     feed's last sequence number, the key and expiry counts of every database, and begins a
//     snapshot in every keyspace of every shard (ds/keyspace/snapshot.go: O(1) each), then lets
//     go. Every feed entry numbered up to Seq is in the image, none after: an effect is appended
//     by the call that made it, in the same token hold.
//  2. From then on a keyspace emits a bucket's entries, as they are, before any token holder
//     changes one of them (copy-on-write), and the walk emits the buckets nobody changed. Each
//     entry present at the instant is emitted once, under its database number of the instant
//     (SWAPDB swaps keyspace objects, which carry their snapshot with them); keys created later
//     are not emitted; FLUSHDB/FLUSHALL leave the snapshot the old table.
//  3. Emission appends to the shard's own buffer (its Serializer's scratch), holding the shard's
//     token: the executor never blocks and does no I/O for a snapshot. The buffer leaves as a
//     chunk only from the snapshot's goroutine, which holds the shard's token to take it. Every
//     chunk begins with a database switch and has one wherever the database changes, so chunks
//     concatenate in the order Next returns them.
//  4. The snapshot's goroutine walks shard by shard, database by database, through Group.Do: a
//     bounded step (stepEntries entries or stepBytes bytes, or one frozen value) per token
//     hold, so writers interleave. When the consumer is more than maxQueued bytes behind, that
//     goroutine (never an executor) waits. A shard's hooks are removed in the hold that emits
//     its last bucket; Next returns io.EOF only after every shard's were.
//  5. A large value is not written holding its shard: a Freezer serializer copies it there (a
//     memcpy-speed copy, persist_freeze.go) and the snapshot's goroutine writes the copy holding
//     no token, right after the step or hook that froze it was taken from the shard (in the
//     same hold as the shard's buffer, so the shard's last hold takes its last frozen value).
//     The copy is the snapshot's alone: the live value goes on changing, the copy does not.
//
// Audit: every path that changes an entry or its value, and how it meets invariant 2.
//
//   - Commands find keys through Ctx (Find/FindHashed/Upsert/Add) and delete through
//     Delete/Remove: all hooked in ds/keyspace. Values are changed only through an entry such a
//     call returned in the same token hold (nothing keeps an Entry past its hold: slab.go).
//   - Expiry: lazy expiry is inside findQuiet/Upsert/Delete; the cron's Sweep and RANDOMKEY's
//     Random delete through Remove; SetExpire/SetExpireMs/CopyExpire are hooked themselves.
//   - Hash field expiry queues (hashes_expire.go) hold key names, not entries: the cycle looks
//     the hash up with FindQuiet and deletes an emptied one with Remove. HEXPIRE and friends
//     (hashes_ttl.go) find the hash through Ctx.
//   - Blocked clients served later (block.go) run their command through call with a Ctx, as any
//     command; keyKindLocked and skipForServe only Peek.
//   - EXEC, scripts' redis.call, SORT ... STORE, COPY, MOVE, RENAME (TakeValue between entries
//     both found through hooked calls), SWAPDB (swaps keyspace objects), FLUSHDB/FLUSHALL
//     (Clear, which detaches): through the same calls. COPY clones a collection, so no value
//     is shared by two entries.
//   - reclaim.go and the epoch only count keys and reuse entries already unlinked (from an
//     emitted bucket, or never after Clear, which drops the free lists).
//   - Warming (warm.go: Head/Match/Touch), SCAN, KEYS, INFO's scans and shared readers
//     (FindShared, which writes only an access time) read without changing.
//   - Not keyspace data, so not in this image: the script and function libraries, pub/sub,
//     WATCH state; the glue layer writes functions itself.

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/pipeline"
)

// Serializer turns entries into the snapshot's bytes (the RDB codec, in the glue layer). Each
// shard gets its own, used only while that shard's token is held, so it may keep scratch space.
type Serializer interface {
	// SelectDB appends a switch to database db.
	SelectDB(dst []byte, db int) []byte
	// Entry appends e, a key of database db as of the instant; ks is the keyspace holding it
	// (for ks.ExpireMs). e and its Key() are valid only during the call: copy what is kept.
	Entry(dst []byte, db int, e *keyspace.Entry, ks *keyspace.Keyspace) []byte
}

// Freezer is a Serializer that writes large values off the shard (invariant 5).
type Freezer interface {
	// Freeze is called holding the shard for each entry emitted: for a value that would take
	// long to write it returns a private copy of all the record needs, as of now, which the
	// snapshot writes later; nil to have Entry write it now.
	Freeze(db int, e *keyspace.Entry, ks *keyspace.Keyspace) Frozen
}

// Frozen is an entry a Freezer copied.
type Frozen interface {
	// Append appends a switch to the entry's database and its record. It is called on the
	// snapshot's goroutine holding no token, one call at a time per snapshot.
	Append(dst []byte) []byte
	// Size is about the bytes the copy holds (INFO's copy-on-write figures count them).
	Size() int64
}

// ErrSnapshotRunning is StartSnapshot's refusal while another snapshot runs; its text is the
// message Redis replies to BGSAVE then (the caller adds "ERR ").
var ErrSnapshotRunning = errors.New("Background save already in progress")

// ErrSnapshotAborted is what Next returns after Abort.
var ErrSnapshotAborted = errors.New("snapshot aborted")

// SnapshotStats describe a snapshot; final once Next returned io.EOF or Abort returned.
type SnapshotStats struct {
	Walked     int64         // entries emitted by the walk
	Copied     int64         // entries emitted before a write changed them (copy-on-write)
	Bytes      int64         // bytes handed to the consumer
	Chunks     int64         // chunks handed to the consumer
	PeakQueued int64         // most bytes waiting for the consumer at once
	PeakBuffer int64         // largest shard buffer taken as one chunk
	PeakHeld   int64         // most bytes held at once: queued, every shard's buffer and the frozen copies (sampled each step)
	Frozen     int64         // large values copied to be written off their shard (invariant 5)
	FrozenSize int64         // the bytes of those copies, all told
	PeakFrozen int64         // most bytes of frozen copies held at once
	LockWait   time.Duration // the instant: waiting for every token (shards already taken wait too)
	Pause      time.Duration // the instant: holding every token
	Duration   time.Duration // from the instant to the last chunk
}

// snapshotLimits bound one step of the walk and the consumer's lag.
type snapshotLimits struct {
	stepEntries int // entries per token hold
	stepBytes   int // bytes per token hold
	chunkBytes  int // a shard buffer this large leaves as a chunk
	maxQueued   int // the walk waits while more than this waits for the consumer
}

// defaultSnapshotLimits are the production bounds; tests shrink them (snapshotLimitsFor).
var defaultSnapshotLimits = snapshotLimits{stepEntries: 256, stepBytes: 64 << 10,
	chunkBytes: 64 << 10, maxQueued: 32 << 20}

// Test hooks: snapshotInstant runs holding every token at the instant (a reference image);
// snapshotStepped runs on the snapshot's goroutine between steps, holding nothing;
// snapshotFreezing runs there before each frozen copy is written; snapshotNoFreeze writes large
// values holding their shard, as before invariant 5 (to measure the difference). Set only by
// tests, before StartSnapshot.
var (
	snapshotInstant   func(e *Engine)
	snapshotStepped   func()
	snapshotFreezing  func()
	snapshotNoFreeze  bool
	snapshotLimitsFor = func() snapshotLimits { return defaultSnapshotLimits }
)

// Snapshot is one point-in-time image being taken. The consumer calls Next until io.EOF (or
// Abort); the queue between the walk and Next is the only state both touch, under mu.
type Snapshot struct {
	e      *Engine
	lim    snapshotLimits
	seq    uint64
	keys   []uint64
	expire []uint64
	shards []snapShard
	start  time.Time

	mu     sync.Mutex
	queue  [][]byte
	queued int64
	spare  [][]byte // chunks the consumer gave back (Recycle), reused as shard buffers
	done   bool     // the walk finished: every hook removed
	err    error    // set by Abort before done
	stats  SnapshotStats

	wake   chan struct{} // to the consumer: a chunk or the end
	room   chan struct{} // to the walk: the consumer took a chunk
	stop   chan struct{} // closed by Abort
	exited chan struct{} // closed when the walk's goroutine returns
	abort  sync.Once

	frozenHeld atomic.Int64 // bytes of frozen copies not written yet, every shard's
}

// snapShard is one shard's part: its serializer, the keyspaces' snapshots by database number of
// the instant, and the buffer hooks and walk append to, all under the shard's token; pending
// mirrors len(buf) for the walk to see without the token.
type snapShard struct {
	sn      *Snapshot
	ser     Serializer
	snaps   []*keyspace.Snap
	emits   []func(*keyspace.Entry, *keyspace.Keyspace)
	buf     []byte
	db      int // database of the buffer's last switch, -1 at a chunk's start
	ended   bool
	pending atomic.Int64
	walked  atomic.Int64
	copied  atomic.Int64
	// detach is the entry a lazy delete is removing (lazyfree.go): the hook keeps it in
	// deferred, serialized after the shard's walk, instead of serializing it holding the shard.
	detach   *keyspace.Entry
	expiring bool // detach is an expired key (lazyfree-lazy-expire): deferred only while expired
	deferred []deferredEntry
	// freezer is ser when it is a Freezer; frozen the copies it made that the snapshot's
	// goroutine has not taken yet, frozenSize their bytes (read without the token).
	freezer    Freezer
	frozen     []Frozen
	frozenSize atomic.Int64
}

// StartSnapshot images every database of every shard as of now (one pause holding every token,
// O(shards × databases), not O(keys)); s gives each shard its Serializer. It refuses with
// ErrSnapshotRunning while another snapshot runs. It must not be called holding a shard token.
func (e *Engine) StartSnapshot(s func(shard int) Serializer) (*Snapshot, error) {
	n := len(e.Group.Shards)
	sn := &Snapshot{e: e, lim: snapshotLimitsFor(), keys: make([]uint64, e.dbCount),
		expire: make([]uint64, e.dbCount), shards: make([]snapShard, n),
		wake: make(chan struct{}, 1), room: make(chan struct{}, 1), stop: make(chan struct{}),
		exited: make(chan struct{})}
	if !e.snapshot.CompareAndSwap(nil, sn) {
		return nil, ErrSnapshotRunning
	}
	for i := range sn.shards {
		ss := &sn.shards[i]
		ss.sn, ss.ser, ss.db = sn, s(i), -1
		if !snapshotNoFreeze {
			ss.freezer, _ = ss.ser.(Freezer)
		}
		ss.snaps = make([]*keyspace.Snap, e.dbCount)
		ss.emits = make([]func(*keyspace.Entry, *keyspace.Keyspace), e.dbCount)
		for db := range ss.emits {
			ss.emits[db] = func(en *keyspace.Entry, ks *keyspace.Keyspace) { ss.emit(db, en, ks) }
		}
	}
	t0 := time.Now()
	e.Group.LockAll()
	t1 := time.Now()
	sn.seq = e.Feed.Seq()
	for i, sh := range e.Group.Shards {
		ss := &sn.shards[i]
		for db, ks := range sh.Data.(*shardData).dbs {
			sn.keys[db] += uint64(ks.Len())
			sn.expire[db] += uint64(ks.Volatile())
			ss.snaps[db] = ks.BeginSnapshot(ss.emits[db])
		}
		if r, ok := ss.ser.(instantRecorder); ok {
			r.atInstantLocked(sh.Data.(*shardData)) // the key tags' indexes (persist_tags.go)
		}
	}
	if snapshotInstant != nil {
		snapshotInstant(e)
	}
	e.Group.UnlockAll()
	sn.mu.Lock() // sn is published already: INFO's SnapshotNow may read these meanwhile
	sn.start = time.Now()
	sn.stats.LockWait, sn.stats.Pause = t1.Sub(t0), sn.start.Sub(t1)
	sn.mu.Unlock()
	go sn.run()
	return sn, nil
}

// emit appends one entry of database db to the shard's buffer (hooks and walk alike).
func (ss *snapShard) emit(db int, en *keyspace.Entry, ks *keyspace.Keyspace) {
	if ss.detach != nil && ss.lazyfreeDeferLocked(db, en) {
		return
	}
	if ss.freezer != nil {
		if f := ss.freezer.Freeze(db, en, ks); f != nil {
			ss.frozen = append(ss.frozen, f)
			ss.frozenSize.Add(f.Size())
			ss.sn.noteFrozen(f.Size())
			return
		}
	}
	if ss.db != db {
		ss.buf = ss.ser.SelectDB(ss.buf, db)
		ss.db = db
	}
	ss.buf = ss.ser.Entry(ss.buf, db, en, ks)
	ss.pending.Store(int64(len(ss.buf)))
}

// takeLocked returns the shard's buffer as a chunk (nil when empty); the shard is held.
func (ss *snapShard) takeLocked() []byte {
	if len(ss.buf) == 0 {
		return nil
	}
	c := ss.buf
	ss.buf, ss.db = ss.sn.reuse(), -1
	ss.pending.Store(0)
	return c
}

// takeFrozenLocked returns the shard's frozen copies not taken yet; the shard is held.
func (ss *snapShard) takeFrozenLocked() []Frozen {
	fs := ss.frozen
	ss.frozen = nil
	ss.frozenSize.Store(0)
	return fs
}

// noteFrozen counts a copy of n bytes made; any shard holder may call it.
func (sn *Snapshot) noteFrozen(n int64) {
	held := sn.frozenHeld.Add(n)
	sn.mu.Lock()
	sn.stats.Frozen++
	sn.stats.FrozenSize += n
	sn.stats.PeakFrozen = max(sn.stats.PeakFrozen, held)
	sn.stats.PeakHeld = max(sn.stats.PeakHeld, held+sn.queued) // the shards' buffers: sampled each step
	sn.mu.Unlock()
}

// writeFrozen writes frozen copies on the snapshot's goroutine, holding no token, and hands
// each over as a chunk; false when aborted.
func (sn *Snapshot) writeFrozen(fs []Frozen) bool {
	for i, f := range fs {
		if snapshotFreezing != nil {
			snapshotFreezing()
		}
		c := f.Append(sn.reuse())
		fs[i] = nil // the copy goes as soon as it is written
		sn.frozenHeld.Add(-f.Size())
		if !sn.hand(c) {
			return false
		}
	}
	return true
}

// countLocked refreshes the shard's counters from its keyspaces' snapshots.
func (ss *snapShard) countLocked() {
	var w, c int
	for _, s := range ss.snaps {
		w += s.Walked()
		c += s.Copied()
	}
	ss.walked.Store(int64(w))
	ss.copied.Store(int64(c))
}

// endLocked removes the shard's hooks; the shard is held.
func (ss *snapShard) endLocked() {
	ss.countLocked()
	for _, s := range ss.snaps {
		s.End()
	}
	ss.ended = true
}

// Seq returns the feed's last sequence number at the instant: entries up to it are in the
// image, later ones are not.
func (sn *Snapshot) Seq() uint64 { return sn.seq }

// Keys returns database db's key and expiry counts at the instant (expired keys not yet
// reclaimed included, as the image holds them), e.g. for RDB's RESIZEDB.
func (sn *Snapshot) Keys(db int) (keys, expires uint64) { return sn.keys[db], sn.expire[db] }

// run is the walk (invariant 4).
func (sn *Snapshot) run() {
	defer close(sn.exited)
	ok := true
	for i := range sn.shards {
		if ok = sn.walkShard(i) && sn.flushDeferred(i); !ok {
			break
		}
	}
	for i := range sn.shards { // after an abort: remove the hooks left
		if ss := &sn.shards[i]; !ss.ended {
			sn.e.Group.Do(i, func(*pipeline.Shard) { ss.endLocked(); ss.takeLocked(); ss.takeFrozenLocked() })
		}
	}
	sn.e.snapshot.CompareAndSwap(sn, nil) // before io.EOF, so the consumer may start the next
	sn.mu.Lock()
	sn.done = true
	sn.stats.Duration = time.Since(sn.start)
	sn.mu.Unlock()
	signal(sn.wake)
}

// walkShard walks shard i to its end, handing chunks over; false when aborted.
func (sn *Snapshot) walkShard(i int) bool {
	ss := &sn.shards[i]
	db := 0
	for !ss.ended {
		select {
		case <-sn.stop:
			return false
		default:
		}
		var chunk []byte
		var frozen []Frozen
		sn.e.Group.DoPolite(i, func(*pipeline.Shard) {
			db = sn.stepLocked(ss, db)
			if ss.ended || len(ss.buf) >= sn.lim.chunkBytes {
				chunk = ss.takeLocked()
			}
			frozen = ss.takeFrozenLocked()
		})
		if chunk != nil && !sn.hand(chunk) {
			return false
		}
		if !sn.writeFrozen(frozen) {
			return false
		}
		if !sn.flushOthers(i) {
			return false
		}
		// Background work gives the processor to the connections between steps: with one
		// thread (--threads 1) the walk otherwise ran until the scheduler's 10 ms preemption,
		// and GETs at pipeline 1 fell to a few hundred a second during a BGSAVE.
		runtime.Gosched()
		if snapshotStepped != nil {
			snapshotStepped()
		}
	}
	return true
}

// stepLocked emits up to one step's worth of shard ss from database db on and returns the
// database to go on from; it ends the shard's hooks after its last bucket. The shard is held.
func (sn *Snapshot) stepLocked(ss *snapShard, db int) int {
	start, n, frozen := len(ss.buf), 0, len(ss.frozen)
	// A bucket at a time once anything froze would still take the next bucket's large value in
	// the same hold; so one bucket per Step, and the step ends at the first copy.
	for db < len(ss.snaps) && n < sn.lim.stepEntries && len(ss.buf)-start < sn.lim.stepBytes &&
		len(ss.frozen) == frozen {
		k, done := ss.snaps[db].Step(1)
		n += k
		if done {
			db++
		}
	}
	if db == len(ss.snaps) {
		ss.endLocked()
	} else {
		ss.countLocked()
	}
	return db
}

// flushOthers hands over the copy-on-write buffers of other shards that grew to a chunk, so
// they do not wait for the walk to reach their shard; false when aborted.
func (sn *Snapshot) flushOthers(walking int) bool {
	held := sn.frozenHeld.Load()
	for j := range sn.shards {
		held += sn.shards[j].pending.Load()
	}
	sn.mu.Lock()
	sn.stats.PeakHeld = max(sn.stats.PeakHeld, held+sn.queued)
	sn.mu.Unlock()
	for j := range sn.shards {
		ss := &sn.shards[j]
		if j == walking || ss.pending.Load() < int64(sn.lim.chunkBytes) && ss.frozenSize.Load() == 0 {
			continue
		}
		var chunk []byte
		var frozen []Frozen
		sn.e.Group.Do(j, func(*pipeline.Shard) {
			if ss.pending.Load() >= int64(sn.lim.chunkBytes) {
				chunk = ss.takeLocked()
			}
			frozen = ss.takeFrozenLocked()
		})
		if chunk != nil && !sn.hand(chunk) {
			return false
		}
		if !sn.writeFrozen(frozen) {
			return false
		}
	}
	return true
}

// hand queues a chunk for the consumer, waiting while the consumer is more than maxQueued
// behind; false when aborted.
func (sn *Snapshot) hand(chunk []byte) bool {
	for {
		sn.mu.Lock()
		if sn.err != nil {
			sn.mu.Unlock()
			return false
		}
		if sn.queued < int64(sn.lim.maxQueued) {
			sn.queue = append(sn.queue, chunk)
			sn.queued += int64(len(chunk))
			st := &sn.stats
			st.Bytes += int64(len(chunk))
			st.Chunks++
			st.PeakQueued = max(st.PeakQueued, sn.queued)
			st.PeakBuffer = max(st.PeakBuffer, int64(len(chunk)))
			sn.mu.Unlock()
			signal(sn.wake)
			return true
		}
		sn.mu.Unlock()
		select {
		case <-sn.room:
		case <-sn.stop:
			return false
		}
	}
}

// signal wakes the one waiter on ch, if any, without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// maxSpare bounds the chunks kept for reuse; a chunk larger than twice the chunk size (one big
// value) is not kept.
const maxSpare = 64

// Recycle gives a chunk Next returned back once the consumer has written it: shard buffers are
// then reused instead of allocated, so a snapshot's chunks do not pile up as garbage that grows
// the heap (and RSS) by about the image's size before the collector runs.
func (sn *Snapshot) Recycle(chunk []byte) {
	if chunk == nil || cap(chunk) > 2*sn.lim.chunkBytes {
		return
	}
	sn.mu.Lock()
	if len(sn.spare) < maxSpare {
		sn.spare = append(sn.spare, chunk[:0])
	}
	sn.mu.Unlock()
}

// reuse returns a recycled buffer, or nil to let append allocate one.
func (sn *Snapshot) reuse() []byte {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if n := len(sn.spare); n > 0 {
		b := sn.spare[n-1]
		sn.spare[n-1] = nil
		sn.spare = sn.spare[:n-1]
		return b
	}
	return nil
}

// Next returns the next chunk, which belongs to the caller; io.EOF once every shard is done
// (every hook removed by then), ErrSnapshotAborted after Abort, or ctx's error.
func (sn *Snapshot) Next(ctx context.Context) ([]byte, error) {
	for {
		sn.mu.Lock()
		switch {
		case sn.err != nil:
			sn.mu.Unlock()
			return nil, sn.err
		case len(sn.queue) > 0:
			c := sn.queue[0]
			sn.queue[0] = nil
			sn.queue = sn.queue[1:]
			sn.queued -= int64(len(c))
			sn.mu.Unlock()
			signal(sn.room)
			return c, nil
		case sn.done:
			sn.mu.Unlock()
			return nil, io.EOF
		}
		sn.mu.Unlock()
		select {
		case <-sn.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Abort ends the snapshot early (SHUTDOWN NOSAVE, a write error): it returns once the walk has
// stopped and every hook is removed; Next then returns ErrSnapshotAborted. After the snapshot
// completed it only waits. It must not be called holding a shard token.
func (sn *Snapshot) Abort() {
	sn.abort.Do(func() {
		sn.mu.Lock()
		if !sn.done {
			sn.err = ErrSnapshotAborted
			sn.queue, sn.queued = nil, 0
		}
		sn.mu.Unlock()
		close(sn.stop)
		signal(sn.wake)
	})
	<-sn.exited
}

// SnapshotNow returns the running snapshot's counters so far and the bytes it holds now: queued
// for its consumer, and the frozen copies not written yet (INFO's current_cow_* and
// current_save_keys_processed); ok is false when none runs.
func (e *Engine) SnapshotNow() (st SnapshotStats, held int64, ok bool) {
	sn := e.snapshot.Load()
	if sn == nil {
		return st, 0, false
	}
	sn.mu.Lock()
	held = sn.queued + sn.frozenHeld.Load()
	sn.mu.Unlock()
	return sn.Stats(), held, true
}

// Stats returns the snapshot's counters so far.
func (sn *Snapshot) Stats() SnapshotStats {
	sn.mu.Lock()
	st := sn.stats
	if !sn.done {
		st.Duration = time.Since(sn.start)
	}
	sn.mu.Unlock()
	for i := range sn.shards {
		st.Walked += sn.shards[i].walked.Load()
		st.Copied += sn.shards[i].copied.Load()
	}
	return st
}
