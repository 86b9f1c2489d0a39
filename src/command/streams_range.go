package command

import (
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/strs"
)

// parseIntervalID parses a range bound as streamParseIntervalIDOrReply: "(id" excludes id
// (parsed strictly), otherwise "-", "+" or an ID, missing sequences taken as missingSeq.
func parseIntervalID(c *Ctx, b []byte, missingSeq uint64) (id stream.ID, exclusive, ok bool) {
	if len(b) > 1 && b[0] == '(' {
		id, _, ok = stream.ParseID(b[1:], missingSeq, true, false)
		exclusive = true
	} else {
		id, _, ok = stream.ParseID(b, missingSeq, false, false)
	}
	if !ok {
		c.Err(ErrStreamID)
	}
	return id, exclusive, ok
}

// XRANGE key start end [COUNT count]
func xrange(c *Ctx) { xrangeGeneric(c, false) }

// XREVRANGE key end start [COUNT count]
func xrevrange(c *Ctx) { xrangeGeneric(c, true) }

// parseIDRange parses an XRANGE-like pair of bounds, exclusive "(" ones included (XRANGE,
// XREVRANGE, XPENDING), with Redis's errors for an exclusive bound past the last ID.
func parseIDRange(c *Ctx, a, b []byte) (start, end stream.ID, ok bool) {
	start, ex, ok := parseIntervalID(c, a, 0)
	if !ok {
		return
	}
	if ex {
		if start, ok = start.Incr(); !ok {
			c.Err(ErrStreamStartID)
			return
		}
	}
	end, ex, ok = parseIntervalID(c, b, ^uint64(0))
	if !ok {
		return
	}
	if ex {
		if end, ok = end.Decr(); !ok {
			c.Err(ErrStreamEndID)
			return
		}
	}
	return start, end, true
}

func xrangeGeneric(c *Ctx, rev bool) {
	startArg, endArg := c.Args[2], c.Args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, end, ok := parseIDRange(c, startArg, endArg)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(c.Args); j++ {
		if !strs.EqualFold(c.Args[j], "COUNT") || j+1 >= len(c.Args) {
			c.Err(ErrSyntax)
			return
		}
		n, ok := ParseInt(c.Args[j+1])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		count = max(n, 0)
		j++
	}
	s, ok := asStream(c, lookupForRead(c, c.Args[1]))
	switch {
	case !ok:
	case s == nil:
		c.ArrayLen(0)
	case count == 0:
		c.NullArray()
	default:
		replyRange(c, s, start, end, rev, max(count, 0))
	}
}

// XINFO STREAM key [FULL [COUNT count]]
func xinfoStream(c *Ctx) {
	full, count := false, int64(10)
	if len(c.Args) > 3 {
		if !strs.EqualFold(c.Args[3], "FULL") {
			c.Errf(ErrXInfoSyntax, c.Args[1])
			return
		}
		full = true
		switch {
		case len(c.Args) == 6 && strs.EqualFold(c.Args[4], "COUNT"):
			n, ok := ParseInt(c.Args[5])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			count = max(n, 0)
		case len(c.Args) > 4:
			c.Errf(ErrXInfoSyntax, c.Args[1])
			return
		}
	}
	s, ok := asStream(c, lookupForRead(c, c.Args[2]))
	switch {
	case !ok:
		return
	case s == nil:
		c.Err(ErrNoSuchKey)
		return
	}
	fields := 10
	if full {
		fields = 9
	}
	c.MapLen(fields)
	c.BulkString("length")
	c.Int(int64(s.Len()))
	c.BulkString("radix-tree-keys")
	c.Int(int64(s.Blocks()))
	c.BulkString("radix-tree-nodes")
	c.Int(int64(s.RaxNodes()))
	c.BulkString("last-generated-id")
	replyID(c, s.LastID())
	c.BulkString("max-deleted-entry-id")
	replyID(c, s.MaxDeletedID())
	c.BulkString("entries-added")
	c.Int(int64(s.EntriesAdded()))
	c.BulkString("recorded-first-entry-id")
	replyID(c, s.FirstID())
	if full {
		c.BulkString("entries")
		replyRange(c, s, stream.ID{}, stream.Max, false, count)
		c.BulkString("groups")
		replyFullGroups(c, s, count)
		return
	}
	c.BulkString("groups")
	c.Int(int64(len(s.Groups())))
	c.BulkString("first-entry")
	if id, fv, ok := s.FirstEntry(); ok {
		replyEntry(c, id, fv)
	} else {
		c.Null()
	}
	c.BulkString("last-entry")
	if id, fv, ok := s.LastEntry(); ok {
		replyEntry(c, id, fv)
	} else {
		c.Null()
	}
}

// replyFullGroups is XINFO STREAM FULL's groups: each with its PEL and consumers, at most count
// pending entries each (0: all).
func replyFullGroups(c *Ctx, s *stream.Stream, count int64) {
	limit := func(n int) int {
		if count > 0 && int64(n) > count {
			return int(count)
		}
		return n
	}
	c.ArrayLen(len(s.Groups()))
	for _, g := range s.Groups() {
		c.MapLen(7)
		c.BulkString("name")
		c.BulkString(g.Name)
		c.BulkString("last-delivered-id")
		replyID(c, g.LastID)
		replyGroupCounters(c, s, g)
		c.BulkString("pel-count")
		c.Int(int64(len(g.PEL())))
		c.BulkString("pending")
		pel := g.PEL()[:limit(len(g.PEL()))]
		c.ArrayLen(len(pel))
		for _, n := range pel {
			c.ArrayLen(4)
			replyID(c, n.ID)
			c.BulkString(n.Consumer.Name)
			c.Int(n.DeliveryTime)
			c.Int(int64(n.DeliveryCount))
		}
		c.BulkString("consumers")
		c.ArrayLen(len(g.Consumers()))
		for _, cons := range g.Consumers() {
			c.MapLen(4)
			c.BulkString("name")
			c.BulkString(cons.Name)
			c.BulkString("seen-time")
			c.Int(cons.SeenTime)
			c.BulkString("pel-count")
			c.Int(int64(cons.Pending()))
			c.BulkString("pending")
			cp := cons.PEL()[:limit(cons.Pending())]
			c.ArrayLen(len(cp))
			for _, n := range cp {
				c.ArrayLen(3)
				replyID(c, n.ID)
				c.Int(n.DeliveryTime)
				c.Int(int64(n.DeliveryCount))
			}
		}
	}
}
