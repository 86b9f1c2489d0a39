package command

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// WATCH's registry, as Redis 7.0's multi.c keeps it:
//
//   - A watched key lives with its shard's data (shardData.watch): the map from (db, key) to the
//     clients watching it is read and changed only by the holder of the shard's token, like the
//     keys themselves, so it needs no lock. WATCH, UNWATCH and DISCARD are barriers that take the
//     tokens of the shards they change; EXEC, which holds its shards anyway, unwatches under them.
//   - A change to a key (Touch, Redis's signalModifiedKey) sets the watching clients' dirty flag.
//     The flag is an atomic because the executor that sets it is not the client's goroutine; it
//     is read and cleared by EXEC and UNWATCH holding the tokens of every watched key's shard, so
//     no change can slip between the check and the commands.
//   - Keys nobody watches cost one atomic load per Touch (Engine.watching, the number of
//     registered watches), as tracking's clients counter does.
//   - A key that was present but already expired when WATCH ran is remembered as such
//     (watchEntry.expired): its deletion is no change (Redis's touchWatchedKey), and EXEC aborts
//     when a key that was alive at WATCH has expired logically since (isWatchedKeyExpired).
//
// Why per shard and not one concurrent map: every Touch already runs holding its key's token, and
// EXEC must hold the watched keys' shards anyway to check atomically, so the registry costs no
// lock or shared cache line beyond the counter.

// watchState is one shard's watched keys, touched only by the shard's token holder.
type watchState struct {
	keys map[blockKey][]*watchEntry
	// held are the watches made while a busy script held the shard (Redis answers WATCH then,
	// allow-busy, and the script's later writes dirty it): registered without the token, under
	// mu, and read by Touch (n > 0) and unwatch as keys is.
	held struct {
		mu   sync.Mutex
		n    atomic.Int32
		keys map[blockKey][]*watchEntry // guarded by mu
	}
}

// watchEntry is one client's watch of one key.
type watchEntry struct {
	cl      *Client
	expired bool // present but logically expired when watched
	// pending: made while a busy script held the shard (watch.held), so expired is not known
	// yet; at is the WATCH's time. The key cannot change without dirtying the watch until the
	// run lets the shard go, so settle, under the token, finds expired from the key as it is then.
	pending bool
	at      int64
}

// settle works out a pending entry's expired flag for key in ks: whether the key was present
// and past its time at the WATCH. The key's shard is held.
func (we *watchEntry) settle(ks *keyspace.Keyspace, key []byte) {
	if we.pending {
		_, we.expired = keyState(ks, key, we.at)
		we.pending = false
	}
}

// settleHeldLocked settles the pending entries of shard d's watch.held (the run that held the
// shard when they were made is ending, or d is held for a check of them).
func (d *shardData) settleHeldLocked() {
	h := &d.watch.held
	h.mu.Lock()
	for bk, list := range h.keys {
		for _, we := range list {
			if we.pending {
				we.settle(d.dbs[bk.db], []byte(bk.key))
			}
		}
	}
	h.mu.Unlock()
}

// watchRef is a client's own record of one of its watches, to find it again.
type watchRef struct {
	shard int32
	key   blockKey
	ent   *watchEntry
	held  bool // in the shard's watch.held (registered while a busy script held it)
}

// WATCH key [key ...]
func watchCmd(c *Ctx) {
	cl, e := c.Client, c.E
	if cl.tx.on {
		c.Err(ErrWatchInMulti)
		return
	}
	shards := cl.shards[:0]
	for _, k := range c.Args[1:] {
		shards = append(shards, e.shardOf(k))
	}
	slices.Sort(shards)
	shards = slices.Compact(shards)
	keys, some := c.Args[1:], false
	if e.scripting.running.Load() > 0 { // a busy script's shards: watched without the token
		shards, some = e.watchBusy(cl, c.DB, keys, shards, c.Now)
	}
	cl.shards = shards
	if len(shards) > 0 {
		e.Group.Lock(shards)
		defer e.Group.Unlock(shards)
	}
	for _, k := range keys {
		if !some || slices.Contains(shards, e.shardOf(k)) {
			e.watchLocked(cl, c.DB, k, c.Now)
		}
	}
	c.OK()
}

