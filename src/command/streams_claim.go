package command

import (
	"bytes"
	"strconv"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/strs"
)

// XREADGROUP, XCLAIM and XAUTOCLAIM. Each delivery is replicated as Redis 7.0.15 propagates
// it (streamPropagateXCLAIM): XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID
// LASTID last-delivered, and a NOACK read that moved the group as XGROUP SETID key group id
// ENTRIESREAD n; the command itself is not replicated.

var xreadgroupSpec = &Spec{Name: "xreadgroup", Arity: -7, Flags: Write | Blocking | MovableKeys, Keys: xreadKeys,
	Waits: xreadWaits, Run: xreadgroup}

const (
	ErrXReadGroupNoGroup = "NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option"
	ErrXReadGroupDollar  = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."
	ErrXClaimMinIdle     = "ERR Invalid min-idle-time argument for XCLAIM"
	ErrXClaimIdle        = "ERR Invalid IDLE option argument for XCLAIM"
	ErrXClaimTime        = "ERR Invalid TIME option argument for XCLAIM"
	ErrXClaimRetry       = "ERR Invalid RETRYCOUNT option argument for XCLAIM"
	ErrXClaimOption      = "ERR Unrecognized XCLAIM option '%s'"
	ErrXAutoClaimMinIdle = "ERR Invalid min-idle-time argument for XAUTOCLAIM"
	ErrXAutoClaimCount   = "ERR COUNT must be > 0"
)

// propagateXClaim replicates n's state in group of key as Redis's streamPropagateXCLAIM.
func propagateXClaim(c *Ctx, key, group []byte, g *stream.Group, n *stream.NACK) {
	c.PropagateNothing()
	if !c.E.Feed.Active() {
		return
	}
	c.Propagate([]byte("XCLAIM"), key, group, []byte(n.Consumer.Name), []byte("0"), n.ID.Append(nil),
		[]byte("TIME"), strconv.AppendInt(nil, n.DeliveryTime, 10),
		[]byte("RETRYCOUNT"), strconv.AppendUint(nil, n.DeliveryCount, 10),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), g.LastID.Append(nil))
}

// propagateGroupID replicates a group's position as streamPropagateGroupID.
func propagateGroupID(c *Ctx, key, group []byte, g *stream.Group) {
	c.PropagateNothing()
	if !c.E.Feed.Active() {
		return
	}
	c.Propagate([]byte("XGROUP"), []byte("SETID"), key, group, g.LastID.Append(nil),
		[]byte("ENTRIESREAD"), strconv.AppendInt(nil, g.EntriesRead, 10))
}

// XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...]
func xreadgroup(c *Ctx) {
	c.PropagateNothing() // replicated by its deliveries only
	a, ok := parseXRead(c, true)
	if !ok {
		return
	}
	keys, idArgs := c.Args[a.streams:a.streams+a.n], c.Args[a.streams+a.n:]
	// A read of a few streams keeps its per-stream state on the stack.
	var idBuf [4]stream.ID
	var streamBuf [4]*stream.Stream
	var groupBuf [4]*stream.Group
	ids, streams, groups := idBuf[:0], streamBuf[:0], groupBuf[:0]
	if a.n > len(idBuf) {
		ids, streams, groups = make([]stream.ID, 0, a.n), make([]*stream.Stream, 0, a.n), make([]*stream.Group, 0, a.n)
	}
	ids, streams, groups = ids[:a.n], streams[:a.n], groups[:a.n]
	for i, key := range keys {
		var e *keyspace.Entry
		if c.Serving == nil || bytes.Equal(key, c.Serving) {
			e = c.Find(key)
		} else {
			continue
		}
		s, ok := asStream(c, e)
		if !ok {
			return
		}
		if s != nil {
			groups[i] = s.Group(a.group)
		}
		if groups[i] == nil {
			c.Errf(ErrXReadGroupNoGroup, key, a.group)
			return
		}
		streams[i] = s
		switch arg := idArgs[i]; {
		case len(arg) == 1 && arg[0] == '$':
			c.Err(ErrXReadGroupDollar)
			return
		case len(arg) == 1 && arg[0] == '>':
			ids[i] = stream.Max
		default:
			if ids[i], ok = parseStrictID(c, arg, 0); !ok {
				return
			}
		}
	}
	if xreadgroupServe(c, a, keys, streams, groups, ids) {
		return
	}
	if !a.block {
		c.NullArray()
		return
	}
	c.BlockGroup(keys, a.deadline, a.group)
}

