package command

import (
	"strings"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// objectSpec is OBJECT: introspection of one key's value. None of its subcommands counts as an
// access to the key (Redis looks up with LOOKUP_NOTOUCH).
var objectSpec = (&Spec{Name: "object", Arity: -2}).sub(
	&Spec{Name: "object|encoding", Arity: 3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, Run: objectEncoding},
	&Spec{Name: "object|freq", Arity: 3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, Run: objectFreq},
	&Spec{Name: "object|idletime", Arity: 3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, Run: objectIdletime},
	&Spec{Name: "object|refcount", Arity: 3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, Run: objectRefcount},
	&Spec{Name: "object|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: objectHelp},
)

// objectEntry returns the key's entry, or replies null and returns nil.
func objectEntry(c *Ctx) *keyspace.Entry {
	e := c.FindQuiet(c.Args[2])
	if e == nil {
		c.Null()
	}
	return e
}

// OBJECT ENCODING key
func objectEncoding(c *Ctx) {
	if e := objectEntry(c); e != nil {
		c.BulkString(valueEncoding(e))
	}
}

// OBJECT REFCOUNT key: HotKV never shares values, but Redis shares the integers 0..9999 (unless
// an LRU/LFU policy with a memory limit needs per-object access data) and reports them with
// the maximal refcount, so clients see the same numbers.
func objectRefcount(c *Ctx) {
	e := objectEntry(c)
	if e == nil {
		return
	}
	n := int64(1)
	if v, ok := ParseInt(e.Bytes()); ok && v >= 0 && v < sharedIntegers && e.Kind == keyspace.KindString &&
		valueEncoding(e) == "int" && !noSharedIntegers(c.E) {
		n = sharedRefcount
	}
	c.Int(n)
}

// OBJECT IDLETIME key
func objectIdletime(c *Ctx) {
	e := objectEntry(c)
	switch {
	case e == nil:
	case lfuPolicy(c.E):
		c.Err(ErrLFUPolicy)
	default:
		c.Int(int64(idleSeconds(e, c.Now)))
	}
}

// OBJECT FREQ key: the LFU counter less one per lfu-decay-time minutes idle, as Redis's
// LFUDecrAndReturn reports it.
func objectFreq(c *Ctx) {
	e := objectEntry(c)
	switch {
	case e == nil:
	case !lfuPolicy(c.E):
		c.Err(ErrNoLFUPolicy)
	default:
		// The clock the LFU policies rank by (ds/keyspace's LFU), with lfu-decay-time as set.
		c.Int(int64(keyspace.DecayedFreq(e, c.Now, configInt(c.E, "lfu-decay-time", 1))))
	}
}

func idleSeconds(e *keyspace.Entry, now int64) uint32 {
	s := uint32(now / 1e9)
	return s - min(e.Access, s)
}

var objectHelpLines = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

// OBJECT HELP
func objectHelp(c *Ctx) { replyHelpLines(c, objectHelpLines) }

// maxmemoryPolicy returns the configured eviction policy ("noeviction" without a config).
func maxmemoryPolicy(e *Engine) string {
	if e.Config != nil {
		if kv := e.Config.Get("maxmemory-policy"); len(kv) > 0 {
			return kv[0][1]
		}
	}
	return "noeviction"
}

func lfuPolicy(e *Engine) bool { return strings.HasSuffix(maxmemoryPolicy(e), "-lfu") }

// noSharedIntegers mirrors Redis: with a memory limit and an LRU or LFU policy every value needs
// its own access data, so integers are not shared.
func noSharedIntegers(e *Engine) bool {
	p := maxmemoryPolicy(e)
	return configInt(e, "maxmemory", 0) != 0 && (strings.HasSuffix(p, "-lru") || strings.HasSuffix(p, "-lfu"))
}

// configInt reads an integer configuration value, or def.
func configInt(e *Engine, name string, def int64) int64 {
	if e.Config != nil {
		if kv := e.Config.Get(name); len(kv) > 0 {
			if n, ok := ParseInt([]byte(kv[0][1])); ok {
				return n
			}
		}
	}
	return def
}