// watchBusy is WATCH of keys on the shards (sorted) while a script runs. Redis answers WATCH
// (allow-busy) once the script is busy, or after it when it ends first; so for the shards a
// run holds it waits until they are let go or a run is busy (busyWait's wait). Then the keys of
// the shards still held are registered in their watch.held; it returns the shards left to lock
// and whether it registered any key.
func (e *Engine) watchBusy(cl *Client, db int, keys [][]byte, shards []int32, now int64) ([]int32, bool) {
	sc := &e.scripting
	heldAny := func() bool {
		if sc.all.Load() > 0 {
			return true
		}
		for _, id := range shards {
			if sc.held[id].Load() > 0 {
				return true
			}
		}
		return false
	}
	th := time.Duration(e.Settings().BusyReplyThreshold) * time.Millisecond
	if th <= 0 || !heldAny() {
		return shards, false
	}
	sc.waitRuns(th, func() bool { return e.Scripts().BusyReply() != "" || !heldAny() })
	if e.Scripts().BusyReply() == "" { // the runs ended, let the shards go, or were never busy
		return shards, false
	}
	all := sc.all.Load() > 0
	free := shards[:0]
	for _, id := range shards {
		if !all && sc.held[id].Load() == 0 {
			free = append(free, id)
		}
	}
	some := false
	for _, k := range keys {
		if id := e.shardOf(k); !slices.Contains(free, id) {
			e.watchHeld(cl, db, k, id, now)
			some = true
		}
	}
	return free, some
}

// watchHeld registers cl's watch of key in db in its shard's watch.held, without the token,
// made at now; whether the key had expired then is settled once the run lets the shard go.
func (e *Engine) watchHeld(cl *Client, db int, key []byte, id int32, now int64) {
	bk := blockKey{db, string(key)}
	for _, r := range cl.tx.watched {
		if r.key == bk {
			return
		}
	}
	h := &e.data(id).watch.held
	we := &watchEntry{cl: cl, pending: true, at: now}
	h.mu.Lock()
	if h.keys == nil {
		h.keys = map[blockKey][]*watchEntry{}
	}
	h.keys[bk] = append(h.keys[bk], we)
	h.n.Add(1)
	h.mu.Unlock()
	cl.tx.watched = append(cl.tx.watched, watchRef{shard: id, key: bk, ent: we, held: true})
	e.watching.Add(1)
}

// UNWATCH
func unwatchCmd(c *Ctx) {
	if c.tx == nil { // inside EXEC the watches are gone already (EXEC unwatches first)
		c.E.unwatchAll(c.Client)
	}
	c.OK()
}

// watchLocked registers cl's watch of key in db; the key's shard is held.
func (e *Engine) watchLocked(cl *Client, db int, key []byte, now int64) {
	bk := blockKey{db, string(key)}
	for _, r := range cl.tx.watched {
		if r.key == bk {
			return
		}
	}
	id := e.shardOf(key)
	d := e.data(id)
	_, expired := keyState(d.dbs[db], key, now)
	if d.watch.keys == nil {
		d.watch.keys = map[blockKey][]*watchEntry{}
	}
	we := &watchEntry{cl: cl, expired: expired}
	d.watch.keys[bk] = append(d.watch.keys[bk], we)
	cl.tx.watched = append(cl.tx.watched, watchRef{shard: id, key: bk, ent: we})
	e.watching.Add(1)
}

// watchShards appends the shards of cl's watched keys to dst.
func (cl *Client) watchShards(dst []int32) []int32 {
	for _, r := range cl.tx.watched {
		dst = append(dst, r.shard)
	}
	return dst
}

// unwatchAll drops every watch of cl and its dirty flag, taking the shards it needs.
func (e *Engine) unwatchAll(cl *Client) {
	if len(cl.tx.watched) == 0 {
		cl.tx.dirtyCAS.Store(false)
		return
	}
	shards := cl.tx.wshards[:0]
	for _, r := range cl.tx.watched {
		if !r.held { // watch.held needs no token
			shards = append(shards, r.shard)
		}
	}
	slices.Sort(shards)
	shards = slices.Compact(shards)
	cl.tx.wshards = shards
	if len(shards) > 0 {
		e.Group.Lock(shards)
		defer e.Group.Unlock(shards)
	}
	e.unwatchLocked(cl)
}

