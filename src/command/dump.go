package command

// DUMP and RESTORE (issue 17 item 4) with Redis 7.0.15's payload: the value as RDB writes it
// after the key (type byte and value, LZF per rdbcompression), the RDB version (10) in two bytes
// and the CRC64 of both, little-endian. RESTORE follows cluster.c's restoreCommand: options
// first, then BUSYKEY, the TTL, the payload's footer, the value; a relative TTL is replicated
// as the absolute time with ABSTTL appended; a TTL already past restores nothing (and, with
// REPLACE over an existing key, deletes it and replicates DEL).

import (
	"strconv"
	"time"
	"unsafe"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/persist/rdb"
)

// wordABSTTL ends RESTORE's replicated form when its TTL was relative.
var wordABSTTL = []byte("ABSTTL")

// DUMP key
func dumpCmd(c *Ctx) {
	e := c.FindRead(c.Args[1])
	if e == nil {
		c.Null()
		return
	}
	c.Bulk(c.E.dumpPayload(e, c.Now))
}

// dumpPayload is e's DUMP payload.
func (e *Engine) dumpPayload(en *keyspace.Entry, now int64) []byte {
	return rdb.DumpPayload(nil, e.dumpObject(en, now), rdb.Version)
}

// dumpObject is the object of en's DUMP payload: type byte and value, LZF per rdbcompression.
func (e *Engine) dumpObject(en *keyspace.Entry, now int64) []byte {
	s := e.newRDBSerializer(configBool(e, "rdbcompression", true), time.Unix(0, now))
	s.enc.OmitKey = true
	k := en.Key()
	s.value(unsafe.Slice(unsafe.StringData(k), len(k)), en)
	return s.enc.Buf
}

// restoreOpts are RESTORE's options after the payload.
type restoreOpts struct {
	replace, absTTL bool
	idle, freq      int64 // -1: not given
}

// parseRestoreOpts reads REPLACE, ABSTTL, IDLETIME s and FREQ f as restoreCommand does (IDLETIME
// and FREQ exclude each other: the second is a syntax error); "" when they are valid.
func parseRestoreOpts(args [][]byte) (restoreOpts, string) {
	o := restoreOpts{idle: -1, freq: -1}
	for j := 0; j < len(args); j++ {
		more := j+1 < len(args)
		switch a := args[j]; {
		case strs.EqualFold(a, "REPLACE"):
			o.replace = true
		case strs.EqualFold(a, "ABSTTL"):
			o.absTTL = true
		case strs.EqualFold(a, "IDLETIME") && more && o.freq == -1:
			v, ok := ParseInt(args[j+1])
			switch {
			case !ok:
				return o, ErrNotInt
			case v < 0:
				return o, ErrRestoreIdle
			}
			o.idle = v
			j++
		case strs.EqualFold(a, "FREQ") && more && o.idle == -1:
			v, ok := ParseInt(args[j+1])
			switch {
			case !ok:
				return o, ErrNotInt
			case v < 0 || v > 255:
				return o, ErrRestoreFreq
			}
			o.freq = v
			j++
		default:
			return o, ErrSyntax
		}
	}
	return o, ""
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
func restoreCmd(c *Ctx) {
	o, msg := parseRestoreOpts(c.Args[4:])
	if msg != "" {
		c.Err(msg)
		return
	}
	key := c.Args[1]
	ks, old := c.FindIn(key)
	if old != nil && !o.replace {
		c.Err(ErrBusyKey)
		return
	}
	ttl, ok := ParseInt(c.Args[2])
	switch {
	case !ok:
		c.Err(ErrNotInt)
		return
	case ttl < 0:
		c.Err(ErrRestoreTTL)
		return
	}
	obj, err := rdb.CheckDump(c.Args[3], rdb.Version)
	if err != nil {
		c.Err(ErrDumpPayload)
		return
	}
	var it loadItem
	if v, err := rdb.DecodeObject(obj); err != nil {
		c.Err(ErrBadDataFormat)
		return
	} else if ld := (loader{e: c.E}); true {
		if _, err := ld.convert(&v, &it); err != nil || it.kind == 0 { // an empty value is bad data too
			c.Err(ErrBadDataFormat)
			return
		}
	}
	restoreApply(c, ks, old, &it, ttl, o)
}

// restoreApply stores a decoded RESTORE value (old is the live key it replaces, if any).
func restoreApply(c *Ctx, ks *keyspace.Keyspace, old *keyspace.Entry, it *loadItem, ttl int64, o restoreOpts) {
	key := c.Args[1]
	if old != nil {
		ks.Remove(old)
	}
	nowMs := c.Now / 1e6
	if ttl != 0 && !o.absTTL {
		ttl += nowMs
	}
	if ttl != 0 && ttl <= nowMs { // already expired: nothing is restored (checkAlreadyExpired)
		if old != nil {
			c.Changed(NotifyGeneric, "del", key)
			c.Dirty(1)
			c.Propagate(propWord.DEL, key) // DEL even under lazyfree-lazy-server-del (redis-server 7.0.15's AOF)
		} else {
			c.PropagateNothing()
		}
		c.OK()
		return
	}
	en, _ := c.Upsert(key)
	en.Kind = it.kind
	if it.kind == keyspace.KindString {
		storeOwnedString(c.E, ks, en, it.str, &c.packed)
	} else {
		setObjOf(en, it.kind, it.obj)
	}
	if ttl != 0 {
		ks.SetExpireMs(en, ttl)
	}
	switch lfu := lfuPolicy(c.E); { // objectSetLRUOrLFU: each only under its kind of policy
	case lfu && o.freq >= 0:
		en.Freq = uint8(o.freq)
	case !lfu && o.idle >= 0:
		en.Access -= uint32(min(o.idle, int64(en.Access)))
	}
	signalCreated(c, c.DB, key)
	c.Changed(NotifyGeneric, "restore", key)
	c.Dirty(1)
	if ttl != 0 && !o.absTTL && c.E.Feed.Active() { // replicated with the absolute time
		args := append([][]byte{c.Args[0], key, strconv.AppendInt(nil, ttl, 10)}, c.Args[3:]...)
		c.Propagate(append(args, wordABSTTL)...)
	}
	c.OK()
}

// configBool reads a yes/no configuration value, or def.
func configBool(e *Engine, name string, def bool) bool {
	if e.Config != nil {
		if kv := e.Config.Get(name); len(kv) > 0 {
			return kv[0][1] == "yes"
		}
	}
	return def
}
