package command

import (
	"math"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
)

// hashCommands are Redis 7.0's hash commands plus Redis 7.4's per-field expiry. Every command
// first reclaims the hash's expired fields (deleting a hash they leave empty), so none sees
// them: Redis 7.4 does the same for the fields a command looks up, and for them all in
// HRANDFIELD (hashTypeExpireIfNeeded); the reclaim reports what hashTypeExpire reports
// (hashes_expire.go, expireFields).
//
// Effects are Redis 7.0's t_hash.c: HSET and HMSET raise "hset" and count a change per pair,
// changed or not; HSETNX, HINCRBY, HINCRBYFLOAT raise their event and count one change when they
// set the field; HDEL raises "hdel" (then "del" if it emptied the hash) and counts the fields it
// removed. HINCRBYFLOAT is replicated as HSET of its result; the others as themselves.
var hashCommands = []*Spec{
	{Name: "hset", Arity: -4, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: hset},
	{Name: "hmset", Arity: -4, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: hset},
	{Name: "hsetnx", Arity: 4, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: hsetnx},
	{Name: "hget", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: hget},
	{Name: "hmget", Arity: -3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: hmget},
	{Name: "hdel", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: hdel},
	{Name: "hlen", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: hlen},
	{Name: "hstrlen", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: hstrlen},
	{Name: "hexists", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: hexists},
	{Name: "hkeys", Arity: 2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: hkeys},
	{Name: "hvals", Arity: 2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: hvals},
	{Name: "hgetall", Arity: 2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: hgetall},
	{Name: "hincrby", Arity: 4, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: hincrby},
	{Name: "hincrbyfloat", Arity: 4, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Member: 2, Run: hincrbyfloat},
	{Name: "hrandfield", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: hrandfield},
	{Name: "hscan", Arity: -3, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: hscan},
	{Name: "hexpire", Arity: -6, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: hexpire},
	{Name: "hpexpire", Arity: -6, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: hpexpire},
	{Name: "hexpireat", Arity: -6, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: hexpireat},
	{Name: "hpexpireat", Arity: -6, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: hpexpireat},
	{Name: "httl", Arity: -5, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: httl},
	{Name: "hpttl", Arity: -5, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: hpttl},
	{Name: "hexpiretime", Arity: -5, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: hexpiretime},
	{Name: "hpexpiretime", Arity: -5, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: hpexpiretime},
	{Name: "hpersist", Arity: -5, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: hpersist},
}

// hashScratch sizes the stack buffers small-hash values are rebuilt into: the default
// hash-max-listpack-value, so only a raised setting makes a read allocate.
const hashScratch = 64

// hashLimits returns the listpack thresholds of the current configuration.
func hashLimits(c *Ctx) hash.Limits {
	s := c.E.Settings()
	return hash.Limits{MaxEntries: int(s.HashMaxListpackEntries), MaxValue: int(s.HashMaxListpackValue)}
}

// nowMs is the call's time in unix milliseconds, the unit of field expiry.
func nowMs(c *Ctx) int64 { return c.Now / 1e6 }

// readHash finds key's hash for a read command that reads the whole hash, counting a keyspace
// hit or miss. It returns nil when there is no such key; ok is false when it replied WRONGTYPE.
// Where the server keeps what has expired (heldHash) it reclaims nothing: a hash with fields past
// their time is read through a copy without them (nil when none is left), so the reply is the one
// the primary, or the server after the pause, gives.
func readHash(c *Ctx, key []byte) (h *hash.Hash, ok bool) {
	e := c.FindRead(key)
	if h, hide, held := heldHash(c, e); held {
		v := h.Clone().(*hash.Hash)
		if v.Expire(hide); v.Len() == 0 {
			return nil, true
		}
		return v, true
	}
	_, h, ok = hashEntry(c, key, e)
	return h, ok
}

// readHashFields is readHash for a read of named fields (HGET, HMGET, HSTRLEN, HEXISTS, HTTL
// and its family): for a held hash (heldHash) it returns the hash itself and hide, the time (unix
// ms) at or before which a field's TTL hides it (fieldHidden), so that nothing is copied. hide is
// 0 otherwise.
func readHashFields(c *Ctx, key []byte) (h *hash.Hash, hide int64, ok bool) {
	return hashForFields(c, key, c.FindRead(key))
}

