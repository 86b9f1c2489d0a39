package command

import (
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
)

var stringCommands = []*Spec{
	{Name: "get", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: get, shared: true},
	{Name: "set", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: set},
	{Name: "setnx", Arity: 3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: setnx},
	{Name: "setex", Arity: 4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: setex},
	{Name: "psetex", Arity: 4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: psetex},
	{Name: "getset", Arity: 3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: getset},
	{Name: "getdel", Arity: 2, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: getdel},
	{Name: "getex", Arity: -2, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: getex},
	{Name: "mget", Arity: -2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: -1, Step: 1, Run: mget, shared: true},
	{Name: "mset", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: -1, Step: 2, Run: mset},
	{Name: "msetnx", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: -1, Step: 2, Run: msetnx},
	{Name: "append", Arity: 3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: appendCmd},
	{Name: "strlen", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: strlen, shared: true},
	{Name: "incr", Arity: 2, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: incr},
	{Name: "decr", Arity: 2, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: decr},
	{Name: "incrby", Arity: 3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: incrby},
	{Name: "decrby", Arity: 3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: decrby},
	{Name: "incrbyfloat", Arity: 3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: incrbyfloat},
	{Name: "getrange", Arity: 4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: getrange, shared: true},
	{Name: "substr", Arity: 4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: getrange, shared: true},
	{Name: "setrange", Arity: 4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: setrange},
	{Name: "lcs", Arity: -3, Flags: ReadOnly, FirstKey: 1, LastKey: 2, Step: 1, Run: lcs},
}

// String encodings, kept in Entry.Enc for OBJECT ENCODING. The value itself is always the bytes
// in the Entry (Bytes); the encoding only records which representation Redis would have chosen. Zero means
// "not recorded" (a value loaded or restored by another family) and is derived from the bytes.
const (
	EncRaw uint8 = iota + 1
	EncEmbstr
	EncInt
)

// embstrMax is Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT.
const embstrMax = 44

// StringEncodingName returns OBJECT ENCODING's name for the string entry e.
func StringEncodingName(e *keyspace.Entry) string {
	enc := e.Enc
	if enc == 0 {
		enc = strEncodingOf(e.Bytes())
	}
	enc &^= keyspace.EncPacked
	switch enc {
	case EncInt:
		return "int"
	case EncEmbstr:
		return "embstr"
	}
	return "raw"
}

// strEncodingOf is Redis's tryObjectEncoding: int for a canonical 64-bit integer, embstr for a
// short string, raw otherwise.
func strEncodingOf(v []byte) uint8 {
	switch {
	case len(v) <= strs.MaxIntLen && strs.IsInt(v):
		return EncInt
	case len(v) <= embstrMax:
		return EncEmbstr
	}
	return EncRaw
}

// storeString makes e (an entry of ks) a string holding a copy of v with the encoding Redis would
// choose, packed when value-compression says so (strings_packed.go). The entry's buffer is
// reused when v fits and the buffer is not much larger (Redis trims wasted space too), so
// overwriting a value of similar size allocates nothing.
func storeString(c *Ctx, ks *keyspace.Keyspace, e *keyspace.Entry, v []byte) {
	ks.Unpacked(e)
	b := e.Bytes() // nil unless e holds a string
	e.Kind = keyspace.KindString
	e.Enc = strEncodingOf(v)
	if packValue(c, ks, e, v, b) {
		return
	}
	switch {
	case b != nil && cap(b) >= len(v) && cap(b) <= 2*len(v)+64:
		copy(b[:len(v)], v)
		e.SetBytes(b[:len(v)])
	case len(v) == 0:
		e.SetBytes([]byte{}) // never nil: a present empty string is not a missing value
	default:
		e.SetBytes(append([]byte(nil), v...)) // capacity rounded up to the allocator's size class
	}
}

