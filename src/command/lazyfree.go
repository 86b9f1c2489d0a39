package command

import (
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/zset"
)

// Lazy freeing (UNLINK, FLUSHDB/FLUSHALL ASYNC, lazyfree-lazy-*).
//
// Measured before writing this (TestLazyfreeStall, in-process, 10,000,000 string elements):
// DEL of a list, set, hash or zset returns in 20-300 µs and another client's GETs on the same
// shard keep a p99 of 3-6 µs. Nothing walks the value: the key's entry goes to limbo and its
// value pointer is dropped at the next epoch, and Go's collector, which runs concurrently,
// frees the elements (garbage is never marked; sweeping is per span). So freeing itself needs
// no background thread, unlike Redis's bio freer.
//
// One path did walk: during a snapshot (BGSAVE, BGREWRITEAOF, a replica's sync) a key the walk
// has not reached yet is serialized, holding its shard, by the copy-on-write hook of the
// operation that changes it. DEL of a 10,000,000-element list then held its shard 5.5 s. A lazy
// delete of a large value (Redis's free effort over LAZYFREE_THRESHOLD) therefore hands the
// value to the snapshot instead: the hook keeps a copy of the entry (the value is never changed
// again: it left the keyspace) and the snapshot's own goroutine serializes it once the shard's
// walk has ended (lazyfreeDeferLocked, snapshot.go).
//
// lazyfreed_objects counts values deleted lazily whose free effort is over the threshold (and a
// lazily flushed database's keys), as Redis counts what it hands to its freer: UNLINK, DEL under
// lazyfree-lazy-user-del, and under their directives evicted keys, expired keys and the values
// a write replaces or deletes (server-del). Each of those paths also hands a large value to a
// running snapshot (lazyDetachLocked). lazyfree_pending_objects is always 0: nothing waits in a
// queue of ours.

// lazyfreeThreshold is Redis's LAZYFREE_THRESHOLD: a value that costs more to free than this is
// freed in the background.
const lazyfreeThreshold = 64

// lazyfreeState is the engine's lazy-freeing counters.
type lazyfreeState struct {
	freed atomic.Int64 // lazyfreed_objects
}

// LazyfreeStats returns INFO's lazyfree_pending_objects and lazyfreed_objects.
func (e *Engine) LazyfreeStats() (pending, freed int64) { return 0, e.lazy.freed.Load() }

// freeEffort is Redis's lazyfreeGetFreeEffort: 1 for a string or a compact encoding, else about
// the allocations to free (here: the elements; Redis counts a quicklist's nodes, so it defers
// long lists only).
func freeEffort(e *keyspace.Entry) int64 {
	if e.Kind == keyspace.KindString || !e.HasValue() {
		return 1
	}
	switch valueEncoding(e) {
	case "listpack", "intset", "ziplist":
		return 1
	}
	switch o := objOf(e).(type) {
	case *list.List:
		return int64(o.Len())
	case *hash.Hash:
		return int64(o.Len())
	case *dset.Set:
		return int64(o.Len())
	case *zset.ZSet:
		return int64(o.Len())
	case *stream.Stream:
		return int64(o.Len())
	case *vsetValue:
		return int64(o.Len())
	case *llmValue:
		return int64(o.Len())
	case *ipsetValue:
		return int64(o.Len())
	case *memValue:
		return int64(o.Len())
	}
	return 1
}

// lazyUserDel reports whether a DEL-like command of the client deletes lazily: UNLINK always,
// DEL under lazyfree-lazy-user-del.
func lazyUserDel(c *Ctx) bool {
	return c.Spec != nil && c.Spec.Name == "unlink" || c.E.Settings().LazyfreeUserDel
}

// deleteKey deletes key for DEL and UNLINK and reports whether it existed. Lazily, a large value
// during a snapshot goes to the snapshot's goroutine instead of being serialized here.
func (c *Ctx) deleteKey(key []byte) bool {
	ks := c.KS(key)
	if !lazyUserDel(c) {
		return ks.Delete(key, c.Now)
	}
	e := ks.Peek(key, c.Now) // Peek: no copy-on-write yet
	if e == nil || freeEffort(e) <= lazyfreeThreshold {
		return ks.Delete(key, c.Now)
	}
	ss := c.E.snapShardOf(key)
	if ss != nil && ks.ExpireMs(e) == e.ExpireAt()/1e6 { // a far expiry's ms live in ks's side map
		ss.detach, ss.expiring = e, false
	}
	ok := ks.Delete(key, c.Now)
	if ss != nil {
		ss.detach = nil
	}
	if ok {
		c.E.lazy.freed.Add(1)
	}
	return ok
}

// lazyDetachLocked prepares the lazy free of en, a large value about to leave keyspace ks
// (lazyfree-lazy-eviction, -expire and -server-del, as deleteKey does for UNLINK): a running
// snapshot that has not reached it takes it in deferred (lazyfreeDeferLocked) instead of
// copying or writing it holding the shard. It returns the snapshot's part to clear (detach)
// once the value is gone, nil when there is none. The shard is held.
func (e *Engine) lazyDetachLocked(ks *keyspace.Keyspace, en *keyspace.Entry) *snapShard {
	if en == nil || freeEffort(en) <= lazyfreeThreshold {
		return nil
	}
	k := en.Key()
	ss := e.snapShardOf(unsafe.Slice(unsafe.StringData(k), len(k)))
	if ss == nil || ks.ExpireMs(en) != en.ExpireAt()/1e6 { // a far expiry's ms live in ks's side map
		return nil
	}
	ss.detach, ss.expiring = en, false
	return ss
}

