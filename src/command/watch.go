package command

import (
	"math"
	"slices"

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
}

// watchEntry is one client's watch of one key.
type watchEntry struct {
	cl      *Client
	expired bool // present but logically expired when watched
}

// watchRef is a client's own record of one of its watches, to find it again.
type watchRef struct {
	shard int32
	key   blockKey
	ent   *watchEntry
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
	cl.shards = shards
	e.Group.Lock(shards)
	defer e.Group.Unlock(shards)
	for _, k := range c.Args[1:] {
		e.watchLocked(cl, c.DB, k, c.Now)
	}
	c.OK()
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
	shards := cl.watchShards(cl.tx.wshards[:0])
	slices.Sort(shards)
	shards = slices.Compact(shards)
	cl.tx.wshards = shards
	e.Group.Lock(shards)
	defer e.Group.Unlock(shards)
	e.unwatchLocked(cl)
}

// unwatchLocked is unwatchAll with the watched keys' shards held.
func (e *Engine) unwatchLocked(cl *Client) {
	for i, r := range cl.tx.watched {
		d := e.data(r.shard)
		list := d.watch.keys[r.key]
		if j := slices.Index(list, r.ent); j >= 0 {
			list = slices.Delete(list, j, j+1)
		}
		if len(list) == 0 {
			delete(d.watch.keys, r.key)
		} else {
			d.watch.keys[r.key] = list
		}
		cl.tx.watched[i] = watchRef{}
	}
	e.watching.Add(-int64(len(cl.tx.watched)))
	cl.tx.watched = cl.tx.watched[:0]
	cl.tx.dirtyCAS.Store(false)
}

// touchWatchedLocked marks the clients watching key in db dirty (Redis's touchWatchedKey); the
// key's shard is held. deleted says the key is being removed by its expiry.
func (e *Engine) touchWatchedLocked(db int, key []byte, deleted bool) {
	d := e.data(e.shardOf(key))
	if len(d.watch.keys) == 0 {
		return
	}
	list := d.watch.keys[blockKey{db, string(key)}]
	for _, we := range list {
		if we.expired {
			// Watched while already expired: its deletion is no logical change.
			if exists, _ := keyState(d.dbs[db], key, 0); deleted || !exists {
				we.expired = false
				continue
			}
		}
		we.cl.tx.dirtyCAS.Store(true)
	}
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
		for bk, list := range d.watch.keys {
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
}

// watchedExpiredLocked reports whether a key cl watched while it was alive has expired since
// (Redis's isWatchedKeyExpired); the watched keys' shards are held.
func (e *Engine) watchedExpiredLocked(cl *Client, now int64) bool {
	for _, r := range cl.tx.watched {
		if r.ent.expired {
			continue
		}
		if _, expired := keyState(e.data(r.shard).dbs[r.key.db], []byte(r.key.key), now); expired {
			return true
		}
	}
	return false
}
