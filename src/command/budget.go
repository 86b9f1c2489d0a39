package command

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hotkv/hotkv/ds/budget"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/ai/tokens"
)

// Token budgets (BUDGET.*, HotKV's own): a key of type "budget" is a bucket of units (tokens,
// requests or micro-dollars) refilling at LIMIT per PER up to LIMIT+BURST (ds/budget). TAKE and
// RESERVE name a chain of keys (tenant, user, api key …) and succeed on all of them or on none:
// the keys' shards are held together for the call (a multi-shard command, like MSET). A
// reservation takes its units at once, so racing clients cannot overshoot; COMMIT settles it
// with the actual use (refund or extra charge), RELEASE refunds it, and one not settled by its
// TIMEOUT is refunded when its key is next touched (lazily; each key keeps its own share).
//
// COMMIT and RELEASE name only the reservation id: an engine-wide index (budgetRegistry) maps
// an id to its database and keys; they lock those keys' shards themselves (ScopeSelf, as SORT).
// The index is rebuilt from the keys' states as BUDGET.STATE applies them (replicas, AOF), and
// swept of expired ids as reservations are made.
//
// Every change is replicated as BUDGET.STATE key payload per key changed: the whole state with
// absolute times and the reservation ids as generated, so a replica or an AOF replay holds
// exactly the primary's state whatever its clock. Keyspace events (class d, module): budget.set,
// budget.take, budget.reserve, budget.commit, budget.release.

var budgetCommands = []*Spec{
	{Name: "budget.set", Arity: -6, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: budgetSet},
	{Name: "budget.get", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: budgetGet},
	{Name: "budget.take", Arity: -3, Flags: Write | DenyOOM | Fast | MovableKeys, Keys: budgetChainKeys,
		Run: budgetTake},
	{Name: "budget.reserve", Arity: -3, Flags: Write | DenyOOM | Fast | MovableKeys, Keys: budgetChainKeys,
		Run: budgetReserve},
	{Name: "budget.commit", Arity: 3, Flags: Write | Fast, Scope: ScopeSelf, Run: budgetCommit},
	{Name: "budget.release", Arity: 2, Flags: Write | Fast, Scope: ScopeSelf, Run: budgetRelease},
	{Name: "budget.state", Arity: 3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: budgetState},
}

const (
	errBudgetPeriod  = "ERR PER must be a positive duration (ms, s, m, h or d; a bare number is seconds)"
	errBudgetLimit   = "ERR LIMIT must be a positive integer"
	errBudgetBurst   = "ERR BURST must be a non-negative integer"
	errBudgetUnit    = "ERR UNIT must be tokens, requests or micro_usd"
	errBudgetAmount  = "ERR amount must be a non-negative integer"
	errBudgetTimeout = "ERR TIMEOUT must be a positive integer (milliseconds)"
	errBudgetEnc     = "ERR ENCODING must be cl100k or o200k"
	errBudgetID      = "ERR invalid reservation id"
	errBudgetPayload = "ERR invalid budget state payload"
	errBudgetNoKey   = "ERR no such budget key '"
	errBudgetText    = "ERR TEXT is longer than 1048576 bytes: count it client-side and pass the amount"
	// budgetMaxText bounds a TEXT counted on the shard's token: about 0.1 us a byte (cl100k:
	// 100 KB in 31 ms, 1 MB in 105 ms measured on the shared box), all that time holding the
	// chain's shards.
	budgetMaxText = 1 << 20
	// budgetDefaultTimeout is a reservation's life without TIMEOUT.
	budgetDefaultTimeout = 60 * int64(time.Second)
)

// budgetChainKeys is TAKE's and RESERVE's key extraction: the arguments after the amount up to
// the first option name (TEXT, ENCODING, TIMEOUT). A key spelled like an option cannot be
// named in a chain.
func budgetChainKeys(args [][]byte, dst []int) []int {
	for i := 2; i < len(args); i++ {
		if budgetOption(args[i]) {
			break
		}
		dst = append(dst, i)
	}
	return dst
}

