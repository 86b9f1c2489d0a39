package command

// Key tags (issue 18 item 6, HotKV's own commands): a key carries any number of tags, and
// TAG.INVALIDATE deletes every key carrying a tag, the cache invalidation that Redis users build
// from sets that go stale when keys expire.
//
// The index is ds/tags, one per database of each shard, beside the keyspace it indexes and
// touched only by the shard's token holder like the keyspace itself. Rules (docs/decisions.md,
// "Key tags"):
//
//  1. Tags live and die with their key: every entry leaving a keyspace (DEL, UNLINK, expiry
//     lazy or active, eviction, GETDEL, a *STORE or RESTORE REPLACE that removes the old key,
//     TAG.INVALIDATE) drops its tags in the keyspace's OnRemove hook; FLUSHDB and FLUSHALL
//     replace the index.
//  2. Commands that keep the key's identity keep its tags: RENAME, RENAMENX and MOVE carry them
//     to the new name or database; SWAPDB swaps them with the databases. Everything that keeps
//     the key and changes its value (APPEND, INCR, HSET, EXPIRE …) keeps them.
//  3. What drops a key's TTL because it replaces the value drops its tags too (Redis's setKey):
//     SET (and SETEX, PSETEX, GETSET, MSET), the *STORE commands, BITOP, SORT … STORE. COPY
//     copies no tags (the copy is a new key).
//  4. Tags are metadata, not the value: tagging is no keyspace event and touches no WATCH or
//     client-side cache entry.
//  5. TAG.MEMBERS, TAG.COUNT and TAG.INVALIDATE visit the shards one at a time and hold each
//     for a bounded slice of keys (tagReadSlice, tagDelSlice), so a tag of a million keys never
//     stalls other clients. Each hold is atomic: TAG.INVALIDATE deletes a shard's part of up
//     to tagDelSlice keys at once, a larger part in several holds, each replicated as one DEL.

import (
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/tags"
	"github.com/hotkv/hotkv/pipeline"
)

var tagCommands = []*Spec{
	{Name: "tag.set", Arity: -3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: tagSet},
	{Name: "tag.get", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: tagGet},
	{Name: "tag.del", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: tagDel},
	{Name: "tag.clear", Arity: 2, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: tagClear},
	{Name: "tag.members", Arity: 2, Flags: ReadOnly, Scope: ScopeSelf, Run: tagMembers},
	{Name: "tag.count", Arity: 2, Flags: ReadOnly, Scope: ScopeSelf, Run: tagCount},
	{Name: "tag.invalidate", Arity: -2, Flags: Write, Scope: ScopeSelf, Run: tagInvalidate},
}

// tagReadSlice is the most keys TAG.MEMBERS and TAG.COUNT read per hold of a shard, and
// tagDelSlice the most TAG.INVALIDATE deletes per hold: deleting a tagged key cost 0.9 µs of CPU
// here (BenchmarkTagInvalidate100k), reading one about a tenth of that, so each hold stays
// near a millisecond. Between holds the walk yields the processor to the connections.
const (
	tagReadSlice = 8192
	tagDelSlice  = 1024
)

// walksTags reports whether spec visits every shard in many holds (TAG.MEMBERS, TAG.COUNT,
// TAG.INVALIDATE): netpoll serves such a call off its poller (mayBlock), so the connections
// sharing the poller are read meanwhile.
func walksTags(spec *Spec) bool {
	return spec.Run != nil && spec.Scope == ScopeSelf && strings.HasPrefix(spec.Name, "tag.")
}

// initTags gives every database of shard d an empty index, bound to its keyspace.
func (e *Engine) initTags(d *shardData) {
	d.tags = make([]*tags.Index, len(d.dbs))
	for db := range d.dbs {
		bindTags(d, db, tags.New())
	}
}

// bindTags makes ix the index of database db of shard d: the keyspace's OnRemove drops a dying
// key's tags from it. The hook belongs to the keyspace, not to the number: SWAPDB moves both.
// The index counts its own bytes into the shard's used memory (ds/tags Bytes, into mem.tags), so
// eviction and INFO see them; a replaced index takes its bytes off.
func bindTags(d *shardData, db int, ix *tags.Index) {
	if old := d.tags[db]; old != nil {
		old.SetSink(nil)
	}
	ix.SetSink(&d.mem.tags)
	d.tags[db] = ix
	d.dbs[db].OnRemove = func(en *keyspace.Entry) {
		if ix.Len() > 0 {
			ix.Drop(en.Key())
		}
	}
}

