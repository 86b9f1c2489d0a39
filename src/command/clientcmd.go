package command

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hotkv/hotkv/ds/strs"
)

const clientFlags = NoScript | Loading | Stale

var clientCommands = []*Spec{
	(&Spec{Name: "client", Arity: -2, Scope: ScopeConn}).sub(
		&Spec{Name: "client|id", Arity: 2, Flags: clientFlags, Scope: ScopeConn, Run: clientID},
		&Spec{Name: "client|getname", Arity: 2, Flags: clientFlags, Scope: ScopeConn, Run: clientGetName},
		&Spec{Name: "client|setname", Arity: 3, Flags: clientFlags, Scope: ScopeConn, Run: clientSetName},
		&Spec{Name: "client|list", Arity: -2, Flags: Admin | clientFlags, Scope: ScopeConn, Run: clientList},
		&Spec{Name: "client|info", Arity: 2, Flags: clientFlags, Scope: ScopeConn, Run: clientInfo},
		&Spec{Name: "client|kill", Arity: -3, Flags: Admin | clientFlags, Scope: ScopeConn, Run: clientKill},
		&Spec{Name: "client|setinfo", Arity: 4, Flags: clientFlags, Scope: ScopeConn, Run: clientSetInfo},
		&Spec{Name: "client|no-evict", Arity: 3, Flags: Admin | clientFlags, Scope: ScopeConn, Run: clientNoEvict},
		&Spec{Name: "client|no-touch", Arity: 3, Flags: clientFlags, Scope: ScopeConn, Run: clientNoTouch},
		&Spec{Name: "client|reply", Arity: 3, Flags: clientFlags, Scope: ScopeConn, Run: clientReply},
		&Spec{Name: "client|pause", Arity: -3, Flags: Admin | clientFlags, Scope: ScopeConn, Run: clientPause},
		&Spec{Name: "client|unpause", Arity: 2, Flags: Admin | clientFlags, Scope: ScopeConn, Run: clientUnpause},
		&Spec{Name: "client|unblock", Arity: -3, Flags: Admin | clientFlags, Scope: ScopeConn, Run: clientUnblock},
		&Spec{Name: "client|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: clientHelp},
		&Spec{Name: "client|tracking", Arity: -3, Flags: clientFlags, Scope: ScopeConn, Run: clientTracking},
		&Spec{Name: "client|caching", Arity: 3, Flags: clientFlags, Scope: ScopeConn, Run: clientCaching},
		&Spec{Name: "client|getredir", Arity: 2, Flags: clientFlags, Scope: ScopeConn, Run: clientGetRedir},
		&Spec{Name: "client|trackinginfo", Arity: 2, Flags: clientFlags, Scope: ScopeConn, Run: clientTrackingInfo},
	),
}

// CLIENT ID
func clientID(c *Ctx) { c.Int(int64(c.Client.ID)) }

// CLIENT GETNAME
func clientGetName(c *Ctx) {
	if name := c.Client.Name(); name != "" {
		c.BulkString(name)
		return
	}
	c.Null()
}

// CLIENT SETNAME connection-name
func clientSetName(c *Ctx) {
	if msg := validClientName(c.Args[2]); msg != "" {
		c.Err(msg)
		return
	}
	c.Client.SetName(string(c.Args[2]))
	c.OK()
}

// CLIENT INFO
func clientInfo(c *Ctx) {
	v := viewOf(c.Client, true, c.Args)
	c.Verbatim(appendClientLine(nil, &v, c.Now))
}

// CLIENT LIST [TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]
func clientList(c *Ctx) {
	var out []byte
	now := c.Now
	line := func(cl *Client) {
		v := viewOf(cl, cl == c.Client, c.Args)
		out = appendClientLine(out, &v, now)
	}
	switch n := len(c.Args); {
	case n == 4 && strs.EqualFold(c.Args[2], "TYPE"):
		kind, ok := parseClientKind(c.Args[3])
		if !ok {
			c.Errf(ErrUnknownClient, c.Args[3])
			return
		}
		for _, cl := range c.E.clientsByID() {
			if clientKindOf(cl) == kind {
				line(cl)
			}
		}
	case n > 3 && strs.EqualFold(c.Args[2], "ID"):
		ids := make([]int64, 0, n-3)
		for _, a := range c.Args[3:] {
			id, ok := ParseInt(a)
			if !ok {
				c.Err(ErrInvalidClientID)
				return
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			if cl, ok := c.E.clients.Load(uint64(id)); ok {
				line(cl)
			}
		}
	case n != 2:
		c.Err(ErrSyntax)
		return
	default:
		for _, cl := range c.E.clientsByID() {
			line(cl)
		}
	}
	c.Verbatim(out)
}

// clientsByID returns the connected clients in connection order, as Redis lists them.
func (e *Engine) clientsByID() []*Client {
	out := make([]*Client, 0, e.clients.Size())
	e.clients.Range(func(_ uint64, cl *Client) bool {
		out = append(out, cl)
		return true
	})
	slices.SortFunc(out, func(a, b *Client) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// clientKind is a client type as CLIENT LIST TYPE and CLIENT KILL TYPE name it.
type clientKind uint8

const (
	kindNormal clientKind = iota
	kindReplica
	kindPubSub
	kindMaster
)

func parseClientKind(b []byte) (clientKind, bool) {
	switch {
	case strs.EqualFold(b, "NORMAL"):
		return kindNormal, true
	case strs.EqualFold(b, "SLAVE"), strs.EqualFold(b, "REPLICA"):
		return kindReplica, true
	case strs.EqualFold(b, "PUBSUB"):
		return kindPubSub, true
	case strs.EqualFold(b, "MASTER"):
		return kindMaster, true
	}
	return 0, false
}

// clientKindOf classifies a client: the replication links first (repl.go), then pub/sub.
func clientKindOf(cl *Client) clientKind {
	if k, ok := cl.replKind(); ok {
		return k
	}
	if cl.inPubSub() {
		return kindPubSub
	}
	return kindNormal
}

// CLIENT KILL ip:port
// CLIENT KILL [ID id] [TYPE type] [USER name] [ADDR ip:port] [LADDR ip:port] [SKIPME yes|no]
// [MAXAGE seconds] ... (filters ANDed; MAXAGE is Redis 7.4's)
func clientKill(c *Ctx) {
	f, msg := parseKillFilter(c.E, c.Args)
	if msg != "" {
		c.Err(msg)
		return
	}
	killed, self := 0, false
	f.now = c.Now
	for _, cl := range c.E.clientsByID() {
		if !f.matches(cl, cl == c.Client) {
			continue
		}
		if cl == c.Client {
			self = true // closed only once its reply is written, as Redis does
		} else {
			cl.Kill()
		}
		killed++
	}
	switch {
	case len(c.Args) > 3:
		c.Int(int64(killed))
	case killed == 0:
		c.Err(ErrNoSuchClient)
	default:
		c.OK()
	}
	if self {
		c.Client.CloseAfterReply()
	}
}

// killFilter is CLIENT KILL's selection; unset fields match every client.
type killFilter struct {
	addr, laddr, user []byte
	id                uint64
	kind              clientKind
	hasKind           bool
	skipMe            bool
	maxAge            int64 // seconds; 0 = any age
	now               int64 // the command's time (unix ns), for maxAge
}

// parseKillFilter parses both forms: the old one (a lone address, which may name the caller)
// and the new option/value pairs (which skip the caller unless SKIPME no).
func parseKillFilter(e *Engine, args [][]byte) (killFilter, string) {
	if len(args) == 3 {
		return killFilter{addr: args[2]}, ""
	}
	f := killFilter{skipMe: true}
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return f, ErrSyntax
		}
		opt, val := args[i], args[i+1]
		switch {
		case strs.EqualFold(opt, "ID"):
			id, ok := ParseInt(val)
			if !ok || id < 1 {
				return f, ErrClientIDRange
			}
			f.id = uint64(id)
		case strs.EqualFold(opt, "TYPE"):
			kind, ok := parseClientKind(val)
			if !ok {
				return f, fmt.Sprintf(ErrUnknownClient, val)
			}
			f.kind, f.hasKind = kind, true
		case strs.EqualFold(opt, "ADDR"):
			f.addr = val
		case strs.EqualFold(opt, "LADDR"):
			f.laddr = val
		case strs.EqualFold(opt, "USER"):
			if e.acl.Get(string(val)) == nil { // acl.go
				return f, fmt.Sprintf(ErrNoSuchUser, val)
			}
			f.user = val
		case strs.EqualFold(opt, "MAXAGE"):
			age, ok := ParseInt(val)
			if !ok {
				return f, ErrMaxAgeRange
			}
			f.maxAge = age
		case strs.EqualFold(opt, "SKIPME") && strs.EqualFold(val, "YES"):
			f.skipMe = true
		case strs.EqualFold(opt, "SKIPME") && strs.EqualFold(val, "NO"):
			f.skipMe = false
		default:
			return f, ErrSyntax
		}
	}
	return f, ""
}

// matches reports whether cl is selected; self says cl is the calling connection, whose own
// fields may be read directly.
func (f *killFilter) matches(cl *Client, self bool) bool {
	user := cl.shownUser()
	if self {
		user = cl.User
	}
	switch {
	case f.addr != nil && string(f.addr) != cl.Addr,
		f.laddr != nil && string(f.laddr) != cl.LAddr,
		f.hasKind && clientKindOf(cl) != f.kind,
		f.id != 0 && cl.ID != f.id,
		f.user != nil && string(f.user) != user,
		f.maxAge > 0 && (f.now-cl.Created)/int64(time.Second) < f.maxAge,
		self && f.skipMe:
		return false
	}
	return true
}

// CLIENT SETINFO LIB-NAME libname | LIB-VER libver (Redis 7.2; sent by go-redis and redis-py).
// The values are kept but not shown: CLIENT LIST keeps Redis 7.0's fields.
func clientSetInfo(c *Ctx) {
	attr, val := c.Args[2], string(c.Args[3])
	var name, ver *string
	switch {
	case strs.EqualFold(attr, "LIB-NAME"):
		name = &val
	case strs.EqualFold(attr, "LIB-VER"):
		ver = &val
	default:
		c.Errf(ErrSetinfoOption, attr)
		return
	}
	if validClientName(c.Args[3]) != "" {
		c.Errf(ErrSetinfoChars, attr)
		return
	}
	c.Client.SetLib(name, ver)
	c.OK()
}

// parseOnOff parses an ON|OFF argument, replying a syntax error when it is neither.
func parseOnOff(c *Ctx, b []byte) (on, ok bool) {
	switch {
	case strs.EqualFold(b, "ON"):
		return true, true
	case strs.EqualFold(b, "OFF"):
		return false, true
	}
	c.Err(ErrSyntax)
	return false, false
}

// CLIENT NO-EVICT ON|OFF
func clientNoEvict(c *Ctx) {
	if on, ok := parseOnOff(c, c.Args[2]); ok {
		c.Client.setNoEvict(on)
		c.OK()
	}
}

// CLIENT NO-TOUCH ON|OFF (Redis 7.2)
func clientNoTouch(c *Ctx) {
	if on, ok := parseOnOff(c, c.Args[2]); ok {
		c.Client.noTouch = on
		c.OK()
	}
}

// CLIENT REPLY ON|OFF|SKIP
//
// OFF and SKIP reply nothing; route silences later slots from cl.replyMode and cl.skipNext. ON
// replies +OK even when this very slot was routed as silent, through cl.forceReply.
func clientReply(c *Ctx) {
	cl, arg := c.Client, c.Args[2]
	switch {
	case strs.EqualFold(arg, "ON"):
		cl.replyMode, cl.skipNext, cl.forceReply = replyOn, false, true
		c.OK()
	case strs.EqualFold(arg, "OFF"):
		cl.replyMode = replyOff
	case strs.EqualFold(arg, "SKIP"):
		if cl.replyMode != replyOff {
			cl.skipNext = true
		}
	default:
		c.Err(ErrSyntax)
	}
}

// CLIENT PAUSE timeout [WRITE|ALL]
func clientPause(c *Ctx) {
	all := true
	switch len(c.Args) {
	case 3:
	case 4:
		switch {
		case strs.EqualFold(c.Args[3], "WRITE"):
			all = false
		case !strs.EqualFold(c.Args[3], "ALL"):
			c.Err(ErrPauseMode)
			return
		}
	default:
		c.Errf(ErrSubSyntax, c.Args[1], "CLIENT")
		return
	}
	ms, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrTimeout)
		return
	case ms < 0:
		c.Err(ErrTimeoutNeg)
		return
	}
	nowMs := c.Now / int64(time.Millisecond)
	// Redis adds the timeout to the clock unchecked; when that overflows, the pause ends in
	// the past, so the command succeeds and pauses nothing.
	if ms <= math.MaxInt64-nowMs {
		until := int64(math.MaxInt64)
		if end := nowMs + ms; end < math.MaxInt64/int64(time.Millisecond) {
			until = end * int64(time.Millisecond)
		}
		c.E.pause.set(until, all)
	}
	c.OK()
}

