package command

import (
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	dset "github.com/hotkv/hotkv/ds/set"
)

// setCommands is the sets family. The value is a *dset.Set in the Entry (keyspace.Obj); handlers parse, call
// the set and encode, and delete a key whose set they emptied, as Redis does.
var setCommands = []*Spec{
	{Name: "sadd", Arity: -3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: sadd},
	{Name: "srem", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: srem},
	{Name: "scard", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: scard, shared: true},
	{Name: "sismember", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: sismember, shared: true},
	{Name: "smismember", Arity: -3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: smismember, shared: true},
	{Name: "smembers", Arity: 2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: sinter},
	{Name: "srandmember", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: srandmember},
	{Name: "spop", Arity: -2, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: spop},
	{Name: "smove", Arity: 4, Flags: Write | Fast, FirstKey: 1, LastKey: 2, Step: 1, Run: smove},
	{Name: "sinter", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: -1, Step: 1, Run: sinter},
	{Name: "sintercard", Arity: -3, Flags: ReadOnly | MovableKeys, NumKeys: 1, Run: sintercard},
	{Name: "sinterstore", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: -1, Step: 1, Run: sinterstore},
	{Name: "sunion", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: -1, Step: 1, Run: sunion},
	{Name: "sunionstore", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: -1, Step: 1, Run: sunionstore},
	{Name: "sdiff", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: -1, Step: 1, Run: sdiff},
	{Name: "sdiffstore", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: -1, Step: 1, Run: sdiffstore},
	{Name: "sscan", Arity: -3, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: sscan},
}

// setLimits returns the encoding thresholds of the current configuration.
func setLimits(c *Ctx) dset.Limits {
	st := c.E.Settings()
	return dset.Limits{Intset: int(st.SetMaxIntsetEntries), Listpack: int(st.SetMaxListpackEntries),
		ListpackValue: int(st.SetMaxListpackValue)}
}

// readSet looks key up for a read (counting a keyspace hit or miss, as Redis's lookupKeyRead
// does) and returns its set, or nil when it is missing; ok is false when it replied WRONGTYPE.
func readSet(c *Ctx, key []byte) (s *dset.Set, ok bool) {
	e := lookupForRead(c, key)
	if e == nil {
		return nil, true
	}
	if e.Kind != keyspace.KindSet {
		c.WrongType()
		return nil, false
	}
	return keyspace.Obj[dset.Set](e), true
}

// writeSet is readSet for a write: no statistics, and the entry too.
func writeSet(c *Ctx, key []byte) (e *keyspace.Entry, s *dset.Set, ok bool) {
	e = c.Find(key)
	if e == nil {
		return nil, nil, true
	}
	if e.Kind != keyspace.KindSet {
		c.WrongType()
		return nil, nil, false
	}
	return e, keyspace.Obj[dset.Set](e), true
}

// addSet creates key, which the caller found absent, holding an empty set.
func addSet(c *Ctx, ks *keyspace.Keyspace, key []byte) *dset.Set {
	e := ks.Add(key)
	s := dset.New()
	keyspace.SetObj(e, keyspace.KindSet, s)
	e.Access = uint32(c.Now / int64(time.Second))
	return s
}

// storeSet makes key hold s with no expiry, as Redis's setKey does for the STORE commands, or
// deletes key when s is nil or empty; it replies s's size. event is the command's keyspace event.
// One difference is left: a destination whose time has passed but that nobody reclaimed yet is
// found by Redis's dbDelete (a "del", one change, the command propagated) and by Keyspace.Delete
// reported expired ("expired", a DEL propagated); keyspace has no deletion that ignores expiry.
func storeSet(c *Ctx, key []byte, s *dset.Set, event string) {
	ks := c.KS(key)
	if s == nil || s.Len() == 0 {
		if ks.Delete(key, c.Now) {
			c.Changed(NotifyGeneric, "del", key)
			c.Dirty(1)
		}
		c.Int(0)
		return
	}
	e, _ := ks.Upsert(key, c.Now)
	ks.Unpacked(e) // a packed string it replaces leaves the counts (strings_packed.go)
	keyspace.SetObj(e, keyspace.KindSet, s)
	e.Enc = 0
	ks.SetExpire(e, 0)
	untagOverwritten(c, key)
	c.Int(int64(s.Len()))
	c.Changed(NotifySet, event, key)
	c.Dirty(1)
}

