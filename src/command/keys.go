package command

import (
	"bytes"
	"math"
	"strconv"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
)

// keyCommands is the generic keyspace family: commands that work on keys whatever their type.
// SCAN (scan.go) and OBJECT (object.go) belong to it.
var keyCommands = []*Spec{
	{Name: "del", Arity: -2, Flags: Write, FirstKey: 1, LastKey: -1, Step: 1, Run: del},
	{Name: "unlink", Arity: -2, Flags: Write | Fast, FirstKey: 1, LastKey: -1, Step: 1, Run: del},
	{Name: "exists", Arity: -2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: -1, Step: 1, Run: exists},
	{Name: "touch", Arity: -2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: -1, Step: 1, Run: touch},
	{Name: "type", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: typeCmd},
	{Name: "keys", Arity: 2, Flags: ReadOnly, Scope: ScopeAll, Run: keysCmd},
	{Name: "randomkey", Arity: 1, Flags: ReadOnly, Scope: ScopeAll, Run: randomKey},
	{Name: "rename", Arity: 3, Flags: Write, FirstKey: 1, LastKey: 2, Step: 1, Run: rename},
	{Name: "renamenx", Arity: 3, Flags: Write | Fast, FirstKey: 1, LastKey: 2, Step: 1, Run: renamenx},
	{Name: "copy", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Run: copyCmd},
	{Name: "move", Arity: 3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: move},
	{Name: "swapdb", Arity: 3, Flags: Write | Fast, Scope: ScopeAll, Run: swapdb},
	{Name: "dump", Arity: 2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: dumpCmd}, // dump.go
	{Name: "restore", Arity: -4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: restoreCmd},
	scanSpec,
	objectSpec,
}

// propWord are the words of the replicated forms the string and key commands are rewritten to,
// spelled as Redis's shared objects spell them.
var propWord = struct{ DEL, UNLINK, SET, PXAT, KEEPTTL, PEXPIREAT, PERSIST []byte }{
	[]byte("DEL"), []byte("UNLINK"), []byte("SET"), []byte("PXAT"), []byte("KEEPTTL"),
	[]byte("PEXPIREAT"), []byte("PERSIST"),
}

// removeExpired deletes e, given an expiry time that has passed (EXPIRE, GETEX … EXAT), as
// Redis does: a "del" event, and the call is replicated as DEL key (UNLINK under
// lazyfree-lazy-expire), not as itself.
func removeExpired(c *Ctx, ks *keyspace.Keyspace, e *keyspace.Entry, key []byte) {
	ks.Remove(e)
	c.Changed(NotifyGeneric, "del", key)
	c.Dirty(1)
	if c.E.Feed.Active() {
		name := propWord.DEL
		if c.E.Settings().LazyfreeLazyExpire {
			name = propWord.UNLINK
		}
		c.Propagate(name, key)
	}
}

// propagatePexpireat replicates an expiry set on key as PEXPIREAT key unix-ms, followed by
// flags (EXPIRE's NX|XX|GT|LT as typed, which Redis keeps).
func propagatePexpireat(c *Ctx, key []byte, ms int64, flags [][]byte) {
	if !c.E.Feed.Active() {
		return
	}
	if 3+len(flags) > 8 { // EXPIRE takes its options any number of times
		c.Propagate(append([][]byte{propWord.PEXPIREAT, key, strconv.AppendInt(nil, ms, 10)}, flags...)...)
		return
	}
	var num [20]byte
	var buf [8][]byte
	buf[0], buf[1], buf[2] = propWord.PEXPIREAT, key, strconv.AppendInt(num[:0], ms, 10)
	c.Propagate(buf[:3+copy(buf[3:], flags)]...)
}

// DEL key [key ...] and UNLINK key [key ...]: values are freed by Go's collector, which already
// runs concurrently; a lazy delete differs only during a snapshot (lazyfree.go). Each key
// deleted is a change and a "del" event.
func del(c *Ctx) {
	n := 0
	for _, k := range c.Args[1:] {
		if c.deleteKey(k) { // lazyfree.go: UNLINK, or DEL under lazyfree-lazy-user-del
			c.Changed(NotifyGeneric, "del", k)
			n++
		}
	}
	c.Dirty(n)
	c.Int(int64(n))
}

// EXISTS key [key ...]: a key named twice counts twice. Not an access (LOOKUP_NOTOUCH).
func exists(c *Ctx) {
	n := 0
	for _, k := range c.Args[1:] {
		if c.FindQuiet(k) != nil {
			n++
		}
	}
	c.Int(int64(n))
}

// TOUCH key [key ...]
func touch(c *Ctx) {
	n := 0
	for _, k := range c.Args[1:] {
		if c.Find(k) != nil {
			n++
		}
	}
	c.Int(int64(n))
}

// TYPE key
func typeCmd(c *Ctx) {
	e := c.FindQuiet(c.Args[1])
	if e == nil {
		c.Simple("none")
		return
	}
	c.Simple(e.Kind.String())
}

