package command

import (
	"github.com/hotkv/hotkv/ds/list"
	"github.com/hotkv/hotkv/ds/strs"
)

// parseEnd reads LEFT or RIGHT; front is true for LEFT.
func parseEnd(b []byte) (front, ok bool) {
	switch {
	case strs.EqualFold(b, "LEFT"):
		return true, true
	case strs.EqualFold(b, "RIGHT"):
		return false, true
	}
	return false, false
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
func lmove(c *Ctx) {
	srcFront, ok1 := parseEnd(c.Args[3])
	dstFront, ok2 := parseEnd(c.Args[4])
	if !ok1 || !ok2 {
		c.Err(ErrSyntax)
		return
	}
	if replied, _ := listMove(c, srcFront, dstFront); !replied {
		c.Null()
	}
}

// RPOPLPUSH source destination
func rpoplpush(c *Ctx) {
	if replied, _ := listMove(c, false, true); !replied {
		c.Null()
	}
}

// listMove is LMOVE on c.Args[1] (source) and c.Args[2] (destination, possibly the same key). It
// replies the moved element, or WRONGTYPE for either key (checked before anything moves), and
// returns replied true; it returns false without replying when the source does not exist. moved
// tells whether an element moved.
//
// Its events are Redis's: the push on the destination, then the pop on the source (and "del" when
// that emptied it). Redis counts one change, except when the move serves a blocked BLMOVE or
// BRPOPLPUSH, which it does not count at all.
func listMove(c *Ctx, srcFront, dstFront bool) (replied, moved bool) {
	src, dst := c.Args[1], c.Args[2]
	se, sl, ok := writeList(c, src)
	switch {
	case !ok:
		return true, false
	case sl == nil:
		return false, false
	}
	_, dl, ok := writeList(c, dst)
	if !ok {
		return true, false
	}
	if dl == nil {
		dl = createList(c, dst)
	}
	var buf [512]byte // a rotation copies the element: elements this size stay off the heap
	v, _ := list.Move(sl, dl, srcFront, dstFront, buf[:0])
	c.Bulk(v)
	c.Changed(NotifyList, pushEvent(dstFront), dst)
	c.Notify(NotifyList, popEvent(srcFront), src)
	dropIfEmpty(c, src, se, sl)
	c.Touch(src)
	if c.Serving == nil {
		c.Dirty(1)
	}
	return true, true
}

// endWords are the LEFT|RIGHT arguments Redis writes when it replicates a served BLMOVE.
var endWords = [2][]byte{[]byte("right"), []byte("left")}

func endWord(front bool) []byte {
	if front {
		return endWords[1]
	}
	return endWords[0]
}

// propagateBlockingMove replicates a BLMOVE or BRPOPLPUSH that moved an element as LMOVE or
// RPOPLPUSH: with LEFT|RIGHT as the client typed them when it was served at once (Redis rewrites
// the command's own arguments), with Redis's lowercase words when it served a blocked client
// (Redis builds the command).
func propagateBlockingMove(c *Ctx, srcFront, dstFront bool) {
	src, dst := c.Args[1], c.Args[2]
	if len(c.Args) == 4 { // BRPOPLPUSH source destination timeout
		c.Propagate([]byte("RPOPLPUSH"), src, dst)
		return
	}
	from, to := c.Args[3], c.Args[4]
	if c.Serving != nil {
		from, to = endWord(srcFront), endWord(dstFront)
	}
	c.Propagate([]byte("LMOVE"), src, dst, from, to)
}

// mpopArgs are LMPOP's and BLMPOP's arguments after the timeout.
type mpopArgs struct {
	keys  [][]byte
	front bool
	count int64
}

// parseMPop reads numkeys key [key ...] LEFT|RIGHT [COUNT count] from args[at:], in Redis's
// order of checks.
func parseMPop(args [][]byte, at int) (mpopArgs, string) {
	var o mpopArgs
	n, ok := ParseInt(args[at])
	switch {
	case !ok || n <= 0:
		return o, ErrNumkeys
	case n > int64(len(args)-at-2):
		return o, ErrSyntax
	}
	end := at + 1 + int(n)
	o.keys = args[at+1 : end]
	if o.front, ok = parseEnd(args[end]); !ok {
		return o, ErrSyntax
	}
	o.count = -1
	for i := end + 1; i < len(args); i++ {
		if o.count != -1 || !strs.EqualFold(args[i], "COUNT") || i+1 == len(args) {
			return o, ErrSyntax
		}
		i++
		if o.count, ok = ParseInt(args[i]); !ok || o.count <= 0 {
			return o, ErrCountPositive
		}
	}
	o.count = max(o.count, 1)
	return o, ""
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]
func lmpop(c *Ctx) {
	o, msg := parseMPop(c.Args, 1)
	if msg != "" {
		c.Err(msg)
		return
	}
	for _, key := range o.keys {
		if mpopFrom(c, key, o.front, o.count) {
			return
		}
	}
	c.NullArray()
}

// mpopFrom pops up to count elements of key's list and replies [key, [element ...]], or replies
// WRONGTYPE; it returns false without replying when key does not exist. LMPOP and BLMPOP, served
// at once or after waiting, count every element and are replicated as LPOP or RPOP key n.
func mpopFrom(c *Ctx, key []byte, front bool, count int64) bool {
	e, l, ok := writeList(c, key)
	switch {
	case !ok:
		return true
	case l == nil:
		return false
	}
	n := int(min(count, int64(l.Len())))
	c.ArrayLen(2)
	c.Bulk(key)
	c.ArrayLen(n)
	var sc [24]byte
	for range n {
		c.Bulk(popEnd(l, front, sc[:0]))
	}
	listPopped(c, key, e, l, front, n)
	propagatePop(c, key, front, n)
	return true
}
