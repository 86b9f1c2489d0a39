package command

import (
	"strconv"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
)

// The lists family. Values are *list.List in the Entry (keyspace.Obj) (ds/list: a quicklist-like deque of packed
// nodes). A command that empties a list deletes its key; one that creates a list key signals it
// ready, so clients blocked on it (lists_block.go) are served before any later command runs.
var listCommands = []*Spec{
	{Name: "lpush", Arity: -3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: lpush},
	{Name: "rpush", Arity: -3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: rpush},
	{Name: "lpushx", Arity: -3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: lpushx},
	{Name: "rpushx", Arity: -3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: rpushx},
	{Name: "lpop", Arity: -2, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: lpop},
	{Name: "rpop", Arity: -2, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: rpop},
	{Name: "llen", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: llen},
	{Name: "lindex", Arity: 3, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: lindex},
	{Name: "lset", Arity: 4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: lset},
	{Name: "lrange", Arity: 4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: lrange},
	{Name: "linsert", Arity: 5, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: linsert},
	{Name: "lrem", Arity: 4, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: lrem},
	{Name: "ltrim", Arity: 4, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: ltrim},
	{Name: "lpos", Arity: -3, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: lpos},
	{Name: "lmove", Arity: 5, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Run: lmove},
	{Name: "rpoplpush", Arity: 3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Run: rpoplpush},
	{Name: "lmpop", Arity: -4, Flags: Write | MovableKeys, NumKeys: 1, Run: lmpop},
	{Name: "blpop", Arity: -3, Flags: Write | NoScript | Blocking, FirstKey: 1, LastKey: -2, Step: 1, Run: blpop},
	{Name: "brpop", Arity: -3, Flags: Write | NoScript | Blocking, FirstKey: 1, LastKey: -2, Step: 1, Run: brpop},
	{Name: "blmove", Arity: 6, Flags: Write | DenyOOM | NoScript | Blocking, FirstKey: 1, LastKey: 2, Step: 1, Run: blmove},
	{Name: "brpoplpush", Arity: 4, Flags: Write | DenyOOM | NoScript | Blocking, FirstKey: 1, LastKey: 2, Step: 1, Run: brpoplpush},
	{Name: "blmpop", Arity: -5, Flags: Write | Blocking | MovableKeys, NumKeys: 2, Run: blmpop},
}

// asList returns e's list: nil (and ok) for a missing key, ok false with WRONGTYPE replied for a
// key of another type.
func asList(c *Ctx, e *keyspace.Entry) (l *list.List, ok bool) {
	switch {
	case e == nil:
		return nil, true
	case e.Kind != keyspace.KindList:
		c.WrongType()
		return nil, false
	}
	return keyspace.Obj[list.List](e), true
}

// readList looks key up for a read command (counting a keyspace hit or miss, as Redis's
// lookupKeyRead does); see asList.
func readList(c *Ctx, key []byte) (*list.List, bool) { return asList(c, lookupForRead(c, key)) }

// writeList looks key up for a write command; see asList.
func writeList(c *Ctx, key []byte) (*keyspace.Entry, *list.List, bool) {
	e := c.Find(key)
	l, ok := asList(c, e)
	return e, l, ok
}

// createList adds key, which the caller found missing, as an empty list with the configured node
// size, and wakes the clients blocked on it once the command is done.
func createList(c *Ctx, key []byte) *list.List {
	l := list.New(int(c.E.Settings().ListMaxListpackSize))
	e := c.KS(key).Add(key)
	keyspace.SetObj(e, keyspace.KindList, l)
	e.Access = uint32(c.Now / 1e9)
	c.SignalReady(key)
	return l
}

// dropIfEmpty deletes key's entry e when its list l has no element left, as Redis never keeps an
// empty list, and raises the "del" event.
func dropIfEmpty(c *Ctx, key []byte, e *keyspace.Entry, l *list.List) {
	if l.Len() == 0 {
		c.KS(key).Remove(e)
		c.Notify(NotifyGeneric, "del", key)
	}
}

// popEvent is the event of taking elements from the head (front) or the tail.
func popEvent(front bool) string {
	if front {
		return "lpop"
	}
	return "rpop"
}

// pushEvent is the event of adding elements at the head (front) or the tail.
func pushEvent(front bool) string {
	if front {
		return "lpush"
	}
	return "rpush"
}

// listPopped reports elements taken from the head (front) or the tail of key's list l (entry e),
// as Redis's listElementsRemoved: the lpop or rpop event, then the key deleted when l is empty,
// and dirty changes (the number of elements, except for a served BLPOP, which Redis does not
// count).
func listPopped(c *Ctx, key []byte, e *keyspace.Entry, l *list.List, front bool, dirty int) {
	c.Notify(NotifyList, popEvent(front), key)
	dropIfEmpty(c, key, e, l)
	c.Touch(key)
	c.Dirty(dirty)
}

// propagatePop replicates a pop of n elements (n < 0: without a count) as Redis rewrites the
// blocking and multi-key pops: LPOP or RPOP key [n].
func propagatePop(c *Ctx, key []byte, front bool, n int) {
	if !c.E.Feed.Active() {
		c.PropagateNothing() // nothing is built: the form only matters to a feed reader
		return
	}
	name := []byte("RPOP")
	if front {
		name = []byte("LPOP")
	}
	if n < 0 {
		c.Propagate(name, key)
		return
	}
	var nb [20]byte
	c.Propagate(name, key, strconv.AppendInt(nb[:0], int64(n), 10))
}

