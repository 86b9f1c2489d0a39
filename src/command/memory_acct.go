package command

import (
	"unsafe"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/src/script"
)

// Accounting of what write commands change (ds/keyspace/used.go). The keyspace adds an entry's
// footprint on insert and takes it off on unlink; what it cannot see is a value changing under
// a command: a string's capacity (SetBytes) and a collection's size. So call measures, for each
// key a write command declares (its Spec's key positions, in the selected database) and each
// key it touched in another database (MOVE, COPY ... DB), what the key accounted for before the
// command and what it holds after, and reports the difference:
//
//   - a key whose entry survived: its value's accounted size now (a string's capacity, a
//     collection's re-estimate, stored in the entry) minus before;
//   - an entry the command removed: the keyspace took off what the entry held when it was
//     unlinked (it waits in limbo, unchanged, until the shard's epoch moves), which is corrected
//     to what it had accounted (they differ when a value moved away first: RENAME, MOVE);
//   - an entry the command created: its value's accounted size (the keyspace counted it empty).
//
// The cost is two lookups of each declared key per write command (before and after), and a
// collection's estimate samples a few elements (memsize.go): O(keys), never O(elements).

// memRec is one declared key's state before the command.
type memRec struct {
	ks   *keyspace.Keyspace
	key  []byte
	h    uint64
	e    *keyspace.Entry // nil: absent
	acct int64
}

// memAcct is a Ctx's accounting state for the running call; its slices are reused.
type memAcct struct {
	recs  []memRec
	other []memRec // keys touched in another database, absent before (TouchIn)
	idx   []int
	done  []*keyspace.Entry            // entries settled already (a key declared twice)
	many  map[*keyspace.Entry]struct{} // done, for a command of many keys (MSET)

	// lazyfree-lazy-server-del (lazyfree.go): the declared key whose large value the command
	// may replace, its value then, and the snapshot part told to defer it.
	lazyIdx []int
	lazy    memRec
	lazyVal unsafe.Pointer // the value's ValuePointer (an inline value's header is in the entry)
	lazySS  *snapShard

	// The eviction gate's scratch (evict.go): shards tried, and one shard id to unlock.
	skipped []bool
	oneID   [1]int32
}

// skip returns the gate's per-shard scratch of n shards, cleared, with own marked.
func (m *memAcct) skip(n int, own int32) []bool {
	if len(m.skipped) != n {
		m.skipped = make([]bool, n)
	}
	clear(m.skipped)
	if own >= 0 {
		m.skipped[own] = true
	}
	return m.skipped
}

// one returns id as a one-shard list.
func (m *memAcct) one(id int32) []int32 { m.oneID[0] = id; return m.oneID[:] }

// manyKeys is where settled entries go into a map rather than a list searched each time.
const manyKeys = 16

// memBefore records the state of the declared keys of c's command, a write.
func (e *Engine) memBefore(c *Ctx) {
	m := &c.mem
	m.recs, m.other = m.recs[:0], m.other[:0]
	m.idx = c.Spec.keyIndexes(c.Args, m.idx[:0])
	// A blocked command served in place (a shard's serve Ctx, block.go) holds only the ready
	// key's shard: its other keys (BLPOP's on other shards) are not its to look at, and it
	// changes none of them. One woken to serve itself holds all of its shards.
	served := int32(-1)
	if c.Serving != nil {
		if id := c.E.shardOf(c.Serving); c == &c.E.data(id).serve {
			served = id
		}
	}
	for _, i := range m.idx {
		key := c.Args[i]
		if served >= 0 && c.E.shardOf(key) != served {
			continue
		}
		ks, h := c.lookup(key)
		r := memRec{ks: ks, key: key, h: h}
		if r.e = ks.PeekAny(key, h); r.e != nil {
			r.acct = r.e.Accounted()
		}
		m.recs = append(m.recs, r)
	}
	if m.lazyIdx = lazyServerDelKeys(c, m.lazyIdx[:0]); len(m.lazyIdx) > 0 {
		e.lazyServerDelBefore(c, m)
	}
}

// lazyServerDelBefore notes the first large value among the keys the command may replace (the
// running serve of a blocked command never does), for lazyServerDelAfter.
func (e *Engine) lazyServerDelBefore(c *Ctx, m *memAcct) {
	for _, i := range m.lazyIdx {
		if i >= len(c.Args) {
			break
		}
		key := c.Args[i]
		ks, h := c.lookup(key)
		en := ks.PeekAny(key, h)
		if en == nil || freeEffort(en) <= lazyfreeThreshold {
			continue
		}
		m.lazy, m.lazyVal = memRec{ks: ks, key: key, h: h, e: en}, en.ValuePointer()
		m.lazySS = e.lazyDetachLocked(ks, en)
		return
	}
}

// lazyServerDelAfter counts the noted value as lazily freed when the command replaced or
// deleted it, and clears the snapshot's detach.
func (e *Engine) lazyServerDelAfter(m *memAcct) {
	r := &m.lazy
	if cur := r.ks.PeekAny(r.key, r.h); cur != r.e || cur.ValuePointer() != m.lazyVal {
		e.lazy.freed.Add(1)
	}
	if m.lazySS != nil && m.lazySS.detach == r.e {
		m.lazySS.detach = nil
	}
	m.lazy, m.lazyVal, m.lazySS = memRec{}, nil, nil
}