// addString creates key, which the caller found absent, as an empty string. Find and Upsert
// record accesses for OBJECT IDLETIME themselves; Add leaves it to its caller.
func addString(c *Ctx, ks *keyspace.Keyspace, key []byte) *keyspace.Entry {
	e := ks.Add(key)
	e.Kind, e.Access = keyspace.KindString, uint32(c.Now/int64(time.Second))
	return e
}

// lookupForRead finds key for a read, counting a keyspace hit or miss for INFO as Redis's
// lookupKeyRead does.
func lookupForRead(c *Ctx, key []byte) *keyspace.Entry { return c.FindRead(key) }

// replyStringGet is Redis's getGenericCommand: it replies key's string value (or null) and
// returns the entry; ok is false when it replied WRONGTYPE instead.
func replyStringGet(c *Ctx, key []byte) (e *keyspace.Entry, ok bool) {
	e = lookupForRead(c, key)
	switch {
	case e == nil:
		c.Null()
	case e.Kind != keyspace.KindString:
		c.WrongType()
		return nil, false
	default:
		c.Bulk(c.strBytes(e))
	}
	return e, true
}

// GET key
func get(c *Ctx) { replyStringGet(c, c.Args[1]) }

// GETDEL key: replicated as DEL, or UNLINK under lazyfree-lazy-user-del.
func getdel(c *Ctx) {
	key := c.Args[1]
	e, _ := replyStringGet(c, key)
	if e == nil {
		return
	}
	c.KS(key).Remove(e)
	c.Changed(NotifyGeneric, "del", key)
	c.Dirty(1)
	if c.E.Feed.Active() {
		name := propWord.DEL
		if c.E.configValue("lazyfree-lazy-user-del", "no") == "yes" {
			name = propWord.UNLINK
		}
		c.Propagate(name, key)
	}
}

// GETSET key value: replicated as SET key value.
func getset(c *Ctx) {
	key := c.Args[1]
	if _, ok := replyStringGet(c, key); !ok {
		return
	}
	ks := c.KS(key)
	e, _ := ks.Upsert(key, c.Now)
	storeString(c, ks, e, c.Args[2])
	ks.SetExpire(e, 0)
	untagOverwritten(c, key)
	c.Changed(NotifyString, "set", key)
	c.Dirty(1)
	c.Propagate(propWord.SET, key, c.Args[2])
}

// STRLEN key
func strlen(c *Ctx) {
	switch e := lookupForRead(c, c.Args[1]); {
	case e == nil:
		c.Int(0)
	case e.Kind != keyspace.KindString:
		c.WrongType()
	default:
		c.Int(int64(strLen(e)))
	}
}

// MGET key [key ...]
func mget(c *Ctx) {
	c.ArrayLen(len(c.Args) - 1)
	for _, key := range c.Args[1:] {
		if e := lookupForRead(c, key); e != nil && e.Kind == keyspace.KindString {
			c.Bulk(c.strBytes(e))
		} else {
			c.Null()
		}
	}
}

// MSET key value [key value ...]
func mset(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.ArityErr()
		return
	}
	msetAll(c)
	c.OK()
}

// MSETNX key value [key value ...]
func msetnx(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.ArityErr()
		return
	}
	for j := 1; j < len(c.Args); j += 2 {
		if c.Find(c.Args[j]) != nil {
			c.Int(0)
			return
		}
	}
	msetAll(c)
	c.Int(1)
}

// msetAll sets every key/value pair of the arguments, in order, each losing any TTL; each is a
// change and a "set" event, as Redis's MSET reports them (a key named twice counts twice).
func msetAll(c *Ctx) {
	for j := 1; j < len(c.Args); j += 2 {
		ks := c.KS(c.Args[j])
		e, _ := ks.Upsert(c.Args[j], c.Now)
		storeString(c, ks, e, c.Args[j+1])
		ks.SetExpire(e, 0)
		untagOverwritten(c, c.Args[j])
		c.Changed(NotifyString, "set", c.Args[j])
	}
	c.Dirty(len(c.Args) / 2)
}
