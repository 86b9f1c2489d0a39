package command

import (
	"encoding/binary"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/pipeline"
)

// The memory budget (maxmemory) and eviction. Used memory is what the shards' keyspaces count
// (ds/keyspace/used.go, memory_acct.go) plus an overhead for the server and its clients
// (memOverhead). Eviction is spread over the shards:
//
//  1. A write command that may grow memory (denyoom) and runs on a shard whose count is over
//     its share (the budget less the overhead, divided by the shards) while the total is over
//     the budget evicts from that shard first, before it runs, for at most the time
//     maxmemory-eviction-tenacity allows, as Redis's performEvictions does.
//  2. The server cron (Evict, hz times a second) evicts from the largest shards while the total
//     is over the budget, one shard at a time, so a shard the writes never reach is not left
//     holding the excess and one hot shard does not take every eviction.
//  3. A denyoom command is refused with -OOM when the total is over the budget and nothing can
//     be evicted: noeviction, or volatile-* with no key with an expiry left.
//
// Each evicted key is propagated as DEL (UNLINK under lazyfree-lazy-eviction) in its own feed
// entry, raises "evicted" and is signalled as modified, as evict.c does.

// MemorySettings are the eviction directives, from the configuration.
type MemorySettings struct {
	MaxMemory    int64  // maxmemory in bytes; 0: no limit
	Policy       string // maxmemory-policy
	Samples      int    // maxmemory-samples
	Tenacity     int    // maxmemory-eviction-tenacity
	LFULogFactor int64
	LFUDecayTime int64
	LazyEviction bool // lazyfree-lazy-eviction
}

// memState is the engine's side of the budget.
type memState struct {
	limit    atomic.Int64
	policy   atomic.Pointer[evictPolicy] // nil: noeviction
	samples  atomic.Int64
	tenacity atomic.Int64
	lazy     atomic.Bool
	lfu      keyspace.LFU // shared by every keyspace (Keyspace.LFU)
	tiny     tinyState    // allkeys-tinylfu's sketch (evict_policy.go)

	// total is the shards' count as last summed (dataUsed): the gate compares it with the
	// budget before it sums again.
	total    atomic.Int64
	overhead atomic.Int64 // memOverhead as last computed by the cron
	rss      atomic.Int64 // resident bytes, read by the cron (INFO does no I/O)
	evicted  atomic.Int64 // evicted_keys

	stuck     atomic.Bool  // the cron's last pass over the budget found nothing to evict
	overSince atomic.Int64 // unix ns when the total went over the budget; 0: it is not
	overTotal atomic.Int64 // ns over the budget in earlier spells
}

// shardMem is a shard's count and eviction pool.
type shardMem struct {
	used atomic.Int64 // sum of the shard's keyspaces (their sink); changed by the token holder
	tags atomic.Int64 // sum of the shard's tag indexes (their sink, ds/tags Bytes), likewise
	pool evictPool
	rnd  sampleRand // the pool's sampling (evict_pool.go)
	key  []byte     // scratch for an evicted key's name
	tiny tinyShard
}

// load is what the shard holds: its keys and its tag indexes.
func (m *shardMem) load() int64 { return m.used.Load() + m.tags.Load() }

// initShardMem links a shard's keyspaces to its counter and the engine's LFU clock; until
// SetMemorySettings, the directives are Redis's defaults.
func (e *Engine) initShardMem(d *shardData) {
	if m := &e.mem; m.samples.Load() == 0 {
		m.samples.Store(5)
		m.tenacity.Store(10)
		m.lfu.LogFactor.Store(10)
		m.lfu.DecayTime.Store(1)
	}
	d.mem.rnd.s = e.rand()
	for _, ks := range d.dbs {
		ks.SetUsedSink(&d.mem.used)
		ks.LFU = &e.mem.lfu
	}
}

// SetMemorySettings applies the eviction directives; a lowered maxmemory is evicted down to by
// the cron (and by the next writes).
func (e *Engine) SetMemorySettings(s MemorySettings) {
	m := &e.mem
	p := policyNamed(s.Policy)
	m.policy.Store(p)
	m.samples.Store(int64(max(s.Samples, 1)))
	m.tenacity.Store(int64(s.Tenacity))
	m.lazy.Store(s.LazyEviction)
	m.lfu.LogFactor.Store(s.LFULogFactor)
	m.lfu.DecayTime.Store(s.LFUDecayTime)
	m.lfu.On.Store(p != nil && p.lfu)
	e.setTinyLFU(p, s.MaxMemory)
	if m.overhead.Load() == 0 {
		m.overhead.Store(e.memOverhead())
	}
	m.limit.Store(max(s.MaxMemory, 0))
	m.stuck.Store(false)
	m.total.Store(e.dataUsed())
}