// resetTagsLocked gives database db of every shard a new empty index (FLUSHDB, FLUSHALL); every
// shard is held. A snapshot running keeps the old one for the image (persist_tags.go).
func (e *Engine) resetTagsLocked(db int) {
	for i := range e.Group.Shards {
		if d := e.data(int32(i)); d.tags[db].Len() > 0 {
			bindTags(d, db, tags.New())
		}
	}
}

// swapTagsLocked swaps databases a and b's indexes in every shard, with the keyspaces (SWAPDB).
func (e *Engine) swapTagsLocked(a, b int) {
	for i := range e.Group.Shards {
		d := e.data(int32(i))
		d.tags[a], d.tags[b] = d.tags[b], d.tags[a]
	}
}

// tagBytes is what every tag index holds (MEMORY STATS' hotkv.tags.bytes); no token needed.
func (e *Engine) tagBytes() int64 {
	var n int64
	for i := range e.Group.Shards {
		n += e.data(int32(i)).mem.tags.Load()
	}
	return n
}

// tagIndex returns the index of key's shard in database db; the shard must be held.
func (e *Engine) tagIndex(db int, key []byte) *tags.Index { return e.data(e.shardOf(key)).tags[db] }

// untagOverwritten drops key's tags because its value is being replaced (rule 3). It costs one
// atomic load until the first TAG.SET of the server's life.
func untagOverwritten(c *Ctx, key []byte) {
	if !c.E.tagsOn.Load() {
		return
	}
	if ix := c.E.tagIndex(c.DB, key); ix.Len() > 0 {
		ix.Drop(keyString(key))
	}
}

// moveTagged is moveEntry for RENAME and MOVE, carrying src's tags to key in database toDB
// when the value moves, and leaving them on src when it does not (rule 2).
func moveTagged(c *Ctx, from *keyspace.Keyspace, e *keyspace.Entry, src []byte, to *keyspace.Keyspace,
	toDB int, key []byte, replace bool) bool {
	var carried []string
	fromIx := c.E.tagIndex(c.DB, src)
	if fromIx.Len() > 0 {
		carried = fromIx.Take(keyString(src))
	}
	moved := moveEntry(from, e, to, key, c.Now, replace)
	if moved {
		budgetRenamed(c, toDB, key, to)
	}
	switch {
	case carried == nil:
	case moved:
		c.E.tagIndex(toDB, key).AddStrings(string(key), carried)
	default:
		fromIx.AddStrings(string(src), carried)
	}
	return moved
}

// keyString views key as a string for a lookup; the index copies what it keeps.
func keyString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// TAG.SET key tag [tag ...]: the number of tags the key did not carry; an error for a missing key.
func tagSet(c *Ctx) {
	key := c.Args[1]
	if c.FindQuiet(key) == nil { // a replica's rule: an expired key is left for the primary's DEL
		c.Err(ErrNoSuchKey)
		return
	}
	c.E.tagsOn.Store(true)
	n := c.E.tagIndex(c.DB, key).Add(string(key), c.Args[2:])
	c.Dirty(n)
	c.Int(int64(n))
}

// TAG.GET key: the key's tags in the order they were added; empty for a missing or untagged key.
func tagGet(c *Ctx) {
	key := c.Args[1]
	var t []string
	if c.FindQuiet(key) != nil { // an expired key is reclaimed with its tags (not on a replica)
		t = c.E.tagIndex(c.DB, key).Tags(keyString(key))
	}
	c.ArrayLen(len(t))
	for _, s := range t {
		c.BulkString(s)
	}
}

// TAG.DEL key tag [tag ...]: the number of those tags the key carried; the key stays.
func tagDel(c *Ctx) {
	key := c.Args[1]
	n := 0
	if c.FindQuiet(key) != nil {
		n = c.E.tagIndex(c.DB, key).Remove(keyString(key), c.Args[2:])
	}
	c.Dirty(n)
	c.Int(int64(n))
}

// TAG.CLEAR key: the number of tags removed; the key stays.
func tagClear(c *Ctx) {
	key := c.Args[1]
	n := 0
	if c.FindQuiet(key) != nil {
		n = c.E.tagIndex(c.DB, key).Drop(keyString(key))
	}
	c.Dirty(n)
	c.Int(int64(n))
}

