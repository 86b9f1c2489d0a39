package command

import (
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/net/resp"
)

// readSets looks up keys for reading into dst; a missing key is nil. It replies WRONGTYPE and
// returns ok false if any key holds another type, as Redis checks every key before it computes.
func readSets(c *Ctx, keys [][]byte, dst []*dset.Set) (sets []*dset.Set, missing, ok bool) {
	for _, k := range keys {
		s, ok := readSet(c, k)
		if !ok {
			return nil, false, false
		}
		missing = missing || s == nil
		dst = append(dst, s)
	}
	return dst, missing, true
}

// SINTER key [key ...] and SMEMBERS key: the members come in the smallest set's order.
func sinter(c *Ctx) {
	var buf [8]*dset.Set
	sets, missing, ok := readSets(c, c.Args[1:], buf[:0])
	switch {
	case !ok:
	case missing:
		c.SetLen(0)
	default:
		start, n := len(c.Out), 0
		dset.Inter(sets, func(v int64) bool { c.BulkInt(v); n++; return true },
			func(m []byte) bool { c.Bulk(m); n++; return true })
		c.Out = resp.InsertSetLen(c.Out, start, c.Proto, n)
	}
}

// SINTERSTORE destination key [key ...]
func sinterstore(c *Ctx) {
	var buf [8]*dset.Set
	sets, missing, ok := readSets(c, c.Args[2:], buf[:0])
	switch {
	case !ok:
	case missing:
		storeSet(c, c.Args[1], nil, "sinterstore")
	default:
		lim := setLimits(c)
		storeSet(c, c.Args[1], dset.InterSet(sets, &lim), "sinterstore")
	}
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
func sintercard(c *Ctx) {
	numkeys, ok := ParseInt(c.Args[1])
	if !ok || numkeys < 1 {
		c.Err(ErrNumkeys)
		return
	}
	if numkeys > int64(len(c.Args)-2) {
		c.Err(ErrSetNumkeysArgs)
		return
	}
	keys := c.Args[2 : 2+numkeys]
	limit, msg := parseSintercardLimit(c.Args[2+numkeys:])
	if msg != "" {
		c.Err(msg)
		return
	}
	var buf [8]*dset.Set
	sets, missing, ok := readSets(c, keys, buf[:0])
	if !ok {
		return
	}
	n := int64(0)
	if !missing {
		n = dset.InterCard(sets, limit)
	}
	c.Int(n)
}

// parseSintercardLimit parses SINTERCARD's options; limit 0 is no limit.
func parseSintercardLimit(opts [][]byte) (limit int64, msg string) {
	for i := 0; i < len(opts); i++ {
		if !strs.EqualFold(opts[i], "LIMIT") || i+1 == len(opts) {
			return 0, ErrSyntax
		}
		i++
		n, ok := ParseInt(opts[i])
		if !ok || n < 0 {
			return 0, ErrLimitNegative
		}
		limit = n
	}
	return limit, ""
}

// unionDiff is SUNION, SDIFF and their STORE forms: compute the result set from keys and store
// it in dst, raising event, or reply it when dst is nil.
func unionDiff(c *Ctx, dst []byte, keys [][]byte, op func([]*dset.Set, *dset.Limits) *dset.Set, event string) {
	var buf [8]*dset.Set
	sets, _, ok := readSets(c, keys, buf[:0])
	if !ok {
		return
	}
	lim := setLimits(c)
	out := op(sets, &lim)
	if dst != nil {
		storeSet(c, dst, out, event)
		return
	}
	replySet(c, out)
}

// SUNION key [key ...]
func sunion(c *Ctx) { unionDiff(c, nil, c.Args[1:], dset.Union, "") }

// SUNIONSTORE destination key [key ...]
func sunionstore(c *Ctx) { unionDiff(c, c.Args[1], c.Args[2:], dset.Union, "sunionstore") }

// SDIFF key [key ...]
func sdiff(c *Ctx) { unionDiff(c, nil, c.Args[1:], dset.Diff, "") }

// SDIFFSTORE destination key [key ...]
func sdiffstore(c *Ctx) { unionDiff(c, c.Args[1], c.Args[2:], dset.Diff, "sdiffstore") }
