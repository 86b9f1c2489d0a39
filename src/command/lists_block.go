package command

import (
	"bytes"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// Blocking list commands (see block.go for the machinery). Each first tries to serve itself like
// its non-blocking twin; when none of its keys holds a list it calls Block and replies nothing.
// When it runs on a waiter's behalf (c.Serving set, inside the shard of the key that became
// ready), it may take elements only from that key, as Redis serves a blocked client from the key
// that was pushed to.

// skipForServe reports whether a command run for a waiter must leave key alone: it is not the
// ready key, or that key holds no list any more (the waiter then stays blocked rather than being
// answered WRONGTYPE for a key it never saw).
func skipForServe(c *Ctx, key []byte) bool {
	if c.Serving == nil {
		return false
	}
	if !bytes.Equal(key, c.Serving) {
		return true
	}
	e := c.KS(key).Peek(key, c.Now)
	return e == nil || e.Kind != keyspace.KindList
}

// BLPOP key [key ...] timeout
func blpop(c *Ctx) { blockingPop(c, true) }

// BRPOP key [key ...] timeout
func brpop(c *Ctx) { blockingPop(c, false) }

func blockingPop(c *Ctx, front bool) {
	deadline, ok := c.ParseTimeout(c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	for _, key := range keys {
		if skipForServe(c, key) {
			continue
		}
		e, l, ok := writeList(c, key)
		switch {
		case !ok:
			return
		case l == nil:
			continue
		}
		var sc [24]byte
		c.ArrayLen(2)
		c.Bulk(key)
		c.Bulk(popEnd(l, front, sc[:0]))
		// Replicated as LPOP or RPOP key; Redis counts the change only when it pops at once, not
		// when it serves a blocked client.
		dirty := 1
		if c.Serving != nil {
			dirty = 0
		}
		listPopped(c, key, e, l, front, dirty)
		propagatePop(c, key, front, -1)
		return
	}
	c.Block(keyspace.KindList, keys, deadline)
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
func blmove(c *Ctx) {
	srcFront, ok1 := parseEnd(c.Args[3])
	dstFront, ok2 := parseEnd(c.Args[4])
	if !ok1 || !ok2 {
		c.Err(ErrSyntax)
		return
	}
	blockingMove(c, srcFront, dstFront, c.Args[5])
}

// BRPOPLPUSH source destination timeout
func brpoplpush(c *Ctx) { blockingMove(c, false, true, c.Args[3]) }

// blockingMove is LMOVE that waits for the source. Where blocking is not allowed it replies a
// null bulk at once, but a null array when it times out, as Redis does.
func blockingMove(c *Ctx, srcFront, dstFront bool, timeout []byte) {
	deadline, ok := c.ParseTimeout(timeout)
	if !ok {
		return
	}
	if !skipForServe(c, c.Args[1]) {
		replied, moved := listMove(c, srcFront, dstFront)
		if moved {
			propagateBlockingMove(c, srcFront, dstFront)
		}
		if replied {
			return
		}
	}
	if c.noBlock {
		c.Null()
		return
	}
	c.Block(keyspace.KindList, c.Args[1:2], deadline, c.Args[2])
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
func blmpop(c *Ctx) {
	o, msg := parseMPop(c.Args, 2)
	if msg != "" {
		c.Err(msg)
		return
	}
	deadline, ok := c.ParseTimeout(c.Args[1])
	if !ok {
		return
	}
	for _, key := range o.keys {
		if !skipForServe(c, key) && mpopFrom(c, key, o.front, o.count) {
			return
		}
	}
	c.Block(keyspace.KindList, o.keys, deadline)
}
