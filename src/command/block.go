package command

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/pipeline"
)

// Blocking commands (BLPOP, BRPOP, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP) follow Redis 7.0:
//
//  1. They run as barriers with their keys' shards locked. If a key can serve them they reply at
//     once; otherwise the handler calls Ctx.Block, which registers a waiter on every key in
//     FIFO order and marks the client blocked (CLIENT LIST flag b, INFO blocked_clients), and
//     the connection waits (holding no token) for the waiter to be served, to time out, or to
//     be unblocked.
//  2. A command that creates a key others wait on calls Ctx.SignalReady(key); like Redis's dbAdd,
//     only creating a key signals it, not overwriting one (a Z*STORE or SORT STORE over an
//     existing key leaves its waiters blocked, whatever it stores). Before the shard's token is
//     released, the executor serves that key's waiters in the order they blocked, skipping those
//     whose kind (list or sorted set) the key's type cannot serve, which keep their place: it
//     runs the waiter's command on the waiter's behalf with Ctx.Serving set to the ready key, so
//     the element goes to the first waiter before any later command can take it. It stops when
//     the key is gone (emptied).
//  3. A waiter whose command would also touch another shard (BLMOVE to a key elsewhere) cannot be
//     served in place without that shard's token; when the key holds a list it is woken instead
//     and, holding all of its command's shards, is served on its own behalf as in step 2 (so
//     its effects are a served command's: no dirty count, replicated as Redis replicates a
//     served BLMOVE), or, if another client took the element first, reruns its command and
//     blocks again. Its keyspace events are published by its own connection, so they may come
//     before those of the push that woke it.
//  4. A waiter whose connection is gone (closed by the peer, or CLIENT KILL) is never served: the
//     executor checks before serving it, and the waiting connection polls for it, unregisters
//     and ends its wait.
//  5. An XREADGROUP waiter (BlockGroup) ends with Redis 7.0's errors when its stream key goes
//     (deleted, expired, overwritten by another type, renamed away, flushed, swapped out) or its
//     group does (XGROUP DESTROY, a RENAME or COPY onto the key of a stream without it): while
//     a shard has such waiters, the executor checks their keys after every command, and the
//     expiry sweep after its pass (checkGroupWaitersLocked).
//
// A waiter's state moves waiting -> serving -> served (or back to waiting when the command found
// nothing to take), waiting -> timedOut (timeout, CLIENT UNBLOCK, disconnect) or waiting -> retry
// (case 3); only the goroutine that wins the transition out of waiting acts on the waiter.

const (
	waitWaiting int32 = iota
	waitServing
	waitServed
	waitTimedOut
	waitError // CLIENT UNBLOCK ... ERROR
	waitRetry
	waitGone // XREADGROUP: its key or group is gone; the reply is the waiter's gone
)

// waiter is one blocked command.
type waiter struct {
	client   *Client
	slot     *pipeline.Slot
	kind     keyspace.Kind // the type its command takes from: KindList or KindZSet
	keys     []blockKey
	extra    []int32  // shards of keys the command touches besides the served one (BLMOVE dst)
	deadline int64    // unix ns; 0 = forever
	argvMem  int      // the command's argument bytes, for CLIENT LIST while it waits
	from     blockKey // the key that woke it to retry (state waitRetry)
	group    []byte   // XREADGROUP's group (BlockGroup), nil for other commands
	gone     string   // the error reply of state waitGone
	state    atomic.Int32
	wake     chan struct{}
}

type blockKey struct {
	db  int
	key string
}

// blockState is one shard's waiters, touched only by the shard's token holder.
type blockState struct {
	waiters map[blockKey][]*waiter
	ready   []blockKey
	// groupKeys are the keys XREADGROUP clients wait on (BlockGroup): while there are any, every
	// command and expiry sweep on the shard checks that their stream and group still exist.
	groupKeys map[blockKey]struct{}
}

// pending reports whether the executor must call serveReadyLocked after a command.
func (st *blockState) pending() bool { return len(st.ready) > 0 || len(st.groupKeys) > 0 }

