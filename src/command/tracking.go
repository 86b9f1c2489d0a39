package command

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/puzpuzpuz/xsync/v3"
)

// Client-side caching (CLIENT TRACKING), as Redis 7.0's tracking.c behaves:
//
//   - Default mode: the keys a tracking client reads are remembered in one table (by key name,
//     whatever the database) with the ids of the clients that read them; when a key changes (Touch,
//     Redis's signalModifiedKey) each of those clients is sent one invalidation and the key leaves
//     the table. Keys are remembered while the read is routed, before it runs, so no change after
//     the read can be missed.
//   - BCAST mode: no table; every changed key that starts with a registered prefix is collected
//     and, once the batch that changed it has run (Redis: before the event loop sleeps), every
//     client of the prefix is sent the collected keys in one message, sorted as Redis's radix
//     tree returns them.
//   - A client's own change is sent to it after the reply of the command that made it (Redis's
//     tracking_pending_keys); NOLOOP suppresses it.
//   - Invalidations go to the client in RESP3, or to its REDIRECT client: a RESP3 push there, or a
//     __redis__:invalidate message when that client is a RESP2 subscriber.
//
// Invalidations reach other clients through their push outboxes (push.go).

// Tracking flags of a client (trackFlags), read by other goroutines.
const (
	trackOn uint32 = 1 << iota
	trackBcast
	trackOptin
	trackOptout
	trackNoloop
	trackBrokenRedir
)

// trackState is a client's tracking state.
type trackState struct {
	flags    atomic.Uint32
	redirect atomic.Uint64 // client id, 0 for none
	caching  bool          // CLIENT CACHING given for the next command (owner-only)
	prefixes [][]byte      // BCAST prefixes (owner-only)
}

// trackingState is the engine's tracking table and BCAST prefixes.
type trackingState struct {
	clients atomic.Int32 // clients with tracking on
	table   *xsync.MapOf[string, *trackIDs]
	items   atomic.Int64 // client ids in the table, over every key
	maxKeys atomic.Int64 // tracking-table-max-keys; 0 is no limit

	mu       sync.Mutex
	prefixes map[string]*bcastPrefix
	list     atomic.Pointer[[]*bcastPrefix] // prefixes, copy on write, for changes to scan
	pending  atomic.Int32                   // prefixes holding keys to broadcast
}

type trackIDs struct {
	mu   sync.Mutex
	ids  map[uint64]struct{}
	dead bool
}

type bcastPrefix struct {
	prefix  []byte
	mu      sync.Mutex
	clients map[uint64]*Client
	keys    map[string]uint64 // changed keys to broadcast, with the client that changed each (0: none)
}

func (t *trackingState) init() {
	t.table = xsync.NewMapOf[string, *trackIDs]()
	t.prefixes = map[string]*bcastPrefix{}
	t.list.Store(&[]*bcastPrefix{})
}

// trackRead returns whether route must remember the keys of a read by cl, and updates
// cl's CLIENT CACHING state for the command spec: it lasts one command (CLIENT commands keep it).
func (cl *Client) trackRead(spec *Spec) bool {
	f := cl.track.flags.Load()
	caching := cl.track.caching
	if spec.Name != "client" && spec.Name[:min(len(spec.Name), 7)] != "client|" {
		cl.track.caching = false
	}
	if f&trackOn == 0 || f&trackBcast != 0 || spec.Flags&ReadOnly == 0 {
		return false
	}
	return !(f&trackOptin != 0 && !caching) && !(f&trackOptout != 0 && caching)
}

// rememberKeys records that cl read the keys at positions pos of args.
func (e *Engine) rememberKeys(cl *Client, args [][]byte, pos []int) {
	t := &e.track
	for _, i := range pos {
		key := string(args[i])
		for {
			ids, _ := t.table.LoadOrCompute(key, func() *trackIDs { return &trackIDs{ids: map[uint64]struct{}{}} })
			ids.mu.Lock()
			if ids.dead {
				ids.mu.Unlock()
				continue
			}
			if _, had := ids.ids[cl.ID]; !had {
				ids.ids[cl.ID] = struct{}{}
				t.items.Add(1)
			}
			ids.mu.Unlock()
			break
		}
	}
	if max := t.maxKeys.Load(); max > 0 && int64(t.table.Size()) > max {
		e.evictTrackedKeys(max)
	}
}

