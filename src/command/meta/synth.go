package meta

import (
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/net/resp"
)

// aclCategories lists Redis's ACL categories in the order COMMAND INFO prints them.
var aclCategories = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog",
	"geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
	"transaction", "scripting",
}

// ACLCategory reports whether name (without '@', any case) is an ACL category.
func ACLCategory(name string) bool {
	for _, c := range aclCategories {
		if strs.EqualFold([]byte(c), name) {
			return true
		}
	}
	return false
}

// New describes a command Redis does not have (one of HotKV's own) from its command-table row, the
// way Redis describes a command that brings no metadata of its own (a module command): ACL
// categories implied by its flags, one key spec for its key range, and docs that name only its
// group, "module", and the module, module.
func New(name string, arity int, flags []string, first, last, step int, module string) *Command {
	c := &Command{Name: name, Arity: arity, Flags: flags, FirstKey: first, LastKey: last, Step: step,
		ACL: impliedACL(flags)}
	if first > 0 {
		c.KeySpecs = []KeySpec{rangeSpec(flags, first, last, step)}
	}
	for i, proto := range []int{2, 3} {
		c.info[i] = string(c.appendInfo(nil, proto))
		d := resp.AppendBulkString(nil, "group")
		d = resp.AppendBulkString(d, "module")
		d = resp.AppendBulkString(d, "module")
		d = resp.AppendBulkString(d, module)
		c.docs[i] = string(d)
	}
	c.docPairs = 2
	return c
}

// AddACL adds categories (with their '@') to a command New described, in COMMAND INFO's order:
// HotKV's own commands name categories their flags do not imply (@keyspace for TAG.*).
func (c *Command) AddACL(cats ...string) {
	has := map[string]bool{}
	for _, a := range append(c.ACL, cats...) {
		has[a] = true
	}
	c.ACL = c.ACL[:0]
	for _, a := range aclCategories {
		if has["@"+a] {
			c.ACL = append(c.ACL, "@"+a)
		}
	}
	for i, proto := range []int{2, 3} {
		c.info[i] = string(c.appendInfo(nil, proto))
	}
}

// impliedACL returns the ACL categories Redis derives from command flags (setImplicitACLCategories).
func impliedACL(flags []string) []string {
	has := map[string]bool{}
	for _, f := range flags {
		has[f] = true
	}
	cat := map[string]bool{
		"write": has["write"], "read": has["readonly"], "admin": has["admin"], "dangerous": has["admin"],
		"pubsub": has["pubsub"], "fast": has["fast"], "slow": !has["fast"], "blocking": has["blocking"],
	}
	var out []string
	for _, c := range aclCategories {
		if cat[c] {
			out = append(out, "@"+c)
		}
	}
	return out
}

// rangeSpec is the key spec of a first/last/step key range, with access flags guessed from the
// command's flags: a write may read and update its keys, a read only reads them.
func rangeSpec(flags []string, first, last, step int) KeySpec {
	k := KeySpec{Flags: []string{"RO", "access"}, BeginSearch: "index", Index: first, FindKeys: "range",
		LastKey: last, KeyStep: step}
	for _, f := range flags {
		if f == "write" {
			k.Flags = []string{"RW", "access", "update"}
		}
	}
	if last >= 0 {
		k.LastKey = last - first
	}
	return k
}

// appendInfo encodes COMMAND INFO's fields 1-9 as Redis does.
func (c *Command) appendInfo(b []byte, proto int) []byte {
	b = resp.AppendBulkString(b, c.Name)
	b = resp.AppendInt(b, int64(c.Arity))
	b = appendSimpleSet(b, proto, c.Flags)
	b = resp.AppendInt(b, int64(c.FirstKey))
	b = resp.AppendInt(b, int64(c.LastKey))
	b = resp.AppendInt(b, int64(c.Step))
	b = appendSimpleSet(b, proto, c.ACL)
	b = resp.AppendSetLen(b, proto, 0) // tips
	b = resp.AppendSetLen(b, proto, len(c.KeySpecs))
	for i := range c.KeySpecs {
		b = c.KeySpecs[i].appendTo(b, proto)
	}
	return b
}

func appendSimpleSet(b []byte, proto int, items []string) []byte {
	b = resp.AppendSetLen(b, proto, len(items))
	for _, s := range items {
		b = resp.AppendSimple(b, s)
	}
	return b
}

// appendTo encodes an index/range key spec as COMMAND INFO does.
func (k *KeySpec) appendTo(b []byte, proto int) []byte {
	b = resp.AppendMapLen(b, proto, 3)
	b = resp.AppendBulkString(b, "flags")
	b = appendSimpleSet(b, proto, k.Flags)
	b = resp.AppendBulkString(b, "begin_search")
	b = appendSearch(b, proto, "index", []string{"index"}, k.Index)
	b = resp.AppendBulkString(b, "find_keys")
	return appendSearch(b, proto, "range", []string{"lastkey", "keystep", "limit"}, k.LastKey, k.KeyStep, k.Limit)
}

// appendSearch encodes {type: typ, spec: {names[i]: nums[i], …}}.
func appendSearch(b []byte, proto int, typ string, names []string, nums ...int) []byte {
	b = resp.AppendMapLen(b, proto, 2)
	b = resp.AppendBulkString(b, "type")
	b = resp.AppendBulkString(b, typ)
	b = resp.AppendBulkString(b, "spec")
	b = resp.AppendMapLen(b, proto, len(names))
	for i, n := range names {
		b = resp.AppendBulkString(b, n)
		b = resp.AppendInt(b, int64(nums[i]))
	}
	return b
}
