package command

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/evict"
	"github.com/hotkv/hotkv/ds/keyspace"
)

// Eviction policies. A policy is a row: its maxmemory-policy name, whether it samples only keys
// with an expiry (volatile-*), and its score, a function of an entry and the time (unix ns):
// the higher the score, the sooner the key is evicted. The eviction pool (evict.go) samples
// maxmemory-samples keys of each database of a shard, keeps the 16 best-scored in the shard's
// pool, as Redis's evictionPoolPopulate does, and evicts the best that still exists. A policy
// with no score (the random ones) evicts a random sampled key without a pool.
//
// To add a policy: write its score (it may keep state of its own, e.g. a frequency sketch fed
// from the access path; a score must be cheap and must not change the entry) and add its row to
// evictPolicies; config's maxmemory-policy enum needs the name too. Scores compare as uint64, so
// a policy that ranks by a small counter returns, e.g., 255 minus the counter.

// evictPolicy is one maxmemory-policy.
type evictPolicy struct {
	name     string
	volatile bool
	score    func(e *Engine, en *keyspace.Entry, now int64) uint64 // nil: random
	lfu      bool                                                  // the access path keeps Entry.Freq
	// admit, when set, may keep a picked victim (allkeys-tinylfu's admission, below).
	admit func(e *Engine, d *shardData, ks *keyspace.Keyspace, victim *keyspace.Entry, now int64) bool
}

// evictPolicies are Redis's policies but noeviction, which has no row (nil: nothing evicts).
var evictPolicies = []*evictPolicy{
	{name: "volatile-lru", volatile: true, score: lruScore},
	{name: "volatile-lfu", volatile: true, score: lfuScore, lfu: true},
	{name: "volatile-random", volatile: true},
	{name: "volatile-ttl", volatile: true, score: ttlScore},
	{name: "allkeys-lru", score: lruScore},
	{name: "allkeys-lfu", score: lfuScore, lfu: true},
	{name: "allkeys-random"},
	{name: "allkeys-tinylfu", score: tinyScore, admit: tinyAdmit},
}

// policyNamed returns the policy of a maxmemory-policy name, nil for noeviction or an unknown
// name.
func policyNamed(name string) *evictPolicy {
	for _, p := range evictPolicies {
		if p.name == name {
			return p
		}
	}
	return nil
}

// lruScore is the idle time in seconds (Redis's estimateObjectIdleTime).
func lruScore(_ *Engine, en *keyspace.Entry, now int64) uint64 {
	return uint64(idleSeconds(en, now))
}

// lfuScore ranks the least frequently used first: 255 minus the decayed counter.
func lfuScore(e *Engine, en *keyspace.Entry, now int64) uint64 {
	return 255 - uint64(e.mem.lfu.Decayed(en, now))
}

// ttlScore ranks the soonest expiry first (Redis: ULLONG_MAX minus the expire time).
func ttlScore(_ *Engine, en *keyspace.Entry, _ int64) uint64 {
	return math.MaxUint64 - uint64(en.ExpireAt())
}

// allkeys-tinylfu is HotKV's own policy (docs/decisions.md, "HotKV's eviction policy"): every
// key access, hit or miss, reads included (shared reads too: the sketch takes no lock), touches
// a TinyLFU frequency sketch (ds/evict) with the key's hash; the pool ranks candidates by the
// sketch's estimate, least first, then by the older access; and a new key written under
// pressure whose estimate is below the victim's is itself the one evicted (TinyLFU's admission):
// the victim stays, the write runs, and the new key is evicted by the next write's gate on its
// shard (so its DEL follows its write in the feed; a shard holds one such key at a time). A key written without a
// read first estimates 0 and ties its victim: admitted, so a write-only load still behaves like
// LRU.

// tinyState is the engine's sketch; it is replaced when the keys held at the budget move far
// from what it was sized for (it then starts empty).
type tinyState struct {
	on       atomic.Bool
	sketch   atomic.Pointer[evict.Sketch]
	sizedFor atomic.Int64 // keys the sketch was sized for
}

// tinyShard is a shard's admission state, changed only by its token holder: the gate of the
// write evicting from it (nil outside a write's gate: the cron's evictions admit nothing), and
// the shard's last refused new key, evicted by the shard's next gate.
type tinyShard struct {
	gate    *tinyGate
	pending []byte // a refused new key's name; nil: none
	pendDB  int
	hasPend bool
	gates   int // gates since the sketch's size was checked
}

// tinyGate is a write's candidate at its memory gate: its first key, when absent.
type tinyGate struct {
	has     bool
	refused bool // a victim was kept: the write runs, its new key goes next
	h       uint64
	db      int
	key     []byte
	own     *shardData // the key's shard, held by the gate
}

// tinyPerKey is the sketch's capacity hint per key held (the sketch then ages every 40 key
// accesses per key held); tinyMaxShare bounds it to 1/32 of maxmemory, where it is counted
// (memOverhead).
const (
	tinyPerKey   = 4
	tinyMaxShare = 32
	tinyRecheck  = 4096
)

