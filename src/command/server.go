package command

import (
	"fmt"
	"math"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
)

var serverCommands = []*Spec{
	{Name: "dbsize", Arity: 1, Flags: ReadOnly | Fast, Scope: ScopeAll, Run: dbsize},
	{Name: "flushdb", Arity: -1, Flags: Write, Scope: ScopeAll, Run: flushdb},
	{Name: "flushall", Arity: -1, Flags: Write, Scope: ScopeAll, Run: flushall},
	{Name: "time", Arity: 1, Flags: Loading | Stale | Fast, Scope: ScopeConn, Run: timeCmd},
	{Name: "lastsave", Arity: 1, Flags: Loading | Stale | Fast, Scope: ScopeConn, Run: lastsave},
	// persist_cmds.go: barriers that lock nothing, so a pipeline's earlier writes are saved.
	{Name: "save", Arity: 1, Flags: Admin | NoScript | NoAsyncLoading | NoMulti, Scope: ScopeSelf, Run: saveCmd},
	{Name: "bgsave", Arity: -1, Flags: Admin | NoScript | NoAsyncLoading, Scope: ScopeSelf, Run: bgsaveCmd},
	{Name: "bgrewriteaof", Arity: 1, Flags: Admin | NoScript | NoAsyncLoading, Scope: ScopeSelf, Run: bgrewriteaofCmd},
	{Name: "shutdown", Arity: -1, Flags: Admin | NoScript | Loading | Stale | NoMulti | AllowBusy,
		Scope: ScopeConn, Run: shutdown},
	// DEBUG has no subcommand table in Redis (its errors name the subcommand as typed), so it is
	// one command: DEBUG OBJECT runs on its key's shard, the rest on the connection as a
	// barrier that locks nothing (debugKeys returns no key for them).
	{Name: "debug", Arity: -2, Flags: Admin | NoScript | Loading | Stale, Scope: ScopeKeys,
		Keys: debugKeys, Run: debugCmd},
}

// eachKeyspace calls fn with every shard's keyspace of database db. The caller must hold every
// shard (ScopeAll).
func (e *Engine) eachKeyspace(db int, fn func(ks *keyspace.Keyspace)) {
	for _, sh := range e.Group.Shards {
		fn(sh.Data.(*shardData).dbs[db])
	}
}

// DBSIZE
func dbsize(c *Ctx) {
	n := 0
	c.E.eachKeyspace(c.DB, func(ks *keyspace.Keyspace) { n += ks.Len() })
	c.Int(int64(n))
}

// flushMode checks FLUSHDB/FLUSHALL's optional ASYNC|SYNC. Both free memory the same way: the
// old tables become garbage for Go's collector, which runs concurrently anyway; ASYNC (or
// lazyfree-lazy-user-flush) only counts the keys in lazyfreed_objects (lazyfree.go).
func flushMode(c *Ctx) bool {
	switch {
	case len(c.Args) == 1:
	case len(c.Args) > 2 || !(strs.EqualFold(c.Args[1], "ASYNC") || strs.EqualFold(c.Args[1], "SYNC")):
		c.Err(ErrSyntax)
		return false
	}
	return true
}

// FLUSHDB [ASYNC|SYNC]
func flushdb(c *Ctx) {
	if flushMode(c) {
		countLazyFlush(c, c.DB)
		flushDatabase(c, c.DB)
		c.InvalidateAll()      // tracking clients drop everything (Redis's signalFlushedDb)
		c.Propagate(c.Args...) // replicated even when there was nothing to remove, as in Redis
		c.OK()
	}
}

// FLUSHALL [ASYNC|SYNC]
func flushall(c *Ctx) {
	if !flushMode(c) {
		return
	}
	for db := range c.E.dbCount {
		countLazyFlush(c, db)
		flushDatabase(c, db)
	}
	c.InvalidateAll()
	c.Propagate(c.Args...)
	c.OK()
}

// flushDatabase empties database db, counting each key it held as a change (expired ones not
// yet reclaimed too), as Redis's emptyData does. It raises no keyspace event.
func flushDatabase(c *Ctx, db int) {
	c.E.touchAllWatchedLocked(db, -1, c.Now)
	c.E.eachKeyspace(db, func(ks *keyspace.Keyspace) {
		c.Dirty(ks.Len())
		ks.Clear()
	})
	c.E.resetTagsLocked(db)
}

// TIME
func timeCmd(c *Ctx) {
	now := time.Now().UnixMicro()
	c.ArrayLen(2)
	c.BulkInt(now / 1e6)
	c.BulkInt(now % 1e6)
}

