package command

import (
	"strconv"
	"sync"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/stream"
)

// The streams family over ds/stream: values are *stream.Stream (keyspace.Obj). A stream key
// stays when its last entry goes (Redis keeps empty streams). Replicated forms follow Redis
// 7.0.15's t_stream.c: XADD with a generated ID propagates the ID it gave, and an XADD or XTRIM
// whose `~` trim removed entries propagates `=` with the length (MAXLEN) or first ID (MINID)
// it left, so a replica trims exactly as much.
var streamCommands = []*Spec{
	{Name: "xadd", Arity: -5, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: xadd},
	{Name: "xrange", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: xrange},
	{Name: "xrevrange", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: xrevrange},
	{Name: "xlen", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: xlen},
	{Name: "xdel", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: xdel},
	{Name: "xtrim", Arity: -4, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: xtrim},
	{Name: "xsetid", Arity: -3, Flags: Write | DenyOOM | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: xsetid},
	xinfoSpec,
	xreadSpec,
	xgroupSpec,
	xreadgroupSpec,
	{Name: "xack", Arity: -4, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: xack},
	{Name: "xpending", Arity: -3, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: xpending},
	{Name: "xclaim", Arity: -6, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: xclaim},
	{Name: "xautoclaim", Arity: -6, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: xautoclaim},
}

var xinfoSpec = (&Spec{Name: "xinfo", Arity: -2}).sub(
	&Spec{Name: "xinfo|stream", Arity: -3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, Run: xinfoStream},
	&Spec{Name: "xinfo|groups", Arity: 3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, Run: xinfoGroups},
	&Spec{Name: "xinfo|consumers", Arity: 4, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, Run: xinfoConsumers},
	&Spec{Name: "xinfo|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: func(c *Ctx) { replyHelpLines(c, xinfoHelpLines) }},
)

// Stream wire errors, Redis 7.0.15's exact texts (kept with the family, which owns them).
const (
	ErrStreamID           = "ERR Invalid stream ID specified as stream command argument"
	ErrStreamIDSmall      = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	ErrStreamIDZero       = "ERR The ID specified in XADD must be greater than 0-0"
	ErrStreamExhausted    = "ERR The stream has exhausted the last possible ID, unable to add more items"
	ErrStreamTooLarge     = "ERR Elements are too large to be stored"
	ErrStreamMaxLenNeg    = "ERR The MAXLEN argument must be >= 0."
	ErrStreamLimitNeg     = "ERR The LIMIT argument must be >= 0."
	ErrStreamTrimBoth     = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
	ErrStreamLimitNoTrim  = "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
	ErrStreamLimitNoApprx = "ERR syntax error, LIMIT cannot be used without the special ~ option"
	ErrStreamXTrimNoTrim  = "ERR syntax error, XTRIM must be called with a trimming strategy"
	ErrStreamStartID      = "ERR invalid start ID for the interval"
	ErrStreamEndID        = "ERR invalid end ID for the interval"
	ErrStreamEntriesNeg   = "ERR entries_added must be positive"
	ErrXSetIDBelowMaxDel  = "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
	ErrXSetIDBelowTop     = "ERR The ID specified in XSETID is smaller than the target stream top item"
	ErrXSetIDEntriesSmall = "ERR The entries_added specified in XSETID is smaller than the target stream length"
	ErrXInfoSyntax        = "ERR unknown subcommand or wrong number of arguments for '%s'. Try XINFO HELP."
)

// asStream returns e's stream: nil (and ok) for a missing key, ok false with WRONGTYPE replied
// for a key of another type.
func asStream(c *Ctx, e *keyspace.Entry) (*stream.Stream, bool) {
	switch {
	case e == nil:
		return nil, true
	case e.Kind != keyspace.KindStream:
		c.WrongType()
		return nil, false
	}
	return keyspace.Obj[stream.Stream](e), true
}

// createStream adds key, which the caller found missing, as an empty stream.
func createStream(c *Ctx, key []byte) *stream.Stream {
	s := stream.New()
	e := c.KS(key).Add(key)
	keyspace.SetObj(e, keyspace.KindStream, s)
	e.Access = uint32(c.Now / 1e9)
	return s
}

// streamLimits are the node limits new entries are packed under: stream-node-max-bytes and
// stream-node-max-entries as set now. As in Redis, a change applies to the nodes filled from then
// on; closed nodes keep their split.
func streamLimits(c *Ctx) stream.Limits {
	st := c.E.Settings()
	return stream.Limits{MaxBytes: st.StreamNodeMaxBytes, MaxEntries: st.StreamNodeMaxEntries}
}

// parseStrictID parses an ID that may not be "-" or "+", replying the error on failure.
func parseStrictID(c *Ctx, b []byte, missingSeq uint64) (stream.ID, bool) {
	id, _, ok := stream.ParseID(b, missingSeq, true, false)
	if !ok {
		c.Err(ErrStreamID)
	}
	return id, ok
}

// replyID replies id as a bulk string.
func replyID(c *Ctx, id stream.ID) {
	var buf [48]byte
	c.Bulk(id.Append(buf[:0]))
}

// replyEntry replies one entry: its ID and its fields and values.
func replyEntry(c *Ctx, id stream.ID, fv [][]byte) {
	c.ArrayLen(2)
	replyID(c, id)
	c.ArrayLen(len(fv))
	for _, b := range fv {
		c.Bulk(b)
	}
}

// rangeScratch holds the iterators' buffers between calls (shards run in parallel, and a read may
// run shared, so each walk takes its own).
var rangeScratch = sync.Pool{New: func() any { return new(stream.Scratch) }}

// replyRange replies the entries of s from start to end (count 0: all), and returns how many.
func replyRange(c *Ctx, s *stream.Stream, start, end stream.ID, rev bool, count int64) int64 {
	// The count is not known before the walk: reply the entries, then put the header first.
	mark := len(c.Out)
	var n int64
	sc := rangeScratch.Get().(*stream.Scratch)
	it := s.RangeWith(start, end, rev, sc)
	for count == 0 || n < count {
		id, fv, ok := it.Next()
		if !ok {
			break
		}
		replyEntry(c, id, fv)
		n++
	}
	rangeScratch.Put(sc)
	prependArrayLen(c, mark, int(n))
	return n
}

// prependArrayLen puts an array header of n at mark, before the n elements replied from there
// (RESP2 and RESP3 spell an array alike), moving them up in place.
func prependArrayLen(c *Ctx, mark, n int) {
	var buf [24]byte
	h := strconv.AppendInt(append(buf[:0], '*'), int64(n), 10)
	h = append(h, '\r', '\n')
	end := len(c.Out)
	c.Out = append(c.Out, h...)
	copy(c.Out[mark+len(h):], c.Out[mark:end])
	copy(c.Out[mark:], h)
}
