package command

import (
	"bytes"
	"math"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/strs"
)

// XREAD, blocking as the list commands do (block.go): a waiter is registered on every key and
// served, when an XADD signals one of them, with that key's entries past the ID it waits for.
// Unlike a pop nothing is taken, so every waiter of the key that can be served is. `$` is
// resolved to the key's last ID when the command blocks, written back into its arguments so that
// the run serving it reads from there.

var xreadSpec = &Spec{Name: "xread", Arity: -4, Flags: ReadOnly | Blocking | MovableKeys, Keys: xreadKeys,
	Waits: xreadWaits, Run: xread}

// xreadWaits is XREAD's and XREADGROUP's Spec.Waits: only a call with a BLOCK option may wait.
// Any argument spelled BLOCK counts (a group, consumer or key of that name too), so a call that
// may wait is never taken for one that cannot.
func xreadWaits(args [][]byte) bool {
	for _, a := range args[1:] {
		if strs.EqualFold(a, "BLOCK") {
			return true
		}
	}
	return false
}

const (
	ErrXReadUnbalanced   = "ERR Unbalanced %s list of streams: for each stream key an ID or '%c' must be specified."
	ErrXReadOnlyGroup    = "ERR The %s option is only supported by XREADGROUP. You called XREAD instead."
	ErrXReadGT           = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."
	ErrTimeoutInt        = "ERR timeout is not an integer or out of range"
	ErrXReadGroupMissing = "ERR Missing GROUP option for XREADGROUP"
)

// xreadKeys returns the keys after STREAMS, as Redis's xreadGetKeys: none when STREAMS is
// missing or its list is unbalanced.
func xreadKeys(args [][]byte, dst []int) []int {
	pos := -1
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case strs.EqualFold(a, "BLOCK"), strs.EqualFold(a, "COUNT"):
			i++
		case strs.EqualFold(a, "GROUP"):
			i += 2
		case strs.EqualFold(a, "NOACK"):
		case strs.EqualFold(a, "STREAMS"):
			pos = i
			i = len(args)
		}
	}
	if pos < 0 {
		return dst
	}
	n := len(args) - pos - 1
	if n == 0 || n%2 != 0 {
		return dst
	}
	for i := 0; i < n/2; i++ {
		dst = append(dst, pos+1+i)
	}
	return dst
}

// xreadArgs are XREAD's parsed options.
type xreadArgs struct {
	group    []byte // XREADGROUP: the group and consumer
	consumer []byte
	noack    bool
	count    int64
	block    bool
	deadline int64
	streams  int // position of the first key
	n        int // number of keys
}

func parseXRead(c *Ctx, readGroup bool) (xreadArgs, bool) {
	var a xreadArgs
	for i := 1; i < len(c.Args); i++ {
		more := len(c.Args) - i - 1
		switch o := c.Args[i]; {
		case more > 0 && strs.EqualFold(o, "BLOCK"):
			i++
			ms, ok := ParseInt(c.Args[i])
			switch {
			case !ok:
				c.Err(ErrTimeoutInt)
				return a, false
			case ms < 0:
				c.Err(ErrTimeoutNeg)
				return a, false
			case ms > 0:
				a.deadline = c.Now + min(ms, math.MaxInt64/1_000_000-c.Now/1_000_000)*1_000_000
			}
			a.block = true
		case more > 0 && strs.EqualFold(o, "COUNT"):
			i++
			n, ok := ParseInt(c.Args[i])
			if !ok {
				c.Err(ErrNotInt)
				return a, false
			}
			a.count = max(n, 0)
		case more >= 2 && strs.EqualFold(o, "GROUP"):
			if !readGroup {
				c.Errf(ErrXReadOnlyGroup, "GROUP")
				return a, false
			}
			a.group, a.consumer = c.Args[i+1], c.Args[i+2]
			i += 2
		case strs.EqualFold(o, "NOACK"):
			if !readGroup {
				c.Errf(ErrXReadOnlyGroup, "NOACK")
				return a, false
			}
			a.noack = true
		case more > 0 && strs.EqualFold(o, "STREAMS"):
			a.streams = i + 1
			if (len(c.Args)-a.streams)%2 != 0 {
				if readGroup {
					c.Errf(ErrXReadUnbalanced, "XREADGROUP", '>')
				} else {
					c.Errf(ErrXReadUnbalanced, "XREAD", '$')
				}
				return a, false
			}
			if readGroup && a.group == nil {
				c.Err(ErrXReadGroupMissing)
				return a, false
			}
			a.n = (len(c.Args) - a.streams) / 2
			return a, true
		default:
			c.Err(ErrSyntax)
			return a, false
		}
	}
	c.Err(ErrSyntax)
	return a, false
}

// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]
func xread(c *Ctx) {
	a, ok := parseXRead(c, false)
	if !ok {
		return
	}
	keys, idArgs := c.Args[a.streams:a.streams+a.n], c.Args[a.streams+a.n:]
	var idBuf [4]stream.ID
	var streamBuf [4]*stream.Stream
	ids, streams := idBuf[:0], streamBuf[:0]
	if a.n > len(idBuf) {
		ids, streams = make([]stream.ID, 0, a.n), make([]*stream.Stream, 0, a.n)
	}
	ids, streams = ids[:a.n], streams[:a.n]
	for i, key := range keys {
		var e *keyspace.Entry
		if c.Serving == nil || bytes.Equal(key, c.Serving) {
			e = c.Find(key)
		}
		s, ok := asStream(c, e)
		if !ok {
			return
		}
		streams[i] = s
		switch arg := idArgs[i]; {
		case len(arg) == 1 && arg[0] == '$':
			if s != nil {
				ids[i] = s.LastID()
			}
		case len(arg) == 1 && arg[0] == '>':
			c.Err(ErrXReadGT)
			return
		default:
			if ids[i], ok = parseStrictID(c, arg, 0); !ok {
				return
			}
		}
	}
	if xreadServe(c, keys, streams, ids, a.count) {
		return
	}
	if !a.block {
		c.NullArray()
		return
	}
	if c.Serving == nil && !c.noBlock {
		for i, arg := range idArgs { // the run that serves it must read past the IDs of now
			if len(arg) == 1 && arg[0] == '$' {
				idArgs[i] = ids[i].Append(nil)
			}
		}
	}
	c.Block(keyspace.KindStream, keys, a.deadline)
}

// xreadServe replies the entries past ids of every stream that has some, and reports whether
// any had.
func xreadServe(c *Ctx, keys [][]byte, streams []*stream.Stream, ids []stream.ID, count int64) bool {
	n := 0
	for i, s := range streams {
		if s != nil && s.Len() > 0 {
			if last, _ := s.LastLiveID(); ids[i].Less(last) {
				n++
			}
		}
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
		if s == nil || s.Len() == 0 {
			continue
		}
		if last, _ := s.LastLiveID(); !ids[i].Less(last) {
			continue
		}
		if c.Proto != 3 {
			c.ArrayLen(2)
		}
		c.Bulk(keys[i])
		start, _ := ids[i].Incr()
		replyRange(c, s, start, stream.Max, false, count)
	}
	return true
}
