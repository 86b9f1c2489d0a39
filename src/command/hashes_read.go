package command

import (
	"math"

	"github.com/hotkv/hotkv/ds/strs"
)

// HKEYS key
func hkeys(c *Ctx) { hashWalk(c, true, false) }

// HVALS key
func hvals(c *Ctx) { hashWalk(c, false, true) }

// HGETALL key: a map in RESP3, the other two flat arrays.
func hgetall(c *Ctx) { hashWalk(c, true, true) }

func hashWalk(c *Ctx, fields, values bool) {
	h, ok := readHash(c, c.Args[1])
	if !ok {
		return
	}
	n := hashLen(h)
	if fields && values {
		c.MapLen(n)
	} else {
		c.ArrayLen(n)
	}
	if h == nil {
		return
	}
	for it := h.Iter(); it.Next(); {
		if fields {
			c.Bulk(it.Field())
		}
		if values {
			c.Bulk(it.Value())
		}
	}
}

// hashReplyMax bounds an HRANDFIELD reply with a negative count, whose length the client
// chooses freely: past it the reply stops and the client is closed, as Redis closes a client
// whose output buffer passes its limit, rather than the server running out of memory.
const hashReplyMax = 1 << 30

// HRANDFIELD key [count [WITHVALUES]]
func hrandfield(c *Ctx) {
	if len(c.Args) == 2 {
		h, ok := readHash(c, c.Args[1])
		switch {
		case !ok:
		case h == nil:
			c.Null()
		default:
			h.RandomPairs(1, false, c.E.rand, func(f, _ []byte) { c.Bulk(f) })
		}
		return
	}
	n, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrNotInt)
		return
	case n == math.MinInt64:
		c.Err(ErrCountRange)
		return
	case len(c.Args) > 4 || (len(c.Args) == 4 && !strs.EqualFold(c.Args[3], "WITHVALUES")):
		c.Err(ErrSyntax)
		return
	case len(c.Args) == 4 && (n < -math.MaxInt64/2 || n > math.MaxInt64/2): // ±LONG_MAX/2
		c.Err(ErrOutOfRange)
		return
	}
	hrandfieldCount(c, n, len(c.Args) == 4)
}

// hrandfieldCount follows Redis 7.0's cases: a negative count (or 1) draws fields
// independently, a count reaching the size returns the whole hash, any other count that many
// distinct fields. With values, RESP2 replies a flat array, RESP3 an array of pairs.
func hrandfieldCount(c *Ctx, n int64, withValues bool) {
	h, ok := readHash(c, c.Args[1])
	if !ok {
		return
	}
	if h == nil || n == 0 {
		c.ArrayLen(0)
		return
	}
	pair := func(f, v []byte) {
		if withValues && c.Proto > 2 {
			c.ArrayLen(2)
		}
		c.Bulk(f)
		if withValues {
			c.Bulk(v)
		}
	}
	repeat := n < 0 || n == 1 // fields drawn independently
	count := min(n, int64(h.Len()))
	if n < 0 {
		count = -n
	}
	if withValues && c.Proto == 2 {
		c.ArrayLen(int(2 * count))
	} else {
		c.ArrayLen(int(count))
	}
	switch {
	case repeat:
		for left := count; left > 0; left -= min(left, 1024) {
			h.RandomPairs(int(min(left, 1024)), false, c.E.rand, pair)
			if len(c.Out) > hashReplyMax {
				c.Client.CloseAfterReply()
				return
			}
		}
	case count == int64(h.Len()):
		for it := h.Iter(); it.Next(); {
			pair(it.Field(), it.Value())
		}
	default:
		h.RandomPairs(int(count), true, c.E.rand, pair)
	}
}

// HSCAN key cursor [MATCH pattern] [COUNT count]
func hscan(c *Ctx) {
	cursor, ok := parseScanCursor(c.Args[2])
	if !ok {
		c.Err(ErrInvalidCursor)
		return
	}
	h, ok := readHash(c, c.Args[1])
	switch {
	case !ok:
		return
	case h == nil: // Redis checks the options only for a key that exists
		c.Out = append(c.Out, "*2\r\n$1\r\n0\r\n*0\r\n"...)
		return
	}
	opt, msg := parseMemberScanOptions(c.Args[3:])
	if msg != "" {
		c.Err(msg)
		return
	}
	start, n := len(c.Out), 0
	next := h.Scan(cursor, int(min(opt.count, math.MaxInt32)), func(f, v []byte) {
		if opt.pattern == nil || strs.Glob(opt.pattern, f, false) {
			c.Bulk(f)
			c.Bulk(v)
			n += 2
		}
	})
	c.Out = insertScanHeader(c.Out, start, next, n)
}