func budgetOption(a []byte) bool {
	return optIs(a, "TEXT") || optIs(a, "ENCODING") || optIs(a, "TIMEOUT")
}

// budgetRegistry maps pending reservation ids to their keys, per engine.
type budgetRegistry struct {
	mu       sync.Mutex
	seq      uint64
	refs     map[uint64]budgetRef
	made     int
	sweeping bool // a sweeper goroutine runs (sweep)
}

type budgetRef struct {
	keys     []budgetKey
	deadline int64
}

// budgetKey is a key of a reservation's chain and its database (MOVE takes it to another).
type budgetKey struct {
	db  int
	key string
}

// keysIn returns the chain's keys in database db: COMMIT and RELEASE settle those of the
// connection's database.
func (ref budgetRef) keysIn(db int) [][]byte {
	var keys [][]byte
	for _, k := range ref.keys {
		if k.db == db {
			keys = append(keys, []byte(k.key))
		}
	}
	return keys
}

var budgetRegs sync.Map // *Engine → *budgetRegistry

func budgetReg(e *Engine) *budgetRegistry {
	if r, ok := budgetRegs.Load(e); ok {
		return r.(*budgetRegistry)
	}
	r, _ := budgetRegs.LoadOrStore(e, &budgetRegistry{seq: uint64(time.Now().UnixNano()), refs: map[uint64]budgetRef{}})
	return r.(*budgetRegistry)
}

