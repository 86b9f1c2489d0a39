package command

import (
	"slices"
	"strings"
	"sync"

	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/src/command/meta"
)

var commandCommands = []*Spec{
	(&Spec{Name: "command", Arity: -1, Flags: Loading | Stale, Scope: ScopeConn, Run: commandAll}).sub(
		&Spec{Name: "command|count", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: commandCount},
		&Spec{Name: "command|docs", Arity: -2, Flags: Loading | Stale, Scope: ScopeConn, Run: commandDocs},
		&Spec{Name: "command|getkeys", Arity: -4, Flags: Loading | Stale, Scope: ScopeConn, Run: commandGetKeys},
		&Spec{Name: "command|getkeysandflags", Arity: -4, Flags: Loading | Stale, Scope: ScopeConn,
			Run: commandGetKeysAndFlags},
		&Spec{Name: "command|help", Arity: 2, Flags: Loading | Stale, Scope: ScopeConn, Run: commandHelp},
		&Spec{Name: "command|info", Arity: -2, Flags: Loading | Stale, Scope: ScopeConn, Run: commandInfo},
		&Spec{Name: "command|list", Arity: -2, Flags: Loading | Stale, Scope: ScopeConn, Run: commandList},
	),
}

// commandHelpLines is Redis 7.0's COMMAND HELP text.
var commandHelpLines = []string{
	"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)",
	"    Return details about all Redis commands.",
	"COUNT",
	"    Return the total number of commands in this Redis server.",
	"LIST",
	"    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]",
	"    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"GETKEYS <full-command>",
	"    Return the keys from a full Redis command.",
	"GETKEYSANDFLAGS <full-command>",
	"    Return the keys and the access flags from a full Redis command.",
	"HELP",
	"    Prints this help.",
}

// COMMAND
func commandAll(c *Ctx) {
	top := c.E.listedCommands() // rename-command (rename.go)
	c.ArrayLen(len(top))
	for _, d := range top {
		d.appendInfo(c)
	}
}

// COMMAND COUNT
func commandCount(c *Ctx) { c.Int(int64(len(c.E.listedCommands()))) }

// COMMAND HELP
func commandHelp(c *Ctx) { replyHelpLines(c, commandHelpLines) }

// COMMAND INFO [command-name ...]
func commandInfo(c *Ctx) {
	if len(c.Args) == 2 {
		commandAll(c)
		return
	}
	c.ArrayLen(len(c.Args) - 2)
	for _, name := range c.Args[2:] {
		if d := c.E.findListed(name); d != nil {
			d.appendInfo(c)
		} else {
			c.Null()
		}
	}
}

// COMMAND DOCS [command-name ...]
func commandDocs(c *Ctx) {
	found := c.E.listedCommands()
	if len(c.Args) > 2 {
		found = nil
		for _, name := range c.Args[2:] {
			if d := c.E.findListed(name); d != nil {
				found = append(found, d)
			}
		}
	}
	c.MapLen(len(found))
	for _, d := range found {
		c.BulkString(d.Name)
		d.appendDocs(c)
	}
}

// COMMAND LIST [FILTERBY MODULE module-name|ACLCAT category|PATTERN pattern]
func commandList(c *Ctx) {
	var filter func(d *cmdDoc) bool
	switch {
	case len(c.Args) == 2:
		filter = func(*cmdDoc) bool { return true }
	case len(c.Args) == 5 && strs.EqualFold(c.Args[2], "FILTERBY"):
		filter = listFilter(c.Args[3], string(c.Args[4]))
	}
	if filter == nil {
		c.Err(ErrSyntax)
		return
	}
	var names []string
	for _, d := range c.E.listedCommands() {
		names = d.appendNames(names, filter)
	}
	c.ArrayLen(len(names))
	for _, n := range names {
		c.BulkString(n)
	}
}

// listFilter returns COMMAND LIST's filter for FILTERBY kind arg, or nil for an unknown kind.
func listFilter(kind []byte, arg string) func(d *cmdDoc) bool {
	switch {
	case strs.EqualFold(kind, "MODULE"):
		return func(d *cmdDoc) bool { return d.own && strings.EqualFold(arg, d.module) }
	case strs.EqualFold(kind, "ACLCAT"):
		return func(d *cmdDoc) bool {
			return meta.ACLCategory(arg) && slices.ContainsFunc(d.ACL, func(cat string) bool {
				return strings.EqualFold(cat[1:], arg)
			})
		}
	case strs.EqualFold(kind, "PATTERN"):
		return func(d *cmdDoc) bool { return strs.Glob([]byte(arg), []byte(d.Name), true) }
	}
	return nil
}

