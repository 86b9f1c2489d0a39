package command

import (
	"encoding/binary"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/pipeline/feed"
)

// Effects. A handler reports what it changed through its Ctx, as Redis's commands call
// server.dirty++, notifyKeyspaceEvent and signalModifiedKey, and (where the replicated form is
// not the command itself) rewrite what is propagated; call (execute.go) commits it all once the
// handler returns, in one place:
//
//   - the dirty count goes to the shard's counter (INFO's rdb_changes_since_last_save);
//   - the replicated form goes to the write-effect feed (pipeline/feed), when a consumer is
//     attached: by default the command's own arguments if it changed anything (dirty > 0), else
//     what the handler gave to Propagate, several commands wrapped in MULTI/EXEC as Redis wraps
//     them; keys found expired while the command ran are propagated first as DELs (UNLINK under
//     lazyfree-lazy-expire), in the same MULTI/EXEC;
//   - keyspace events go into the slot's Effects, for the connection to publish once the slot has
//     completed, in request order (Env.Completed): the expired keys' first, then the command's.
//
// With no feed consumer and notifications off, reporting costs a few branches and allocates
// nothing.

// Class is a keyspace event class, with Redis's NOTIFY_* values (they are also
// notify-keyspace-events' bits in src/config).
type Class uint16

// The event classes and the two channel kinds.
const (
	NotifyKeyspace Class = 1 << iota // K
	NotifyKeyevent                   // E
	NotifyGeneric                    // g
	NotifyString                     // $
	NotifyList                       // l
	NotifySet                        // s
	NotifyHash                       // h
	NotifyZSet                       // z
	NotifyExpired                    // x
	NotifyEvicted                    // e
	NotifyStream                     // t
	NotifyKeyMiss                    // m
	NotifyLoaded                     // module key loaded (no letter)
	NotifyModule                     // d
	NotifyNew                        // n
)

// effects is a call's record of what it changed; it lives in the Ctx and is reset by call.
type effects struct {
	dirty int64
	// own is set once the handler called Propagate: ops, not the command's arguments, is
	// its replicated form (nops commands of RESP).
	own  bool
	nops int
	ops  []byte
	// pre are the DELs of keys found expired during the call, propagated before the command.
	pre  []byte
	npre int
	// events are keyspace events to publish, encoded by appendEvent.
	events []byte
	// after are pushes for the client itself that follow the command's reply (its own
	// tracking invalidations, as Redis's tracking_pending_keys).
	after []byte
	// ring is the feed ring the executor may append to: a shard whose token it holds, or -1.
	ring int32
	// wrap is propagateLocked's scratch for an entry of several effects (not reset: reused).
	wrap []byte
}

// Dirty counts n changes, as Redis's server.dirty += n.
func (c *Ctx) Dirty(n int) { c.fx.dirty += int64(n) }

// Notify raises keyspace event event of class on key in the selected database.
func (c *Ctx) Notify(class Class, event string, key []byte) { c.NotifyIn(c.DB, class, event, key) }

// NotifyIn is Notify for a key of database db (MOVE, COPY … DB).
func (c *Ctx) NotifyIn(db int, class Class, event string, key []byte) {
	flags := Class(c.E.notify.Load())
	if flags&class == 0 || flags&(NotifyKeyspace|NotifyKeyevent) == 0 {
		return
	}
	c.fx.events = appendEvent(c.fx.events, db, class, event, key)
}

// Changed is the common pair: key changed, and event of class is raised on it.
func (c *Ctx) Changed(class Class, event string, key []byte) {
	c.Touch(key)
	c.Notify(class, event, key)
}

// Propagate makes args one of the commands the call is replicated as, instead of its own
// arguments (SET … EX becomes SET … PXAT, SPOP becomes SREM). Calls add up, in order.
func (c *Ctx) Propagate(args ...[]byte) {
	c.fx.own = true
	if !c.E.Feed.Active() {
		return
	}
	c.fx.ops = appendCommand(c.fx.ops, args)
	c.fx.nops++
}

// PropagateNothing keeps a call that changed data from being replicated as itself.
func (c *Ctx) PropagateNothing() { c.fx.own = true }