// Block registers the running command, which takes from keys of kind (keyspace.KindList or
// KindZSet), as waiting on keys until deadline (unix ns; 0 = forever), unless blocking is not
// allowed here (MULTI, scripts), where it replies a null array at once, or the command is being
// served, where it does nothing (the waiter stays blocked). touch lists other keys the command
// writes when served (BLMOVE's destination).
func (c *Ctx) Block(kind keyspace.Kind, keys [][]byte, deadline int64, touch ...[]byte) {
	if c.Serving != nil {
		return // nothing to take after all: the waiter stays blocked
	}
	if c.noBlock {
		c.NullArray()
		return
	}
	w := &waiter{client: c.Client, slot: c.slot, kind: kind, deadline: deadline, wake: make(chan struct{}, 1)}
	for _, a := range c.Args {
		w.argvMem += len(a)
	}
	for _, k := range touch {
		w.extra = append(w.extra, c.E.shardOf(k))
	}
	for _, k := range keys {
		bk := blockKey{c.DB, string(k)}
		w.keys = append(w.keys, bk)
		st := c.E.blockStateOf(k)
		if st.waiters == nil {
			st.waiters = map[blockKey][]*waiter{}
		}
		st.waiters[bk] = append(st.waiters[bk], w)
	}
	c.blocked = w
	// Shown blocked from now on, while the tokens are still held: a command that runs after this
	// one sees the client blocked, as in Redis.
	c.Client.blockedOn.Store(w)
}

// BlockGroup is Block for XREADGROUP on group: Redis 7.0 ends such a wait when the stream key is
// deleted or stops being a stream ("-UNBLOCKED the stream key no longer exists") or the group is
// destroyed ("-NOGROUP the consumer group this client was blocked on no longer exists").
func (c *Ctx) BlockGroup(keys [][]byte, deadline int64, group []byte) {
	prev := c.blocked
	c.Block(keyspace.KindStream, keys, deadline)
	w := c.blocked
	if w == nil || w == prev {
		return // not blocked (MULTI, scripts) or being served
	}
	w.group = append([]byte(nil), group...)
	for _, bk := range w.keys {
		st := c.E.blockStateOf([]byte(bk.key))
		if st.groupKeys == nil {
			st.groupKeys = map[blockKey]struct{}{}
		}
		st.groupKeys[bk] = struct{}{}
	}
}

// checkGroupWaitersLocked ends the waits of XREADGROUP clients on held shard d whose stream key
// is gone or no longer a stream, or whose group is gone, with Redis's errors; keys no such
// client waits on any more leave groupKeys.
func (e *Engine) checkGroupWaitersLocked(d *shardData, now int64) {
	for bk := range d.block.groupKeys {
		en := d.dbs[bk.db].Peek([]byte(bk.key), now)
		live := false
		for _, w := range d.block.waiters[bk] {
			if w.group == nil || w.state.Load() != waitWaiting {
				continue
			}
			switch {
			case en == nil || en.Kind != keyspace.KindStream:
				w.gone = "-UNBLOCKED the stream key no longer exists\r\n"
			case keyspace.Obj[stream.Stream](en).Group(w.group) == nil:
				w.gone = "-NOGROUP the consumer group this client was blocked on no longer exists\r\n"
			default:
				live = true
				continue
			}
			if !w.end(waitGone) {
				w.gone = ""
			}
		}
		if !live {
			delete(d.block.groupKeys, bk)
		}
	}
}

// SignalReady tells blocked clients that key (in the selected database) may now serve them. Call
// it whenever a command creates a list or sorted set key, and not when it overwrites an existing
// key (Redis 7.0 signals in dbAdd only).
func (c *Ctx) SignalReady(key []byte) {
	st := c.E.blockStateOf(key)
	if len(st.waiters) == 0 {
		return
	}
	bk := blockKey{c.DB, string(key)}
	if _, ok := st.waiters[bk]; ok {
		st.ready = append(st.ready, bk)
	}
}

// ParseTimeout parses a blocking command's timeout in seconds into a deadline in unix ns (0 =
// forever), replying Redis's error and returning false when it is invalid. Like Redis 7.0 it
// reads a long double, rounds the milliseconds up, and a value past the int64 range wraps to a
// negative one ("timeout is negative"), so -0.0001 blocks forever.
func (c *Ctx) ParseTimeout(arg []byte) (int64, bool) {
	f, ok := strs.ParseLongDouble(arg)
	if !ok {
		c.Err(ErrTimeoutFloat)
		return 0, false
	}
	ms := math.Ceil(f * 1000)
	if !(ms >= math.MinInt64 && ms < math.MaxInt64) { // C's conversion of an out-of-range value
		ms = math.MinInt64
	}
	tms := int64(ms)
	switch {
	case tms < 0:
		c.Err(ErrTimeoutNeg)
		return 0, false
	case tms == 0:
		return 0, true
	}
	nowMs := c.Now / 1e6
	if tms > math.MaxInt64/1_000_000-nowMs { // past 2262: Redis 7.0.15 keeps such a client blocked
		return math.MaxInt64, true
	}
	return (nowMs + tms) * 1e6, true
}

