package command

import (
	"encoding/binary"
	"slices"

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
//
// Reclaiming fields, by a command or by the cycle, reports what Redis 7.4's hashTypeExpire
// reports (expireFields): no change counted, but each field's HDEL propagated on its own before
// whatever the command then propagates, "hexpired" once per hash, and "del" for a hash left empty.

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
	c := d.running // nil in the cron: its reports go to d.bg, committed by commitBackgroundLocked
	if c == nil {
		c = &d.bg
	}
	db := slices.Index(d.dbs, ks)
	for range hfeSweepKeys {
		if top, ok := q.Min(); !ok || top.At > ms {
			return
		}
		key := q.Pop().Name
		k := keyBytes(key)
		e := ks.FindQuiet(k, now)
		if e == nil || e.Kind != keyspace.KindHash {
			continue
		}
		h := keyspace.Obj[hash.Hash](e)
		before := e.Accounted()
		if expireFields(c, db, k, h, ms, hfeSweepFields) > 0 {
			accountExpiry(c, ks, e, before)
		}
		if h.Len() == 0 {
			ks.Remove(e)
		} else if next := h.NextExpiry(); next != 0 {
			q.Push(next, key)
		}
	}
}

// expireFields removes the fields of h, key's hash in database db, whose time has come at ms
// (unix ms): at most about max of them, or all of them while a feed reader is attached, which
// needs their names. It reports to c what Redis 7.4's hashTypeExpire does: each field's HDEL,
// "hexpired" once, and "del" when no field is left, in which case the caller deletes the key.
// It returns how many fields it removed.
func expireFields(c *Ctx, db int, key []byte, h *hash.Hash, ms int64, max int) int {
	if next := h.NextExpiry(); next == 0 || next > ms {
		return 0
	}
	var n int
	if c.E.Feed.Active() {
		// The fields Expire removes are those whose TTL is at or before ms (ds/hash).
		for it := h.Iter(); it.Next(); {
			if at := it.TTL(); at != 0 && at <= ms {
				propagateFieldDeletion(c, db, key, it.Field())
			}
		}
		n = h.Expire(ms)
	} else {
		n = h.ExpireSome(ms, max)
	}
	if n == 0 {
		return 0
	}
	c.Touch(key)
	c.NotifyIn(db, NotifyHash, "hexpired", key)
	if h.Len() == 0 {
		c.NotifyIn(db, NotifyGeneric, "del", key)
	}
	return n
}

// accountExpiry reports to ks what expiring fields changed in e's accounted size (a packed
// hash's buffer is rebuilt smaller, and its capacity is what it accounts: keyspace.Inline),
// which happens outside a command's own accounting (memory_acct.go). When e is a key the
// running write declared, its settle starts from the new size, so the change counts once.
func accountExpiry(c *Ctx, ks *keyspace.Keyspace, e *keyspace.Entry, before int64) {
	d := e.Accounted() - before
	if d == 0 {
		return
	}
	ks.Account(d)
	for i := range c.mem.recs {
		if c.mem.recs[i].e == e {
			c.mem.recs[i].acct += d
		}
	}
}

// propagateFieldDeletion replicates the deletion of an expired field as HDEL key field in
// database db, on its own and before the command c runs (if any) is replicated, as Redis 7.4's
// propagateHashFieldDeletion does and as expired keys' DELs are (effects.go). It builds nothing
// without a feed reader.
func propagateFieldDeletion(c *Ctx, db int, key, field []byte) {
	if !c.E.Feed.Active() {
		return
	}
	c.fx.pre = binary.AppendUvarint(c.fx.pre, uint64(db))
	c.fx.pre = appendCommand(c.fx.pre, [][]byte{hashHdelArg, key, field})
	c.fx.npre++
}

// hashHdelArg is the name expired fields' deletions are replicated under (Redis's shared.hdel).
var hashHdelArg = []byte("HDEL")
