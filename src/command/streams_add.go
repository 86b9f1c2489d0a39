package command

import (
	"strconv"

	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/strs"
)

// addTrimArgs are XADD's and XTRIM's options, as Redis 7.0's streamAddTrimArgs.
type addTrimArgs struct {
	trim       stream.Trim
	hasTrim    bool
	trimArgIdx int // position of the MAXLEN count or MINID id (the `~` or `=` is before it)
	limitGiven bool
	noMkStream bool
	id         stream.ID
	idGiven    bool
	seqGiven   bool
	idIdx      int // XADD: position of the ID argument
}

// parseAddTrim parses the options from argv[2] as streamParseAddOrTrimArgsOrReply: for XADD up
// to the ID (returning its position), for XTRIM to the end. It replies the first error and
// returns -1.
func parseAddTrim(c *Ctx, xadd bool) (addTrimArgs, int) {
	var a addTrimArgs
	argv := c.Args
	i := 2
	for ; i < len(argv); i++ {
		more := len(argv) - 1 - i
		opt := argv[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			a.idIdx = i
			return a.check(c, xadd, i)
		case more > 0 && (strs.EqualFold(opt, "MAXLEN") || strs.EqualFold(opt, "MINID")):
			if a.hasTrim {
				c.Err(ErrStreamTrimBoth)
				return a, -1
			}
			minid := strs.EqualFold(opt, "MINID")
			a.trim.Approx = false
			if next := argv[i+1]; more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				a.trim.Approx = next[0] == '~'
				i++
			}
			if minid {
				id, ok := parseStrictID(c, argv[i+1], 0)
				if !ok {
					return a, -1
				}
				a.trim.ByMinID, a.trim.MinID = true, id
			} else {
				n, ok := ParseInt(argv[i+1])
				switch {
				case !ok:
					c.Err(ErrNotInt)
					return a, -1
				case n < 0:
					c.Err(ErrStreamMaxLenNeg)
					return a, -1
				}
				a.trim.MaxLen = uint64(n)
			}
			i++
			a.hasTrim, a.trimArgIdx = true, i
		case more > 0 && strs.EqualFold(opt, "LIMIT"):
			n, ok := ParseInt(argv[i+1])
			switch {
			case !ok:
				c.Err(ErrNotInt)
				return a, -1
			case n < 0:
				c.Err(ErrStreamLimitNeg)
				return a, -1
			}
			a.trim.Limit, a.limitGiven = n, true
			i++
		case xadd && strs.EqualFold(opt, "NOMKSTREAM"):
			a.noMkStream = true
		case xadd:
			id, seqGiven, ok := stream.ParseID(opt, 0, true, true)
			if !ok {
				c.Err(ErrStreamID)
				return a, -1
			}
			a.id, a.seqGiven, a.idGiven, a.idIdx = id, seqGiven, true, i
			return a.check(c, xadd, i)
		default:
			c.Err(ErrSyntax)
			return a, -1
		}
	}
	return a.check(c, xadd, i)
}

// check applies the checks after the option loop and the default LIMIT of a `~` trim.
func (a addTrimArgs) check(c *Ctx, xadd bool, i int) (addTrimArgs, int) {
	switch {
	case a.trim.Limit != 0 && !a.hasTrim:
		c.Err(ErrStreamLimitNoTrim)
		return a, -1
	case !xadd && !a.hasTrim:
		c.Err(ErrStreamXTrimNoTrim)
		return a, -1
	case a.limitGiven && !a.trim.Approx:
		c.Err(ErrStreamLimitNoApprx)
		return a, -1
	case !a.limitGiven && a.trim.Approx:
		a.trim.Limit = 100 * streamLimits(c).MaxEntries
		if a.trim.Limit <= 0 || a.trim.Limit > 1_000_000 {
			a.trim.Limit = 10_000
		}
	case !a.trim.Approx:
		a.trim.Limit = 0
	}
	return a, i
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]
func xadd(c *Ctx) {
	a, idx := parseAddTrim(c, true)
	if idx < 0 {
		return
	}
	if n := len(c.Args) - idx - 1; n < 2 || n%2 == 1 {
		c.ArityErr()
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		c.Err(ErrStreamIDZero)
		return
	}
	key := c.Args[1]
	s, ok := asStream(c, c.Find(key))
	if !ok {
		return
	}
	if s == nil {
		if a.noMkStream {
			c.Null()
			return
		}
		s = createStream(c, key)
	}
	if s.LastID() == stream.Max {
		c.Err(ErrStreamExhausted)
		return
	}
	id, err := s.NewID(a.id, !a.idGiven, a.seqGiven, uint64(c.Now/1e6))
	if err == nil {
		err = s.Add(id, c.Args[idx+1:], streamLimits(c))
	}
	switch err {
	case nil:
	case stream.ErrTooLarge:
		c.Err(ErrStreamTooLarge)
		return
	default:
		c.Err(ErrStreamIDSmall)
		return
	}
	replyID(c, id)
	c.Changed(NotifyStream, "xadd", key)
	c.Dirty(1)
	rewrite := !a.idGiven || !a.seqGiven
	if a.hasTrim {
		if s.Trim(a.trim) > 0 {
			c.Notify(NotifyStream, "xtrim", key)
		}
		rewrite = rewrite || a.trim.Approx
	}
	if rewrite {
		propagateAddTrim(c, s, a, id, true)
	}
	c.SignalReady(key)
}