// add records a new reservation and returns its id; every 256 reservations it sweeps out the
// ids whose deadline has passed (their keys refund them lazily).
func (r *budgetRegistry) add(e *Engine, db int, keys [][]byte, deadline, now int64) uint64 {
	ks := make([]budgetKey, len(keys))
	for i, k := range keys {
		ks[i] = budgetKey{db: db, key: string(k)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	id := r.seq
	r.startSweep(e)
	r.refs[id] = budgetRef{keys: ks, deadline: deadline}
	if r.made++; r.made%256 == 0 {
		for k, v := range r.refs {
			if v.deadline <= now {
				delete(r.refs, k)
			}
		}
	}
	return id
}

// budgetSweepEvery is how often the sweeper looks for reservations past their deadline.
var budgetSweepEvery = 250 * time.Millisecond

// startSweep starts the sweeper of e's reservations unless one runs; the caller holds r.mu.
func (r *budgetRegistry) startSweep(e *Engine) {
	if !r.sweeping {
		r.sweeping = true
		go r.sweep(e)
	}
}

// sweep is the active expiry of reservations: while any is pending, it takes those past their
// deadline out of the index and, holding each of their keys' shards in turn (Group.Do, as the
// snapshot walk), brings the key's budget up to date, which refunds them and drops their
// records. Every read already counts an expired reservation as refunded, so this changes no
// reply and replicates nothing (a replica's state holds the same deadlines); it frees the
// records of keys nobody touches. It ends when no reservation is pending.
func (r *budgetRegistry) sweep(e *Engine) {
	for {
		time.Sleep(budgetSweepEvery)
		now := time.Now().UnixNano()
		r.mu.Lock()
		var due []budgetRef
		for id, ref := range r.refs {
			if ref.deadline <= now {
				due = append(due, ref)
				delete(r.refs, id)
			}
		}
		if len(due) == 0 && len(r.refs) == 0 {
			r.sweeping = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		for _, ref := range due {
			for _, k := range ref.keys {
				key := []byte(k.key)
				sh := e.shardOf(key)
				e.Group.Do(int(sh), func(*pipeline.Shard) {
					d := e.data(sh)
					if k.db >= len(d.dbs) {
						return
					}
					if ent := d.dbs[k.db].Peek(key, now); ent != nil && ent.Kind == keyspace.KindBudget {
						keyspace.Obj[budget.Budget](ent).Advance(now)
					}
				})
			}
		}
	}
}

// budgetRenamed puts the pending reservations of a budget RENAMEd or MOVEd to key of database db
// in the id index under its new name, so COMMIT and RELEASE settle them there (from a
// connection of db); the old name stays in their records and is skipped (no budget there holds
// the id). COPY and RESTORE register nothing: a copy's reservations are refunded at their
// deadline.
func budgetRenamed(c *Ctx, db int, key []byte, to *keyspace.Keyspace) {
	ent := to.Find(key, c.Now)
	if ent == nil || ent.Kind != keyspace.KindBudget {
		return
	}
	reg := budgetReg(c.E)
	for _, r := range keyspace.Obj[budget.Budget](ent).Reservations() {
		reg.note(c.E, db, key, r)
	}
}

// note records that key of db holds reservation res (BUDGET.STATE, loading).
func (r *budgetRegistry) note(e *Engine, db int, key []byte, res budget.Resv) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.startSweep(e)
	r.seq = max(r.seq, res.ID)
	ref, ok := r.refs[res.ID]
	if !ok {
		ref = budgetRef{deadline: res.Deadline}
	}
	if k := (budgetKey{db: db, key: string(key)}); !slices.Contains(ref.keys, k) {
		ref.keys = append(ref.keys, k)
	}
	r.refs[res.ID] = ref
}

func (r *budgetRegistry) get(id uint64) (budgetRef, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, ok := r.refs[id]
	return ref, ok
}

// settled takes database db's keys out of reservation id's chain, settled by a COMMIT or
// RELEASE there, and drops the id once no key is left (MOVE may leave some in another).
func (r *budgetRegistry) settled(id uint64, db int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, ok := r.refs[id]
	if !ok {
		return
	}
	var rest []budgetKey
	for _, k := range ref.keys {
		if k.db != db {
			rest = append(rest, k)
		}
	}
	if len(rest) == 0 {
		delete(r.refs, id)
		return
	}
	ref.keys = rest
	r.refs[id] = ref
}

func formatResvID(id uint64) []byte { return strconv.AppendUint([]byte{'r'}, id, 10) }

func parseResvID(b []byte) (uint64, bool) {
	if len(b) < 2 || b[0] != 'r' {
		return 0, false
	}
	id, err := strconv.ParseUint(string(b[1:]), 10, 64)
	return id, err == nil
}

// parseBudgetPeriod reads PER's duration in ns: an integer with an optional ms, s, m, h or d.
func parseBudgetPeriod(b []byte) (int64, bool) {
	s := strings.ToLower(string(b))
	mult := int64(time.Second)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"ms", int64(time.Millisecond)}, {"s", int64(time.Second)}, {"m", int64(time.Minute)},
		{"h", int64(time.Hour)}, {"d", 24 * int64(time.Hour)}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = s[:len(s)-len(u.suf)], u.m
			break
		}
	}
	n, ok := ParseInt([]byte(s))
	if !ok || n <= 0 || n > (1<<62)/mult {
		return 0, false
	}
	return n * mult, true
}

// budgetOf finds key's budget in ks; wrong is set when it holds another type.
func budgetOf(c *Ctx, ks *keyspace.Keyspace, key []byte) (e *keyspace.Entry, b *budget.Budget, wrong bool) {
	e = ks.Find(key, c.Now)
	if e == nil {
		return nil, nil, false
	}
	if e.Kind != keyspace.KindBudget {
		return nil, nil, true
	}
	return e, keyspace.Obj[budget.Budget](e), false
}

// propagateBudget replicates key's state (of database db) as BUDGET.STATE.
func propagateBudget(c *Ctx, key []byte, b *budget.Budget) {
	if !c.E.Feed.Active() {
		c.PropagateNothing()
		return
	}
	c.Propagate([]byte("BUDGET.STATE"), key, b.AppendBinary(nil))
}

