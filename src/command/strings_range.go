package command

import (
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
)

// APPEND key value
func appendCmd(c *Ctx) {
	key, v := c.Args[1], c.Args[2]
	ks := c.KS(key)
	e := ks.Find(key, c.Now)
	switch {
	case e == nil:
		e = addString(c, ks, key)
		storeString(c, ks, e, v) // a new key is encoded like SET's value
	case e.Kind != keyspace.KindString:
		c.WrongType()
		return
	default:
		if err := strs.CheckLen(int64(strLen(e)), int64(len(v)), maxStringLen(c)); err != nil {
			c.Err(stringsErr(err))
			return
		}
		was := unpackForEdit(ks, e)
		e.SetBytes(append(e.Bytes(), v...))
		e.Enc = EncRaw
		repack(c, ks, e, was)
	}
	c.Changed(NotifyString, "append", key) // appending nothing is a change too, as in Redis
	c.Dirty(1)
	c.Int(int64(strLen(e)))
}

// GETRANGE key start end (and SUBSTR, its old name)
func getrange(c *Ctx) {
	start, ok1 := ParseInt(c.Args[2])
	end, ok2 := ParseInt(c.Args[3])
	if !ok1 || !ok2 {
		c.Err(ErrNotInt)
		return
	}
	switch e := lookupForRead(c, c.Args[1]); {
	case e == nil:
		c.Bulk(nil)
	case e.Kind != keyspace.KindString:
		c.WrongType()
	case sparseOf(e) != nil: // only the range's bytes are built
		c.Bulk(sparseRange(sparseOf(e), start, end))
	default:
		c.Bulk(strs.Range(c.strBytes(e), start, end))
	}
}

// SETRANGE key offset value
func setrange(c *Ctx) {
	key, v := c.Args[1], c.Args[3]
	off, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrNotInt)
		return
	case off < 0:
		c.Err(ErrOffsetRange)
		return
	}
	ks := c.KS(key)
	e := ks.Find(key, c.Now)
	switch {
	case e != nil && e.Kind != keyspace.KindString:
		c.WrongType()
		return
	case len(v) == 0: // writing nothing neither creates the key nor checks the offset
		if e == nil {
			c.Int(0)
		} else {
			c.Int(int64(strLen(e)))
		}
		return
	}
	if err := strs.CheckLen(off, int64(len(v)), maxStringLen(c)); err != nil {
		c.Err(stringsErr(err))
		return
	}
	if e == nil {
		e = addString(c, ks, key)
	}
	was := unpackForEdit(ks, e)
	e.SetBytes(strs.SetRange(e.Bytes(), int(off), v))
	e.Enc = EncRaw
	repack(c, ks, e, was)
	c.Changed(NotifyString, "setrange", key)
	c.Dirty(1)
	c.Int(int64(strLen(e)))
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]
func lcs(c *Ctx) {
	ea, eb := lookupForRead(c, c.Args[1]), lookupForRead(c, c.Args[2])
	if (ea != nil && ea.Kind != keyspace.KindString) || (eb != nil && eb.Kind != keyspace.KindString) {
		c.Err(ErrLCSNotStrings)
		return
	}
	var a, b []byte
	if ea != nil {
		a = strCopy(ea)
	}
	if eb != nil {
		b = strCopy(eb)
	}
	var getLen, getIdx, withLen bool
	var minLen int64
	for j := 3; j < len(c.Args); j++ {
		switch opt := c.Args[j]; {
		case strs.EqualFold(opt, "IDX"):
			getIdx = true
		case strs.EqualFold(opt, "LEN"):
			getLen = true
		case strs.EqualFold(opt, "WITHMATCHLEN"):
			withLen = true
		case strs.EqualFold(opt, "MINMATCHLEN") && j+1 < len(c.Args):
			n, ok := ParseInt(c.Args[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			minLen = max(n, 0)
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if getIdx && getLen {
		c.Err(ErrLCSLenAndIdx)
		return
	}
	res, err := strs.LCS(a, b, c.E.Settings().ProtoMaxBulkLen,
		strs.LCSOptions{Seq: !getIdx && !getLen, Matches: getIdx, MinMatch: minLen})
	switch {
	case err != nil:
		c.Err(stringsErr(err))
	case getIdx:
		replyLCSIdx(c, res, withLen)
	case getLen:
		c.Int(int64(res.Len))
	default:
		c.Bulk(res.Seq)
	}
}

// replyLCSIdx replies LCS IDX: a map of "matches" (each the two ranges and, with WITHMATCHLEN,
// the length) and "len".
func replyLCSIdx(c *Ctx, res strs.LCSResult, withLen bool) {
	c.MapLen(2)
	c.BulkString("matches")
	c.ArrayLen(len(res.Matches))
	for _, m := range res.Matches {
		c.ArrayLen(2 + int(boolInt(withLen)))
		c.ArrayLen(2)
		c.Int(int64(m.AStart))
		c.Int(int64(m.AEnd))
		c.ArrayLen(2)
		c.Int(int64(m.BStart))
		c.Int(int64(m.BEnd))
		if withLen {
			c.Int(int64(m.Len()))
		}
	}
	c.BulkString("len")
	c.Int(int64(res.Len))
}

// maxStringLen is the longest string APPEND and SETRANGE may make: proto-max-bulk-len, as in
// Redis, within what an Entry holds (keyspace.MaxString, 4 GB).
func maxStringLen(c *Ctx) int64 { return min(c.E.Settings().ProtoMaxBulkLen, keyspace.MaxString) }
