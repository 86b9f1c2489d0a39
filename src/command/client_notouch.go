package command

import (
	"sync/atomic"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// CLIENT NO-TOUCH (Redis 7.2): the client's commands do not change the access time (OBJECT
// IDLETIME, LRU) or the LFU counter of the keys they look up, except TOUCH, which is for that.
// The access is recorded inside ds/keyspace's Find and Upsert; the Ctx's lookups (ctx.go: Find,
// FindIn, FindRead, UpsertIn) take their quiet forms instead for such a client, and the eviction
// sampler's touch (touchKey) is skipped with them. Handlers that call a keyspace's Find
// themselves still touch: APPEND and SETRANGE (strings_range.go), the INCR family
// (strings_num.go), one each in expire.go and keys.go; they would take FindQuiet under noTouch.

// noTouch reports whether the call must not record accesses.
func (c *Ctx) noTouch() bool {
	return c.Client != nil && c.Client.noTouch && c.Spec != nil && c.Spec.Name != "touch"
}

// findReadNoTouch is FindRead without the access. Shared readers (shared.go) record accesses in
// FindShared, so the call runs again holding the token, where FindQuiet does not.
func (c *Ctx) findReadNoTouch(ks *keyspace.Keyspace, key []byte, h uint64) *keyspace.Entry {
	if c.rstats != nil {
		c.needToken = true
		return nil
	}
	e := ks.FindQuiet(key, c.Now)
	st := &c.E.data(c.E.shardOfKey(key, h)).stats
	if e == nil {
		st.misses++
		c.Notify(NotifyKeyMiss, "keymiss", key)
	} else {
		st.hits++
	}
	return e
}

// upsertNoTouch is UpsertIn that gives an existing entry back the access time and LFU counter it
// had before (Upsert records an access; the shard is held, so nothing else changes them).
func (c *Ctx) upsertNoTouch(ks *keyspace.Keyspace, key []byte, h uint64) (*keyspace.Keyspace, *keyspace.Entry, bool) {
	old := ks.Peek(key, c.Now)
	var access uint32
	var freq uint8
	if old != nil {
		access, freq = atomic.LoadUint32(&old.Access), old.Freq
	}
	e, created := ks.UpsertHashed(key, h, c.Now)
	if !created && e == old {
		atomic.StoreUint32(&e.Access, access)
		e.Freq = freq
	}
	return ks, e, created
}