// xreadgroupServe serves every stream it can (history, or new entries past the group's last
// delivered ID) and reports whether any was.
func xreadgroupServe(c *Ctx, a xreadArgs, keys [][]byte, streams []*stream.Stream, groups []*stream.Group, ids []stream.ID) bool {
	nowMs := c.Now / 1e6
	var serveBuf [4]bool
	serve := serveBuf[:0]
	if len(keys) > len(serveBuf) {
		serve = make([]bool, 0, len(keys))
	}
	serve = serve[:len(keys)]
	n := 0
	for i, s := range streams {
		if s == nil {
			continue
		}
		g := groups[i]
		if ids[i] != stream.Max {
			serve[i] = true
		} else if last, ok := s.LastLiveID(); ok && g.LastID.Less(last) {
			serve[i] = true
		}
		if !serve[i] {
			continue
		}
		n++
		// Only a read that serves the stream creates the consumer or marks it seen (7.0).
		cons := g.Consumer(a.consumer)
		if cons == nil {
			cons = createConsumer(c, g, keys[i], a.consumer)
			if a.noack { // no XCLAIM will create it on a replica
				c.PropagateNothing()
				if c.E.Feed.Active() {
					c.Propagate([]byte("XGROUP"), []byte("CREATECONSUMER"), keys[i], a.group, a.consumer)
				}
			}
		}
		cons.SeenTime = nowMs
	}
	if n == 0 {
		return false
	}
	if c.Proto == 3 {
		c.MapLen(n)
	} else {
		c.ArrayLen(n)
	}
	for i, s := range streams {
		if !serve[i] {
			continue
		}
		if c.Proto != 3 {
			c.ArrayLen(2)
		}
		c.Bulk(keys[i])
		g, cons := groups[i], groups[i].Consumer(a.consumer)
		if ids[i] == stream.Max {
			serveNew(c, a, keys[i], s, g, cons)
		} else {
			serveHistory(c, a, s, cons, ids[i])
		}
		c.Dirty(1)
	}
	return true
}

// serveNew replies the entries past g's last delivered ID, delivering each to cons.
func serveNew(c *Ctx, a xreadArgs, key []byte, s *stream.Stream, g *stream.Group, cons *stream.Consumer) {
	nowMs := c.Now / 1e6
	start, _ := g.LastID.Incr()
	mark := len(c.Out)
	n := 0
	moved := false
	sc := rangeScratch.Get().(*stream.Scratch)
	// Delivering as the walk goes is safe: it changes the group, never the entries walked.
	it := s.RangeWith(start, stream.Max, false, sc)
	for a.count == 0 || int64(n) < a.count {
		id, fv, ok := it.Next()
		if !ok {
			break
		}
		replyEntry(c, id, fv)
		n++
		if g.LastID.Less(id) {
			s.Advance(g, id)
			moved = true
		}
		if !a.noack {
			propagateXClaim(c, key, a.group, g, g.Deliver(id, cons, nowMs))
		}
	}
	rangeScratch.Put(sc)
	prependArrayLen(c, mark, n)
	if a.noack && moved {
		propagateGroupID(c, key, a.group, g)
	}
}

