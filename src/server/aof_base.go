package server

// The command-form AOF base (aof-use-rdb-preamble no): the rewrite's point-in-time RDB stream
// (Engine.WriteRDB) decoded again and written as the commands Redis 7.0's
// rewriteAppendOnlyFileRio writes: SELECT per database, SET, RPUSH/SADD/ZADD/HMSET in groups
// of 64 items, XADD, XSETID and the consumer groups' XGROUP/XCLAIM for streams, PEXPIREAT for
// expiry, FUNCTION LOAD for libraries; a vector set (HotKV's module value) as RESTORE of its
// DUMP payload, so the graph loads as saved.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/hotkv/hotkv/ds/tags"
	"github.com/hotkv/hotkv/persist/rdb"
)

// itemsPerCmd is Redis's AOF_REWRITE_ITEMS_PER_CMD.
const itemsPerCmd = 64

// rdbToCommands reads an RDB stream from r and writes it to w as AOF commands.
func rdbToCommands(w io.Writer, r io.Reader) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := &cmdWriter{w: bw, db: -1}
	d := rdb.NewDecoder(r)
	for {
		rec, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch rec.Kind {
		case rdb.RecSelectDB:
			if rec.DB != cw.db {
				cw.cmd("SELECT", strconv.Itoa(rec.DB))
				cw.db = rec.DB
			}
		case rdb.RecFunction:
			cw.cmd("FUNCTION", "LOAD", string(rec.Code))
		case rdb.RecAux:
			if string(rec.AuxKey) == "hotkv-tags" { // after the keys: TAG.SET each (src/command/persist_tags.go)
				cw.tags(rec.AuxVal)
			}
		case rdb.RecKey:
			cw.key(rec)
		}
		if cw.err != nil {
			return cw.err
		}
	}
	if cw.err != nil {
		return cw.err
	}
	return bw.Flush()
}

// cmdWriter appends RESP commands; the first write error sticks.
type cmdWriter struct {
	w   *bufio.Writer
	db  int
	buf []byte
	err error
}

func (c *cmdWriter) cmd(args ...string) {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	c.cmdBytes(b)
}

func (c *cmdWriter) cmdBytes(args [][]byte) {
	if c.err != nil {
		return
	}
	c.buf = appendCommand(c.buf[:0], args...)
	_, c.err = c.w.Write(c.buf)
}

// batched writes name key items... in commands of at most itemsPerCmd items of per args.
func (c *cmdWriter) batched(name string, key []byte, items [][]byte, per int) {
	for len(items) > 0 {
		n := min(len(items), itemsPerCmd*per)
		args := append([][]byte{[]byte(name), key}, items[:n]...)
		c.cmdBytes(args)
		items = items[n:]
	}
}

// tags writes a hotkv-tags aux field as TAG.SET commands, each in its key's database.
func (c *cmdWriter) tags(field []byte) {
	err := tags.Decode(field, func(db int, key []byte, ts [][]byte) {
		if db != c.db {
			c.cmd("SELECT", strconv.Itoa(db))
			c.db = db
		}
		c.cmdBytes(append([][]byte{[]byte("TAG.SET"), key}, ts...))
	})
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("cannot rewrite the AOF: hotkv-tags aux field: %w", err)
	}
}

func (c *cmdWriter) key(rec *rdb.Record) {
	v, k := &rec.Value, rec.Key
	switch v.Type {
	case rdb.ValString:
		c.cmdBytes([][]byte{[]byte("SET"), k, v.Str})
	case rdb.ValList:
		c.batched("RPUSH", k, v.Elems, 1)
	case rdb.ValSet:
		c.batched("SADD", k, v.Elems, 1)
	case rdb.ValHash:
		items := make([][]byte, 0, 2*len(v.Fields))
		for i := range v.Fields {
			items = append(items, v.Fields[i], v.Vals[i])
		}
		c.batched("HMSET", k, items, 2)
	case rdb.ValZSet:
		items := make([][]byte, 0, 2*len(v.Members))
		for i := range v.Members {
			items = append(items, strconv.AppendFloat(nil, v.Scores[i], 'g', 17, 64), v.Members[i])
		}
		c.batched("ZADD", k, items, 2)
	case rdb.ValStream:
		c.stream(k, v.Stream)
	case rdb.ValModule: // a vector set (src/command/vset_persist.go): RESTORE of its DUMP form
		e := rdb.Encoder{OmitKey: true}
		e.ModuleValue(nil, v.Module, v.Str)
		c.cmdBytes([][]byte{[]byte("RESTORE"), k, []byte("0"), rdb.DumpPayload(nil, e.Buf, rdb.Version)})
	}
	if rec.ExpireMs >= 0 {
		c.cmdBytes([][]byte{[]byte("PEXPIREAT"), k, []byte(strconv.FormatInt(rec.ExpireMs, 10))})
	}
}

func streamID(id rdb.StreamID) string {
	return strconv.FormatUint(id.Ms, 10) + "-" + strconv.FormatUint(id.Seq, 10)
}

// stream is rewriteStreamObject: the entries, the stream's metadata, its groups with their
// pending entries (XCLAIM ... JUSTID FORCE) and consumers.
func (c *cmdWriter) stream(k []byte, s *rdb.Stream) {
	ks := string(k)
	if len(s.Entries) == 0 {
		// An empty stream is created with an entry 0-1 trimmed away at once, as Redis does
		// (not at its last ID, which is 0-0 for XGROUP CREATE ... MKSTREAM and XADD refuses);
		// XSETID below sets the real one.
		c.cmd("XADD", ks, "MAXLEN", "0", "0-1", "x", "y")
	}
	for _, e := range s.Entries {
		args := append([][]byte{[]byte("XADD"), k, []byte(streamID(e.ID))}, e.Fields...)
		c.cmdBytes(args)
	}
	c.cmd("XSETID", ks, streamID(s.LastID), "ENTRIESADDED", strconv.FormatUint(s.EntriesAdded, 10),
		"MAXDELETEDID", streamID(s.MaxDeletedID))
	for _, g := range s.Groups {
		c.cmd("XGROUP", "CREATE", ks, string(g.Name), streamID(g.LastID), "ENTRIESREAD",
			strconv.FormatInt(g.EntriesRead, 10))
		owned := map[string]bool{}
		for _, p := range g.PEL {
			if p.Consumer == nil {
				continue
			}
			owned[string(p.Consumer)] = true
			c.cmd("XCLAIM", ks, string(g.Name), string(p.Consumer), "0", streamID(p.ID), "TIME",
				strconv.FormatInt(p.DeliveryTimeMs, 10), "RETRYCOUNT", strconv.FormatUint(p.DeliveryCount, 10),
				"JUSTID", "FORCE")
		}
		for _, cons := range g.Consumers {
			if !owned[string(cons.Name)] {
				c.cmd("XGROUP", "CREATECONSUMER", ks, string(g.Name), string(cons.Name))
			}
		}
	}
}
