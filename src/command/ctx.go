package command

import (
	"fmt"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
)

// Ctx is one command call: its arguments, its reply and the data it may touch. A Ctx is owned by
// the executor running the call (a shard holder, or the connection for connection and barrier
// commands) and reused, so handlers must not keep it.
type Ctx struct {
	// oomFree: the script this Ctx runs commands for (scriptRun.ctx) wrote already or is
	// allow-oom, so its denyoom commands pass the maxmemory gate (memory_acct.go).
	oomFree bool
	Args    [][]byte
	Out     []byte // the reply; handlers append to it
	Proto   int
	DB      int
	Now     int64 // unix nanoseconds, fixed for the call
	Client  *Client
	E       *Engine
	Spec    *Spec
	// Serving is the key that became ready when a blocked command is run on its waiter's behalf
	// (see block.go); nil otherwise.
	Serving []byte

	fx      effects        // what the call changed (effects.go)
	by      *pipeline.Slot // set while serving blocked clients: the slot whose command made them ready
	noBlock bool           // blocking is not allowed (MULTI, scripts): Block replies the timeout reply
	blocked *waiter        // set by Block
	// tx is the transaction whose queued command this call is, while EXEC runs it (multi.go):
	// its replicated form goes to the transaction's, and commands that lock for themselves
	// (SORT, SCAN) use the tokens EXEC holds.
	tx     *txState
	slot   *pipeline.Slot // the slot being run
	stats  *shardStats    // the shard's counters when run by a shard actor; nil on a connection
	rstats *readerState   // the P's counters when run as shared work (shared.go)
	// needToken is set by FindRead in shared work that met an expired key: the call is undone
	// and runs again holding the token, which can delete it.
	needToken bool
	mem       memAcct  // what a write changed in used memory (memory_acct.go)
	tiny      tinyGate // allkeys-tinylfu's candidate at the memory gate (evict_policy.go)
	// unpacked and packed are scratch buffers of packed string values (strings_packed.go).
	unpacked, packed []byte
}

// fxSlot is the slot whose Effects receive the events of the call of s.
func (c *Ctx) fxSlot(s *pipeline.Slot) *pipeline.Slot {
	if c.by != nil {
		return c.by
	}
	return s
}

// KS returns the keyspace holding key in the selected database. The key's shard must be locked,
// which the executor guarantees for the command's declared keys.
func (c *Ctx) KS(key []byte) *keyspace.Keyspace { return c.E.keyspace(c.DB, key) }

// KSIn returns the keyspace holding key in database db.
func (c *Ctx) KSIn(db int, key []byte) *keyspace.Keyspace { return c.E.keyspace(db, key) }

// Find returns key's live entry in the selected database, or nil, hashing the key once.
func (c *Ctx) Find(key []byte) *keyspace.Entry {
	ks, h := c.lookup(key)
	if c.replicaKeeps(ks, key) { // repl.go
		return nil
	}
	if c.noTouch() { // CLIENT NO-TOUCH (client_notouch.go)
		return ks.FindQuiet(key, c.Now)
	}
	return ks.FindHashed(key, h, c.Now)
}

// FindQuiet is the keyspace's FindQuiet (no access recorded: TYPE, TTL, EXISTS, OBJECT) for key
// in the selected database, under the replica role's rule (replicaKeeps).
func (c *Ctx) FindQuiet(key []byte) *keyspace.Entry {
	ks := c.KS(key)
	if c.replicaKeeps(ks, key) {
		return nil
	}
	return ks.FindQuiet(key, c.Now)
}

// Upsert returns key's live entry in the selected database, creating an empty one when absent,
// hashing the key once.
func (c *Ctx) Upsert(key []byte) (e *keyspace.Entry, created bool) {
	_, e, created = c.UpsertIn(key)
	return e, created
}

// FindIn is Find that also returns the key's keyspace (for handlers that then delete or
// change the expiry).
func (c *Ctx) FindIn(key []byte) (*keyspace.Keyspace, *keyspace.Entry) {
	ks, h := c.lookup(key)
	if c.replicaKeeps(ks, key) {
		return ks, nil
	}
	if c.noTouch() {
		return ks, ks.FindQuiet(key, c.Now)
	}
	return ks, ks.FindHashed(key, h, c.Now)
}