// BUDGET.SET key LIMIT n PER period [BURST b] [UNIT tokens|requests|micro_usd]
func budgetSet(c *Ctx) {
	var limit, period, burst int64 = -1, -1, 0
	unit := budget.Tokens
	a := c.Args
	for i := 2; i < len(a); i++ {
		if i+1 >= len(a) {
			c.Err(ErrSyntax)
			return
		}
		v := a[i+1]
		switch {
		case optIs(a[i], "LIMIT"):
			n, ok := ParseInt(v)
			if !ok || n <= 0 {
				c.Err(errBudgetLimit)
				return
			}
			limit = n
		case optIs(a[i], "PER"):
			p, ok := parseBudgetPeriod(v)
			if !ok {
				c.Err(errBudgetPeriod)
				return
			}
			period = p
		case optIs(a[i], "BURST"):
			n, ok := ParseInt(v)
			if !ok || n < 0 {
				c.Err(errBudgetBurst)
				return
			}
			burst = n
		case optIs(a[i], "UNIT"):
			u, ok := budget.ParseUnit(strings.ToLower(string(v)))
			if !ok {
				c.Err(errBudgetUnit)
				return
			}
			unit = u
		default:
			c.Err(ErrSyntax)
			return
		}
		i++
	}
	if limit < 0 || period < 0 {
		c.Err(ErrSyntax)
		return
	}
	key := a[1]
	ks := c.KS(key)
	e, b, wrong := budgetOf(c, ks, key)
	if wrong {
		c.WrongType()
		return
	}
	if e == nil {
		e = ks.Add(key)
		b = budget.New(limit, period, burst, unit, c.Now)
		keyspace.SetObj(e, keyspace.KindBudget, b)
		e.Access = uint32(c.Now / int64(time.Second))
	} else {
		b.Reconfigure(limit, period, burst, unit, c.Now)
	}
	c.Changed(NotifyModule, "budget.set", key)
	c.Dirty(1)
	propagateBudget(c, key, b)
	c.OK()
}

// BUDGET.GET key: the budget's settings and state now, or null.
func budgetGet(c *Ctx) {
	key := c.Args[1]
	e := c.FindRead(key)
	if e == nil {
		c.Null()
		return
	}
	if e.Kind != keyspace.KindBudget {
		c.WrongType()
		return
	}
	b := keyspace.Obj[budget.Budget](e)
	avail, reserved, pending := b.Peek(c.Now)
	c.MapLen(8)
	c.BulkString("limit")
	c.Int(b.Limit)
	c.BulkString("period_ms")
	c.Int(b.Period / 1e6)
	c.BulkString("burst")
	c.Int(b.Burst)
	c.BulkString("unit")
	c.BulkString(b.Unit.String())
	c.BulkString("capacity")
	c.Int(b.Capacity())
	c.BulkString("available")
	c.Int(avail)
	c.BulkString("reserved")
	c.Int(reserved)
	c.BulkString("reservations")
	c.Int(int64(pending))
}

// budgetChain is TAKE's and RESERVE's parsed arguments.
type budgetChain struct {
	n       int64
	keys    [][]byte
	timeout int64
}

// parseChain reads n key [key …] [TEXT t [ENCODING e]] [TIMEOUT ms] (TIMEOUT for RESERVE); a
// TEXT's tokens, counted here, are added to n. It replies the error and returns false.
func parseChain(c *Ctx, reserve bool, kbuf [][]byte) (ch budgetChain, ok bool) {
	a := c.Args
	n, ok := ParseInt(a[1])
	if !ok || n < 0 {
		c.Err(errBudgetAmount)
		return ch, false
	}
	ch.keys = kbuf[:0]
	i := 2
	for ; i < len(a) && !budgetOption(a[i]); i++ {
		dup := false
		for _, x := range ch.keys {
			dup = dup || bytes.Equal(x, a[i])
		}
		if !dup {
			ch.keys = append(ch.keys, a[i])
		}
	}
	if len(ch.keys) == 0 {
		c.ArityErr()
		return ch, false
	}
	var text []byte
	hasText := false
	enc := tokens.Default
	ch.timeout = budgetDefaultTimeout
	for ; i < len(a); i += 2 {
		if i+1 >= len(a) {
			c.Err(ErrSyntax)
			return ch, false
		}
		v := a[i+1]
		switch {
		case optIs(a[i], "TEXT"):
			if len(v) > budgetMaxText {
				c.Err(errBudgetText)
				return ch, false
			}
			text, hasText = v, true
		case optIs(a[i], "ENCODING"):
			en, ok := tokens.Parse(v)
			if !ok {
				c.Err(errBudgetEnc)
				return ch, false
			}
			enc = en
		case reserve && optIs(a[i], "TIMEOUT"):
			ms, ok := ParseInt(v)
			if !ok || ms <= 0 || ms > 1<<40 {
				c.Err(errBudgetTimeout)
				return ch, false
			}
			ch.timeout = ms * 1e6
		default:
			c.Err(ErrSyntax)
			return ch, false
		}
	}
	if hasText {
		n = min(n+int64(tokens.Count(enc, text)), 1<<62)
	}
	ch.n = n
	return ch, true
}