// evictTrackedKeys invalidates keys until the table holds at most max (tracking-table-max-keys).
func (e *Engine) evictTrackedKeys(max int64) {
	over := int64(e.track.table.Size()) - max
	var victims []string
	e.track.table.Range(func(k string, _ *trackIDs) bool {
		victims = append(victims, k)
		return int64(len(victims)) < over
	})
	for _, k := range victims {
		e.invalidateKey(nil, nil, []byte(k))
	}
}

// Touch signals that key's value changed in the selected database (Redis's signalModifiedKey):
// clients watching it (watch.go) will fail their EXEC, tracking clients that read it, and BCAST
// clients of a prefix of it, are sent an invalidation. The key's shard must be held.
func (c *Ctx) Touch(key []byte) { c.touchIn(c.DB, key, false) }

// TouchIn is Touch for a key of database db (MOVE, COPY … DB).
func (c *Ctx) TouchIn(db int, key []byte) {
	c.memTouchedIn(db, key)
	c.touchIn(db, key, false)
}

// touchIn is Touch; expired says the key is being deleted by its expiry.
func (c *Ctx) touchIn(db int, key []byte, expired bool) {
	if c.E.watching.Load() != 0 {
		if c.tx != nil && c.tx.ofRun && inScript(c) { // a script run's: told when it ends
			d := c.E.data(c.E.shardOf(key))
			d.touchHeldLocked(db, key, expired)
			if len(d.watch.keys) > 0 {
				c.tx.touched = appendTouched(c.tx.touched, db, key, expired)
			}
		} else {
			c.E.touchWatchedLocked(db, key, expired)
		}
	}
	if c.E.track.clients.Load() == 0 {
		return
	}
	if c.tx != nil && c.tx.ofRun && inScript(c) { // a script run's: sent when it ends
		c.tx.inval = appendTouched(c.tx.inval, db, key, expired)
		return
	}
	c.E.invalidateKey(c, c.Client, key)
}

// invalidateKey invalidates key for every client tracking it; by is the client whose command
// changed it (nil: the server), running in c (nil outside a command).
func (e *Engine) invalidateKey(c *Ctx, by *Client, key []byte) {
	t := &e.track
	if t.pending.Load() >= 0 && len(*t.list.Load()) > 0 {
		e.rememberBroadcast(by, key)
	}
	ids, ok := t.table.Load(string(key))
	if !ok {
		return
	}
	ids.mu.Lock()
	if ids.dead {
		ids.mu.Unlock()
		return
	}
	ids.dead = true
	targets := make([]uint64, 0, len(ids.ids))
	for id := range ids.ids {
		targets = append(targets, id)
	}
	t.items.Add(-int64(len(ids.ids)))
	ids.mu.Unlock()
	t.table.Delete(string(key))
	for _, id := range targets {
		target, ok := e.clients.Load(id)
		if !ok {
			continue
		}
		f := target.track.flags.Load()
		if f&trackOn == 0 || f&trackBcast != 0 {
			continue
		}
		if target == by && c != nil {
			if f&trackNoloop != 0 {
				continue
			}
			// After the reply of the command that changed it (commit appends fx.after).
			c.fx.after = e.appendInvalidation(c.fx.after, target, key, false)
			continue
		}
		e.sendInvalidation(target, key, false)
	}
}

// sendInvalidation queues an invalidation of key (of everything when flush is set) for target,
// or for the client it redirects to.
func (e *Engine) sendInvalidation(target *Client, key []byte, flush bool) {
	to, msg := e.invalidationFor(target, key, flush, nil)
	if to != nil && len(msg) > 0 {
		to.queuePush(msg)
	}
}

// appendInvalidation appends to dst target's own invalidation when it goes to target itself;
// one for a redirect client is queued there instead.
func (e *Engine) appendInvalidation(dst []byte, target *Client, key []byte, flush bool) []byte {
	to, msg := e.invalidationFor(target, key, flush, nil)
	switch {
	case to == target:
		return append(dst, msg...)
	case to != nil:
		to.queuePush(msg)
	}
	return dst
}