func (e *Engine) blockStateOf(key []byte) *blockState { return &e.data(e.shardOf(key)).block }

// serveReadyLocked serves the waiters of keys signalled ready on a held shard.
//
// The served commands' keyspace events go to slot by, the command that made the keys ready, after
// its own: Redis serves blocked clients right after the command that pushed.
func (e *Engine) serveReadyLocked(d *shardData, now int64, by *pipeline.Slot) {
	prev := d.running
	d.running, d.serve.by = &d.serve, by
	defer func() { d.running, d.serve.by = prev, nil }()
	if len(d.block.groupKeys) > 0 {
		e.checkGroupWaitersLocked(d, now)
	}
	for len(d.block.ready) > 0 {
		bk := d.block.ready[0]
		d.block.ready = d.block.ready[1:]
		e.serveKeyLocked(d, bk, now)
	}
	d.block.ready = d.block.ready[:0]
}

// serveKeyLocked serves bk's waiters that its value's type can serve, in the order they
// blocked, until the key is gone. Waiters of the other kind keep their place in the queue;
// finished ones (served, timed out, retrying) leave it.
func (e *Engine) serveKeyLocked(d *shardData, bk blockKey, now int64) {
	list := d.block.waiters[bk]
	kept := list[:0] // filtered in place: kept never passes the waiter being looked at
	i := 0
	for ; i < len(list); i++ {
		kind := keyKindLocked(d, bk, now)
		if kind == 0 {
			break
		}
		keep, stop := e.offerLocked(d, list[i], bk, kind, now)
		if stop {
			break
		}
		if keep {
			kept = append(kept, list[i])
		}
	}
	kept = append(kept, list[i:]...)
	clear(list[len(kept):])
	e.storeWaiters(d, bk, kept)
}

// offerLocked serves w from bk, which holds a value of kind, if w can take from it. It reports
// whether w stays in bk's queue, and whether serving must stop (w stays then too).
func (e *Engine) offerLocked(d *shardData, w *waiter, bk blockKey, kind keyspace.Kind, now int64) (keep, stop bool) {
	switch st := w.state.Load(); {
	case st == waitServing:
		return true, false // another shard serves it; it may come back to waiting
	case st != waitWaiting:
		return false, false
	case w.kind != kind:
		return true, false
	case w.client.gone():
		w.end(waitTimedOut) // its connection unregisters it; it must not take the element
		return false, false
	case !w.servableHere(d):
		w.from = bk // before the state: its connection reads it once it sees waitRetry
		if w.state.CompareAndSwap(waitWaiting, waitRetry) {
			w.wake <- struct{}{}
		}
		return false, false
	case !w.state.CompareAndSwap(waitWaiting, waitServing):
		return true, false
	}
	if !e.serveWaiterLocked(d, w, bk, now) {
		w.state.Store(waitWaiting) // nothing taken after all (not expected once types match)
		// A stream waiter may wait for IDs past the key's last; the next may not (XREAD).
		return true, w.kind != keyspace.KindStream
	}
	w.state.Store(waitServed)
	w.client.blockedOn.CompareAndSwap(w, nil) // no longer blocked for the commands that follow
	w.wake <- struct{}{}
	return false, false
}

func (e *Engine) storeWaiters(d *shardData, bk blockKey, list []*waiter) {
	if len(list) == 0 {
		delete(d.block.waiters, bk)
	} else {
		d.block.waiters[bk] = list
	}
}

// keyKindLocked returns the type of bk's live value on held shard d, 0 when there is none.
func keyKindLocked(d *shardData, bk blockKey, now int64) keyspace.Kind {
	if e := d.dbs[bk.db].Peek([]byte(bk.key), now); e != nil {
		return e.Kind
	}
	return 0
}

// gone reports whether the client's connection is closed or killed: its waiter must not be
// served, and its wait ends.
func (cl *Client) gone() bool { return cl.killed.Load() || (cl.Alive != nil && !cl.Alive()) }

// end moves w out of waiting to st (timed out or unblocked), shows its client unblocked and wakes
// its connection; false if another goroutine moved it first.
func (w *waiter) end(st int32) bool {
	if !w.state.CompareAndSwap(waitWaiting, st) {
		return false
	}
	w.client.blockedOn.CompareAndSwap(w, nil)
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
}

// servableHere reports whether serving w touches only shard d.
func (w *waiter) servableHere(d *shardData) bool {
	for _, sh := range w.extra {
		if sh != d.id {
			return false
		}
	}
	return true
}