// checkChain finds every budget of the chain, brought up to now, and whether all of them hold
// n units: it replies the error (missing key, wrong type) and returns nil; denied is set when
// some budget is short, with the least available and the longest wait.
func checkChain(c *Ctx, ch budgetChain, bbuf []*budget.Budget) (bs []*budget.Budget, denied bool, least, wait int64) {
	bs = bbuf[:0]
	least = -1
	for _, k := range ch.keys {
		_, b, wrong := budgetOf(c, c.KS(k), k)
		if wrong {
			c.WrongType()
			return nil, false, 0, 0
		}
		if b == nil {
			c.Err(errBudgetNoKey + string(k) + "'")
			return nil, false, 0, 0
		}
		b.Advance(c.Now)
		if av := b.Available(); least < 0 || av < least {
			least = av
		}
		if b.Available() < ch.n {
			denied = true
			if w := b.RetryAfter(ch.n); w < 0 || wait < 0 {
				wait = -1
			} else {
				wait = max(wait, w)
			}
		}
		bs = append(bs, b)
	}
	return bs, denied, max(least, 0), wait
}

func budgetWaitMs(ns int64) int64 {
	if ns < 0 {
		return -1
	}
	return (ns + 1e6 - 1) / 1e6
}

// BUDGET.TAKE n key [key …] [TEXT text [ENCODING cl100k|o200k]]: takes n (plus the text's tokens)
// from every key or from none. Reply: [1, least remaining, -1] or [0, least available, ms until
// all could grant (-1: never, n is above some capacity)].
func budgetTake(c *Ctx) {
	var kbuf [8][]byte // a short chain allocates nothing
	var bbuf [8]*budget.Budget
	ch, ok := parseChain(c, false, kbuf[:])
	if !ok {
		return
	}
	bs, denied, least, wait := checkChain(c, ch, bbuf[:])
	if bs == nil {
		return
	}
	c.ArrayLen(3)
	if denied {
		c.Int(0)
		c.Int(least)
		c.Int(budgetWaitMs(wait))
		return
	}
	least = -1
	for i, b := range bs {
		b.Take(ch.n)
		if av := b.Available(); least < 0 || av < least {
			least = av
		}
		c.Changed(NotifyModule, "budget.take", ch.keys[i])
		propagateBudget(c, ch.keys[i], b)
	}
	c.Dirty(len(bs))
	c.Int(1)
	c.Int(max(least, 0))
	c.Int(-1)
}

// BUDGET.RESERVE n key [key …] [TIMEOUT ms] [TEXT text [ENCODING e]]: takes n from every key at
// once under a new reservation id (replied), or from none (null).
func budgetReserve(c *Ctx) {
	var kbuf [8][]byte
	var bbuf [8]*budget.Budget
	ch, ok := parseChain(c, true, kbuf[:])
	if !ok {
		return
	}
	bs, denied, _, _ := checkChain(c, ch, bbuf[:])
	if bs == nil {
		return
	}
	if denied {
		c.Null()
		return
	}
	deadline := c.Now + ch.timeout
	id := budgetReg(c.E).add(c.E, c.DB, ch.keys, deadline, c.Now)
	for i, b := range bs {
		b.Reserve(id, ch.n, deadline)
		c.Changed(NotifyModule, "budget.reserve", ch.keys[i])
		propagateBudget(c, ch.keys[i], b)
	}
	c.Dirty(len(bs))
	c.Bulk(formatResvID(id))
}