// COMMAND GETKEYS command [arg ...]
func commandGetKeys(c *Ctx) { getKeysGeneric(c, false) }

// COMMAND GETKEYSANDFLAGS command [arg ...]
func commandGetKeysAndFlags(c *Ctx) { getKeysGeneric(c, true) }

// getKeysGeneric reports the keys HotKV routes the command line in c.Args[2:] by, with the access
// flags of the Redis key spec that finds each one.
func getKeysGeneric(c *Ctx, withFlags bool) {
	argv := c.E.renamedArgs(c.Args[2:]) // rename-command (rename.go)
	d := findCommandArgs(argv)
	switch {
	case d == nil:
		c.Err(ErrInvalidCommand)
		return
	case !d.hasKeys():
		c.Err(ErrNoKeyArguments)
		return
	case (d.spec.Arity > 0 && len(argv) != d.spec.Arity) || len(argv) < -d.spec.Arity:
		c.Err(ErrInvalidArgCount)
		return
	}
	pos := d.spec.keyIndexes(argv, nil)
	if len(pos) == 0 && d.spec.Flags&NoMandatoryKeys == 0 {
		c.Err(ErrInvalidArguments)
		return
	}
	var flags [][]string
	if withFlags {
		flags = d.keyFlags(argv, pos)
	}
	c.ArrayLen(len(pos))
	for i, p := range pos {
		if !withFlags {
			c.Bulk(argv[p])
			continue
		}
		c.ArrayLen(2)
		c.Bulk(argv[p])
		c.SetLen(len(flags[i]))
		for _, f := range flags[i] {
			c.Simple(f)
		}
	}
}

// hotkvModule is the module name COMMAND DOCS and COMMAND LIST FILTERBY MODULE give HotKV's own
// commands: to Redis clients they look like the commands of a loaded module.
const hotkvModule = "hotkv"

// cmdDoc is what COMMAND reports about one command of the table: Redis's recorded metadata for
// the commands Redis has, metadata derived from the Spec for HotKV's own.
type cmdDoc struct {
	*meta.Command
	spec *Spec
	subs []*cmdDoc // in the order Redis lists them, then HotKV's own by name
	own  bool      // not a Redis command
	// module is the module an own command is listed under: hotkv, or Redis 8's vectorset.
	module string
}

type cmdIndex struct {
	byName map[string]*cmdDoc // full names, subcommands included
	top    []*cmdDoc          // by name
}

// commandIndex returns the index of the table, built on first use.
var commandIndex func() *cmdIndex

// The index reads the table, which lists this family's handlers that read the index: assigning it
// in init breaks that initialization cycle.
func init() { commandIndex = sync.OnceValue(func() *cmdIndex { return buildIndex(table) }) }

func buildIndex(t map[string]*Spec) *cmdIndex {
	x := &cmdIndex{byName: map[string]*cmdDoc{}}
	for _, s := range t {
		x.top = append(x.top, x.add(s))
	}
	slices.SortFunc(x.top, func(a, b *cmdDoc) int { return strings.Compare(a.Name, b.Name) })
	return x
}

func (x *cmdIndex) add(s *Spec) *cmdDoc {
	d := &cmdDoc{spec: s, Command: meta.Lookup(s.Name)}
	if d.Command == nil {
		d.own = true
		d.module = commandModule(s.Name) // vset.go
		d.Command = meta.New(s.Name, s.Arity, s.Flags.Names(), s.FirstKey, s.LastKey, s.Step, d.module)
		if cats := ownACL(s); cats != nil {
			d.Command.AddACL(cats...)
		}
	}
	x.byName[s.Name] = d
	var own []*cmdDoc
	for _, sub := range s.Subs {
		sd := x.add(sub)
		if sd.own {
			own = append(own, sd)
		}
	}
	for _, name := range d.Subs { // Redis's order for the subcommands Redis has
		if sd := x.byName[name]; sd != nil && s.Subs[name[len(s.Name)+1:]] == sd.spec {
			d.subs = append(d.subs, sd)
		}
	}
	slices.SortFunc(own, func(a, b *cmdDoc) int { return strings.Compare(a.Name, b.Name) })
	d.subs = append(d.subs, own...)
	return d
}

// findCommand finds a command or subcommand by its full name ("get", "CONFIG|get"), any case.
func findCommand(name []byte) *cmdDoc {
	if len(name) > 256 {
		return nil
	}
	return commandIndex().byName[strings.ToLower(string(name))]
}