// invalidationFor encodes target's invalidation message and says which client receives it (nil:
// nobody can, as Redis drops it for a RESP2 client without a subscribed redirect client).
func (e *Engine) invalidationFor(target *Client, key []byte, flush bool, keys [][]byte) (*Client, []byte) {
	to := target
	redirected := false
	if id := target.track.redirect.Load(); id != 0 {
		r, ok := e.clients.Load(id)
		if !ok {
			target.track.flags.Or(trackBrokenRedir)
			if target.shown.proto.Load() == 3 {
				msg := appendPushLen(nil, 3, 2)
				msg = resp.AppendBulkString(msg, "tracking-redir-broken")
				return target, resp.AppendInt(msg, int64(id))
			}
			return nil, nil
		}
		to, redirected = r, true
	}
	var msg []byte
	switch {
	case to.shown.proto.Load() == 3:
		msg = appendPushLen(msg, 3, 2)
		msg = resp.AppendBulkString(msg, "invalidate")
	case redirected && to.inPubSub():
		msg = resp.AppendArrayLen(msg, 3)
		msg = resp.AppendBulkString(msg, "message")
		msg = resp.AppendBulkString(msg, "__redis__:invalidate")
	default:
		return nil, nil
	}
	switch {
	case flush:
		msg = resp.AppendNull(msg, int(target.shown.proto.Load()))
	case keys != nil:
		msg = resp.AppendArrayLen(msg, len(keys))
		for _, k := range keys {
			msg = resp.AppendBulk(msg, k)
		}
	default:
		msg = resp.AppendArrayLen(msg, 1)
		msg = resp.AppendBulk(msg, key)
	}
	return to, msg
}

// queuePush appends a whole message to the client's outbox and wakes its connection.
func (cl *Client) queuePush(msg []byte) {
	b := &cl.push
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	wake := len(b.buf) == 0 // see deliver
	b.buf = append(b.buf, msg...)
	b.size.Store(int64(len(b.buf)))
	b.mu.Unlock()
	if wake && cl.Wake != nil {
		cl.Wake()
	}
}

// rememberBroadcast collects key for the BCAST prefixes it starts with.
func (e *Engine) rememberBroadcast(by *Client, key []byte) {
	var id uint64
	if by != nil {
		id = by.ID
	}
	for _, p := range *e.track.list.Load() {
		if len(key) < len(p.prefix) || string(key[:len(p.prefix)]) != string(p.prefix) {
			continue
		}
		p.mu.Lock()
		if len(p.keys) == 0 {
			e.track.pending.Add(1)
		}
		p.keys[string(key)] = id
		p.mu.Unlock()
	}
}

// broadcastPending sends the collected BCAST invalidations (the end of a batch, and the cron).
func (e *Engine) broadcastPending() {
	if e.track.pending.Load() == 0 {
		return
	}
	for _, p := range *e.track.list.Load() {
		p.mu.Lock()
		if len(p.keys) == 0 {
			p.mu.Unlock()
			continue
		}
		keys := p.keys
		p.keys = map[string]uint64{}
		e.track.pending.Add(-1)
		clients := make([]*Client, 0, len(p.clients))
		for _, cl := range p.clients {
			clients = append(clients, cl)
		}
		p.mu.Unlock()
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, cl := range clients {
			noloop := cl.track.flags.Load()&trackNoloop != 0
			var list [][]byte
			for _, k := range names {
				if !noloop || keys[k] != cl.ID {
					list = append(list, []byte(k))
				}
			}
			if len(list) == 0 {
				continue
			}
			if to, msg := e.invalidationFor(cl, nil, false, list); to != nil {
				to.queuePush(msg)
			}
		}
	}
}

// InvalidateAll sends every tracking client the null invalidation of a flush and empties the
// table (FLUSHDB, FLUSHALL); by is the client that flushed, which gets its own after its reply.
func (c *Ctx) InvalidateAll() {
	e := c.E
	if e.track.clients.Load() == 0 {
		return
	}
	e.clients.Range(func(_ uint64, cl *Client) bool {
		if cl.track.flags.Load()&trackOn == 0 {
			return true
		}
		if cl == c.Client {
			c.fx.after = e.appendInvalidation(c.fx.after, cl, nil, true)
		} else {
			e.sendInvalidation(cl, nil, true)
		}
		return true
	})
	e.track.table.Clear()
	e.track.items.Store(0)
}