// memTouchedIn notes key of database db, touched by the running write (a MOVE or COPY
// destination), for memAfter.
func (c *Ctx) memTouchedIn(db int, key []byte) {
	if db == c.DB || c.Spec == nil || c.Spec.Flags&Write == 0 {
		return
	}
	h := keyspace.Hash(key)
	ks := c.E.data(c.E.shardOfKey(key, h)).dbs[db]
	c.mem.other = append(c.mem.other, memRec{ks: ks, key: key, h: h})
}

// memAfter reports to the keyspaces what c's write changed since memBefore.
func (e *Engine) memAfter(c *Ctx) {
	m := &c.mem
	m.done = m.done[:0]
	for i := range m.recs {
		e.memSettle(m, &m.recs[i])
	}
	for i := range m.other {
		e.memSettle(m, &m.other[i])
	}
	clear(m.done)
	clear(m.many)
	m.recs, m.other = m.recs[:0], m.other[:0]
	if m.lazy.e != nil {
		e.lazyServerDelAfter(m)
	}
}

// memSettle settles one key of memAfter.
func (e *Engine) memSettle(m *memAcct, r *memRec) {
	cur := r.ks.PeekAny(r.key, r.h)
	if r.e != nil && r.e != cur && m.settle(r.e) {
		// Removed: the keyspace took off what it held at the unlink.
		r.ks.Account(r.e.Accounted() - r.acct)
	}
	if cur == nil || !m.settle(cur) {
		return
	}
	before := int64(0)
	if cur == r.e {
		before = r.acct
	}
	now := cur.Accounted()
	if cur.Kind > keyspace.KindString {
		now = valueSize(cur, acctSamples)
		cur.SetAccounted(now)
		now = cur.Accounted() // what the entry keeps of it (an inline value's, keyspace.Inline)
	}
	r.ks.Account(now - before)
}

// settle marks e settled and reports whether it was not yet.
func (m *memAcct) settle(e *keyspace.Entry) bool {
	if len(m.recs)+len(m.other) <= manyKeys {
		for _, d := range m.done {
			if d == e {
				return false
			}
		}
		m.done = append(m.done, e)
		return true
	}
	if m.many == nil {
		m.many = map[*keyspace.Entry]struct{}{}
	}
	if _, ok := m.many[e]; ok {
		return false
	}
	m.many[e] = struct{}{}
	return true
}

// run runs the handler of spec for c: a denyoom command passes the memory gate first (evict.go;
// not inside EXEC, which route checks once for the whole transaction; a script's redis.call is
// gated as Redis gates a script without allow-oom), and a write command's changes are
// accounted.
func (e *Engine) run(c *Ctx, spec *Spec) {
	// A self-locking command (SORT, MIGRATE, EVAL*, FCALL*) holds no token yet here: it passes
	// the gate and accounts for its keys itself once it holds their shards (selfGate,
	// selfAccount), unless a transaction or script already holds them (c.tx).
	self := spec.Scope == ScopeSelf && c.tx == nil
	if !self && e.mem.limit.Load() > 0 && e.denyOOM(c, spec) && !e.admitLocked(c) {
		c.Err(ErrOOM)
		return
	}
	if spec.Flags&Write == 0 || self {
		spec.Run(c)
		return
	}
	e.memBefore(c)
	defer e.memAfter(c) // also when the handler panics: what it changed stays accounted
	spec.Run(c)
}

// selfGate is run's maxmemory gate for a self-locking command, called holding the shards of its
// keys; false means it replied -OOM.
func (e *Engine) selfGate(c *Ctx) bool {
	if e.mem.limit.Load() > 0 && e.denyOOM(c, c.Spec) && !e.admitLocked(c) {
		c.Err(ErrOOM)
		return false
	}
	return true
}

// selfAccount runs write, a self-locking command's change to its keys, holding their shards,
// with run's accounting around it.
func (e *Engine) selfAccount(c *Ctx, write func()) {
	if c.tx != nil { // run accounted for it already
		write()
		return
	}
	e.memBefore(c)
	defer e.memAfter(c)
	write()
}

// denyOOM reports whether spec is refused over maxmemory here, as Redis 7.0 decides: a denyoom
// command outside MULTI (EXEC was checked when it was queued and run) and outside a script once
// the script wrote or when it is allow-oom (Ctx.oomFree); an EVAL* or FCALL* whose script declares
// flags without allow-oom or no-writes (Redis's scriptFlagsToCmdFlags makes it denyoom).
func (e *Engine) denyOOM(c *Ctx, spec *Spec) bool {
	if runsScript(spec) {
		f, declared := e.scriptFlags(spec, c.Args)
		return declared && f&(script.FlagAllowOOM|script.FlagNoWrites) == 0
	}
	return spec.Flags&DenyOOM != 0 && (c.tx == nil || (inScript(c) && !c.oomFree))
}

// RecountMemory sets every keyspace's count to a walk of its keys, estimating each collection:
// after keys were inserted outside the accounting (LoadRDB). It holds every shard while it
// walks, so it must not be called holding a token.
func (e *Engine) RecountMemory() {
	e.Group.LockAll()
	defer e.Group.UnlockAll()
	est := func(en *keyspace.Entry) int64 { return valueSize(en, acctSamples) }
	for i := range e.Group.Shards {
		for _, ks := range e.data(int32(i)).dbs {
			ks.Recount(est)
		}
	}
	e.dataUsed()
}
