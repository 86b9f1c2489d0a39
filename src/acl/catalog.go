// Package acl is Redis 7.0's access control lists as data: users, their selectors (command
// bitmaps, key and channel patterns), the SETUSER rule language, the describe form ACL LIST and
// ACL SAVE print, ACL files and the ACL LOG ring. It knows nothing of RESP or of the command
// table: the command layer hands it a Catalog of the commands it may name.
//
// Concurrency: a user's rules are an immutable *User published through its Entry's atomic
// pointer. SETUSER builds a changed copy and stores it, so a connection checking a command loads
// one pointer and reads without locks; the Registry's mutex serializes writers only.
package acl

import (
	"sort"
	"strings"
)

// Categories are Redis 7.0's ACL categories, in the order ACL CAT lists them.
var Categories = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog",
	"geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
	"transaction", "scripting",
}

// CategoryBit returns the bit of a category name (without '@', any case), or 0.
func CategoryBit(name string) uint32 {
	for i, c := range Categories {
		if strings.EqualFold(c, name) {
			return 1 << i
		}
	}
	return 0
}

// Cmd is one command or subcommand an ACL rule may name.
type Cmd struct {
	ID     int    // the command layer's id (bit in a selector's bitmap); unique, < Catalog size
	Name   string // full lower-case name: "get", "client|kill"
	Cats   uint32 // CategoryBit bits
	NoAuth bool   // no_auth commands are always allowed (AUTH, HELLO, ...)
	// Redis marks a command Redis 7.0.15 has: describing rules counts only those when it picks
	// categories, so ACL LIST reads as Redis's does for the same rules.
	Redis  bool
	Parent *Cmd
	Subs   []*Cmd // sorted by name
}

// Catalog is the set of commands rules name, fixed when the server starts.
type Catalog struct {
	byName map[string]*Cmd
	top    []*Cmd // sorted by name
	size   int    // ids are < size; id size is the "future commands" bit
}

// NewCatalog builds a catalog from top-level commands (their Subs filled, Parent set by it).
func NewCatalog(top []*Cmd) *Catalog {
	c := &Catalog{byName: map[string]*Cmd{}}
	for _, t := range top {
		c.add(t)
		for _, s := range t.Subs {
			s.Parent = t
			c.add(s)
		}
		sort.Slice(t.Subs, func(i, j int) bool { return t.Subs[i].Name < t.Subs[j].Name })
		c.top = append(c.top, t)
	}
	sort.Slice(c.top, func(i, j int) bool { return c.top[i].Name < c.top[j].Name })
	return c
}

func (c *Catalog) add(m *Cmd) {
	if c.byName[m.Name] != nil {
		panic("BUG: acl catalog names a command twice: " + m.Name)
	}
	c.byName[m.Name] = m
	c.size = max(c.size, m.ID+1)
}

// words is the length of a selector's bitmap, the future-commands bit included.
func (c *Catalog) words() int { return c.size/64 + 1 }

// futureBit is the reserved id only +@all sets (Redis's USER_COMMAND_BITS_COUNT-1).
func (c *Catalog) futureBit() int { return c.size }

// Lookup finds "cmd" or "cmd|sub" as Redis's lookupCommandBySds does: any case, a subcommand
// only of a container, never three parts.
func (c *Catalog) Lookup(name string) *Cmd {
	name = strings.ToLower(name)
	base, sub, two := strings.Cut(name, "|")
	if !two {
		return c.byName[name]
	}
	if strings.Contains(sub, "|") {
		return nil
	}
	b := c.byName[base]
	if b == nil || b.Parent != nil || len(b.Subs) == 0 {
		return nil
	}
	return c.byName[name]
}

// ByName returns the command of an exact full lower-case name.
func (c *Catalog) ByName(name string) *Cmd { return c.byName[name] }

// each calls fn for every command, each container before its subcommands.
func (c *Catalog) each(fn func(*Cmd)) {
	for _, t := range c.top {
		fn(t)
		for _, s := range t.Subs {
			fn(s)
		}
	}
}

// InCategory returns the full names of the commands in a category, containers' subcommands
// included, in catalog order (ACL CAT category).
func (c *Catalog) InCategory(bit uint32) []string {
	var out []string
	c.each(func(m *Cmd) {
		if m.Cats&bit != 0 {
			out = append(out, m.Name)
		}
	})
	return out
}
