package command

import (
	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
)

// Active expiry of hash fields. Commands reclaim a hash's expired fields whenever they touch it;
// the active cycle reclaims those of hashes nobody touches, and deletes a hash whose last field
// expired, so that it leaves the keyspace (EXISTS, DBSIZE, SCAN) soon after, as in Redis.
//
// Each keyspace with such hashes has a queue of (time, key) holding, for every hash with an
// expiring field, an entry at or before its next field expiry. HEXPIRE adds one only when it
// makes that expiry earlier; the cycle pops the entries whose time has come, reclaims the
// hash's expired fields and queues it again at its new next expiry. Entries whose key was
// deleted or replaced are dropped when they come up. A hash moved to another key (RENAME, MOVE,
// COPY) is not queued under its new name until HEXPIRE touches it there; until then only
// commands reclaim its fields.

// hfeQueues holds a shard's queues, one per keyspace with such hashes (keyed by the keyspace, not
// its database number, so that a queue follows its keyspace through SWAPDB). It lives in the
// shard's data and is touched only by the holder of the shard's token.
type hfeQueues map[*keyspace.Keyspace]*hash.Deadlines

// Active expiry bounds, per keyspace and cycle: hashes visited and fields reclaimed in each.
const (
	hfeSweepKeys   = 64
	hfeSweepFields = 1024
)

// trackLocked queues key's hash in ks for active expiry after a command changed its field
// expiries; before and after are its NextExpiry around the change.
func (qs hfeQueues) trackLocked(ks *keyspace.Keyspace, key []byte, before, after int64) {
	if after == 0 || (before != 0 && after >= before) {
		return // an entry at or before after is queued already
	}
	q := qs[ks]
	if q == nil {
		q = &hash.Deadlines{}
		qs[ks] = q
	}
	q.Push(after, string(key))
}

// expireHashFieldsLocked is one step of active field expiry in ks, one of the held shard d's
// keyspaces; now is in unix ns.
func (d *shardData) expireHashFieldsLocked(ks *keyspace.Keyspace, now int64) {
	q := d.hfe[ks]
	if q == nil {
		return
	}
	ms := now / 1e6
	for range hfeSweepKeys {
		if top, ok := q.Min(); !ok || top.At > ms {
			return
		}
		key := q.Pop().Name
		e := ks.FindQuiet(keyBytes(key), now)
		if e == nil || e.Kind != keyspace.KindHash {
			continue
		}
		h := e.Obj.(*hash.Hash)
		h.ExpireSome(ms, hfeSweepFields)
		if h.Len() == 0 {
			ks.Remove(e)
		} else if next := h.NextExpiry(); next != 0 {
			q.Push(next, key)
		}
	}
}