// UpsertIn is Upsert that also returns the key's keyspace.
func (c *Ctx) UpsertIn(key []byte) (*keyspace.Keyspace, *keyspace.Entry, bool) {
	ks, h := c.lookup(key)
	if c.noTouch() {
		return c.upsertNoTouch(ks, key, h)
	}
	e, created := ks.UpsertHashed(key, h, c.Now)
	if !created {
		c.E.touchKey(h) // a new key's write is no access (a cache-aside GET counted it)
	}
	return ks, e, created
}

// FindRead finds key for a read, counting a keyspace hit or miss for INFO and raising the
// "keymiss" event on a miss, as Redis's lookupKeyRead does.
func (c *Ctx) FindRead(key []byte) *keyspace.Entry {
	ks, h := c.lookup(key)
	if c.replicaKeeps(ks, key) {
		if st := c.rstats; st != nil {
			st.misses.Add(1)
		} else {
			c.E.data(c.E.shardOfKey(key, h)).stats.misses++
		}
		c.Notify(NotifyKeyMiss, "keymiss", key)
		return nil
	}
	if c.noTouch() {
		return c.findReadNoTouch(ks, key, h)
	}
	// allkeys-tinylfu counts reads, hits and misses (evict_policy.go).
	c.E.touchKey(h)
	if st := c.rstats; st != nil { // shared work (shared.go)
		e, expired := ks.FindShared(key, h, c.Now)
		switch {
		case expired:
			c.needToken = true
		case e == nil:
			st.misses.Add(1)
			c.Notify(NotifyKeyMiss, "keymiss", key)
		default:
			st.hits.Add(1)
		}
		return e
	}
	e := ks.FindHashed(key, h, c.Now)
	st := &c.E.data(c.E.shardOfKey(key, h)).stats
	if e == nil {
		st.misses++
		c.Notify(NotifyKeyMiss, "keymiss", key) // Redis's lookupKeyRead raises it
	} else {
		st.hits++
	}
	return e
}

func (c *Ctx) lookup(key []byte) (*keyspace.Keyspace, uint64) {
	h := keyspace.Hash(key)
	return c.E.data(c.E.shardOfKey(key, h)).dbs[c.DB], h
}

// Reply helpers. Each appends one reply in the connection's protocol.

func (c *Ctx) OK()                     { c.Out = append(c.Out, "+OK\r\n"...) }
func (c *Ctx) Simple(s string)         { c.Out = resp.AppendSimple(c.Out, s) }
func (c *Ctx) Int(n int64)             { c.Out = resp.AppendInt(c.Out, n) }
func (c *Ctx) Bulk(b []byte)           { c.Out = resp.AppendBulk(c.Out, b) }
func (c *Ctx) BulkString(s string)     { c.Out = resp.AppendBulkString(c.Out, s) }
func (c *Ctx) BulkInt(n int64)         { c.Out = resp.AppendBulkInt(c.Out, n) }
func (c *Ctx) Null()                   { c.Out = resp.AppendNull(c.Out, c.Proto) }
func (c *Ctx) NullArray()              { c.Out = resp.AppendNullArray(c.Out, c.Proto) }
func (c *Ctx) ArrayLen(n int)          { c.Out = resp.AppendArrayLen(c.Out, n) }
func (c *Ctx) MapLen(n int)            { c.Out = resp.AppendMapLen(c.Out, c.Proto, n) }
func (c *Ctx) SetLen(n int)            { c.Out = resp.AppendSetLen(c.Out, c.Proto, n) }
func (c *Ctx) Double(f float64)        { c.Out = resp.AppendDouble(c.Out, c.Proto, f) }
func (c *Ctx) Bool(b bool)             { c.Out = resp.AppendBool(c.Out, c.Proto, b) }
func (c *Ctx) Verbatim(s []byte)       { c.Out = resp.AppendVerbatim(c.Out, c.Proto, "txt", s) }
func (c *Ctx) Err(msg string)          { c.Out = resp.AppendError(c.Out, msg) }
func (c *Ctx) Errf(f string, a ...any) { c.Err(fmt.Sprintf(f, a...)) }

// WrongType replies the WRONGTYPE error.
func (c *Ctx) WrongType() { c.Err(ErrWrongType) }

// ArityErr replies Redis's wrong-number-of-arguments error for the running command.
func (c *Ctx) ArityErr() { c.Errf(ErrArity, c.Spec.Name) }
