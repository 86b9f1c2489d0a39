package command

import (
	"encoding/binary"

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

const memexpSweepRecs = 1024 // memories a step removes from one store (the keys a step looks at: vexpSweepKeys)

// trackMemExpLocked queues key's store at its next memory expiry, after a write that may have
// set one.
func trackMemExpLocked(c *Ctx, key []byte, v *memValue) {
	trackDeadline(c, key, &v.queuedExpiry, v.s.NextExpiry(), func(d *shardData) *vexpQueues { return &d.memexp })
}

// expireAgentMemLocked is one step of the active cycle in ks, one of the held shard d's
// keyspaces.
func (d *shardData) expireAgentMemLocked(ks *keyspace.Keyspace, now int64) {
	sweepDeadlines(d, d.memexp[ks], ks, now, keyspace.KindAgentMem,
		func(c *Ctx, db int, k []byte, e *keyspace.Entry, v *memValue, ms int64) int64 {
			if dead := v.s.Expired(ms, memexpSweepRecs); len(dead) > 0 {
				propagateMemDel(c, db, k, dead)
				c.touchIn(db, k, false)
				c.NotifyIn(db, NotifyModule, "mem.expired", k)
			}
			return v.s.NextExpiry()
		})
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