// The overhead counted besides the keyspaces: the server's own structures and the clients. A
// client is charged at least what an idle netpoll connection with its pipeline state was
// measured to hold; when the client cron measured more (ClientMemory: buffers the transport and
// the outboxes hold, as Redis counts clients' buffers in used_memory), that.
const (
	memFixedOverhead = 1 << 20
	memPerClient     = 16 << 10
)

// memOverhead is used_memory less the dataset.
func (e *Engine) memOverhead() int64 {
	clients := max(int64(e.ClientCount())*memPerClient, e.ClientMemory())
	return memFixedOverhead + clients + e.tinyBytes()
}

// dataUsed sums the shards' counts (used_memory_dataset).
func (e *Engine) dataUsed() int64 {
	var n int64
	for i := range e.Group.Shards {
		n += e.data(int32(i)).mem.load()
	}
	e.mem.total.Store(n)
	return n
}

// usedMemory is INFO's used_memory: the dataset and the overhead.
func (e *Engine) usedMemory() int64 { return e.dataUsed() + e.mem.overhead.Load() }

// shardShare is what one shard may hold within the budget.
func (e *Engine) shardShare(limit int64) int64 {
	return max(limit-e.mem.overhead.Load(), 0) / int64(len(e.Group.Shards))
}

// admitLocked is the gate of a denyoom command of c (its first key's shard held, if it has
// keys): it evicts where it may and reports whether the command may run. The command's own
// shard evicts first when it is over its share; then other shards whose tokens are free (a
// try, never a wait: this executor holds its own), largest first, until the total is within
// the budget or the time evict.c's tenacity allows has passed. It refuses only when nothing
// was evicted and nothing is left to evict.
func (e *Engine) admitLocked(c *Ctx) bool {
	m := &e.mem
	limit := m.limit.Load()
	own := int32(-1)
	if c.Spec.FirstKey > 0 || c.Spec.Keys != nil || c.Spec.NumKeys > 0 {
		m := &c.mem
		if m.idx = c.Spec.keyIndexes(c.Args, m.idx[:0]); len(m.idx) > 0 {
			own = e.shardOf(c.Args[m.idx[0]])
		}
	}
	share := e.shardShare(limit)
	if (own < 0 || e.data(own).mem.load() <= share) && m.total.Load()+m.overhead.Load() <= limit {
		return true
	}
	if e.usedMemory() <= limit || e.evictionHeld() {
		return true
	}
	e.noteOver(c.Now)
	p := m.policy.Load()
	if p == nil {
		return false
	}
	start, budget := time.Now(), e.evictTimeLimit()
	// Redis's performEvictions samples "eviction-cycle" once its loop ran, refused or not.
	defer func() { e.LatencyEvent("eviction-cycle", time.Since(start)) }()
	evicted := 0
	e.tinyBeginLocked(c, p, own)
	if own >= 0 && e.data(own).mem.load() > share {
		evicted += e.evictGateLocked(c, e.data(own), p, share, budget)
	}
	busy, skip := false, c.mem.skip(len(e.Group.Shards), own)
	// Other executors write meanwhile: what counts is whether the total was within the budget
	// when this gate last looked, not a later sum.
	under := false
	for tried := 0; tried < len(e.Group.Shards) && !c.tiny.refused; tried++ {
		if under = e.usedMemory() <= limit; under {
			break
		}
		if evicted > 0 && time.Since(start) > budget {
			break
		}
		i := e.largestShard(skip)
		if i < 0 {
			break
		}
		skip[i] = true
		if !e.Group.TryLock(int32(i)) {
			busy = true
			continue
		}
		evicted += e.evictGateLocked(c, e.data(int32(i)), p, 0, budget)
		e.Group.Unlock(c.mem.one(int32(i)))
	}
	// As evict.c: within the budget, or out of time after evicting (EVICT_RUNNING: evict.c
	// looks at the clock only after freeing keys), the command runs; over it with every shard
	// tried and nothing more to evict (EVICT_FAIL), it is refused, whatever was evicted on the
	// way. A shard whose token was busy may still hold keys: the hint says.
	switch {
	case under, evicted > 0 && time.Since(start) > budget, c.tiny.refused:
		return true
	case evicted > 0 && e.dataUsed() > 0:
		// Keys are left that shards busy meanwhile or a sum a write moved kept from this
		// gate: the next writes and the cron take them. Only an empty dataset over the budget
		// is evict.c's EVICT_FAIL after evicting.
		return true
	case busy:
		return e.evictable(p)
	}
	return false
}