// serveHistory replies cons's pending entries past after (a deleted entry as its ID and a null),
// counting a delivery of each one still there.
func serveHistory(c *Ctx, a xreadArgs, s *stream.Stream, cons *stream.Consumer, after stream.ID) {
	nowMs := c.Now / 1e6
	start, _ := after.Incr()
	var sel []*stream.NACK
	for _, n := range cons.PEL() {
		if a.count != 0 && int64(len(sel)) >= a.count {
			break
		}
		if !n.ID.Less(start) {
			sel = append(sel, n)
		}
	}
	c.ArrayLen(len(sel))
	for _, n := range sel {
		it := s.Range(n.ID, n.ID, false)
		id, fv, ok := it.Next()
		if !ok {
			c.ArrayLen(2)
			replyID(c, n.ID)
			c.NullArray()
			continue
		}
		replyEntry(c, id, fv)
		n.DeliveryTime = nowMs
		n.DeliveryCount++ // not replicated, as in Redis 7.0.15
	}
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]
func xclaim(c *Ctx) {
	c.PropagateNothing()
	key, group := c.Args[1], c.Args[2]
	s, g, ok := claimTarget(c)
	if !ok {
		return
	}
	minIdle, ok := ParseInt(c.Args[4])
	if !ok {
		c.Err(ErrXClaimMinIdle)
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	var ids []stream.ID
	for ; j < len(c.Args); j++ {
		id, _, ok := stream.ParseID(c.Args[j], 0, true, false)
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	nowMs := c.Now / 1e6
	deliveryTime, retry := int64(-1), int64(-1)
	force, justID := false, false
	var lastID stream.ID
	for ; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch opt := c.Args[j]; {
		case strs.EqualFold(opt, "FORCE"):
			force = true
		case strs.EqualFold(opt, "JUSTID"):
			justID = true
		case more > 0 && strs.EqualFold(opt, "IDLE"):
			j++
			v, ok := ParseInt(c.Args[j])
			if !ok {
				c.Err(ErrXClaimIdle)
				return
			}
			deliveryTime = nowMs - v
		case more > 0 && strs.EqualFold(opt, "TIME"):
			j++
			v, ok := ParseInt(c.Args[j])
			if !ok {
				c.Err(ErrXClaimTime)
				return
			}
			deliveryTime = v
		case more > 0 && strs.EqualFold(opt, "RETRYCOUNT"):
			j++
			v, ok := ParseInt(c.Args[j])
			if !ok {
				c.Err(ErrXClaimRetry)
				return
			}
			retry = v
		case more > 0 && strs.EqualFold(opt, "LASTID"):
			j++
			if lastID, ok = parseStrictID(c, c.Args[j], 0); !ok {
				return
			}
		default:
			c.Errf(ErrXClaimOption, opt)
			return
		}
	}
	propagateLast := false
	if g.LastID.Less(lastID) {
		g.LastID, propagateLast = lastID, true
	}
	if deliveryTime < 0 || deliveryTime > nowMs {
		deliveryTime = nowMs
	}
	var cons *stream.Consumer
	mark := len(c.Out)
	replied := 0
	for _, id := range ids {
		n := g.Pending(id)
		if !s.Has(id) {
			if n != nil {
				propagateXClaim(c, key, group, g, n)
				propagateLast = false
				c.Dirty(1)
				g.Ack(id)
			}
			continue
		}
		if n == nil && !force {
			continue
		}
		if n != nil && minIdle != 0 && nowMs-n.DeliveryTime < minIdle {
			continue
		}
		if cons == nil {
			if cons = g.Consumer(c.Args[3]); cons == nil {
				cons = createConsumer(c, g, key, c.Args[3])
			}
		}
		if n == nil {
			n = g.AddPending(id, cons, deliveryTime, 0)
		} else {
			g.Claim(n, cons)
		}
		n.DeliveryTime = deliveryTime
		if retry >= 0 {
			n.DeliveryCount = uint64(retry)
		} else if !justID {
			n.DeliveryCount++
		}
		replyClaimed(c, s, id, justID)
		replied++
		propagateXClaim(c, key, group, g, n)
		propagateLast = false
		c.Dirty(1)
	}
	if propagateLast {
		propagateGroupID(c, key, group, g)
		c.Dirty(1)
	}
	body := append([]byte(nil), c.Out[mark:]...)
	c.Out = c.Out[:mark]
	c.ArrayLen(replied)
	c.Out = append(c.Out, body...)
}

// claimTarget finds the stream and group of XCLAIM and XAUTOCLAIM, replying NOGROUP if either is
// missing.
func claimTarget(c *Ctx) (*stream.Stream, *stream.Group, bool) {
	s, ok := asStream(c, c.Find(c.Args[1]))
	if !ok {
		return nil, nil, false
	}
	var g *stream.Group
	if s != nil {
		g = s.Group(c.Args[2])
	}
	if g == nil {
		c.Errf(ErrNoGroupXPending, c.Args[1], c.Args[2])
		return nil, nil, false
	}
	return s, g, true
}

func replyClaimed(c *Ctx, s *stream.Stream, id stream.ID, justID bool) {
	if justID {
		replyID(c, id)
		return
	}
	it := s.Range(id, id, false)
	if id, fv, ok := it.Next(); ok {
		replyEntry(c, id, fv)
	} else {
		c.Null()
	}
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
func xautoclaim(c *Ctx) {
	c.PropagateNothing()
	key, group := c.Args[1], c.Args[2]
	minIdle, ok := ParseInt(c.Args[4])
	if !ok {
		c.Err(ErrXAutoClaimMinIdle)
		return
	}
	minIdle = max(minIdle, 0)
	start, ex, ok := parseIntervalID(c, c.Args[5], 0)
	if !ok {
		return
	}
	if ex {
		if start, ok = start.Incr(); !ok {
			c.Err(ErrStreamStartID)
			return
		}
	}
	count, justID := int64(100), false
	for j := 6; j < len(c.Args); j++ {
		switch opt := c.Args[j]; {
		case strs.EqualFold(opt, "COUNT") && j+1 < len(c.Args):
			v, ok := ParseInt(c.Args[j+1])
			if !ok || v < 1 || v > (1<<63-1)/16 {
				c.Err(ErrXAutoClaimCount)
				return
			}
			count = v
			j++
		case strs.EqualFold(opt, "JUSTID"):
			justID = true
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	s, g, ok := claimTarget(c)
	if !ok {
		return
	}
	nowMs := c.Now / 1e6
	attempts := count * 10
	var cons *stream.Consumer
	var deleted []stream.ID
	mark := len(c.Out)
	replied := 0
	cursor := stream.ID{}
	pos := start
	for {
		pel := g.PEL()
		i := firstAtOrAfter(pel, pos)
		if i >= len(pel) {
			break
		}
		if attempts == 0 || count == 0 {
			cursor = pel[i].ID
			break
		}
		attempts--
		n := pel[i]
		id := n.ID
		if next, ok := id.Incr(); ok {
			pos = next
		}
		if !s.Has(id) {
			propagateXClaim(c, key, group, g, n)
			c.Dirty(1)
			g.Ack(id)
			deleted = append(deleted, id)
			count--
			continue
		}
		if minIdle != 0 && nowMs-n.DeliveryTime < minIdle {
			if id == stream.Max {
				break
			}
			continue
		}
		if cons == nil {
			if cons = g.Consumer(c.Args[3]); cons == nil {
				cons = createConsumer(c, g, key, c.Args[3])
			}
		}
		g.Claim(n, cons)
		n.DeliveryTime = nowMs
		if !justID {
			n.DeliveryCount++
		}
		replyClaimed(c, s, id, justID)
		replied++
		count--
		propagateXClaim(c, key, group, g, n)
		c.Dirty(1)
		if id == stream.Max {
			break
		}
	}
	body := append([]byte(nil), c.Out[mark:]...)
	c.Out = c.Out[:mark]
	c.ArrayLen(3)
	replyID(c, cursor)
	c.ArrayLen(replied)
	c.Out = append(c.Out, body...)
	c.ArrayLen(len(deleted))
	for _, id := range deleted {
		replyID(c, id)
	}
}

func firstAtOrAfter(pel []*stream.NACK, id stream.ID) int {
	lo, hi := 0, len(pel)
	for lo < hi {
		m := (lo + hi) / 2
		if pel[m].ID.Less(id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