// unwatchLocked is unwatchAll with the watched keys' shards held.
func (e *Engine) unwatchLocked(cl *Client) {
	for i, r := range cl.tx.watched {
		d := e.data(r.shard)
		if r.held {
			h := &d.watch.held
			h.mu.Lock()
			dropWatch(h.keys, r)
			h.n.Add(-1)
			h.mu.Unlock()
		} else {
			dropWatch(d.watch.keys, r)
		}
		cl.tx.watched[i] = watchRef{}
	}
	e.watching.Add(-int64(len(cl.tx.watched)))
	cl.tx.watched = cl.tx.watched[:0]
	cl.tx.dirtyCAS.Store(false)
}

// dropWatch removes r's entry from m.
func dropWatch(m map[blockKey][]*watchEntry, r watchRef) {
	list := m[r.key]
	if j := slices.Index(list, r.ent); j >= 0 {
		list = slices.Delete(list, j, j+1)
	}
	if len(list) == 0 {
		delete(m, r.key)
	} else {
		m[r.key] = list
	}
}

// touchWatchedLocked marks the clients watching key in db dirty (Redis's touchWatchedKey); the
// key's shard is held. deleted says the key is being removed by its expiry.
func (e *Engine) touchWatchedLocked(db int, key []byte, deleted bool) {
	d := e.data(e.shardOf(key))
	d.touchHeldLocked(db, key, deleted)
	d.touchKeysLocked(db, key, deleted)
}

// touchHeldLocked is touchWatchedLocked for the watches in shard d's watch.held.
func (d *shardData) touchHeldLocked(db int, key []byte, deleted bool) {
	if h := &d.watch.held; h.n.Load() > 0 {
		h.mu.Lock()
		for _, we := range h.keys[blockKey{db, string(key)}] {
			if we.pending && deleted {
				// Deleted by its expiry while the run that held the shard at the WATCH goes on:
				// the run's clock (Redis's script time) is the one it started with, so the key
				// was past its time at the WATCH too, and its deletion is no logical change.
				we.pending = false
				continue
			}
			we.settle(d.dbs[db], key)
			we.touch(d.dbs[db], key, deleted)
		}
		h.mu.Unlock()
	}
}

// touchKeysLocked is touchWatchedLocked for the watches in shard d's watch.keys.
func (d *shardData) touchKeysLocked(db int, key []byte, deleted bool) {
	if len(d.watch.keys) == 0 {
		return
	}
	for _, we := range d.watch.keys[blockKey{db, string(key)}] {
		we.touch(d.dbs[db], key, deleted)
	}
}

// touch is a change to the watched key in ks (Redis's touchWatchedKey): its client's EXEC will
// fail, unless the key was watched while already expired and is now gone or being deleted by
// its expiry, which is no logical change.
func (we *watchEntry) touch(ks *keyspace.Keyspace, key []byte, deleted bool) {
	if we.expired {
		if exists, _ := keyState(ks, key, 0); deleted || !exists {
			we.expired = false
			return
		}
	}
	we.cl.tx.dirtyCAS.Store(true)
}

// appendTouched appends a key a script run changed to its txState.touched.
func appendTouched(dst []byte, db int, key []byte, expired bool) []byte {
	dst = binary.AppendUvarint(dst, uint64(db))
	flag := byte(0)
	if expired {
		flag = 1
	}
	dst = append(dst, flag)
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	return append(dst, key...)
}

// nextTouched decodes the first key of a txState.touched and returns the rest.
func nextTouched(b []byte) (db int, key []byte, expired bool, rest []byte) {
	v, n := binary.Uvarint(b)
	db, b = int(v), b[n:]
	expired, b = b[0] == 1, b[1:]
	v, n = binary.Uvarint(b)
	return db, b[n : n+int(v)], expired, b[n+int(v):]
}

