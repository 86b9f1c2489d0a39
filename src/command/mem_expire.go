package command

import (
	"encoding/binary"
	"slices"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// Background expiry of agent memories (MEM.ADD/UPDATE TTL or PXAT). Reads hide an expired
// memory at once, and the writes whose outcome depends on expiry remove them first
// (sweepAgentMem); the shard's active cycle removes those of keys nobody writes, from a queue of
// (time, key) per keyspace holding, for every store with expiring memories, an entry at or
// before its next expiry (vector sets' element expiry does the same: vset_expire.go, whose queue
// and trackDeadline this reuses). A removal is replicated as MEM.DEL key id … and raises
// "mem.expired" (class d), as sweepAgentMem's. A replica runs no active cycle: it waits for the
// MEM.DELs. A store moved to another key (RENAME, MOVE), restored or loaded is queued under its
// name at its next ADD or UPDATE there.

const (
	memexpSweepKeys = 64   // stores a step of the cycle looks at in one keyspace
	memexpSweepRecs = 1024 // memories a step removes from one store
)

// trackMemExpLocked queues key's store at its next memory expiry, after a write that may have
// set one.
func trackMemExpLocked(c *Ctx, key []byte, v *memValue) {
	trackDeadline(c, key, &v.queuedExpiry, v.s.NextExpiry(), func(d *shardData) *vexpQueues { return &d.memexp })
}

// expireAgentMemLocked is one step of the active cycle in ks, one of the held shard d's
// keyspaces.
func (d *shardData) expireAgentMemLocked(ks *keyspace.Keyspace, now int64) {
	q := d.memexp[ks]
	if q == nil {
		return
	}
	ms := now / 1e6
	c := d.running
	if c == nil {
		c = &d.bg
	}
	db := slices.Index(d.dbs, ks)
	for range memexpSweepKeys {
		if top, ok := q.Min(); !ok || top.At > ms {
			return
		}
		top := q.Pop()
		key := top.Name
		k := keyBytes(key)
		e := ks.FindQuiet(k, now)
		if e == nil || e.Kind != keyspace.KindAgentMem {
			continue
		}
		v := keyspace.Obj[memValue](e)
		if v.queuedAt != top.At || v.queuedKS != ks || v.queuedKey != key {
			continue // a stale entry: the store is queued again at another time (or moved here)
		}
		v.queuedAt = 0
		if dead := v.s.Expired(ms, memexpSweepRecs); len(dead) > 0 {
			propagateMemDel(c, db, k, dead)
			c.touchIn(db, k, false)
			c.NotifyIn(db, NotifyModule, "mem.expired", k)
		}
		if next := v.s.NextExpiry(); next != 0 {
			v.queuedAt = next
			q.Push(next, key)
		}
	}
}

// propagateMemDel replicates the removal of expired memories before whatever the command (or
// the background commit) propagates next.
func propagateMemDel(c *Ctx, db int, key []byte, ids []string) {
	if !c.E.Feed.Active() {
		return
	}
	args := append(make([][]byte, 0, 2+len(ids)), memDelArg, key)
	for _, id := range ids {
		args = append(args, []byte(id))
	}
	c.fx.pre = binary.AppendUvarint(c.fx.pre, uint64(db))
	c.fx.pre = appendCommand(c.fx.pre, args)
	c.fx.npre++
}
