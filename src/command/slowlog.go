package command

import (
	"strconv"
	"sync"
	"time"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/pipeline"
)

// SLOWLOG, as Redis 7.0's slowlog.c: entries of calls that took at least
// slowlog-log-slower-than microseconds, newest first, at most slowlog-max-len of them (the list
// is trimmed when an entry is added, so lowering the length shows at the next one). Arguments
// are copied when an entry is made, at most 32 of them and 128 bytes each; sensitive ones are
// "(redacted)" as Redis's commands redact them (redact.go).

const (
	slowlogMaxArgs   = 32  // SLOWLOG_ENTRY_MAX_ARGC
	slowlogMaxString = 128 // SLOWLOG_ENTRY_MAX_STRING
)

var slowlogCommands = []*Spec{
	(&Spec{Name: "slowlog", Arity: -2}).sub(
		&Spec{Name: "slowlog|get", Arity: -2, Flags: Admin | Loading | Stale, Scope: ScopeConn, Run: slowlogGet},
		&Spec{Name: "slowlog|len", Arity: 2, Flags: Admin | Loading | Stale, Scope: ScopeConn, Run: slowlogLen},
		&Spec{Name: "slowlog|reset", Arity: 2, Flags: Admin | Loading | Stale, Scope: ScopeConn, Run: slowlogReset},
		&Spec{Name: "slowlog|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: slowlogHelp},
	),
}

type slowlogEntry struct {
	id       int64
	unix     int64 // seconds
	usec     int64
	args     [][]byte
	peer     string
	name     string
	argBytes int
}

// slowlog is the list of entries, newest last; guarded by mu (entries are rare: each is a call
// slower than the threshold).
type slowlog struct {
	mu      sync.Mutex
	entries []slowlogEntry
	nextID  int64
}

// slowlogPush adds an entry for the call c of spec that took usec microseconds.
func (e *Engine) slowlogPush(c *Ctx, s *pipeline.Slot, spec *Spec, usec int64) {
	ent := slowlogEntry{unix: time.Now().Unix(), usec: usec, args: slowlogArgs(spec, c.Args)}
	if inScript(c) {
		ent.peer = "?:0" // the script's own client, as Redis's Lua client shows
	} else if c.Client != nil {
		ent.peer, ent.name = c.Client.Addr, c.Client.Name()
	}
	l := &e.lat.slowlog
	l.mu.Lock()
	defer l.mu.Unlock()
	ent.id = l.nextID
	l.nextID++
	l.entries = append(l.entries, ent)
	if n := int(max(e.lat.slowMax.Load(), 0)); len(l.entries) > n {
		drop := len(l.entries) - n
		clear(l.entries[:drop])
		l.entries = append(l.entries[:0], l.entries[drop:]...)
	}
}

// slowlogArgs copies args as a slowlog entry keeps them.
func slowlogArgs(spec *Spec, args [][]byte) [][]byte {
	n := min(len(args), slowlogMaxArgs)
	out := make([][]byte, n)
	redact := redactedArgs(spec, args)
	for j := range n {
		a := args[j]
		switch {
		case n != len(args) && j == n-1:
			out[j] = []byte("... (" + strconv.Itoa(len(args)-n+1) + " more arguments)")
		case redact.has(j):
			out[j] = []byte(redactedArg)
		case len(a) > slowlogMaxString:
			b := append([]byte(nil), a[:slowlogMaxString]...)
			out[j] = append(b, "... ("+strconv.Itoa(len(a)-slowlogMaxString)+" more bytes)"...)
		default:
			out[j] = append([]byte(nil), a...)
		}
	}
	return out
}

// SLOWLOG GET [count]
func slowlogGet(c *Ctx) {
	count := int64(10)
	if len(c.Args) > 3 {
		c.Errf(ErrSubSyntax, c.Args[1], "SLOWLOG")
		return
	}
	if len(c.Args) == 3 {
		n, ok := ParseInt(c.Args[2])
		if !ok || n < -1 {
			c.Err(ErrSlowlogCount)
			return
		}
		count = n
	}
	l := &c.E.lat.slowlog
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.entries)
	if count >= 0 {
		n = int(min(int64(n), count))
	}
	c.ArrayLen(n)
	for i := range n {
		ent := &l.entries[len(l.entries)-1-i]
		c.ArrayLen(6)
		c.Int(ent.id)
		c.Int(ent.unix)
		c.Int(ent.usec)
		c.ArrayLen(len(ent.args))
		for _, a := range ent.args {
			c.Bulk(a)
		}
		c.BulkString(ent.peer)
		c.BulkString(ent.name)
	}
}

// SLOWLOG LEN
func slowlogLen(c *Ctx) {
	l := &c.E.lat.slowlog
	l.mu.Lock()
	n := len(l.entries)
	l.mu.Unlock()
	c.Int(int64(n))
}

// SLOWLOG RESET
func slowlogReset(c *Ctx) {
	l := &c.E.lat.slowlog
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
	c.OK()
}

// SLOWLOG HELP
func slowlogHelp(c *Ctx) { replyHelpLines(c, slowlogHelpLines) }

var slowlogHelpLines = []string{
	"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET [<count>]",
	"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
	"    Entries are made of:",
	"    id, timestamp, time in microseconds, arguments array, client IP and port,",
	"    client name",
	"LEN",
	"    Return the length of the slowlog.",
	"RESET",
	"    Reset the slowlog.",
	"HELP",
	"    Prints this help.",
}

// redactedArg replaces a sensitive argument in the slowlog and MONITOR (shared.redacted).
const redactedArg = "(redacted)"

// argSet is a small set of argument positions.
type argSet uint64

func (s argSet) has(i int) bool { return i < 64 && s&(1<<i) != 0 }

// redactedArgs returns the positions of args that Redis 7.0's handlers redact
// (redactClientCommandArgument): AUTH's arguments, HELLO's AUTH username and password,
// MIGRATE's AUTH password and AUTH2 username and password, CONFIG SET's values of sensitive
// directives, ACL SETUSER's rules. Only the first 64 positions can be marked: past them the
// slowlog keeps no argument anyway.
func redactedArgs(spec *Spec, args [][]byte) argSet {
	var s argSet
	mark := func(from, to int) {
		for i := from; i < min(to, len(args), 64); i++ {
			s |= 1 << i
		}
	}
	switch spec.Name {
	case "auth":
		mark(1, len(args))
	case "hello":
		for j := 2; j < len(args); j++ {
			if strs.EqualFold(args[j], "AUTH") && j+2 < len(args) {
				mark(j+1, j+3)
				j += 2
			} else if strs.EqualFold(args[j], "SETNAME") {
				j++
			}
		}
	case "migrate":
		for j := 6; j < len(args); j++ {
			switch {
			case strs.EqualFold(args[j], "AUTH"):
				mark(j+1, j+2)
				j++
			case strs.EqualFold(args[j], "AUTH2"):
				mark(j+1, j+3)
				j += 2
			case strs.EqualFold(args[j], "KEYS"):
				j = len(args)
			}
		}
	case "config|set":
		for j := 2; j+1 < len(args); j += 2 {
			if sensitiveConfig(args[j]) {
				mark(j+1, j+2)
			}
		}
	case "acl|setuser":
		mark(2, len(args))
	}
	return s
}

// sensitiveConfig reports whether a directive is SENSITIVE_CONFIG in Redis 7.0 (its value is
// redacted from the slowlog and MONITOR).
func sensitiveConfig(name []byte) bool {
	return strs.EqualFold(name, "requirepass") || strs.EqualFold(name, "masterauth")
}