// hashForFields is readHashFields on e, key's entry as found.
func hashForFields(c *Ctx, key []byte, e *keyspace.Entry) (h *hash.Hash, hide int64, ok bool) {
	if h, hide, held := heldHash(c, e); held {
		return h, hide, true
	}
	_, h, ok = hashEntry(c, key, e)
	return h, 0, ok
}

// heldHash reports whether e is a hash that may hold fields past their time which a read must
// not reclaim: in the replica role, which waits for the primary's HDELs, and while a pause holds
// the dataset still (expiryHeld; the master link exempt), as Redis 7.4's hashTypeGetValue, which
// reads an expired field as missing there but deletes it only on a primary. hide is the time
// (unix ms) at or before which a field's TTL hides it. A hash with no field that may be past its
// time is not held: the caller's hashEntry returns it as it is, so only such a hash pays the
// check of the server's role.
func heldHash(c *Ctx, e *keyspace.Entry) (h *hash.Hash, hide int64, held bool) {
	if e == nil || e.Kind != keyspace.KindHash {
		return nil, 0, false
	}
	h = keyspace.Obj[hash.Hash](e)
	next, ms := h.NextExpiry(), nowMs(c)
	if next == 0 || next > ms || !c.keepsExpired() {
		return nil, 0, false
	}
	return h, ms, true
}

// fieldHidden reports whether field f of h is past its time under hide (heldHash): missing to
// the reply though still stored.
func fieldHidden(h *hash.Hash, f []byte, hide int64) bool {
	if hide == 0 {
		return false
	}
	at, ok := h.TTL(f)
	return ok && ttlHidden(at, hide)
}

// ttlHidden reports whether a field whose expiry time is at (0: none) is past its time under
// hide (heldHash; 0: nothing is hidden).
func ttlHidden(at, hide int64) bool { return hide != 0 && at != 0 && at <= hide }

// writeHash is readHash for a write command: it also returns the entry, to delete the key when
// the command empties the hash.
func writeHash(c *Ctx, key []byte) (*keyspace.Entry, *hash.Hash, bool) {
	return hashEntry(c, key, c.Find(key))
}

// hashEntry checks e's type and reclaims its expired fields, deleting a hash left empty.
func hashEntry(c *Ctx, key []byte, e *keyspace.Entry) (*keyspace.Entry, *hash.Hash, bool) {
	if e == nil {
		return nil, nil, true
	}
	if e.Kind != keyspace.KindHash {
		c.WrongType()
		return nil, nil, false
	}
	h := keyspace.Obj[hash.Hash](e)
	if h.NextExpiry() == 0 {
		return e, h, true
	}
	before := e.Accounted()
	if expireFields(c, c.DB, key, h, nowMs(c), math.MaxInt) > 0 {
		accountExpiry(c, c.KS(key), e, before)
		if h.Len() == 0 {
			c.KS(key).Remove(e)
			return nil, nil, true
		}
	}
	return e, h, true
}

// createHash stores a new empty hash at key, which the caller found absent, in the encoding
// that setting the field/value pairs args (nil for none) will need.
func createHash(c *Ctx, key []byte, args [][]byte) (*keyspace.Entry, *hash.Hash) {
	e, _ := c.Upsert(key)
	keyspace.SetObj(e, keyspace.KindHash, hash.NewFor(hashLimits(c), args))
	e.Enc = 0
	return e, keyspace.Obj[hash.Hash](e) // the header lives in the entry (keyspace.Inline)
}

// deleteIfEmpty deletes key when a command removed its hash's last field.
func deleteIfEmpty(c *Ctx, key []byte, e *keyspace.Entry, h *hash.Hash) {
	if h.Len() == 0 {
		c.KS(key).Remove(e)
	}
}