// expiredLocked is a keyspace's OnExpire hook for database db of shard d: a key was removed
// because its time passed, lazily or by the active expiry.
func (e *Engine) expiredLocked(d *shardData, db int, key string) {
	e.stats.expiredKeys.Add(1)
	c := d.running
	if c == nil {
		c = &d.bg
	}
	k := []byte(key)
	if e.Settings().LazyfreeLazyExpire {
		e.lazyExpireLocked(d.dbs[db], k) // lazyfree.go
	}
	c.touchIn(db, k, true)
	c.NotifyIn(db, NotifyExpired, "expired", k)
	if e.Feed.Active() {
		name := "DEL"
		if e.Settings().LazyfreeLazyExpire {
			name = "UNLINK"
		}
		c.fx.pre = binary.AppendUvarint(c.fx.pre, uint64(db))
		c.fx.pre = appendCommand(c.fx.pre, [][]byte{[]byte(name), k})
		c.fx.npre++
	}
}

// dirtyLocked is Redis's server.dirty: changes since the server started (since the last save,
// once persistence exists). The caller holds every shard's token.
func (e *Engine) dirtyLocked() int64 {
	n := e.stats.dirty.Load()
	for i := range e.Group.Shards {
		n += e.data(int32(i)).stats.dirty
	}
	return n
}

// Dirty is dirtyLocked for the server's save rules and INFO; held says the caller holds every
// shard's token already (INFO's hook).
func (e *Engine) Dirty(held bool) int64 {
	if !held {
		e.Group.LockAll()
		defer e.Group.UnlockAll()
	}
	return e.dirtyLocked()
}

// AttachFeed attaches a reader to the write-effect feed, holding every shard while it does, so
// that it sees exactly the writes that start after it returns.
func (e *Engine) AttachFeed() *feed.Reader {
	e.Group.LockAll()
	defer e.Group.UnlockAll()
	return e.Feed.Attach()
}

// commitBackgroundLocked commits what the shard's work outside any call (the active expiry)
// reported: its DELs go to the feed, its events are published at once.
func (e *Engine) commitBackgroundLocked(d *shardData) {
	fx := &d.bg.fx
	if e.Feed.Active() {
		// Each of the cron's deletions is an effect of its own (Redis's activeExpireCycle
		// propagates them one by one).
		for b := fx.pre; len(b) > 0; {
			v, k := binary.Uvarint(b)
			b = b[k:]
			end := commandLen(b)
			e.Feed.Append(int(fx.ring), int(v), b[:end])
			b = b[end:]
		}
	}
	if len(fx.events) > 0 {
		e.publishEvents(nil, fx.events)
	}
	fx.reset()
	e.broadcastPending()
}

// newKeyLocked is a keyspace's OnNew hook: a key was created (the "new" event, class n).
func (e *Engine) newKeyLocked(d *shardData, db int, key string) {
	if Class(e.notify.Load())&NotifyNew == 0 {
		return
	}
	c := d.running
	if c == nil {
		c = &d.bg
	}
	c.NotifyIn(db, NotifyNew, "new", []byte(key))
}

// commit records c's effects once its handler has returned; s is the slot whose Effects receive
// its events.
func (e *Engine) commit(c *Ctx, s *pipeline.Slot) {
	fx := &c.fx
	if fx.dirty != 0 {
		switch {
		case c.stats != nil:
			c.stats.dirty += fx.dirty
		default:
			e.stats.dirty.Add(fx.dirty)
		}
	}
	if e.Feed.Active() && fx.ring >= 0 {
		e.propagateLocked(c)
	}
	if len(fx.events) > 0 {
		if by := c.fxSlot(s); by != nil {
			by.Effects = append(by.Effects, fx.events...)
		}
	}
	if len(fx.after) > 0 && c.tx != nil { // after EXEC's whole reply, not inside it
		c.tx.after = append(c.tx.after, fx.after...)
	} else if len(fx.after) > 0 && s != nil {
		c.Out = append(c.Out, fx.after...)
		s.Reply = c.Out
	}
	fx.reset()
}

