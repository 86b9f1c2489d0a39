package command

import (
	"slices"
	"sync"

	"github.com/hotkv/hotkv/src/acl"
	"github.com/hotkv/hotkv/src/command/meta"
)

// The ACL catalog: every command rules may name. It is HotKV's table (a Spec's id is its bit in
// a selector's bitmap) plus the Redis 7.0.15 commands and subcommands HotKV lacks (ids after
// numSpecs), so an ACL file written by Redis, naming any Redis command, loads here, and ACL LIST
// picks categories counting the same commands Redis counts. Categories are those COMMAND INFO
// reports: Redis's for its commands, the flag-implied ones plus ownACL for HotKV's.

type aclTables struct {
	cat  *acl.Catalog
	cmds []*acl.Cmd // by Spec id
	// keyPerm is the permission every key of a command needs, by Spec id (aclVariable: it
	// depends on the arguments or on which key spec found the key).
	keyPerm []acl.Perm
	chans   []uint8 // the channels a command names, by Spec id (chanNone …)
	// noKeys marks the commands whose key arguments are not keys to ACL (Redis's
	// doesCommandHaveKeys: SPUBLISH's and SSUBSCRIBE's shard channels are flagged not_key).
	noKeys []bool
}

const aclVariable acl.Perm = 0x80

// What a command's channel arguments are (Redis's getChannelsFromCommand, publish and subscribe
// flags only: those are the ones ACL checks).
const (
	chanNone      uint8 = iota
	chanPublish         // args[1]
	chanSubscribe       // args[1:]
	chanPattern         // args[1:], patterns matched literally
)

var aclTablesOnce = sync.OnceValue(buildACLTables)

func buildACLTables() *aclTables {
	t := &aclTables{cmds: make([]*acl.Cmd, numSpecs), keyPerm: make([]acl.Perm, numSpecs),
		chans: make([]uint8, numSpecs), noKeys: make([]bool, numSpecs)}
	x := commandIndex()
	next := numSpecs
	var top []*acl.Cmd
	for _, d := range x.top {
		c := t.fromDoc(d)
		for _, sd := range d.subs {
			c.Subs = append(c.Subs, t.fromDoc(sd))
		}
		if d.Command != nil && !d.own { // Redis subcommands HotKV lacks
			for _, name := range d.Command.Subs {
				if x.byName[name] == nil {
					c.Subs = append(c.Subs, metaCmd(name, &next))
				}
			}
		}
		top = append(top, c)
	}
	for _, name := range meta.Names() {
		if x.byName[name] != nil {
			continue
		}
		c := metaCmd(name, &next)
		for _, sub := range meta.Lookup(name).Subs {
			c.Subs = append(c.Subs, metaCmd(sub, &next))
		}
		top = append(top, c)
	}
	t.cat = acl.NewCatalog(top)
	return t
}

func (t *aclTables) fromDoc(d *cmdDoc) *acl.Cmd {
	s := d.spec
	c := &acl.Cmd{ID: s.id, Name: s.Name, Cats: catBits(d.ACL), NoAuth: s.Flags&NoAuth != 0, Redis: !d.own}
	t.cmds[s.id] = c
	t.keyPerm[s.id] = specKeyPerm(d)
	t.noKeys[s.id] = !d.hasKeys()
	switch s.Name {
	case "publish", "spublish":
		t.chans[s.id] = chanPublish
	case "subscribe", "ssubscribe":
		t.chans[s.id] = chanSubscribe
	case "psubscribe":
		t.chans[s.id] = chanPattern
	}
	return c
}

func metaCmd(name string, next *int) *acl.Cmd {
	m := meta.Lookup(name)
	c := &acl.Cmd{ID: *next, Name: name, Cats: catBits(m.ACL), NoAuth: slices.Contains(m.Flags, "no_auth"), Redis: true}
	*next++
	return c
}

func catBits(cats []string) uint32 {
	var b uint32
	for _, c := range cats {
		if len(c) > 1 {
			b |= acl.CategoryBit(c[1:])
		}
	}
	return b
}

// specKeyPerm is the permission a command's keys need when all its key specs agree (Redis's
// ACLSelectorCheckKey: access needs read; insert, delete and update need write).
func specKeyPerm(d *cmdDoc) acl.Perm {
	if d.Name == "set" || d.Name == "bitfield" { // variableKeyFlags
		return aclVariable
	}
	perm, first := acl.Perm(0), true
	for i := range d.KeySpecs {
		k := &d.KeySpecs[i]
		if k.Has("not_key") {
			continue
		}
		p := flagsPerm(k.Flags)
		if !first && p != perm {
			return aclVariable
		}
		perm, first = p, false
	}
	return perm
}

func flagsPerm(flags []string) acl.Perm {
	var p acl.Perm
	for _, f := range flags {
		switch f {
		case "access":
			p |= acl.Read
		case "insert", "delete", "update":
			p |= acl.Write
		}
	}
	return p
}
