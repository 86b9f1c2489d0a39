package command

import (
	"bytes"
	"slices"

	"github.com/hotkv/hotkv/ds/strs"
)

// The SORT family. SORT and SORT_RO sort a list, set or sorted set by its elements or by the
// values of keys named by a BY pattern, and reply the elements (or the values GET patterns name
// for them), or store them as a list (SORT ... STORE).
//
// Where it runs: BY and GET patterns read keys derived from the data, which live on any shard,
// so such a SORT needs every shard; a plain SORT needs only the shards of its source and STORE
// destination. The route stage picks a command's scope from its name alone, before the
// arguments are read, so SORT is ScopeSelf: the connection runs it as a barrier holding no
// token, and the handler parses its options and then locks either its key shards (as a ScopeKeys
// barrier does) or every shard (as ScopeAll does), serving blocked clients of the shards it held
// before it lets them go, as the barrier would. The price is that a plain SORT always waits for
// the earlier commands of its batch instead of running on its shard's actor.
var sortCommands = []*Spec{
	{Name: "sort", Arity: -2, Flags: Write | DenyOOM | MovableKeys, FirstKey: 1, LastKey: 1, Step: 1,
		Scope: ScopeSelf, Keys: sortKeys, Run: sortCmd},
	{Name: "sort_ro", Arity: -2, Flags: ReadOnly | MovableKeys, FirstKey: 1, LastKey: 1, Step: 1,
		Scope: ScopeSelf, Keys: sortROKeys, Run: sortRO},
}

// sortOptions are SORT's parsed arguments.
type sortOptions struct {
	by       []byte // BY pattern with a '*'; nil: the elements are their own weights
	dontsort bool   // some BY pattern had no '*': keep the source's order
	desc     bool
	alpha    bool
	offset   int64 // LIMIT offset count; count -1 is no limit
	count    int64
	store    []byte   // STORE destination; nil: reply the result
	gets     [][]byte // GET patterns, in order
}

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE dst]
func sortCmd(c *Ctx) { sortGeneric(c, false) }

// SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
func sortRO(c *Ctx) { sortGeneric(c, true) }

// sortGeneric parses, takes the tokens the options need (see sortCommands) and sorts. The
// tokens are released by defer so that a panic in the sort, which call recovers, cannot leave a
// shard locked. What the sort changed is committed (replicated, its events queued) before the
// clients its STORE woke are served, as Redis serves them after the command.
func sortGeneric(c *Ctx, readonly bool) {
	st := getSorter()
	defer putSorter(st)
	if msg := st.parse(c.Args, readonly); msg != "" {
		c.Err(msg)
		return
	}
	g := c.E.Group
	if c.tx != nil { // queued in a transaction: EXEC holds every shard (multi.go)
		st.run(c)
		return
	}
	if st.readsOtherKeys() {
		g.LockAll()
		defer g.UnlockAll()
		c.E.enter(nil, true, c)
		defer c.E.leave(nil, true, c)
		if !c.E.selfGate(c) {
			return
		}
		c.E.selfAccount(c, func() { st.run(c) })
		c.E.commit(c, c.slot)
		c.E.serveReadyAll(c.Now, c.slot)
		return
	}
	var buf [2]int32
	shards := append(buf[:0], c.E.shardOf(c.Args[1]))
	if st.store != nil {
		shards = append(shards, c.E.shardOf(st.store))
		slices.Sort(shards)
		shards = slices.Compact(shards) // Group.Lock spins forever on a repeated shard
	}
	g.Lock(shards)
	defer g.Unlock(shards)
	c.E.enter(shards, false, c)
	defer c.E.leave(shards, false, c)
	if !c.E.selfGate(c) {
		return
	}
	c.E.selfAccount(c, func() { st.run(c) })
	c.E.commit(c, c.slot)
	c.E.serveReadyIn(shards, c.Now, c.slot)
}

// parse reads the options after the key as Redis does, left to right, replying the first
// error: option names compare as C strings, ignoring case; LIMIT, BY, GET and STORE need their
// arguments or are a syntax error; SORT_RO knows no STORE. A later option overrides an earlier
// one, except that a BY without '*' keeps the order for good.
func (o *sortOptions) parse(args [][]byte, readonly bool) string {
	o.count = -1
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		switch a := args[j]; {
		case optIs(a, "ASC"):
			o.desc = false
		case optIs(a, "DESC"):
			o.desc = true
		case optIs(a, "ALPHA"):
			o.alpha = true
		case optIs(a, "LIMIT") && left >= 2:
			var ok1, ok2 bool
			o.offset, ok1 = ParseInt(args[j+1])
			o.count, ok2 = ParseInt(args[j+2])
			if !ok1 || !ok2 {
				return ErrNotInt
			}
			j += 2
		case !readonly && optIs(a, "STORE") && left >= 1:
			o.store = args[j+1]
			j++
		case optIs(a, "BY") && left >= 1:
			o.by = args[j+1]
			if bytes.IndexByte(cstr(o.by), '*') < 0 {
				o.dontsort = true
			}
			j++
		case optIs(a, "GET") && left >= 1:
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			return ErrSyntax
		}
	}
	if o.dontsort {
		o.by = nil // weights are never read when nothing is sorted
	}
	return ""
}

// readsOtherKeys reports whether a BY or GET pattern names keys to read, which may be anywhere.
func (o *sortOptions) readsOtherKeys() bool {
	if o.by != nil {
		return true
	}
	for _, p := range o.gets {
		if pat := parsePattern(p); !pat.self && pat.star >= 0 {
			return true
		}
	}
	return false
}

// sortKeys finds SORT's keys as Redis's sortGetKeys does: the source, and the argument after the
// last STORE, skipping the arguments of LIMIT, GET and BY (other words are taken to have none).
func sortKeys(args [][]byte, dst []int) []int {
	dst = append(dst, 1)
	store := 0
	for i := 2; i < len(args); i++ {
		switch a := args[i]; {
		case optIs(a, "LIMIT"):
			i += 2
		case optIs(a, "GET"), optIs(a, "BY"):
			i++
		case optIs(a, "STORE") && i+1 < len(args):
			store = i + 1
		}
	}
	if store > 0 {
		dst = append(dst, store)
	}
	return dst
}

// sortROKeys is SORT_RO's one declared key, the source (its BY and GET keys are undeclared).
func sortROKeys(args [][]byte, dst []int) []int { return append(dst, 1) }

// optIs compares an option name with an upper-case word as C's strcasecmp does, so the name ends
// at its first NUL byte.
func optIs(b []byte, word string) bool { return strs.EqualFold(cstr(b), word) }

// cstr returns b up to its first NUL byte, where C code reading it as a string stops.
func cstr(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}