// propagated drops the replicated form once it went to the feed, keeping the rest for commit.
func (fx *effects) propagated() {
	fx.own, fx.nops, fx.npre = true, 0, 0
	fx.ops, fx.pre = fx.ops[:0], fx.pre[:0]
}

func (fx *effects) reset() {
	fx.dirty, fx.own, fx.nops, fx.npre = 0, false, 0, 0
	fx.ops, fx.pre, fx.events, fx.after = fx.ops[:0], fx.pre[:0], fx.events[:0], fx.after[:0]
}

// propagateLocked appends c's replicated form to the feed ring its executor holds: the DELs of
// keys found expired, then the command's own; more than one are wrapped in one MULTI/EXEC, as
// Redis 7.0 propagates a call with several effects (MGET of two expired keys: MULTI, DEL, DEL,
// EXEC; SET over an expired key: MULTI, DEL, SET, EXEC).
func (e *Engine) propagateLocked(c *Ctx) {
	fx := &c.fx
	if !fx.own && fx.dirty > 0 {
		fx.ops = appendCommand(fx.ops[:0], c.Args)
		fx.nops = 1
	}
	n := fx.npre + fx.nops
	if n == 0 {
		return
	}
	if c.tx != nil { // a queued command inside EXEC: replicated with the transaction (multi.go)
		c.tx.collect(c)
		return
	}
	if n == 1 && fx.npre == 0 { // the common write: its own form, appended as it is
		e.Feed.Append(int(fx.ring), c.DB, fx.ops)
		return
	}
	// Several effects (or one expired key's DEL) are gathered in fx.wrap, kept between calls
	// so that a steady stream of them allocates nothing.
	db := c.DB
	out := fx.wrap[:0]
	if n > 1 {
		out = append(out, multiRESP...)
	}
	for b := fx.pre; len(b) > 0; {
		v, k := binary.Uvarint(b)
		db, b = int(v), b[k:]
		end := commandLen(b)
		out = append(out, b[:end]...)
		b = b[end:]
	}
	if fx.nops > 0 {
		db = c.DB
		out = append(out, fx.ops...)
	}
	if n > 1 {
		out = append(out, execRESP...)
	}
	fx.wrap = out
	e.Feed.Append(int(fx.ring), db, out)
}

// multiRESP and execRESP are MULTI and EXEC as appendCommand writes them.
const (
	multiRESP = "*1\r\n$5\r\nMULTI\r\n"
	execRESP  = "*1\r\n$4\r\nEXEC\r\n"
)

// appendCommand appends args as a RESP array of bulk strings, the form of the AOF.
func appendCommand(dst []byte, args [][]byte) []byte {
	dst = resp.AppendArrayLen(dst, len(args))
	for _, a := range args {
		dst = resp.AppendBulk(dst, a)
	}
	return dst
}

// commandLen returns the length of the RESP command array at the start of b (as appendCommand
// writes it).
func commandLen(b []byte) int {
	n, i := 0, 1
	for ; b[i] != '\r'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	i += 2
	for range n {
		l, j := 0, i+1
		for ; b[j] != '\r'; j++ {
			l = l*10 + int(b[j]-'0')
		}
		i = j + 2 + l + 2
	}
	return i
}

// appendEvent encodes one keyspace event: database, class, event name, key.
func appendEvent(dst []byte, db int, class Class, event string, key []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(db))
	dst = binary.AppendUvarint(dst, uint64(class))
	dst = binary.AppendUvarint(dst, uint64(len(event)))
	dst = append(dst, event...)
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	return append(dst, key...)
}

// event is one decoded keyspace event; its slices alias the encoding.
type event struct {
	db    int
	class Class
	name  []byte
	key   []byte
}

// nextEvent decodes the event at the start of b and returns the rest.
func nextEvent(b []byte) (event, []byte) {
	var ev event
	v, n := binary.Uvarint(b)
	ev.db, b = int(v), b[n:]
	v, n = binary.Uvarint(b)
	ev.class, b = Class(v), b[n:]
	v, n = binary.Uvarint(b)
	ev.name, b = b[n:n+int(v)], b[n+int(v):]
	v, n = binary.Uvarint(b)
	ev.key, b = b[n:n+int(v)], b[n+int(v):]
	return ev, b
}
