package command

import (
	"encoding/binary"
	"slices"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
)

// Per-element expiry of vector sets (VSIM.SET TTL/PXAT). Reads skip expired elements; writes to
// a set remove its expired ones first (writeVset); the shard's active cycle removes those of sets
// nobody writes, from a queue of (time, key) per keyspace holding, for every set with expiring
// elements, an entry at or before its next expiry, as hashes' field expiry does
// (hashes_expire.go, whose queue type this reuses). A set moved to another key (RENAME, MOVE) is
// not queued under its new name until VSIM.SET touches it there.
//
// A removed element is replicated as VSIM.DEL key element before whatever the command then
// propagates, and raises "vexpired" (class d, module); a set made by VADD that is left empty
// is deleted ("del"), one made by VSIM.CREATEINDEX stays, empty.

type vexpQueues map[*keyspace.Keyspace]*hash.Deadlines

const (
	vexpSweepKeys  = 64
	vexpSweepElems = 1024
)

// nextExpiry is the earliest element expiry (unix ms), 0 when none.
func (v *vsetValue) nextExpiry() int64 {
	var next int64
	for _, at := range v.ttl {
		if next == 0 || at < next {
			next = at
		}
	}
	return next
}

// trackVexpLocked queues key's set in its shard's queue at at (unix ms), unless an entry at or
// before at is queued already.
func trackVexpLocked(c *Ctx, key []byte, v *vsetValue, at int64) {
	trackDeadline(c, key, &v.queuedExpiry, at, func(d *shardData) *vexpQueues { return &d.vexp })
}

// queuedExpiry is where a value whose elements expire sits in its shard's expiry queue: at
// queuedAt in keyspace queuedKS's queue under the name queuedKey, 0 when it is not queued. A value
// is queued once, at or before its next element expiry (vector sets, IP sets).
type queuedExpiry struct {
	queuedAt  int64
	queuedKS  *keyspace.Keyspace
	queuedKey string
}

// trackDeadline queues key in the queue of its shard that queues picks, at at (unix ms), unless q
// says it is queued at or before at under this name already.
func trackDeadline(c *Ctx, key []byte, q *queuedExpiry, at int64, queues func(*shardData) *vexpQueues) {
	d := c.E.data(c.E.shardOf(key))
	ks := d.dbs[c.DB]
	if at == 0 || q.queuedAt != 0 && q.queuedAt <= at && q.queuedKS == ks && q.queuedKey == string(key) {
		return
	}
	q.queuedAt, q.queuedKS, q.queuedKey = at, ks, string(key)
	m := queues(d)
	if *m == nil {
		*m = vexpQueues{}
	}
	dl := (*m)[ks]
	if dl == nil {
		dl = &hash.Deadlines{}
		(*m)[ks] = dl
	}
	dl.Push(at, string(key))
}

// expireVsetElements removes v's elements expired at ms (at most max of them, 0: all) and reports
// them to c; it returns how many it removed. The caller deletes the key when it must.
func expireVsetElements(c *Ctx, db int, key []byte, v *vsetValue, ms int64, max int) int {
	var dead []uint32
	for id, at := range v.ttl {
		if at <= ms {
			dead = append(dead, id)
		}
	}
	if len(dead) == 0 {
		return 0
	}
	slices.Sort(dead)
	if max > 0 && len(dead) > max {
		dead = dead[:max]
	}
	for _, id := range dead {
		name := append([]byte(nil), v.set.Name(id)...)
		v.remove(name)
		propagateVsetDeletion(c, db, key, name)
	}
	c.touchIn(db, key, false)
	c.NotifyIn(db, NotifyModule, "vexpired", key)
	if v.Len() == 0 && !v.hotkv {
		c.NotifyIn(db, NotifyGeneric, "del", key)
	}
	return len(dead)
}

var vsimDelArg = []byte("VSIM.DEL")

// propagateVsetDeletion replicates an expired element's removal before the command's own form.
func propagateVsetDeletion(c *Ctx, db int, key, name []byte) {
	if !c.E.Feed.Active() {
		return
	}
	c.fx.pre = binary.AppendUvarint(c.fx.pre, uint64(db))
	c.fx.pre = appendCommand(c.fx.pre, [][]byte{vsimDelArg, key, name})
	c.fx.npre++
}

// expireVsetsLocked is one step of the active cycle in ks, one of the held shard d's keyspaces.
func (d *shardData) expireVsetsLocked(ks *keyspace.Keyspace, now int64) {
	sweepDeadlines(d, d.vexp[ks], ks, now, keyspace.KindVectorSet,
		func(c *Ctx, db int, k []byte, e *keyspace.Entry, v *vsetValue, ms int64) int64 {
			expireVsetElements(c, db, k, v, ms, vexpSweepElems)
			if v.Len() == 0 && !v.hotkv {
				ks.Remove(e)
				return 0
			}
			return v.nextExpiry()
		})
}

// queued is the value's place in its shard's expiry queue (sweepDeadlines).
func (q *queuedExpiry) queued() *queuedExpiry { return q }

// sweepDeadlines is one step of the active cycle over q, keyspace ks's queue of values of kind
// (vector sets, IP sets, agent memories) in the held shard d: for each of up to vexpSweepKeys
// keys due by now whose value is still queued as popped (else the entry is stale: the value is
// queued again at another time, or moved here), it clears the queued time and calls expire,
// which removes what is due and returns when the key is next due (0: not again, or removed); the
// key is queued again then.
func sweepDeadlines[V any, PV interface {
	*V
	queued() *queuedExpiry
}](d *shardData, q *hash.Deadlines, ks *keyspace.Keyspace, now int64, kind keyspace.Kind,
	expire func(c *Ctx, db int, k []byte, e *keyspace.Entry, v PV, ms int64) int64) {
	if q == nil {
		return
	}
	ms := now / 1e6
	c := d.running
	if c == nil {
		c = &d.bg
	}
	db := slices.Index(d.dbs, ks)
	for range vexpSweepKeys {
		if top, ok := q.Min(); !ok || top.At > ms {
			return
		}
		top := q.Pop()
		key := top.Name
		k := keyBytes(key)
		e := ks.FindQuiet(k, now)
		if e == nil || e.Kind != kind {
			continue
		}
		v := PV(keyspace.Obj[V](e))
		qe := v.queued()
		if qe.queuedAt != top.At || qe.queuedKS != ks || qe.queuedKey != key {
			continue
		}
		qe.queuedAt = 0
		if next := expire(c, db, k, e, v, ms); next != 0 {
			qe.queuedAt = next
			q.Push(next, key)
		}
	}
}