// lazyExpireLocked is lazyfree-lazy-expire's part of removing key, expired, from ks (the
// keyspace's OnExpire hook runs before it unlinks the entry): a large value is counted and
// handed to a running snapshot. The keyspace removes it after this returns; the snapshot's hook
// clears detach when it meets the entry, and an entry met later (a removal that did not reach
// the hook) is deferred only while it is expired, which a reused Entry is not.
func (e *Engine) lazyExpireLocked(ks *keyspace.Keyspace, key []byte) {
	en := ks.PeekAny(key, keyspace.Hash(key))
	if en == nil || freeEffort(en) <= lazyfreeThreshold {
		return
	}
	e.lazy.freed.Add(1)
	if ss := e.lazyDetachLocked(ks, en); ss != nil {
		ss.expiring = true
	}
}

// lazyServerDelNow is lazyfree-lazy-server-del for a command about to remove en from ks itself
// (SPOP of every member): a large value is counted and handed to a running snapshot; the
// caller clears the returned part's detach once it removed en. The shard is held.
func (e *Engine) lazyServerDelNow(ks *keyspace.Keyspace, en *keyspace.Entry) *snapShard {
	if !e.Settings().LazyfreeServerDel || freeEffort(en) <= lazyfreeThreshold {
		return nil
	}
	e.lazy.freed.Add(1)
	return e.lazyDetachLocked(ks, en)
}

// lazyServerDel is lazyfree-lazy-server-del's part of a write command (memory_acct.go): the
// declared keys whose value the command replaces or deletes when it changes them (a SET's key,
// a RENAME's or COPY's destination, a *STORE's destination), which Redis frees with
// dbAsyncDelete or freeObjAsync under the directive.
func lazyServerDelKeys(c *Ctx, dst []int) []int {
	if c.Spec == nil || !c.E.Settings().LazyfreeServerDel {
		return dst
	}
	switch c.Spec.Name {
	case "set", "setex", "psetex", "getset", "restore", "sunionstore", "sinterstore", "sdiffstore",
		"zunionstore", "zinterstore", "zdiffstore", "zrangestore":
		return append(dst, 1)
	case "rename", "copy", "bitop":
		return append(dst, 2)
	case "mset":
		for i := 1; i < len(c.Args); i += 2 {
			dst = append(dst, i)
		}
	}
	return dst
}

// snapShardOf returns the running snapshot's part for key's shard, or nil. The shard is held.
func (e *Engine) snapShardOf(key []byte) *snapShard {
	sn := e.snapshot.Load()
	if sn == nil {
		return nil
	}
	ss := &sn.shards[e.shardOf(key)]
	if ss.ended {
		return nil
	}
	return ss
}

// deferredEntry is a deleted entry a snapshot must still write: a copy of the Entry (its value
// and key with it) and its database.
type deferredEntry struct {
	db int
	en *keyspace.Entry
}

// lazyfreeDeferLocked is called by the snapshot's hook for every entry it emits: it keeps the
// entry being lazily deleted (deleteKey set ss.detach) for after the shard's walk, and reports
// whether it did. The shard is held.
func (ss *snapShard) lazyfreeDeferLocked(db int, en *keyspace.Entry) bool {
	if en != ss.detach || en == nil {
		return false
	}
	if ss.expiring && (en.ExpireAt() == 0 || en.ExpireAt() > time.Now().UnixNano()) {
		ss.detach, ss.expiring = nil, false // a reused Entry, live: not the one expiring
		return false
	}
	ss.detach, ss.expiring = nil, false // once: the entry is leaving, and a later one may reuse its memory
	cp := new(keyspace.Entry)
	*cp = *en
	ss.deferred = append(ss.deferred, deferredEntry{db: db, en: cp})
	return true
}

// flushDeferred serializes shard i's deferred entries on the snapshot's goroutine and hands them
// over as one chunk; false when aborted. Only after the shard's walk ended: its hooks are gone,
// so nothing else uses the shard's serializer or its deferred list.
func (sn *Snapshot) flushDeferred(i int) bool {
	ss := &sn.shards[i]
	if len(ss.deferred) == 0 {
		return true
	}
	var chunk []byte
	db := -1
	none := new(keyspace.Keyspace) // near expiries only (deleteKey checked): ExpireMs reads the entry
	for _, d := range ss.deferred {
		if d.db != db {
			chunk = ss.ser.SelectDB(chunk, d.db)
			db = d.db
		}
		chunk = ss.ser.Entry(chunk, d.db, d.en, none)
	}
	clear(ss.deferred)
	ss.deferred = nil
	return sn.hand(chunk)
}

// flushIsAsync reports whether FLUSHDB/FLUSHALL frees lazily: ASYNC, or no argument under
// lazyfree-lazy-user-flush.
func flushIsAsync(c *Ctx) bool {
	if len(c.Args) == 2 {
		return string(c.Args[1][0]|0x20) == "a"
	}
	return c.E.Settings().LazyfreeUserFlush
}

// countLazyFlush counts the keys of database db as lazily freed when the flush is async, as
// Redis's emptyDbAsync does. The database's shards are held.
func countLazyFlush(c *Ctx, db int) {
	if !flushIsAsync(c) {
		return
	}
	n := 0
	c.E.eachKeyspace(db, func(ks *keyspace.Keyspace) { n += ks.Len() })
	c.E.lazy.freed.Add(int64(n))
}
