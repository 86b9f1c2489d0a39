package command

import (
	"strconv"

	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/strs"
)

// Consumer groups: XGROUP, XACK, XPENDING, XINFO GROUPS|CONSUMERS (XREADGROUP, XCLAIM and
// XAUTOCLAIM are in streams_claim.go). Times are the call's milliseconds (Ctx.Now).

var xgroupSpec = (&Spec{Name: "xgroup", Arity: -2}).sub(
	&Spec{Name: "xgroup|create", Arity: -5, Flags: Write | DenyOOM, FirstKey: 2, LastKey: 2, Step: 1, Run: xgroupCreate},
	&Spec{Name: "xgroup|setid", Arity: -5, Flags: Write, FirstKey: 2, LastKey: 2, Step: 1, Run: xgroupSetID},
	&Spec{Name: "xgroup|destroy", Arity: 4, Flags: Write, FirstKey: 2, LastKey: 2, Step: 1, Run: xgroupDestroy},
	&Spec{Name: "xgroup|createconsumer", Arity: 5, Flags: Write | DenyOOM, FirstKey: 2, LastKey: 2, Step: 1, Run: xgroupCreateConsumer},
	&Spec{Name: "xgroup|delconsumer", Arity: 5, Flags: Write, FirstKey: 2, LastKey: 2, Step: 1, Run: xgroupDelConsumer},
	&Spec{Name: "xgroup|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: func(c *Ctx) { replyHelpLines(c, xgroupHelpLines) }},
)

// xgroupHelpLines and xinfoHelpLines are Redis 7.0.15's XGROUP HELP and XINFO HELP texts.
var xgroupHelpLines = []string{
	"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
	"HELP",
	"    Prints this help.",
}

var xinfoHelpLines = []string{
	"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CONSUMERS <key> <groupname>",
	"    Show consumers of <groupname>.",
	"GROUPS <key>",
	"    Show the stream consumer groups.",
	"STREAM <key> [FULL [COUNT <count>]",
	"    Show information about the stream.",
	"HELP",
	"    Prints this help.",
}

const (
	ErrXGroupNoKey       = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
	ErrXGroupSyntax      = "ERR unknown subcommand or wrong number of arguments for '%s'. Try XGROUP HELP."
	ErrXGroupEntriesRead = "ERR value for ENTRIESREAD must be positive or -1"
	ErrBusyGroup         = "BUSYGROUP Consumer Group name already exists"
	ErrNoGroupForKey     = "NOGROUP No such consumer group '%s' for key name '%s'"
	ErrNoGroupXPending   = "NOGROUP No such key '%s' or consumer group '%s'"
)

// xgroupArgs is the part of XGROUP common to its subcommands, as xgroupCommand parses it: the
// options after the ID (CREATE and SETID), the stream and the group.
type xgroupArgs struct {
	mkstream    bool
	entriesRead int64
	s           *stream.Stream
	g           *stream.Group
}

func parseXGroup(c *Ctx, create, needGroup bool) (xgroupArgs, bool) {
	a := xgroupArgs{entriesRead: stream.InvalidEntriesRead}
	for i := 5; i < len(c.Args); i++ {
		switch o := c.Args[i]; {
		case create && strs.EqualFold(o, "MKSTREAM"):
			a.mkstream = true
		case strs.EqualFold(o, "ENTRIESREAD") && i+1 < len(c.Args):
			n, ok := ParseInt(c.Args[i+1])
			switch {
			case !ok:
				c.Err(ErrNotInt)
				return a, false
			case n < 0 && n != stream.InvalidEntriesRead:
				c.Err(ErrXGroupEntriesRead)
				return a, false
			}
			a.entriesRead = n
			i++
		default:
			c.Errf(ErrXGroupSyntax, c.Args[1])
			return a, false
		}
	}
	s, ok := asStream(c, c.Find(c.Args[2]))
	if !ok {
		return a, false
	}
	if s == nil && !(create && a.mkstream) {
		c.Err(ErrXGroupNoKey)
		return a, false
	}
	a.s = s
	if s != nil {
		a.g = s.Group(c.Args[3])
	}
	if needGroup && a.g == nil {
		c.Errf(ErrNoGroupForKey, c.Args[3], c.Args[2])
		return a, false
	}
	return a, true
}

// XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD entries-read]
func xgroupCreate(c *Ctx) {
	if len(c.Args) > 8 {
		c.Errf(ErrXGroupSyntax, c.Args[1])
		return
	}
	a, ok := parseXGroup(c, true, false)
	if !ok {
		return
	}
	var id stream.ID
	if arg := c.Args[4]; len(arg) == 1 && arg[0] == '$' {
		if a.s != nil {
			id = a.s.LastID()
		}
	} else if id, ok = parseStrictID(c, arg, 0); !ok {
		return
	}
	key := c.Args[2]
	if a.s == nil {
		a.s = createStream(c, key)
		c.Touch(key)
	}
	if a.s.CreateGroup(c.Args[3], id, a.entriesRead) == nil {
		c.Err(ErrBusyGroup)
		return
	}
	c.Notify(NotifyStream, "xgroup-create", key)
	c.Dirty(1)
	c.OK()
}

// XGROUP SETID key group id|$ [ENTRIESREAD entries-read]
func xgroupSetID(c *Ctx) {
	if len(c.Args) != 5 && len(c.Args) != 7 {
		c.Errf(ErrXGroupSyntax, c.Args[1])
		return
	}
	a, ok := parseXGroup(c, false, true)
	if !ok {
		return
	}
	var id stream.ID
	if arg := c.Args[4]; len(arg) == 1 && arg[0] == '$' {
		id = a.s.LastID()
	} else if id, _, ok = stream.ParseID(arg, 0, false, false); !ok {
		c.Err(ErrStreamID)
		return
	}
	a.g.LastID, a.g.EntriesRead = id, a.entriesRead
	c.Notify(NotifyStream, "xgroup-setid", c.Args[2])
	c.Dirty(1)
	c.OK()
}

// XGROUP DESTROY key group
func xgroupDestroy(c *Ctx) {
	a, ok := parseXGroup(c, false, false)
	if !ok {
		return
	}
	if a.g == nil {
		c.Int(0)
		return
	}
	a.s.DestroyGroup(c.Args[3])
	c.Notify(NotifyStream, "xgroup-destroy", c.Args[2])
	c.Dirty(1)
	c.Int(1)
}

// XGROUP CREATECONSUMER key group consumer
func xgroupCreateConsumer(c *Ctx) {
	a, ok := parseXGroup(c, false, true)
	if !ok {
		return
	}
	c.Int(boolInt(createConsumer(c, a.g, c.Args[2], c.Args[4]) != nil))
}

// createConsumer adds a consumer as streamCreateConsumer: counted and announced; nil when it
// exists.
func createConsumer(c *Ctx, g *stream.Group, key, name []byte) *stream.Consumer {
	cons := g.CreateConsumer(name, c.Now/1e6)
	if cons != nil {
		c.Dirty(1)
		c.Notify(NotifyStream, "xgroup-createconsumer", key)
	}
	return cons
}

// XGROUP DELCONSUMER key group consumer
func xgroupDelConsumer(c *Ctx) {
	a, ok := parseXGroup(c, false, true)
	if !ok {
		return
	}
	cons := a.g.Consumer(c.Args[4])
	if cons == nil {
		c.Int(0)
		return
	}
	n := a.g.DeleteConsumer(cons)
	c.Dirty(1)
	c.Notify(NotifyStream, "xgroup-delconsumer", c.Args[2])
	c.Int(int64(n))
}

// XACK key group id [id ...]
func xack(c *Ctx) {
	s, ok := asStream(c, c.Find(c.Args[1]))
	if !ok {
		return
	}
	var g *stream.Group
	if s != nil {
		g = s.Group(c.Args[2])
	}
	if g == nil {
		c.Int(0)
		return
	}
	ids := make([]stream.ID, 0, len(c.Args)-3)
	for _, arg := range c.Args[3:] {
		id, ok := parseStrictID(c, arg, 0)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	n := 0
	for _, id := range ids {
		if g.Ack(id) {
			n++
		}
	}
	c.Dirty(n)
	c.Int(int64(n))
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
func xpending(c *Ctx) {
	n := len(c.Args)
	if n != 3 && (n < 6 || n > 9) {
		c.Err(ErrSyntax)
		return
	}
	var minIdle, count int64
	var start, end stream.ID
	var consumer []byte
	if n >= 6 {
		at := 3
		if strs.EqualFold(c.Args[3], "IDLE") {
			v, ok := ParseInt(c.Args[4])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if n < 8 {
				c.Err(ErrSyntax)
				return
			}
			minIdle, at = v, 5
		}
		v, ok := ParseInt(c.Args[at+2])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		count = max(v, 0)
		if start, end, ok = parseIDRange(c, c.Args[at], c.Args[at+1]); !ok {
			return
		}
		if at+3 < n {
			consumer = c.Args[at+3]
		}
	}
	s, ok := asStream(c, lookupForRead(c, c.Args[1]))
	if !ok {
		return
	}
	var g *stream.Group
	if s != nil {
		g = s.Group(c.Args[2])
	}
	if g == nil {
		c.Errf(ErrNoGroupXPending, c.Args[1], c.Args[2])
		return
	}
	if n == 3 {
		xpendingSummary(c, g)
		return
	}
	pel := g.PEL()
	if consumer != nil {
		cons := g.Consumer(consumer)
		if cons == nil {
			c.ArrayLen(0)
			return
		}
		pel = cons.PEL()
	}
	nowMs := c.Now / 1e6
	var out []*stream.NACK
	for _, nack := range pel {
		if int64(len(out)) >= count || end.Less(nack.ID) {
			break
		}
		if nack.ID.Less(start) || minIdle != 0 && nowMs-nack.DeliveryTime < minIdle {
			continue
		}
		out = append(out, nack)
	}
	c.ArrayLen(len(out))
	for _, nack := range out {
		c.ArrayLen(4)
		replyID(c, nack.ID)
		c.BulkString(nack.Consumer.Name)
		c.Int(max(nowMs-nack.DeliveryTime, 0))
		c.Int(int64(nack.DeliveryCount))
	}
}

func xpendingSummary(c *Ctx, g *stream.Group) {
	pel := g.PEL()
	c.ArrayLen(4)
	c.Int(int64(len(pel)))
	if len(pel) == 0 {
		c.Null()
		c.Null()
		c.NullArray()
		return
	}
	replyID(c, pel[0].ID)
	replyID(c, pel[len(pel)-1].ID)
	n := 0
	for _, cons := range g.Consumers() {
		if cons.Pending() > 0 {
			n++
		}
	}
	c.ArrayLen(n)
	for _, cons := range g.Consumers() {
		if cons.Pending() > 0 {
			c.ArrayLen(2)
			c.BulkString(cons.Name)
			c.Bulk(strconv.AppendInt(nil, int64(cons.Pending()), 10))
		}
	}
}

// XINFO GROUPS key
func xinfoGroups(c *Ctx) {
	s, ok := asStream(c, lookupForRead(c, c.Args[2]))
	switch {
	case !ok:
		return
	case s == nil:
		c.Err(ErrNoSuchKey)
		return
	}
	c.ArrayLen(len(s.Groups()))
	for _, g := range s.Groups() {
		c.MapLen(6)
		c.BulkString("name")
		c.BulkString(g.Name)
		c.BulkString("consumers")
		c.Int(int64(len(g.Consumers())))
		c.BulkString("pending")
		c.Int(int64(len(g.PEL())))
		c.BulkString("last-delivered-id")
		replyID(c, g.LastID)
		replyGroupCounters(c, s, g)
	}
}

// replyGroupCounters replies a group's entries-read and lag fields.
func replyGroupCounters(c *Ctx, s *stream.Stream, g *stream.Group) {
	c.BulkString("entries-read")
	if g.EntriesRead != stream.InvalidEntriesRead {
		c.Int(g.EntriesRead)
	} else {
		c.Null()
	}
	c.BulkString("lag")
	if lag, ok := s.Lag(g); ok {
		c.Int(lag)
	} else {
		c.Null()
	}
}

// XINFO CONSUMERS key group
func xinfoConsumers(c *Ctx) {
	s, ok := asStream(c, lookupForRead(c, c.Args[2]))
	switch {
	case !ok:
		return
	case s == nil:
		c.Err(ErrNoSuchKey)
		return
	}
	g := s.Group(c.Args[3])
	if g == nil {
		c.Errf(ErrNoGroupForKey, c.Args[3], c.Args[2])
		return
	}
	nowMs := c.Now / 1e6
	c.ArrayLen(len(g.Consumers()))
	for _, cons := range g.Consumers() {
		c.MapLen(3)
		c.BulkString("name")
		c.BulkString(cons.Name)
		c.BulkString("pending")
		c.Int(int64(cons.Pending()))
		c.BulkString("idle")
		c.Int(max(nowMs-cons.SeenTime, 0))
	}
}