// serveWaiterLocked runs w's command for the ready key; it reports whether it produced a reply.
func (e *Engine) serveWaiterLocked(d *shardData, w *waiter, bk blockKey, now int64) bool {
	c := &d.serve
	c.E = e
	c.Serving = []byte(bk.key)
	s := w.slot
	e.call(c, s, now)
	c.Serving = nil
	return len(s.Reply) > 0
}

// waitBlocked waits, holding no token, until the waiter the barrier registered is served, times
// out or is unblocked, then leaves its reply in s. It reports whether the command must rerun.
// The client shows blocked (Block set blockedOn) until it returns.
func (e *Engine) waitBlocked(w *waiter, s *pipeline.Slot, shards []int32) (rerun bool) {
	cl := w.client
	defer cl.blockedOn.CompareAndSwap(w, nil)
	var timeout <-chan time.Time
	if w.deadline > 0 {
		t := time.NewTimer(time.Duration(w.deadline - time.Now().UnixNano()))
		defer t.Stop()
		timeout = t.C
	}
	// The transport tells no one when a waiting connection closes: poll for it.
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-w.wake:
		case <-timeout:
			w.end(waitTimedOut)
		case <-poll.C:
			if cl.gone() {
				w.end(waitTimedOut)
			}
		}
		switch w.state.Load() {
		case waitServed:
			if len(w.keys) > 1 {
				e.unregister(w, shards) // the other keys' queues would keep it until they fill
			}
			return false
		case waitRetry:
			e.unregister(w, shards)
			return !e.serveWokenWaiter(w, s, shards)
		case waitTimedOut:
			e.unregister(w, shards)
			s.Reply = append(s.Reply[:0], nullArrayReply(int(s.Proto))...)
			return false
		case waitError:
			e.unregister(w, shards)
			s.Reply = append(s.Reply[:0], "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"...)
			return false
		case waitGone:
			e.unregister(w, shards)
			s.Reply = append(s.Reply[:0], w.gone...)
			return false
		}
		// waitServing: the server is running our command right now; its wake follows.
	}
}

// serveWokenWaiter serves w, woken to retry, on its own behalf (Ctx.Serving) from the key that
// woke it, holding shards, all of its command's; it reports false, having changed nothing, when
// that key holds no value w can take any more, and the command must rerun.
func (e *Engine) serveWokenWaiter(w *waiter, s *pipeline.Slot, shards []int32) bool {
	e.Group.Lock(shards)
	defer e.Group.Unlock(shards)
	now := time.Now().UnixNano()
	bk := w.from
	key := []byte(bk.key)
	if keyKindLocked(e.data(e.shardOf(key)), bk, now) != w.kind {
		return false
	}
	w.client.blockedOn.CompareAndSwap(w, nil) // served now, as offerLocked shows it
	c := &w.client.ctx
	e.enter(shards, false, c)
	defer e.leave(shards, false, c)
	c.Serving = key
	e.call(c, s, now)
	c.Serving = nil
	e.serveReadyIn(shards, now, s)
	return len(s.Reply) > 0
}

// nullArrayReply is the timeout reply of every blocking command, as Redis's
// replyToBlockedClientTimedOut answers a client blocked on keys.
func nullArrayReply(proto int) string {
	if proto == 3 {
		return "_\r\n"
	}
	return "*-1\r\n"
}

// unregister removes w from every key it waits on.
func (e *Engine) unregister(w *waiter, shards []int32) {
	e.Group.Lock(shards)
	defer e.Group.Unlock(shards)
	for _, bk := range w.keys {
		st := e.blockStateOf([]byte(bk.key))
		list := st.waiters[bk]
		for i, x := range list {
			if x == w {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(st.waiters, bk)
		} else {
			st.waiters[bk] = list
		}
	}
}

// unblock ends cl's wait as CLIENT UNBLOCK does; it reports whether cl was blocked.
func (cl *Client) unblock(withError bool) bool {
	w := cl.blockedOn.Load()
	if w == nil {
		return false
	}
	if withError {
		return w.end(waitError)
	}
	return w.end(waitTimedOut)
}

// blockedCounts returns how many clients are blocked, and how many of them with a timeout (INFO
// blocked_clients and clients_in_timeout_table).
func (e *Engine) blockedCounts() (blocked, timed int64) {
	e.EachClient(func(cl *Client) {
		if w := cl.blockedOn.Load(); w != nil {
			blocked++
			if w.deadline > 0 {
				timed++
			}
		}
	})
	return blocked, timed
}