// LASTSAVE: the server's last successful save (Hooks.LastSave); without persistence the start
// time, as a Redis that never saved answers.
func lastsave(c *Ctx) {
	if f := c.E.Hooks.LastSave; f != nil {
		c.Int(f())
		return
	}
	c.Int(c.E.started.Unix())
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]
func shutdown(c *Ctx) {
	var save, nosave, now, force, abort bool
	for _, a := range c.Args[1:] {
		switch {
		case strs.EqualFold(a, "NOSAVE"):
			nosave = true
		case strs.EqualFold(a, "SAVE"):
			save = true
		case strs.EqualFold(a, "NOW"):
			now = true
		case strs.EqualFold(a, "FORCE"):
			force = true
		case strs.EqualFold(a, "ABORT"):
			abort = true
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	switch {
	case abort && (save || nosave || now || force), save && nosave:
		c.Err(ErrSyntax)
	case abort:
		// Shutdown is synchronous here: there is never one in progress to abort.
		c.Err(ErrNoShutdown)
	case !nosave && c.E.Scripts().BusyReply() != "":
		// While a script is busy only SHUTDOWN NOSAVE ends the server; the others get the busy
		// run's BUSY text, as Redis's shutdownCommand answers.
		c.Err(c.E.Scripts().BusyReply())
	case c.E.Hooks.Shutdown == nil:
		c.Err(ErrShutdownFailed)
	default:
		if err := c.E.Hooks.Shutdown(save, nosave, now, force); err != nil {
			c.Err(err.Error())
			return
		}
		// Like Redis, a successful SHUTDOWN closes the connection without a reply.
		c.Client.CloseAfterReply()
	}
}

// DEBUG OBJECT key
func debugObject(c *Ctx) {
	// Like Redis, inspecting a key is not an access: its idle time is left alone, and a key past
	// its time that is still held is described, not reclaimed (Redis reads its dict directly).
	e := c.KS(c.Args[2]).PeekAny(c.Args[2], keyspace.Hash(c.Args[2]))
	if e == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	enc := valueEncoding(e)
	refcount := 1
	if n, ok := ParseInt(e.Bytes()); ok && enc == "int" && n >= 0 && n < sharedIntegers {
		refcount = sharedRefcount
	}
	nowSec := uint32(c.Now / int64(time.Second))
	access := e.Access
	if access == 0 {
		access = nowSec
	}
	c.Simple(fmt.Sprintf("Value at:%p refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		e, refcount, enc, serializedLen(c, e, enc), access&lruClockMax, nowSec-min(access, nowSec)))
}

// Redis shares the integer objects 0..9999 and shows them with the maximal refcount.
const (
	sharedIntegers = 10000
	sharedRefcount = math.MaxInt32
	lruClockMax    = 1<<24 - 1
)

// valueEncoding names e's encoding as OBJECT ENCODING does: strings by the strings family's
// rule, collections by their own Encoding, else their type's common encoding.
func valueEncoding(e *keyspace.Entry) string {
	if e.Kind == keyspace.KindString {
		return StringEncodingName(e)
	}
	if enc, ok := objOf(e).(keyspace.Encoder); ok {
		return enc.Encoding()
	}
	switch e.Kind {
	case keyspace.KindList:
		return "quicklist"
	case keyspace.KindHash, keyspace.KindSet:
		return "hashtable"
	case keyspace.KindZSet:
		return "skiplist"
	case keyspace.KindStream:
		return "stream"
	}
	return "unknown"
}

// serializedLen estimates the value's RDB size (uncompressed): integers take their short
// integer encoding, strings a length prefix and their bytes. Collections are what the RDB
// serializer writes for them (rdbSavedObjectLen: the value without its type byte, LZF per
// rdbcompression; persist_ser.go).
func serializedLen(c *Ctx, e *keyspace.Entry, enc string) int {
	if e.Kind != keyspace.KindString {
		return len(c.E.dumpObject(e, c.Now)) - 1
	}
	if n, _ := ParseInt(e.Bytes()); enc == "int" && n >= math.MinInt32 && n <= math.MaxInt32 {
		switch {
		case n >= math.MinInt8 && n <= math.MaxInt8:
			return 2
		case n >= math.MinInt16 && n <= math.MaxInt16:
			return 3
		}
		return 5
	}
	switch l := e.RawLen(); {
	case l < 1<<6:
		return 1 + l
	case l < 1<<14:
		return 2 + l
	case l <= math.MaxUint32:
		return 5 + l
	default:
		return 9 + l
	}
}