// HSET key field value [field value ...] and HMSET, which replies OK.
func hset(c *Ctx) {
	if len(c.Args)%2 != 0 {
		c.ArityErr()
		return
	}
	key := c.Args[1]
	_, h, ok := writeHash(c, key)
	if !ok {
		return
	}
	if h == nil {
		_, h = createHash(c, key, c.Args[2:])
	}
	lim := hashLimits(c)
	h.ConvertFor(lim, c.Args[2:])
	many := len(c.Args) > 4
	if many {
		h.Reserve(argBytes(c.Args[2:]) + 2*len(c.Args))
	}
	added := 0
	for i := 2; i < len(c.Args); i += 2 {
		if h.Set(c.Args[i], c.Args[i+1], false, lim) {
			added++
		}
	}
	if many {
		h.Trim()
	}
	c.Changed(NotifyHash, "hset", key)
	c.Dirty((len(c.Args) - 2) / 2)
	if c.Spec.Name == "hmset" {
		c.OK()
	} else {
		c.Int(int64(added))
	}
}

// argBytes sums the lengths of args.
func argBytes(args [][]byte) int {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	return n
}

// HSETNX key field value
func hsetnx(c *Ctx) {
	key := c.Args[1]
	_, h, ok := writeHash(c, key)
	if !ok {
		return
	}
	if h == nil {
		_, h = createHash(c, key, c.Args[2:])
	}
	if h.Has(c.Args[2]) {
		c.Int(0)
		return
	}
	lim := hashLimits(c)
	h.ConvertFor(lim, c.Args[2:4])
	h.Set(c.Args[2], c.Args[3], false, lim)
	c.Changed(NotifyHash, "hset", key)
	c.Dirty(1)
	c.Int(1)
}

// HGET key field
func hget(c *Ctx) {
	h, hide, ok := readHashFields(c, c.Args[1])
	if !ok {
		return
	}
	var buf [hashScratch]byte
	if v, found := hashGetLive(h, hide, c.Args[2], buf[:0]); found {
		c.Bulk(v)
	} else {
		c.Null()
	}
}

// hashGet is Get on a hash that may be nil (a missing key).
func hashGet(h *hash.Hash, field, scratch []byte) ([]byte, bool) {
	if h == nil {
		return nil, false
	}
	return h.Get(field, scratch)
}

// hashGetLive is hashGet for a reader, which does not see a field hide hides (fieldHidden).
func hashGetLive(h *hash.Hash, hide int64, field, scratch []byte) ([]byte, bool) {
	if h == nil || fieldHidden(h, field, hide) {
		return nil, false
	}
	return h.Get(field, scratch)
}

// HMGET key field [field ...]
func hmget(c *Ctx) {
	h, hide, ok := readHashFields(c, c.Args[1])
	if !ok {
		return
	}
	c.ArrayLen(len(c.Args) - 2)
	var buf [hashScratch]byte
	for _, f := range c.Args[2:] {
		if v, found := hashGetLive(h, hide, f, buf[:0]); found {
			c.Bulk(v)
		} else {
			c.Null()
		}
	}
}

// HDEL key field [field ...]
func hdel(c *Ctx) {
	key := c.Args[1]
	e, h, ok := writeHash(c, key)
	if !ok {
		return
	}
	n := 0
	for _, f := range c.Args[2:] {
		if h != nil && h.Delete(f) {
			n++
			if h.Len() == 0 { // Redis stops at the last field and deletes the key
				break
			}
		}
	}
	if n > 0 {
		c.Changed(NotifyHash, "hdel", key)
		if h.Len() == 0 {
			c.Notify(NotifyGeneric, "del", key)
		}
		c.Dirty(n)
		deleteIfEmpty(c, key, e, h)
	}
	c.Int(int64(n))
}

// HLEN key
func hlen(c *Ctx) {
	if h, ok := readHash(c, c.Args[1]); ok {
		c.Int(int64(hashLen(h)))
	}
}

func hashLen(h *hash.Hash) int {
	if h == nil {
		return 0
	}
	return h.Len()
}

// HSTRLEN key field
func hstrlen(c *Ctx) {
	h, hide, ok := readHashFields(c, c.Args[1])
	if !ok {
		return
	}
	var buf [hashScratch]byte
	v, _ := hashGetLive(h, hide, c.Args[2], buf[:0])
	c.Int(int64(len(v)))
}

// HEXISTS key field
func hexists(c *Ctx) {
	if h, hide, ok := readHashFields(c, c.Args[1]); ok {
		c.Int(boolInt(h != nil && h.Has(c.Args[2]) && !fieldHidden(h, c.Args[2], hide)))
	}
}