// replySet replies s's members as a set (an array in RESP2).
func replySet(c *Ctx, s *dset.Set) {
	c.SetLen(s.Len())
	replySetMembers(c, s)
}

// replySetMembers replies each of s's members as a bulk string, in s's order.
func replySetMembers(c *Ctx, s *dset.Set) {
	s.Walk(func(v int64) bool { c.BulkInt(v); return true }, func(m []byte) bool { c.Bulk(m); return true })
}

// SADD key member [member ...]
func sadd(c *Ctx) {
	key := c.Args[1]
	e, s, ok := writeSet(c, key)
	if !ok {
		return
	}
	if e == nil {
		s = addSet(c, c.KS(key), key)
	}
	lim := setLimits(c)
	added := int64(0)
	for _, m := range c.Args[2:] {
		if s.Add(m, &lim) {
			added++
		}
	}
	if added > 0 {
		c.Changed(NotifySet, "sadd", key)
		c.Dirty(int(added))
	}
	c.Int(added)
}

// SREM key member [member ...]
func srem(c *Ctx) {
	key := c.Args[1]
	e, s, ok := writeSet(c, key)
	if !ok {
		return
	}
	removed := int64(0)
	for i := 2; s != nil && i < len(c.Args); i++ {
		if s.Remove(c.Args[i]) {
			removed++
		}
	}
	if removed > 0 {
		gone := s.Len() == 0
		if gone {
			c.KS(key).Remove(e)
		}
		c.Changed(NotifySet, "srem", key)
		if gone {
			c.Notify(NotifyGeneric, "del", key)
		}
		c.Dirty(int(removed))
	}
	c.Int(removed)
}

// SCARD key
func scard(c *Ctx) {
	if s, ok := readSet(c, c.Args[1]); ok {
		n := 0
		if s != nil {
			n = s.Len()
		}
		c.Int(int64(n))
	}
}

// SISMEMBER key member
func sismember(c *Ctx) {
	if s, ok := readSet(c, c.Args[1]); ok {
		c.Int(boolInt(s != nil && s.Has(c.Args[2])))
	}
}

// SMISMEMBER key member [member ...]
func smismember(c *Ctx) {
	s, ok := readSet(c, c.Args[1])
	if !ok {
		return
	}
	c.ArrayLen(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		c.Int(boolInt(s != nil && s.Has(m)))
	}
}

// SMOVE source destination member. The source's "srem" (and "del") come before the destination
// is created; a member the destination already holds counts one change, not two, and raises no
// "sadd".
func smove(c *Ctx) {
	src, dst, m := c.Args[1], c.Args[2], c.Args[3]
	se := c.Find(src)
	de := c.Find(dst)
	switch {
	case se == nil:
		c.Int(0)
		return
	case se.Kind != keyspace.KindSet || (de != nil && de.Kind != keyspace.KindSet):
		c.WrongType()
		return
	}
	ss := keyspace.Obj[dset.Set](se)
	if se == de {
		c.Int(boolInt(ss.Has(m)))
		return
	}
	if !ss.Remove(m) {
		c.Int(0)
		return
	}
	c.Notify(NotifySet, "srem", src)
	if ss.Len() == 0 {
		c.KS(src).Remove(se)
		c.Notify(NotifyGeneric, "del", src)
	}
	var ds *dset.Set
	if de == nil {
		ds = addSet(c, c.KS(dst), dst)
	} else {
		ds = keyspace.Obj[dset.Set](de)
	}
	c.Touch(src)
	c.Dirty(1)
	lim := setLimits(c)
	if ds.Add(m, &lim) {
		c.Dirty(1)
		c.Notify(NotifySet, "sadd", dst)
	}
	c.Touch(dst)
	c.Int(1)
}
