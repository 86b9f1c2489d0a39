package command

import (
	"bytes"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
)

// The undo log of a script run (docs/decisions.md "Scripts", undeclared keys). A run that does
// not hold every shard may still meet an undeclared key on a busy shard below the ones it holds;
// it cannot wait for that shard (the holder may be waiting for one of its own), so it lets go of
// everything and reruns under every shard. Writes it made before must not survive that: each
// key's value before the run's first write to it (or its absence), with its TTL, is recorded,
// and the aborted run's writes are undone before the tokens are let go. Nothing of theirs
// leaves: their keyspace events are dropped with the slot's (attempt), their replicated forms
// are cut from the run's collected form (the DELs of keys found expired stay: those deletions
// are real), the dirty counter goes back. What cannot be undone cheaply is not logged; the run
// takes every shard before it (escalate), so no later try can fail:
//   - a value larger than undoMaxElems elements or undoMaxBytes bytes, or a kind other than
//     string, list, hash, set, zset and stream;
//   - a key in a database of a shard with tagged keys (tags are dropped with an entry);
//   - more than undoMaxKeys keys written;
//   - commands whose effects leave the keyspace or its database: PUBLISH, MOVE, COPY … DB, and
//     connection-scoped writes.
//
// The undo itself touches no watcher and invalidates no tracked key: the aborted writes already
// did, as writes do (a WATCH of a key the rerun does not write is dirtied where Redis, running
// the script once, would not dirty it: the one visible trace).

const (
	undoMaxKeys  = 64
	undoMaxElems = 128
	undoMaxBytes = 64 << 10
)

// undoRec is one key's state before the run's first write to it.
type undoRec struct {
	db         int
	k0, k1     int // the key in undoLog.buf
	v0, v1     int // a string's bytes in undoLog.buf
	had        bool
	kind       keyspace.Kind
	enc, freq  uint8
	access     uint32
	expMs      int64
	obj        any // a collection's clone
	nextExpiry int64
}

// undoLog is a run's record of what its writes replaced, reset at each attempt.
type undoLog struct {
	recs []undoRec
	buf  []byte
	// What the run had collected when it logged its first write: the replicated form's state
	// and the dirty counter of its stats.
	marked        bool
	ops, nops     int
	lastDB, opsDB int
	dirty         int64
	stats         *shardStats
	args          [2][]byte
}

var undoSpec = &Spec{Name: "script-undo", Arity: 2, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1}

func (u *undoLog) reset() {
	clear(u.recs)
	u.recs, u.buf, u.marked, u.stats = u.recs[:0], u.buf[:0], false, nil
	if cap(u.buf) > 4*undoMaxBytes {
		u.buf = nil
	}
}

func (u *undoLog) key(i int) []byte { return u.buf[u.recs[i].k0:u.recs[i].k1] }

// logWrite records, before spec runs with args, the state of the keys it may change; when that
// cannot be recorded it takes every shard instead (escalate), which may abort the run. The run
// holds the keys' shards (need).
func (r *scriptRun) logWrite(spec *Spec, args [][]byte) {
	if r.all || r.inTx || len(r.e.Group.Shards) == 1 {
		return
	}
	if spec.Scope != ScopeKeys || spec.Name == "move" || spec.Name == "copy" && copyNamesDB(args) {
		r.escalate()
		return
	}
	r.keyPos = spec.keyIndexes(args, r.keyPos[:0])
	for _, p := range r.keyPos {
		if !r.snapshot(args[p]) {
			r.escalate()
			return
		}
	}
}

func copyNamesDB(args [][]byte) bool {
	for _, a := range args[3:] {
		if strs.EqualFold(a, "DB") {
			return true
		}
	}
	return false
}

// escalate takes every shard the run does not hold (needShard: above, waiting; below, trying,
// and undoing and rerunning when a try fails).
func (r *scriptRun) escalate() {
	for id := range r.e.Group.Shards {
		r.needShard(int32(id), false)
	}
	r.all = true
}

// snapshot records key's state in the run's database unless recorded already; false when it
// cannot be (see the file's comment).
func (r *scriptRun) snapshot(key []byte) bool {
	u := &r.undo
	for i := range u.recs {
		if u.recs[i].db == r.db && bytes.Equal(u.key(i), key) {
			return true
		}
	}
	if len(u.recs) >= undoMaxKeys {
		return false
	}
	e := r.e
	d := e.data(e.shardOf(key))
	if ix := d.tags[r.db]; ix != nil && ix.Len() > 0 {
		return false
	}
	ks := d.dbs[r.db]
	en := ks.Peek(key, r.ctx.Now) // an expired key is absent: its DEL stays in the feed
	rec := undoRec{db: r.db}
	if en != nil {
		switch en.Kind {
		case keyspace.KindString:
			if len(en.Bytes()) > undoMaxBytes {
				return false
			}
		case keyspace.KindList, keyspace.KindHash, keyspace.KindSet, keyspace.KindZSet, keyspace.KindStream:
			if freeEffort(en) > undoMaxElems || valueBytes(en) > undoMaxBytes {
				return false
			}
			obj, ok := cloneValue(en)
			if !ok {
				return false
			}
			rec.obj = obj
			if h, ok := obj.(*hash.Hash); ok {
				rec.nextExpiry = h.NextExpiry()
			}
		default:
			return false
		}
		rec.had, rec.kind, rec.enc, rec.freq, rec.access = true, en.Kind, en.Enc, en.Freq, en.Access
		if en.ExpireAt() != 0 {
			rec.expMs = ks.ExpireMs(en)
		}
		if en.Kind == keyspace.KindString {
			rec.v0 = len(u.buf)
			u.buf = append(u.buf, en.Bytes()...)
			rec.v1 = len(u.buf)
		}
	}
	if !u.marked {
		tx := r.ctx.tx
		u.marked, u.ops, u.nops, u.lastDB, u.opsDB = true, len(tx.ops), tx.nops, tx.lastDB, tx.opsDB
		tx.keepPre, tx.pres = true, tx.pres[:0]
		if u.stats = r.ctx.stats; u.stats != nil {
			u.dirty = u.stats.dirty
		}
	}
	rec.k0 = len(u.buf)
	u.buf = append(u.buf, key...)
	rec.k1 = len(u.buf)
	u.recs = append(u.recs, rec)
	return true
}