// evictionHeld reports whether maxmemory is not enforced now, as Redis's
// isSafeToPerformEvictions: while a pause holds the dataset still (datasetPaused: an eviction
// is a write, and would move the replication offset), and on a replica with
// replica-ignore-maxmemory yes (the default: the primary's DELs evict; a replica evicting on
// its own would diverge from it). Writes are then neither evicted for nor refused with -OOM.
func (e *Engine) evictionHeld() bool {
	return e.datasetPaused() || e.repl.role.Load() && e.Settings().ReplicaIgnoreMaxmemory
}

// evictable reports whether some shard may still hold a key p can evict, for a write whose own
// shard had none: not when every shard is empty, nor when the cron's last pass over the budget
// found nothing to evict in any shard (volatile-* with no key with an expiry). A hint, read
// without the shards' tokens: enough to choose between evicting later and refusing now.
func (e *Engine) evictable(p *evictPolicy) bool {
	return e.dataUsed() > 0 && !e.mem.stuck.Load()
}

// evictTimeLimit is evict.c's evictionTimeLimitUs.
func (e *Engine) evictTimeLimit() time.Duration {
	t := e.mem.tenacity.Load()
	switch {
	case t <= 10:
		return time.Duration(50*t) * time.Microsecond
	case t < 100:
		return time.Duration(500*math.Pow(1.15, float64(t-10))) * time.Microsecond
	}
	return time.Hour
}

// noteOver records that the total is over the budget at now (the exceeded-time counters).
func (e *Engine) noteOver(now int64) {
	e.mem.overSince.CompareAndSwap(0, now)
}

// noteUnder ends a spell over the budget.
func (e *Engine) noteUnder(now int64) {
	if since := e.mem.overSince.Swap(0); since != 0 {
		e.mem.overTotal.Add(now - since)
	}
}

// evictShardLocked evicts keys of the held shard d by p until its count is at most target or
// the total is within the budget, for at most limit; it returns how many it evicted.
func (e *Engine) evictShardLocked(d *shardData, p *evictPolicy, target, now int64, limit time.Duration) int {
	start := time.Now()
	n := 0
	budget := e.mem.limit.Load() - e.mem.overhead.Load()
	// Summed afresh: m.total is stored by whichever caller summed last, possibly an older sum
	// (a gate whose shards kept writing), and a low one would stop this shard evicting.
	othersUsed := e.dataUsed() - d.mem.load()
	for d.mem.load() > target && othersUsed+d.mem.load() > budget {
		ks, en := e.pickLocked(d, p, now)
		if en == nil || p.admit != nil && !p.admit(e, d, ks, en, now) {
			break
		}
		e.evictKeyLocked(d, ks, en)
		n++
		if n%16 == 0 && time.Since(start) > limit {
			break
		}
	}
	if n > 0 {
		e.commitBackgroundLocked(d)
		e.dataUsed()
	}
	return n
}

// evictKeyLocked evicts en from ks of the held shard d.
func (e *Engine) evictKeyLocked(d *shardData, ks *keyspace.Keyspace, en *keyspace.Entry) {
	db := d.dbIndex(ks)
	d.mem.key = append(d.mem.key[:0], en.Key()...)
	k := d.mem.key
	c := &d.bg
	if e.Feed.Active() {
		name := "DEL"
		if e.mem.lazy.Load() {
			name = "UNLINK"
		}
		c.fx.pre = binary.AppendUvarint(c.fx.pre, uint64(db))
		c.fx.pre = appendCommand(c.fx.pre, [][]byte{[]byte(name), k})
		c.fx.npre++
	}
	c.NotifyIn(db, NotifyEvicted, "evicted", k)
	var t0 time.Time
	if e.lat.monitorMs.Load() > 0 { // the clock only while the latency monitor is on
		t0 = time.Now()
	}
	var ss *snapShard
	if e.mem.lazy.Load() && freeEffort(en) > lazyfreeThreshold { // lazyfree-lazy-eviction (lazyfree.go)
		e.lazy.freed.Add(1)
		ss = e.lazyDetachLocked(ks, en)
	}
	ks.Remove(en) // Redis's "eviction-del" times the delete alone
	if ss != nil {
		ss.detach = nil
	}
	if !t0.IsZero() {
		e.LatencyEvent("eviction-del", time.Since(t0))
	}
	c.touchIn(db, k, false)
	e.mem.evicted.Add(1)
}