// enableTracking turns tracking on for cl with the options of CLIENT TRACKING ON.
func (e *Engine) enableTracking(cl *Client, redirect uint64, opts uint32, prefixes [][]byte) {
	old := cl.track.flags.Load()
	if old&trackOn == 0 {
		e.track.clients.Add(1)
	}
	cl.track.redirect.Store(redirect)
	cl.track.flags.Store(trackOn | opts&(trackBcast|trackOptin|trackOptout|trackNoloop))
	if opts&trackBcast == 0 {
		return
	}
	if len(prefixes) == 0 {
		prefixes = [][]byte{{}}
	}
	for _, p := range prefixes {
		e.addPrefix(cl, p)
	}
}

func (e *Engine) addPrefix(cl *Client, prefix []byte) {
	if slices.ContainsFunc(cl.track.prefixes, func(p []byte) bool { return string(p) == string(prefix) }) {
		return
	}
	cl.track.prefixes = append(cl.track.prefixes, append([]byte(nil), prefix...))
	t := &e.track
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.prefixes[string(prefix)]
	if p == nil {
		p = &bcastPrefix{prefix: append([]byte(nil), prefix...), clients: map[uint64]*Client{},
			keys: map[string]uint64{}}
		t.prefixes[string(prefix)] = p
		t.publishList()
	}
	p.mu.Lock()
	p.clients[cl.ID] = cl
	p.mu.Unlock()
}

// publishList replaces the prefix list changes scan. The caller holds t.mu.
func (t *trackingState) publishList() {
	list := make([]*bcastPrefix, 0, len(t.prefixes))
	for _, p := range t.prefixes {
		list = append(list, p)
	}
	t.list.Store(&list)
}

// disableTracking turns tracking off for cl (CLIENT TRACKING OFF, RESET, a closed connection).
func (e *Engine) disableTracking(cl *Client) {
	f := cl.track.flags.Load()
	if f&trackOn == 0 {
		return
	}
	if f&trackBcast != 0 {
		t := &e.track
		t.mu.Lock()
		for _, pre := range cl.track.prefixes {
			p := t.prefixes[string(pre)]
			if p == nil {
				continue
			}
			p.mu.Lock()
			delete(p.clients, cl.ID)
			empty := len(p.clients) == 0
			if empty && len(p.keys) > 0 {
				t.pending.Add(-1)
				p.keys = map[string]uint64{}
			}
			p.mu.Unlock()
			if empty {
				delete(t.prefixes, string(pre))
			}
		}
		t.publishList()
		t.mu.Unlock()
		cl.track.prefixes = nil
	}
	cl.track.flags.Store(0)
	cl.track.redirect.Store(0)
	cl.track.caching = false
	e.track.clients.Add(-1)
}

// appendTrackingInfo appends CLIENT TRACKINGINFO's reply for cl.
func (c *Ctx) appendTrackingInfo(cl *Client) {
	f := cl.track.flags.Load()
	var flags []string
	if f&trackOn == 0 {
		flags = append(flags, "off")
	} else {
		flags = append(flags, "on")
		if f&trackBcast != 0 {
			flags = append(flags, "bcast")
		}
		if f&trackOptin != 0 {
			flags = append(flags, "optin")
			if cl.track.caching {
				flags = append(flags, "caching-yes")
			}
		}
		if f&trackOptout != 0 {
			flags = append(flags, "optout")
			if cl.track.caching {
				flags = append(flags, "caching-no")
			}
		}
		if f&trackNoloop != 0 {
			flags = append(flags, "noloop")
		}
		if f&trackBrokenRedir != 0 {
			flags = append(flags, "broken_redirect")
		}
	}
	c.MapLen(3)
	c.BulkString("flags")
	c.SetLen(len(flags))
	for _, s := range flags {
		c.BulkString(s)
	}
	c.BulkString("redirect")
	if f&trackOn == 0 {
		c.Int(-1)
	} else {
		c.Int(int64(cl.track.redirect.Load()))
	}
	c.BulkString("prefixes")
	prefixes := slices.SortedFunc(slices.Values(cl.track.prefixes), func(a, b []byte) int {
		return strings.Compare(string(a), string(b))
	}) // Redis keeps them in a radix tree
	c.ArrayLen(len(prefixes))
	for _, p := range prefixes {
		c.Bulk(p)
	}
}

// redirShown is CLIENT LIST's redir field.
func (cl *Client) redirShown() int64 {
	if cl.track.flags.Load()&trackOn == 0 {
		return -1
	}
	return int64(cl.track.redirect.Load())
}