// CLIENT UNPAUSE
func clientUnpause(c *Ctx) {
	c.E.pause.clear()
	c.OK()
}

// CLIENT UNBLOCK client-id [TIMEOUT|ERROR]
//
// The reason is checked before the id, as Redis does. A client counts as blocked only while it
// waits; one being served or retrying right now is not unblocked (:0).
func clientUnblock(c *Ctx) {
	withError := false
	switch {
	case len(c.Args) > 4:
		c.Errf(ErrSubSyntax, c.Args[1], "CLIENT")
		return
	case len(c.Args) == 4 && strs.EqualFold(c.Args[3], "ERROR"):
		withError = true
	case len(c.Args) == 4 && !strs.EqualFold(c.Args[3], "TIMEOUT"):
		c.Err(ErrUnblockReason)
		return
	}
	id, ok := ParseInt(c.Args[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if cl, found := c.E.clients.Load(uint64(id)); found && cl.unblock(withError) {
		c.Int(1)
		return
	}
	c.Int(0)
}

// CLIENT HELP
func clientHelp(c *Ctx) { replyHelpLines(c, clientHelpLines) }

// replyHelpLines replies a HELP text: one status line per element.
func replyHelpLines(c *Ctx, lines []string) {
	c.ArrayLen(len(lines))
	for _, l := range lines {
		c.Simple(l)
	}
}

// clientHelpLines is Redis 7.0's CLIENT HELP text, kept identical for clients that show it.
var clientHelpLines = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
	"HELP",
	"    Prints this help.",
}
