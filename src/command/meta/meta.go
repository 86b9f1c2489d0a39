// Package meta is Redis 7.0.15's command metadata as data: for every Redis command and subcommand,
// the exact replies of COMMAND INFO and COMMAND DOCS, recorded from a real server by tools/cmdmeta.
// HotKV answers COMMAND for the Redis commands it implements with these bytes, and its golden test
// checks the command table's arity, flags and key positions against them.
//
// The data file is a RESP3 stream, one record per top-level command in name order:
// *3 CRLF $name CRLF <COMMAND INFO name reply> <COMMAND DOCS name reply>, both as a RESP3 client
// receives them. RESP2 replies are derived with ToRESP2; the generator refuses to write the file
// unless that reproduces the server's own RESP2 replies byte for byte.
package meta

//go:generate go run ../../../tools/cmdmeta -out redis-7.0.15.resp

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Version is the Redis version the metadata was recorded from.
const Version = "7.0.15"

//go:embed redis-7.0.15.resp
var data string

// Command is one Redis command or subcommand as COMMAND INFO describes it.
type Command struct {
	Name     string // lower case; a subcommand is "container|sub"
	Arity    int
	Flags    []string
	FirstKey int
	LastKey  int
	Step     int
	ACL      []string // ACL categories, with their '@'
	Tips     []string
	KeySpecs []KeySpec
	Subs     []string // full names of the subcommands, in the order Redis lists them

	info     [2]string // COMMAND INFO fields 1-9 (name through key specs), RESP2 and RESP3
	docs     [2]string // the COMMAND DOCS map's pairs except "subcommands", RESP2 and RESP3
	docPairs int
}

// Info returns the exact encoding of COMMAND INFO's first nine fields for this command (name,
// arity, flags, first key, last key, step, ACL categories, tips, key specs) in protocol proto. The
// caller writes the 10-element array header before it and the subcommands after it.
func (c *Command) Info(proto int) string { return c.info[protoIndex(proto)] }

// Docs returns the exact encoding of the pairs of this command's COMMAND DOCS map other than
// "subcommands" (which Redis always sends last), and how many pairs that is.
func (c *Command) Docs(proto int) (pairs string, n int) { return c.docs[protoIndex(proto)], c.docPairs }

func protoIndex(proto int) int {
	if proto >= 3 {
		return 1
	}
	return 0
}

type db struct {
	cmds  map[string]*Command
	names []string // top-level, sorted
}

var load = sync.OnceValue(func() *db {
	d, err := parseData(data)
	if err != nil {
		panic("BUG: embedded command metadata: " + err.Error())
	}
	return d
})

// Lookup returns the metadata of a command or subcommand ("config|get") by its lower-case name, or
// nil when Redis 7.0 has no such command.
func Lookup(name string) *Command { return load().cmds[name] }

// Names returns the top-level command names, sorted.
func Names() []string { return load().names }

// parseData parses the whole metadata file.
func parseData(s string) (*db, error) {
	d := &db{cmds: map[string]*Command{}}
	for pos := 0; pos < len(s); {
		rec, next, err := parseValue(s, pos)
		if err != nil {
			return nil, fmt.Errorf("record at byte %d: %w", pos, err)
		}
		if err := d.addRecord(rec); err != nil {
			return nil, fmt.Errorf("record at byte %d: %w", pos, err)
		}
		pos = next
	}
	sort.Strings(d.names)
	return d, nil
}

// addRecord adds one top-level command and its subcommands from a [name, info, docs] record.
func (d *db) addRecord(rec value) error {
	if rec.kind != '*' || len(rec.elems) != 3 {
		return errMalformed
	}
	info, docs := rec.elems[1], rec.elems[2]
	if info.kind != '*' || len(info.elems) != 1 || docs.kind != '%' || len(docs.elems) != 2 {
		return fmt.Errorf("%s: unexpected reply shape", rec.elems[0].str)
	}
	if err := d.addInfo(info.elems[0]); err != nil {
		return fmt.Errorf("%s: %w", rec.elems[0].str, err)
	}
	if err := d.addDocs(docs.elems[0].str, docs.elems[1]); err != nil {
		return fmt.Errorf("%s: %w", rec.elems[0].str, err)
	}
	d.names = append(d.names, rec.elems[0].str)
	return nil
}

// addInfo adds a command from its 10-field COMMAND INFO entry, and its subcommands.
func (d *db) addInfo(e value) error {
	f := e.elems
	if e.kind != '*' || len(f) != 10 {
		return errMalformed
	}
	c := &Command{Name: f[0].str, Arity: int(f[1].n), Flags: f[2].strs(), FirstKey: int(f[3].n),
		LastKey: int(f[4].n), Step: int(f[5].n), ACL: f[6].strs(), Tips: f[7].strs()}
	for i := range f[8].elems {
		ks, err := parseKeySpec(&f[8].elems[i])
		if err != nil {
			return err
		}
		c.KeySpecs = append(c.KeySpecs, ks)
	}
	// Fields 1-9 are contiguous: from after the "*10" header to the start of the subcommands.
	start := strings.Index(e.raw, "\r\n") + 2
	body := e.raw[start : len(e.raw)-len(f[9].raw)]
	if err := c.setInfo(body); err != nil {
		return err
	}
	if d.cmds[c.Name] != nil {
		return fmt.Errorf("%s listed twice", c.Name)
	}
	d.cmds[c.Name] = c
	for _, sub := range f[9].elems {
		if err := d.addInfo(sub); err != nil {
			return err
		}
		c.Subs = append(c.Subs, sub.elems[0].str)
	}
	return nil
}

func (c *Command) setInfo(resp3 string) error {
	resp2, err := ToRESP2(resp3)
	c.info = [2]string{resp2, resp3}
	return err
}

// addDocs records a command's COMMAND DOCS map, and its subcommands' maps.
func (d *db) addDocs(name string, m value) error {
	c := d.cmds[name]
	if c == nil || m.kind != '%' {
		return fmt.Errorf("docs of unknown command %q", name)
	}
	var pairs strings.Builder
	for i := 0; i+1 < len(m.elems); i += 2 {
		k, v := m.elems[i], m.elems[i+1]
		if k.str != "subcommands" {
			pairs.WriteString(k.raw)
			pairs.WriteString(v.raw)
			c.docPairs++
			continue
		}
		if i+2 != len(m.elems) {
			return fmt.Errorf("%s: subcommands is not the last doc field", name)
		}
		for j := 0; j+1 < len(v.elems); j += 2 {
			if err := d.addDocs(v.elems[j].str, v.elems[j+1]); err != nil {
				return err
			}
		}
	}
	resp2, err := ToRESP2(pairs.String())
	c.docs = [2]string{resp2, pairs.String()}
	return err
}
