package command

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/pipeline"
)

// Blocking commands (BLPOP, BRPOP, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP) follow Redis:
//
//  1. They run as barriers with their keys' shards locked. If a key can serve them they reply at
//     once; otherwise the handler calls Ctx.Block, which registers a waiter on every key in
//     FIFO order, and the connection waits (holding no token) for the waiter to be served, to
//     time out, or to be unblocked.
//  2. A command that creates a key others wait on calls Ctx.SignalReady(key). Before the shard's
//     token is released, the executor serves that key's waiters in the order they blocked: it runs
//     the waiter's command on the waiter's behalf with Ctx.Serving set to the ready key, so the
//     element goes to the first waiter before any later command can take it, as in Redis.
//  3. A waiter whose command would also touch another shard (BLMOVE to a key elsewhere) cannot be
//     served in place without that shard's token; it is woken instead and reruns its command as
//     a barrier, blocking again if another client took the element first.
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
)

// waiter is one blocked command.
type waiter struct {
	client   *Client
	slot     *pipeline.Slot
	keys     []blockKey
	extra    []int32 // shards of keys the command touches besides the served one (BLMOVE dst)
	nullArr  bool    // the timeout reply is a null array (else a null bulk)
	deadline int64   // unix ns; 0 = forever
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
}

// Block registers the running command as waiting on keys until deadline (unix ns; 0 = forever),
// unless blocking is not allowed here (MULTI, scripts) or the command is being served, in which
// case it replies the timeout reply (a null array when nullArray, else a null bulk) at once.
// touch lists other keys the command writes when served (BLMOVE's destination).
func (c *Ctx) Block(keys [][]byte, deadline int64, nullArray bool, touch ...[]byte) {
	if c.Serving != nil {
		return // nothing to take after all: the waiter stays blocked
	}
	if c.noBlock {
		c.timeoutReply(nullArray)
		return
	}
	w := &waiter{client: c.Client, slot: c.slot, nullArr: nullArray, deadline: deadline, wake: make(chan struct{}, 1)}
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
}

func (c *Ctx) timeoutReply(nullArray bool) {
	if nullArray {
		c.NullArray()
	} else {
		c.Null()
	}
}

// SignalReady tells blocked clients that key (in the selected database) may now serve them. Call
// it whenever a command creates a list or sorted set key.
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
func (e *Engine) serveReadyLocked(d *shardData, now int64) {
	for len(d.block.ready) > 0 {
		bk := d.block.ready[0]
		d.block.ready = d.block.ready[1:]
		e.serveKeyLocked(d, bk, now)
	}
	d.block.ready = d.block.ready[:0]
}

func (e *Engine) serveKeyLocked(d *shardData, bk blockKey, now int64) {
	list := d.block.waiters[bk]
	for len(list) > 0 {
		w := list[0]
		if w.state.Load() != waitWaiting {
			list = list[1:]
			continue
		}
		if !w.servableHere(d) {
			if w.state.CompareAndSwap(waitWaiting, waitRetry) {
				w.wake <- struct{}{}
			}
			list = list[1:]
			continue
		}
		if !w.state.CompareAndSwap(waitWaiting, waitServing) {
			list = list[1:]
			continue
		}
		if !e.serveWaiterLocked(d, w, bk, now) {
			w.state.Store(waitWaiting)
			break // the key cannot serve anyone (empty or wrong type)
		}
		w.state.Store(waitServed)
		w.wake <- struct{}{}
		list = list[1:]
	}
	if len(list) == 0 {
		delete(d.block.waiters, bk)
	} else {
		d.block.waiters[bk] = list
	}
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
func (e *Engine) waitBlocked(w *waiter, s *pipeline.Slot, shards []int32) (rerun bool) {
	cl := w.client
	cl.blockedOn.Store(w)
	defer cl.blockedOn.Store(nil)
	var timeout <-chan time.Time
	if w.deadline > 0 {
		t := time.NewTimer(time.Duration(w.deadline - time.Now().UnixNano()))
		defer t.Stop()
		timeout = t.C
	}
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-w.wake:
		case <-timeout:
			w.state.CompareAndSwap(waitWaiting, waitTimedOut)
		case <-poll.C:
			if cl.killed.Load() || (cl.Alive != nil && !cl.Alive()) {
				w.state.CompareAndSwap(waitWaiting, waitTimedOut)
			}
		}
		switch w.state.Load() {
		case waitServed:
			return false
		case waitRetry:
			e.unregister(w, shards)
			return true
		case waitTimedOut, waitError:
			e.unregister(w, shards)
			s.Reply = s.Reply[:0]
			if w.state.Load() == waitError {
				s.Reply = append(s.Reply, "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"...)
			} else if w.nullArr {
				s.Reply = append(s.Reply, nullArrayReply(int(s.Proto))...)
			} else {
				s.Reply = append(s.Reply, nullReply(int(s.Proto))...)
			}
			return false
		}
		// waitServing: the server is running our command right now; its wake follows.
	}
}

func nullArrayReply(proto int) string {
	if proto == 3 {
		return "_\r\n"
	}
	return "*-1\r\n"
}

func nullReply(proto int) string {
	if proto == 3 {
		return "_\r\n"
	}
	return "$-1\r\n"
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
	to := waitTimedOut
	if withError {
		to = waitError
	}
	if !w.state.CompareAndSwap(waitWaiting, to) {
		return false
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
}