// KEYS pattern: like Redis, expired keys are skipped but not reclaimed.
func keysCmd(c *Ctx) {
	pat := c.Args[1]
	all := len(pat) == 1 && pat[0] == '*' // "*" also matches the empty key, which Glob does not
	var keys []string
	c.E.eachKeyspace(c.DB, func(ks *keyspace.Keyspace) {
		scanAll(ks, func(e *keyspace.Entry) {
			if entryLive(e, c.Now) && (all || strs.Glob(pat, keyBytes(e.Key()), false)) {
				keys = append(keys, e.Key())
			}
		})
	})
	c.ArrayLen(len(keys))
	for _, k := range keys {
		c.BulkString(k)
	}
}

// scanAll calls fn for every entry of ks, expired ones included; fn must not add or delete.
func scanAll(ks *keyspace.Keyspace, fn func(e *keyspace.Entry)) {
	for cursor := ks.Scan(0, fn); cursor != 0; {
		cursor = ks.Scan(cursor, fn)
	}
}

func entryLive(e *keyspace.Entry, now int64) bool { return e.ExpireAt() == 0 || e.ExpireAt() > now }

// RANDOMKEY: a shard is chosen in proportion to its keys, then a key within it. On a replica
// (but for its master's link) and on a paused server a key past its time is skipped, not
// reclaimed, as Redis's dbRandomKey: when every key has a TTL, the 100th such pick is answered
// anyway, so a server whose keys all expired does not loop (Redis 7.0.15 loops there when
// paused; later versions answer as a replica does).
func randomKey(c *Ctx) {
	keep := c.keepsExpired()
	tries := 100
	for {
		total, volatile := 0, 0
		c.E.eachKeyspace(c.DB, func(ks *keyspace.Keyspace) { total, volatile = total+ks.Len(), volatile+ks.Volatile() })
		if total == 0 {
			c.Null()
			return
		}
		pick := int(c.E.rand() % uint64(total))
		var chosen *keyspace.Keyspace
		c.E.eachKeyspace(c.DB, func(ks *keyspace.Keyspace) {
			if pick >= 0 && pick < ks.Len() {
				chosen = ks
			}
			pick -= ks.Len()
		})
		if keep {
			if e := chosen.Sample(c.E.rand); e != nil {
				if entryLive(e, c.Now) || volatile == total && tries <= 1 {
					c.BulkString(e.Key())
					return
				}
				tries--
			}
			continue
		}
		// Random reclaims the expired keys it meets, so every failed round shrinks the total.
		if e := chosen.Random(c.Now, c.E.rand); e != nil {
			c.BulkString(e.Key())
			return
		}
	}
}

// RENAME key newkey
func rename(c *Ctx) { renameGeneric(c, false) }

// RENAMENX key newkey
func renamenx(c *Ctx) { renameGeneric(c, true) }

func renameGeneric(c *Ctx, nx bool) {
	src, dst := c.Args[1], c.Args[2]
	ks := c.KS(src)
	e := ks.Find(src, c.Now)
	switch {
	case e == nil:
		c.Err(ErrNoSuchKey)
	case bytes.Equal(src, dst): // checked after the lookup: a missing key is still an error
		if nx {
			c.Int(0)
		} else {
			c.OK()
		}
	case !moveTagged(c, ks, e, src, c.KS(dst), c.DB, dst, !nx):
		c.Int(0)
	default:
		signalCreated(c, c.DB, dst)
		c.Touch(src)
		c.Touch(dst)
		c.Notify(NotifyGeneric, "rename_from", src)
		c.Notify(NotifyGeneric, "rename_to", dst)
		c.Dirty(1)
		if nx {
			c.Int(1)
		} else {
			c.OK()
		}
	}
}

// signalCreated wakes clients blocked on key in db, which a command just created by moving or
// copying a value there (Redis signals every key dbAdd creates).
func signalCreated(c *Ctx, db int, key []byte) {
	saved := c.DB
	c.DB = db
	c.SignalReady(key)
	c.DB = saved
}

// moveEntry moves e (live in from) to key in to, with its expiry, unless key is live in to and
// replace is false. It reports whether it moved.
func moveEntry(from *keyspace.Keyspace, e *keyspace.Entry, to *keyspace.Keyspace, key []byte,
	now int64, replace bool) bool {
	if old := to.Find(key, now); old != nil {
		if !replace {
			return false
		}
		to.Remove(old)
	}
	n := to.Add(key)
	n.TakeValue(e)
	to.AdoptPacked(from, n)
	to.CopyExpire(n, from, e) // exact even past 2262, before e's record goes with it
	from.Remove(e)
	return true
}

// MOVE key db
func move(c *Ctx) {
	db, msg := parseDBIndex(c.Args[2], "", c.E.dbCount)
	switch {
	case msg != "":
		c.Err(msg)
	case db == c.DB:
		c.Err(ErrSameObject)
	default:
		key := c.Args[1]
		e := c.Find(key)
		moved := e != nil && moveTagged(c, c.KS(key), e, key, c.KSIn(db, key), db, key, false)
		if moved {
			signalCreated(c, db, key)
			c.Touch(key) // in both databases, as Redis signals it
			c.TouchIn(db, key)
			c.Notify(NotifyGeneric, "move_from", key)
			c.NotifyIn(db, NotifyGeneric, "move_to", key)
			c.Dirty(1)
		}
		replyBool01(c, moved)
	}
}