// BUDGET.COMMIT id actual: settles a reservation with the units actually used (the difference
// is refunded or charged on every key of its chain). 1, or 0 when the id is unknown, released,
// expired, or none of its chain's keys is in the connection's database (only those are settled).
func budgetCommit(c *Ctx) {
	actual, ok := ParseInt(c.Args[2])
	if !ok || actual < 0 {
		c.Err(errBudgetAmount)
		return
	}
	budgetSettle(c, true, actual)
}

// BUDGET.RELEASE id: refunds a reservation whole. 1, or 0 as COMMIT.
func budgetRelease(c *Ctx) { budgetSettle(c, false, 0) }

func budgetSettle(c *Ctx, commit bool, actual int64) {
	id, ok := parseResvID(c.Args[1])
	if !ok {
		c.Err(errBudgetID)
		return
	}
	reg := budgetReg(c.E)
	ref, ok := reg.get(id)
	var keys [][]byte
	if ok && ref.deadline > c.Now {
		keys = ref.keysIn(c.DB)
	}
	if len(keys) == 0 {
		c.Int(0)
		return
	}
	run := func() {
		done := false
		for _, key := range keys {
			_, b, wrong := budgetOf(c, c.KS(key), key)
			if b == nil || wrong {
				continue
			}
			b.Advance(c.Now)
			var found bool
			if commit {
				found = b.Settle(id, actual)
			} else {
				found = b.Release(id)
			}
			if !found {
				continue
			}
			done = true
			if commit {
				c.Changed(NotifyModule, "budget.commit", key)
			} else {
				c.Changed(NotifyModule, "budget.release", key)
			}
			c.Dirty(1)
			propagateBudget(c, key, b)
		}
		reg.settled(id, c.DB)
		if done {
			c.Int(1)
		} else {
			c.Int(0)
		}
	}
	if c.tx != nil { // inside EXEC, which holds every shard (multi.go)
		run()
		return
	}
	shards := make([]int32, 0, len(keys))
	for _, key := range keys {
		shards = append(shards, c.E.shardOf(key))
	}
	slices.Sort(shards)
	shards = slices.Compact(shards) // Group.Lock spins forever on a repeated shard
	g := c.E.Group
	g.Lock(shards)
	defer g.Unlock(shards)
	c.E.enter(shards, false, c)
	defer c.E.leave(shards, false, c)
	c.E.selfAccount(c, run)
	c.E.commit(c, c.slot)
	c.E.serveReadyIn(shards, c.Now, c.slot)
}

// BUDGET.STATE key payload: replaces key's budget with the state payload encodes (ds/budget's
// encoding, as BUDGET.* replicate), keeping the key's TTL; registers its reservations.
func budgetState(c *Ctx) {
	b, err := budget.Decode(c.Args[2])
	if err != nil {
		c.Err(errBudgetPayload)
		return
	}
	key := c.Args[1]
	ks := c.KS(key)
	e := ks.Find(key, c.Now)
	switch {
	case e == nil:
		e = ks.Add(key)
		e.Access = uint32(c.Now / int64(time.Second))
	case e.Kind != keyspace.KindBudget:
		c.WrongType()
		return
	}
	keyspace.SetObj(e, keyspace.KindBudget, b)
	reg := budgetReg(c.E)
	for _, r := range b.Reservations() {
		reg.note(c.E, c.DB, key, r)
	}
	c.Changed(NotifyModule, "budget.set", key)
	c.Dirty(1)
	c.OK()
}

// loadBudget decodes a budget's RDB (module value) or DUMP payload. Loading an RDB (key set)
// puts its reservations in the id index, so COMMIT and RELEASE work after a restart; RESTORE
// (key nil) does not: a restored copy's reservations are another key's, refunded at their
// deadline.
func loadBudget(e *Engine, db int, key []byte, p []byte) (*budget.Budget, error) {
	b, err := budget.Decode(p)
	if err != nil || key == nil {
		return b, err
	}
	reg := budgetReg(e)
	for _, r := range b.Reservations() {
		reg.note(e, db, key, r)
	}
	return b, nil
}