// touchKey records an access of the key whose hash is h, under allkeys-tinylfu.
func (e *Engine) touchKey(h uint64) {
	if e.mem.tiny.on.Load() {
		e.mem.tiny.sketch.Load().Touch(h)
	}
}

// setTinyLFU turns the sketch on or off, sized from the budget until keys are counted.
func (e *Engine) setTinyLFU(p *evictPolicy, limit int64) {
	t := &e.mem.tiny
	if p == nil || p.admit == nil {
		t.on.Store(false)
		return
	}
	if t.sketch.Load() == nil {
		e.sizeTinyLFU(max(limit/1024, 1024), limit)
	}
	t.on.Store(true)
}

// sizeTinyLFU replaces the sketch by one for keys held, within the budget's share.
func (e *Engine) sizeTinyLFU(keys, limit int64) {
	hint := keys * tinyPerKey
	for hint > 1024 && limit > 0 && hint*10 > limit/tinyMaxShare {
		hint /= 2
	}
	e.mem.tiny.sketch.Store(evict.NewSketch(int(hint)))
	e.mem.tiny.sizedFor.Store(keys)
}

// tinyBytes is the sketch's memory while the policy is on.
func (e *Engine) tinyBytes() int64 {
	if s := e.mem.tiny.sketch.Load(); s != nil && e.mem.tiny.on.Load() {
		return int64(s.Bytes())
	}
	return 0
}

// tinyBeginLocked starts c's gate under p: c's first key, when absent, is the candidate
// admission weighs against each victim. Every tinyRecheck gates of a shard it compares the keys
// held (the shard's times the shards) with the sketch's size.
func (e *Engine) tinyBeginLocked(c *Ctx, p *evictPolicy, own int32) {
	g := &c.tiny
	g.has, g.refused = false, false
	if p.admit == nil || own < 0 {
		return
	}
	d := e.data(own)
	e.evictPendingLocked(d)
	d.mem.tiny.gates++
	if t := &d.mem.tiny; t.gates >= tinyRecheck {
		t.gates = 0
		held := int64(0)
		for _, ks := range d.dbs {
			held += int64(ks.Len())
		}
		held *= int64(len(e.Group.Shards))
		if was := e.mem.tiny.sizedFor.Load(); held > 2*was || held < was/2 {
			e.sizeTinyLFU(max(held, 1024), e.mem.limit.Load())
		}
	}
	key := c.Args[c.mem.idx[0]]
	ks, h := c.lookup(key)
	if en := ks.PeekAny(key, h); en != nil && (en.ExpireAt() == 0 || en.ExpireAt() > c.Now) {
		return
	}
	g.has, g.h, g.db, g.key, g.own = true, h, c.DB, append(g.key[:0], key...), d
}

// evictPendingLocked evicts the held shard d's refused key, if it is still there.
func (e *Engine) evictPendingLocked(d *shardData) {
	t := &d.mem.tiny
	if !t.hasPend {
		return
	}
	t.hasPend = false
	ks := d.dbs[t.pendDB]
	if en := ks.PeekAny(t.pending, keyspace.Hash(t.pending)); en != nil {
		e.evictKeyLocked(d, ks, en)
		e.commitBackgroundLocked(d)
		e.dataUsed()
	}
}

// evictGateLocked is evictShardLocked for c's gate on the held shard d, with c's candidate.
func (e *Engine) evictGateLocked(c *Ctx, d *shardData, p *evictPolicy, target int64, limit time.Duration) int {
	if c.tiny.refused {
		return 0
	}
	d.mem.tiny.gate = &c.tiny
	n := e.evictShardLocked(d, p, target, c.Now, limit)
	d.mem.tiny.gate = nil
	return n
}

// tinyScore ranks the lowest estimate first, then the longest idle.
func tinyScore(e *Engine, en *keyspace.Entry, now int64) uint64 {
	est := e.mem.tiny.sketch.Load().Estimate(keyspace.HashString(en.Key()))
	return uint64(evict.MaxEstimate-est+1)<<40 | uint64(idleSeconds(en, now))
}

// tinyAdmit decides whether victim of ks on the held shard d is evicted: the first victim of a
// write's gate is kept, and the write's new key marked to go instead (by its shard's next
// gate), when the victim is estimated more frequent.
func tinyAdmit(e *Engine, d *shardData, ks *keyspace.Keyspace, victim *keyspace.Entry, now int64) bool {
	g := d.mem.tiny.gate
	if g == nil || !g.has {
		return true
	}
	g.has = false
	s := e.mem.tiny.sketch.Load()
	vh := keyspace.HashString(victim.Key())
	if s.Estimate(vh) <= s.Estimate(g.h) {
		return true
	}
	d.mem.pool.insert(tinyScore(e, victim, now), d.dbIndex(ks), vh, victim.Key())
	o := &g.own.mem.tiny
	o.pending, o.pendDB, o.hasPend = append(o.pending[:0], g.key...), g.db, true
	g.refused = true
	return false
}