// parseDBIndex parses a database number like Redis's getIntFromObjectOrReply followed by
// selectDb: msg, when set, replaces both integer errors.
func parseDBIndex(b []byte, msg string, dbs int) (int, string) {
	n, msg := parseDBNumber(b, msg)
	if msg == "" && (n < 0 || n >= dbs) {
		return 0, ErrDBIndex
	}
	return n, msg
}

// parseDBNumber is parseDBIndex without the range check.
func parseDBNumber(b []byte, msg string) (int, string) {
	n, ok := ParseInt(b)
	switch {
	case !ok && msg == "":
		return 0, ErrNotInt
	case (n < math.MinInt32 || n > math.MaxInt32) && msg == "":
		return 0, ErrIntArgRange
	case !ok || n < math.MinInt32 || n > math.MaxInt32:
		return 0, msg
	}
	return int(n), ""
}

// replyBool01 replies 1 or 0, Redis's integer booleans.
func replyBool01(c *Ctx, b bool) {
	if b {
		c.Out = append(c.Out, ":1\r\n"...)
	} else {
		c.Out = append(c.Out, ":0\r\n"...)
	}
}

// COPY source destination [DB destination-db] [REPLACE]
func copyCmd(c *Ctx) {
	db, replace := c.DB, false
	for j := 3; j < len(c.Args); j++ {
		switch {
		case strs.EqualFold(c.Args[j], "REPLACE"):
			replace = true
		case strs.EqualFold(c.Args[j], "DB") && j+1 < len(c.Args):
			var msg string
			if db, msg = parseDBIndex(c.Args[j+1], "", c.E.dbCount); msg != "" {
				c.Err(msg)
				return
			}
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	src, dst := c.Args[1], c.Args[2]
	if db == c.DB && bytes.Equal(src, dst) {
		c.Err(ErrSameObject)
		return
	}
	e := c.Find(src)
	if e == nil {
		c.Int(0)
		return
	}
	to := c.KSIn(db, dst)
	old := to.Find(dst, c.Now)
	if old != nil && !replace {
		c.Int(0)
		return
	}
	obj, ok := cloneValue(e)
	if !ok {
		c.Err(ErrUnknownObject)
		return
	}
	if old != nil {
		to.Remove(old)
	}
	n, _ := to.Upsert(dst, c.Now)
	if e.Kind == keyspace.KindString {
		n.Kind = keyspace.KindString
		n.SetBytes(bytes.Clone(e.Bytes()))
	} else {
		setObjOf(n, e.Kind, obj)
	}
	n.Enc = e.Enc
	if e.Packed() { // the copy's bytes are packed too, and counted in to
		n.Enc &^= keyspace.EncPacked
		to.SetPacked(n, n.Bytes())
	}
	to.CopyExpire(n, c.KS(src), e)
	signalCreated(c, db, dst)
	c.TouchIn(db, dst)
	c.NotifyIn(db, NotifyGeneric, "copy_to", dst)
	c.Dirty(1)
	c.Int(1)
}

// cloneValue duplicates a collection value; strings are copied by the caller.
func cloneValue(e *keyspace.Entry) (any, bool) {
	if e.Kind == keyspace.KindString {
		return nil, true
	}
	cl, ok := objOf(e).(keyspace.Cloner)
	if !ok {
		return nil, false
	}
	return cl.Clone(), true
}

// SWAPDB index1 index2: every shard holds both databases' slices of the keyspace, so swapping
// them in every shard (all are locked) swaps the databases atomically. Like Redis it parses
// both numbers before it checks either's range, is one change (swapping a database with itself
// too) and raises no keyspace event.
func swapdb(c *Ctx) {
	a, msg := parseDBNumber(c.Args[1], ErrFirstDBIndex)
	b := 0
	if msg == "" {
		b, msg = parseDBNumber(c.Args[2], ErrSecondDBIndex)
	}
	switch n := c.E.dbCount; {
	case msg != "":
		c.Err(msg)
	case a < 0 || a >= n || b < 0 || b >= n:
		c.Err(ErrDBIndex)
	default:
		c.E.swapDatabases(a, b, c.Now)
		c.Dirty(1)
		c.OK()
	}
}

// swapDatabases swaps databases a and b in every shard; all shards must be held. The OnExpire
// and OnNew hooks stay with the database numbers: they report under a database's number.
func (e *Engine) swapDatabases(a, b int, now int64) {
	e.touchAllWatchedLocked(a, b, now)
	e.touchAllWatchedLocked(b, a, now)
	for _, sh := range e.Group.Shards {
		dbs := sh.Data.(*shardData).dbs
		dbs[a], dbs[b] = dbs[b], dbs[a]
		dbs[a].OnExpire, dbs[b].OnExpire = dbs[b].OnExpire, dbs[a].OnExpire
		dbs[a].OnNew, dbs[b].OnNew = dbs[b].OnNew, dbs[a].OnNew
	}
	e.swapTagsLocked(a, b) // their OnRemove hooks stay with the keyspaces (tags.go)
}