// popEnd removes an element from the head (front) or the tail; sc holds integer elements.
func popEnd(l *list.List, front bool, sc []byte) []byte {
	var v []byte
	if front {
		v, _ = l.PopFront(sc)
	} else {
		v, _ = l.PopBack(sc)
	}
	return v
}

// LPUSH key element [element ...]
func lpush(c *Ctx) { pushGeneric(c, true, false) }

// RPUSH key element [element ...]
func rpush(c *Ctx) { pushGeneric(c, false, false) }

// LPUSHX key element [element ...]
func lpushx(c *Ctx) { pushGeneric(c, true, true) }

// RPUSHX key element [element ...]
func rpushx(c *Ctx) { pushGeneric(c, false, true) }

// pushGeneric pushes every element in turn at the head (front) or the tail, creating the list
// unless onlyExisting (the X variants reply 0 for a missing key).
func pushGeneric(c *Ctx, front, onlyExisting bool) {
	key := c.Args[1]
	_, l, ok := writeList(c, key)
	switch {
	case !ok:
		return
	case l == nil && onlyExisting:
		c.Int(0)
		return
	case l == nil:
		l = createList(c, key)
	}
	for _, v := range c.Args[2:] {
		if front {
			l.PushFront(v)
		} else {
			l.PushBack(v)
		}
	}
	c.Int(int64(l.Len()))
	c.Dirty(len(c.Args) - 2)
	c.Changed(NotifyList, pushEvent(front), key)
}

// LPOP key [count]
func lpop(c *Ctx) { popGeneric(c, true) }

// RPOP key [count]
func rpop(c *Ctx) { popGeneric(c, false) }

// popGeneric pops one element (a bulk reply) or, with a count, up to count elements (an array;
// a missing key is a null array rather than a null bulk).
func popGeneric(c *Ctx, front bool) {
	if len(c.Args) > 3 {
		c.ArityErr()
		return
	}
	withCount, count := len(c.Args) == 3, int64(0)
	if withCount {
		var ok bool
		if count, ok = ParseInt(c.Args[2]); !ok || count < 0 {
			c.Err(ErrPositive)
			return
		}
	}
	key := c.Args[1]
	e, l, ok := writeList(c, key)
	switch {
	case !ok:
		return
	case l == nil && withCount:
		c.NullArray()
		return
	case l == nil:
		c.Null()
		return
	}
	var sc [24]byte
	if !withCount {
		c.Bulk(popEnd(l, front, sc[:0]))
		listPopped(c, key, e, l, front, 1)
		return
	}
	n := int(min(count, int64(l.Len())))
	c.ArrayLen(n)
	if n == 0 { // COUNT 0: nothing taken, nothing to report
		return
	}
	for range n {
		c.Bulk(popEnd(l, front, sc[:0]))
	}
	listPopped(c, key, e, l, front, n)
}

// LLEN key
func llen(c *Ctx) {
	l, ok := readList(c, c.Args[1])
	switch {
	case !ok:
	case l == nil:
		c.Int(0)
	default:
		c.Int(int64(l.Len()))
	}
}

// listIndex turns a LINDEX/LSET index (negative from the tail) into a position, or -1 when it
// is out of range.
func listIndex(i int64, n int) int {
	if i < 0 {
		i += int64(n)
	}
	if i < 0 || i >= int64(n) {
		return -1
	}
	return int(i)
}

// LINDEX key index
func lindex(c *Ctx) {
	l, ok := readList(c, c.Args[1])
	switch {
	case !ok:
		return
	case l == nil:
		c.Null()
		return
	}
	i, ok := ParseInt(c.Args[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if i := listIndex(i, l.Len()); i >= 0 {
		var sc [24]byte
		c.Bulk(l.Index(i, sc[:0]))
		return
	}
	c.Null()
}

// LSET key index element
func lset(c *Ctx) {
	_, l, ok := writeList(c, c.Args[1])
	switch {
	case !ok:
		return
	case l == nil:
		c.Err(ErrNoSuchKey)
		return
	}
	i, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrNotInt)
	case listIndex(i, l.Len()) < 0:
		c.Err(ErrListIndexRange)
	default:
		l.Set(listIndex(i, l.Len()), c.Args[3])
		c.OK()
		c.Changed(NotifyList, "lset", c.Args[1])
		c.Dirty(1)
	}
}

// listRange turns LRANGE/LTRIM's start and stop (inclusive, negative from the tail) into a first
// position and a length, as Redis clamps them; n is 0 for an empty range.
func listRange(start, stop int64, length int) (first, n int) {
	size := int64(length)
	if start < 0 {
		start += size
	}
	if stop < 0 {
		stop += size
	}
	start = max(start, 0)
	if start > stop || start >= size {
		return 0, 0
	}
	stop = min(stop, size-1)
	return int(start), int(stop - start + 1)
}

// parseRange parses the start and stop arguments at c.Args[2:4], replying the error if any.
func parseRange(c *Ctx) (start, stop int64, ok bool) {
	start, ok1 := ParseInt(c.Args[2])
	stop, ok2 := ParseInt(c.Args[3])
	if !ok1 || !ok2 {
		c.Err(ErrNotInt)
		return 0, 0, false
	}
	return start, stop, true
}

// LRANGE key start stop
func lrange(c *Ctx) {
	start, stop, ok := parseRange(c)
	if !ok {
		return
	}
	l, ok := readList(c, c.Args[1])
	switch {
	case !ok:
		return
	case l == nil:
		c.ArrayLen(0)
		return
	}
	first, n := listRange(start, stop, l.Len())
	c.ArrayLen(n)
	if n == 0 {
		return
	}
	it := l.IterAt(first, false)
	for range n {
		v, _ := it.Next()
		c.Bulk(v)
	}
}