// valueBytes is a collection's size as used_memory counts it.
func valueBytes(en *keyspace.Entry) int64 { return en.Accounted() }

// undoWrites puts back every key the run wrote, as it was before its first write, and takes the
// writes' replicated forms out of what the run collected. The run still holds every shard it
// logged a key on.
func (r *scriptRun) undoWrites() {
	r.tx.mon = r.tx.mon[:0]  // its MONITOR lines: the rerun shows its own
	dropUndoneTouches(&r.tx) // and its WATCH touches and tracking invalidations
	r.uncount()
	u := &r.undo
	if !u.marked {
		return
	}
	e, rc := r.e, &r.ctx
	savedDB, savedSpec, savedArgs := rc.DB, rc.Spec, rc.Args
	for i := len(u.recs) - 1; i >= 0; i-- {
		rec := &u.recs[i]
		key := u.key(i)
		u.args[0], u.args[1] = []byte(undoSpec.Name), key
		rc.DB, rc.Spec, rc.Args = rec.db, undoSpec, u.args[:]
		e.memBefore(rc)
		r.restore(rec, key)
		e.memAfter(rc)
		rec.obj = nil
	}
	rc.DB, rc.Spec, rc.Args = savedDB, savedSpec, savedArgs
	rc.fx.reset() // the restore's "new" events (OnNew)
	tx := rc.tx
	pres := tx.pres
	tx.ops, tx.nops, tx.lastDB, tx.opsDB = tx.ops[:u.ops], u.nops, u.lastDB, u.opsDB
	tx.keepPre = false
	tx.addPres(pres)
	if u.stats != nil {
		u.stats.dirty = u.dirty
	}
}

// restore puts key back as rec recorded it.
func (r *scriptRun) restore(rec *undoRec, key []byte) {
	d := r.e.data(r.e.shardOf(key))
	ks := d.dbs[rec.db]
	h := keyspace.Hash(key)
	cur := ks.PeekAny(key, h)
	if !rec.had {
		if cur != nil && ks.Peek(key, r.ctx.Now) != nil { // an expired one was not the run's
			ks.Remove(cur)
		}
		return
	}
	if cur != nil {
		ks.Remove(cur)
	}
	n := ks.Add(key)
	if rec.kind == keyspace.KindString {
		n.Kind = keyspace.KindString
		v := append(make([]byte, 0, rec.v1-rec.v0), r.undo.buf[rec.v0:rec.v1]...)
		n.SetBytes(v)
		n.Enc = rec.enc
		if rec.enc&keyspace.EncPacked != 0 {
			n.Enc &^= keyspace.EncPacked
			ks.SetPacked(n, n.Bytes())
		}
	} else {
		setObjOf(n, rec.kind, rec.obj)
		n.Enc = rec.enc
	}
	n.Freq, n.Access = rec.freq, rec.access
	if rec.expMs != 0 {
		ks.SetExpireMs(n, rec.expMs)
	}
	if rec.nextExpiry != 0 {
		d.hfe.trackLocked(ks, key, 0, rec.nextExpiry)
	}
}

// runCall is one command a script run called, and the counters its call went to.
type runCall struct {
	stats  *shardStats // nil: the Spec's own atomics
	spec   *Spec
	failed bool
}

// uncount takes the calls of an undone attempt out of the command statistics (INFO
// commandstats): Redis runs the script once and counts each of its calls once, and the rerun
// counts its own. The counters' shards are still held.
func (r *scriptRun) uncount() {
	for _, c := range r.calls {
		if c.stats != nil {
			st := &c.stats.cmds[c.spec.id]
			st.calls--
			if c.failed {
				st.failed--
			}
			continue
		}
		c.spec.stats.calls.Add(-1)
		if c.failed {
			c.spec.stats.failed.Add(-1)
		}
	}
	r.calls = r.calls[:0]
}

// flushInvalidations sends the tracking invalidations of the keys the run changed
// (txState.inval), kept until it ended so that an undone attempt sends none: those of other
// clients now, the caller's own after the reply (ok) or at once (an undone attempt's expired
// keys, which stay deleted).
func (r *scriptRun) flushInvalidations(ok bool) {
	if len(r.tx.inval) == 0 {
		return
	}
	rc := &r.ctx
	var in *Ctx
	saved := rc.fx.after
	if ok {
		in, rc.fx.after = rc, r.tx.after // the caller's own follow the reply
	}
	for b := r.tx.inval; len(b) > 0; {
		var key []byte
		_, key, _, b = nextTouched(b)
		r.e.invalidateKey(in, r.outer.Client, key)
	}
	if ok {
		r.tx.after, rc.fx.after = rc.fx.after, saved
	}
	r.tx.inval = r.tx.inval[:0]
}