// findCommandArgs finds the command a full command line calls, as Redis's lookupCommand does: a
// container with arguments names one of its subcommands.
func findCommandArgs(argv [][]byte) *cmdDoc {
	if slices.Contains(argv[0], '|') {
		return nil
	}
	d := findCommand(argv[0])
	if d != nil && d.spec.Subs != nil && len(argv) > 1 {
		if slices.Contains(argv[1], '|') {
			return nil
		}
		return findCommand([]byte(d.Name + "|" + string(argv[1])))
	}
	return d
}

// appendInfo replies the command's COMMAND INFO entry.
func (d *cmdDoc) appendInfo(c *Ctx) {
	c.ArrayLen(10)
	c.Out = append(c.Out, d.Info(c.Proto)...)
	if d.spec.Subs == nil {
		c.SetLen(0)
		return
	}
	c.ArrayLen(len(d.subs))
	for _, s := range d.subs {
		s.appendInfo(c)
	}
}

// appendDocs replies the command's COMMAND DOCS map.
func (d *cmdDoc) appendDocs(c *Ctx) {
	pairs, n := d.Docs(c.Proto)
	if d.spec.Subs == nil {
		c.MapLen(n)
		c.Out = append(c.Out, pairs...)
		return
	}
	c.MapLen(n + 1)
	c.Out = append(c.Out, pairs...)
	c.BulkString("subcommands")
	c.MapLen(len(d.subs))
	for _, s := range d.subs {
		c.BulkString(s.Name)
		s.appendDocs(c)
	}
}

// appendNames appends the names of the command and its subcommands that keep passes.
func (d *cmdDoc) appendNames(dst []string, keep func(*cmdDoc) bool) []string {
	if keep(d) {
		dst = append(dst, d.Name)
	}
	for _, s := range d.subs {
		dst = s.appendNames(dst, keep)
	}
	return dst
}

// hasKeys reports whether COMMAND GETKEYS may find keys in the command (Redis's
// doesCommandHaveKeys): it has a key spec for real keys, or HotKV's own command has a key range or
// a key function.
func (d *cmdDoc) hasKeys() bool {
	if d.own {
		return d.spec.FirstKey > 0 || d.spec.Keys != nil
	}
	return slices.ContainsFunc(d.KeySpecs, func(k meta.KeySpec) bool { return !k.Has("not_key") })
}

// keyFlags returns the access flags of the keys at positions pos of argv: those of the key spec
// that finds each key (as Redis's getKeysUsingKeySpecs reports them), else those of the command's
// spec for keys found by parsing (SORT's STORE key), else the flags of HotKV's derived spec.
// SET and BITFIELD, whose key specs say variable_flags, decide from their arguments as Redis's
// setGetKeys and bitfieldGetKeys do.
func (d *cmdDoc) keyFlags(argv [][]byte, pos []int) [][]string {
	refs, _ := meta.Keys(d.KeySpecs, argv, true, nil)
	out := make([][]string, len(pos))
	for i, p := range pos {
		if f := variableKeyFlags(d.Name, argv); f != nil {
			out[i] = f
			continue
		}
		spec := -1
		for _, r := range refs {
			if r.Pos == p {
				spec = r.Spec
				break
			}
		}
		if spec < 0 {
			for j := range d.KeySpecs {
				if d.KeySpecs[j].BeginSearch == "unknown" {
					spec = j // the last one wins: Redis lists the STORE-like spec last
				}
			}
		}
		if spec < 0 {
			out[i] = []string{"RW", "access", "update"}
			continue
		}
		out[i] = slices.DeleteFunc(slices.Clone(d.KeySpecs[spec].Flags), func(f string) bool {
			return f == "incomplete" || f == "variable_flags"
		})
	}
	return out
}

// variableKeyFlags returns the key flags of the commands whose flags depend on their arguments.
func variableKeyFlags(name string, argv [][]byte) []string {
	switch name {
	case "set":
		for _, a := range argv[3:] {
			if strs.EqualFold(a, "GET") {
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"OW", "update"}
	case "bitfield":
		if bitfieldReadOnly(argv) {
			return []string{"RO", "access"}
		}
		return []string{"RW", "access", "update"}
	}
	return nil
}

// bitfieldReadOnly reports whether a BITFIELD call only reads: GET and OVERFLOW with their
// arguments, nothing else (a syntax error counts as a write, as in Redis).
func bitfieldReadOnly(argv [][]byte) bool {
	for i := 2; i < len(argv); i++ {
		left := len(argv) - i - 1
		switch {
		case strs.EqualFold(argv[i], "GET") && left >= 2:
			i += 2
		case strs.EqualFold(argv[i], "OVERFLOW") && left >= 1:
			i++
		default:
			return false
		}
	}
	return true
}