// propagateAddTrim replicates XADD or XTRIM with Redis's rewrites: the generated ID in place of
// * or ms-*, and for a `~` trim `=` with the threshold the trim left.
func propagateAddTrim(c *Ctx, s *stream.Stream, a addTrimArgs, id stream.ID, xadd bool) {
	if !c.E.Feed.Active() {
		c.PropagateNothing()
		return
	}
	args := append([][]byte(nil), c.Args...)
	if a.hasTrim && a.trim.Approx {
		args[a.trimArgIdx-1] = []byte("=")
		if a.trim.ByMinID {
			args[a.trimArgIdx] = s.FirstIDAny().Append(nil)
		} else {
			args[a.trimArgIdx] = strconv.AppendUint(nil, s.Len(), 10)
		}
	}
	if xadd && (!a.idGiven || !a.seqGiven) {
		args[a.idIdx] = id.Append(nil)
	}
	c.Propagate(args...)
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
func xtrim(c *Ctx) {
	a, idx := parseAddTrim(c, false)
	if idx < 0 {
		return
	}
	key := c.Args[1]
	e := c.Find(key)
	s, ok := asStream(c, e)
	switch {
	case !ok:
		return
	case s == nil:
		c.Int(0)
		return
	}
	n := s.Trim(a.trim)
	if n > 0 {
		c.Changed(NotifyStream, "xtrim", key)
		c.Dirty(int(n))
		if a.trim.Approx {
			propagateAddTrim(c, s, a, stream.ID{}, false)
		}
	}
	c.Int(n)
}

// XDEL key id [id ...]
func xdel(c *Ctx) {
	key := c.Args[1]
	s, ok := asStream(c, c.Find(key))
	switch {
	case !ok:
		return
	case s == nil:
		c.Int(0)
		return
	}
	ids := make([]stream.ID, 0, len(c.Args)-2)
	for _, b := range c.Args[2:] {
		id, ok := parseStrictID(c, b, 0)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	n := 0
	for _, id := range ids {
		if s.Delete(id) {
			n++
		}
	}
	if n > 0 {
		c.Changed(NotifyStream, "xdel", key)
		c.Dirty(n)
	}
	c.Int(int64(n))
}

// XLEN key
func xlen(c *Ctx) {
	s, ok := asStream(c, lookupForRead(c, c.Args[1]))
	switch {
	case !ok:
	case s == nil:
		c.Int(0)
	default:
		c.Int(int64(s.Len()))
	}
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
func xsetid(c *Ctx) {
	id, ok := parseStrictID(c, c.Args[2], 0)
	if !ok {
		return
	}
	var added *uint64
	var maxDel *stream.ID
	for i := 3; i < len(c.Args); i += 2 {
		more := len(c.Args) - 1 - i
		switch opt := c.Args[i]; {
		case more > 0 && strs.EqualFold(opt, "ENTRIESADDED"):
			n, ok := ParseInt(c.Args[i+1])
			switch {
			case !ok:
				c.Err(ErrNotInt)
				return
			case n < 0:
				c.Err(ErrStreamEntriesNeg)
				return
			}
			u := uint64(n)
			added = &u
		case more > 0 && strs.EqualFold(opt, "MAXDELETEDID"):
			m, ok := parseStrictID(c, c.Args[i+1], 0)
			if !ok {
				return
			}
			if id.Less(m) {
				c.Err(ErrXSetIDBelowMaxDel)
				return
			}
			maxDel = &m
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	key := c.Args[1]
	e := c.Find(key)
	s, ok := asStream(c, e)
	switch {
	case !ok:
		return
	case s == nil:
		c.Err(ErrNoSuchKey)
		return
	}
	if s.Len() > 0 {
		if last, _ := s.LastLiveID(); id.Less(last) {
			c.Err(ErrXSetIDBelowTop)
			return
		}
		if added != nil && s.Len() > *added {
			c.Err(ErrXSetIDEntriesSmall)
			return
		}
	}
	if maxDel != nil && maxDel.IsZero() {
		maxDel = nil
	}
	s.SetID(id, added, maxDel)
	c.Changed(NotifyStream, "xsetid", key)
	c.Dirty(1)
	c.OK()
}