// TAG.MEMBERS tag: the live keys carrying tag, shard by shard (in no particular order).
func tagMembers(c *Ctx) {
	var keys []string
	size := 0
	c.E.eachTagged(c, c.Args[1:2], func(_ *keyspace.Keyspace, live []string) {
		if keys == nil { // the first shard's share, times the shards: one growth or two, not 20
			keys = make([]string, 0, len(live)*len(c.E.Group.Shards))
		}
		keys = append(keys, live...)
		for _, k := range live {
			size += len(k) + 16 // $<len>\r\n<key>\r\n
		}
	})
	c.Out = slices.Grow(c.Out, size+16)
	c.ArrayLen(len(keys))
	for _, k := range keys {
		c.BulkString(k)
	}
}

// TAG.COUNT tag: the number of live keys carrying tag. A shard whose database holds no key with
// a TTL answers from its bitmap's cardinality; one that does checks its members' expiry.
func tagCount(c *Ctx) {
	n := 0
	tag := c.Args[1:2]
	for i := range c.E.Group.Shards {
		exact := false
		c.E.runInShard(c, i, func(sh *pipeline.Shard) {
			d := sh.Data.(*shardData)
			if d.dbs[c.DB].Volatile() == 0 {
				n += d.tags[c.DB].Count(tag[0])
				exact = true
			}
		})
		if !exact {
			c.E.eachTaggedIn(c, i, tag, tagReadSlice, func(_ *keyspace.Keyspace, live []string) { n += len(live) })
		}
	}
	c.Int(int64(n))
}

// TAG.INVALIDATE tag [tag ...]: deletes every live key carrying any of the tags and replies how
// many. A shard's keys go in one hold of it (tagDelSlice at a time when more), each a "del"
// event, replicated as one DEL of the hold's keys.
func tagInvalidate(c *Ctx) {
	c.PropagateNothing()
	n := 0
	for i := range c.E.Group.Shards {
		c.E.eachTaggedIn(c, i, c.Args[1:], tagDelSlice, func(ks *keyspace.Keyspace, live []string) {
			del := make([][]byte, 1, len(live)+1)
			del[0] = propWord.DEL
			for _, k := range live {
				kb := unsafe.Slice(unsafe.StringData(k), len(k))
				if ks.Delete(kb, c.Now) {
					c.Changed(NotifyGeneric, "del", kb)
					del = append(del, kb)
				}
			}
			if len(del) > 1 {
				c.Dirty(len(del) - 1)
				c.Propagate(del...)
				n += len(del) - 1
			}
		})
	}
	c.Int(int64(n))
}

// eachTagged calls fn with the live keys carrying any of tags, shard by shard.
func (e *Engine) eachTagged(c *Ctx, tags [][]byte, fn func(ks *keyspace.Keyspace, live []string)) {
	for i := range e.Group.Shards {
		e.eachTaggedIn(c, i, tags, tagReadSlice, fn)
	}
}

// eachTaggedIn calls fn with the live keys of shard i carrying any of tags, at most slice at a
// time, each call holding the shard (fn may delete them: the walk's position survives that).
// Keys found expired are reclaimed, through the keyspace's expiry path, before fn sees the rest.
func (e *Engine) eachTaggedIn(c *Ctx, i int, tags [][]byte, slice int, fn func(ks *keyspace.Keyspace, live []string)) {
	var from uint32
	var batch []string
	for done := false; !done; {
		if from > 0 && c.tx == nil {
			runtime.Gosched() // the connections first, between two holds
		}
		e.runInShard(c, i, func(sh *pipeline.Shard) {
			d := sh.Data.(*shardData)
			ks, ix := d.dbs[c.DB], d.tags[c.DB]
			batch = batch[:0]
			from, done = ix.Members(tags, from, slice, func(k string) { batch = append(batch, k) })
			if ks.Volatile() > 0 {
				live := batch[:0]
				for _, k := range batch {
					kb := unsafe.Slice(unsafe.StringData(k), len(k))
					if !c.replicaKeeps(ks, kb) && ks.FindQuiet(kb, c.Now) != nil {
						live = append(live, k)
					}
				}
				batch = live
			}
			if len(batch) > 0 {
				fn(ks, batch)
			}
		})
	}
}

// ownACL returns the ACL categories a HotKV command adds to those its flags imply: TAG.* are
// @keyspace commands, like DEL and RENAME.
func ownACL(s *Spec) []string {
	if strings.HasPrefix(s.Name, "tag.") {
		return []string{"@keyspace"}
	}
	if s.Name == "budget.state" { // sets a whole state, as RESTORE does (budget.go)
		return []string{"@keyspace", "@dangerous"}
	}
	return nil
}