// dbIndex is the database number of ks, one of d's.
func (d *shardData) dbIndex(ks *keyspace.Keyspace) int {
	for i, k := range d.dbs {
		if k == ks {
			return i
		}
	}
	panic("BUG: a keyspace not of its shard")
}

// Evict is the cron's eviction step: while the total is over the budget it evicts from the
// largest shard, one at a time, for at most a quarter of the cron's period. It also refreshes
// the overhead and the resident size INFO reads.
func (e *Engine) Evict(period time.Duration) {
	m := &e.mem
	m.overhead.Store(e.memOverhead())
	m.rss.Store(readRSS())
	limit := m.limit.Load()
	now := time.Now().UnixNano()
	if limit == 0 || e.usedMemory() <= limit {
		e.noteUnder(now)
		return
	}
	if e.evictionHeld() {
		return
	}
	e.noteOver(now)
	p := m.policy.Load()
	if p == nil {
		return
	}
	start := time.Now()
	defer func() { e.LatencyEvent("eviction-cycle", time.Since(start)) }()
	deadline := start.Add(period / 4)
	skip := make([]bool, len(e.Group.Shards))
	for e.usedMemory() > limit && time.Now().Before(deadline) {
		i := e.largestShard(skip)
		if i < 0 {
			m.stuck.Store(true)
			return
		}
		evicted := 0
		e.Group.Do(i, func(sh *pipeline.Shard) {
			d := sh.Data.(*shardData)
			d.epoch++ // no handler runs: removed entries may be reused
			// Down to what the budget needs, not to the shard's share: the largest shard goes
			// first, so the excess comes off where it is; a shard skipped had nothing to evict.
			evicted = e.evictShardLocked(d, p, 0, time.Now().UnixNano(), time.Millisecond)
		})
		if evicted == 0 {
			skip[i] = true
		} else {
			m.stuck.Store(false)
		}
	}
	if e.usedMemory() <= limit {
		e.noteUnder(time.Now().UnixNano())
	}
}

// largestShard is the shard with the largest count not skipped, -1 when none holds anything.
func (e *Engine) largestShard(skip []bool) int {
	best, most := -1, int64(0)
	for i := range e.Group.Shards {
		if u := e.data(int32(i)).mem.load(); !skip[i] && u > most {
			best, most = i, u
		}
	}
	return best
}

// readRSS is the process's resident set size from /proc/self/statm (0 where there is none).
func readRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var pages int64
	i := 0
	for i < len(b) && b[i] != ' ' {
		i++
	}
	for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		pages = pages*10 + int64(b[i]-'0')
	}
	return pages * int64(os.Getpagesize())
}

// evictionExceeded is INFO's total_eviction_exceeded_time and current_eviction_exceeded_time,
// in milliseconds: the time the total spent over the budget, and the current spell's.
func (e *Engine) evictionExceeded(now int64) (total, current int64) {
	if since := e.mem.overSince.Load(); since != 0 && now > since {
		current = (now - since) / 1e6
	}
	return e.mem.overTotal.Load()/1e6 + current, current
}

// oomAtRoute is the memory gate route applies before a command is queued or EXEC runs, as
// Redis's processCommand: inside MULTI any queued command (queuing itself takes memory), and
// EXEC of a transaction holding a denyoom command, are refused while the total is over the
// budget and nothing can be evicted. Route holds no token and cannot evict; a policy that can
// leaves the queuing to go on while the cron evicts. It returns the error, or "".
func (e *Engine) oomAtRoute(cl *Client, spec *Spec) string {
	limit := e.mem.limit.Load()
	if limit == 0 || !cl.tx.on || e.evictionHeld() {
		return ""
	}
	if spec.Name == "exec" {
		deny := false
		for _, q := range cl.tx.cmds {
			deny = deny || q.spec.Flags&DenyOOM != 0
		}
		if !deny {
			return ""
		}
	} else if isTxControl(spec) {
		return ""
	}
	if e.usedMemory() <= limit {
		return ""
	}
	if p := e.mem.policy.Load(); p != nil && e.evictable(p) {
		return ""
	}
	return ErrOOM
}