// flushRunTouches tells the watchers of the keys a script run changed (txState.touched), the
// run still holding their shards, and empties the list. (The watches made while a busy run
// holds the shard, watch.held, are told at the write: one made after it is not dirtied by it.)
func (e *Engine) flushRunTouches(tx *txState) {
	for b := tx.touched; len(b) > 0; {
		var db int
		var key []byte
		var expired bool
		db, key, expired, b = nextTouched(b)
		e.data(e.shardOf(key)).touchKeysLocked(db, key, expired)
	}
	tx.touched = tx.touched[:0]
}

// dropUndoneTouches keeps, of a script run's touched keys and keys to invalidate, those
// deleted by their expiry (the deletions an undo leaves in place).
func dropUndoneTouches(tx *txState) {
	tx.touched = keepExpiredTouches(tx.touched)
	tx.inval = keepExpiredTouches(tx.inval)
}

// keepExpiredTouches cuts b (appendTouched's form) down to its keys deleted by their expiry.
func keepExpiredTouches(b []byte) []byte {
	var kept []byte
	for rest := b; len(rest) > 0; {
		var db int
		var key []byte
		var expired bool
		db, key, expired, rest = nextTouched(rest)
		if expired {
			kept = appendTouched(kept, db, key, true)
		}
	}
	return append(b[:0], kept...)
}

// keyState reports whether key has an entry in ks (Redis's dictFind) and whether that entry's
// time has passed at now (keyIsExpired), reclaiming nothing and recording no access.
func keyState(ks *keyspace.Keyspace, key []byte, now int64) (exists, expired bool) {
	if ks.Peek(key, math.MinInt64) == nil {
		return false, false
	}
	return true, ks.Peek(key, now) == nil
}

// touchAllWatchedLocked is Redis's touchAllWatchedKeysInDb for database emptied, about to be
// emptied (FLUSHDB, FLUSHALL) or, when with >= 0, swapped with database with (SWAPDB): only keys
// that exist in one of them count. Every shard is held.
func (e *Engine) touchAllWatchedLocked(emptied, with int, now int64) {
	if e.watching.Load() == 0 {
		return
	}
	for i := range e.Group.Shards {
		d := e.data(int32(i))
		if h := &d.watch.held; h.n.Load() > 0 {
			d.settleHeldLocked()
			h.mu.Lock()
			touchAllIn(d, h.keys, emptied, with, now)
			h.mu.Unlock()
		}
		touchAllIn(d, d.watch.keys, emptied, with, now)
	}
}

// touchAllIn is touchAllWatchedLocked for the watches in m of shard d.
func touchAllIn(d *shardData, m map[blockKey][]*watchEntry, emptied, with int, now int64) {
	for bk, list := range m {
		if bk.db != emptied {
			continue
		}
		key := []byte(bk.key)
		inEmptied, _ := keyState(d.dbs[emptied], key, now)
		inWith, withExpired := false, false
		if with >= 0 {
			inWith, withExpired = keyState(d.dbs[with], key, now)
		}
		if !inEmptied && !inWith {
			continue
		}
		for _, we := range list {
			switch {
			case we.expired && !inWith:
				we.expired = false // the expired key is deleted: no logical change
				continue
			case we.expired && withExpired:
				continue // an expired key stays expired
			case !we.expired && !inEmptied && withExpired:
				we.expired = true // nothing is replaced by an expired key
				continue
			}
			we.cl.tx.dirtyCAS.Store(true)
		}
	}
}

// watchedExpiredLocked reports whether a key cl watched while it was alive has expired since
// (Redis's isWatchedKeyExpired); the watched keys' shards are held.
func (e *Engine) watchedExpiredLocked(cl *Client, now int64) bool {
	for _, r := range cl.tx.watched {
		if r.held {
			h := &e.data(r.shard).watch.held
			h.mu.Lock()
			r.ent.settle(e.data(r.shard).dbs[r.key.db], []byte(r.key.key))
			h.mu.Unlock()
		}
		if r.ent.expired {
			continue
		}
		if _, expired := keyState(e.data(r.shard).dbs[r.key.db], []byte(r.key.key), now); expired {
			return true
		}
	}
	return false
}
