package main

import (
	"container/list"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/hotkv/hotkv/ds/evict"
)

// The in-process models hold a cache of a fixed number of keys (every value the same size, so a
// memory budget is a key count) and evict one key per insert into a full cache, choosing it as
// Redis 7.0.15's evict.c does: each eviction samples maxmemory-samples keys into a pool of 16
// kept in ascending order of score (idle time for LRU, 255 minus the decayed counter for LFU),
// then evicts the highest-scoring pool entry that still exists. Pool scores are the ones taken
// when the key was sampled, as in Redis.

const poolSize = 16

type policy int

const (
	polLRU policy = iota
	polLFU
	polTinyLFU
)

func (p policy) String() string {
	return [...]string{"lru", "lfu", "tinylfu"}[p]
}

func parsePolicy(s string) (policy, error) {
	for p := polLRU; p <= polTinyLFU; p++ {
		if s == p.String() || s == "allkeys-"+p.String() {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown policy %q (lru, lfu, tinylfu)", s)
}

// simConfig is what a model needs besides its trace.
type simConfig struct {
	capacity  int     // keys the cache holds
	samples   int     // maxmemory-samples
	rate      float64 // requests a second: the clocks of Redis's LRU (1 s) and LFU decay (1 min) tick with it
	logFactor float64 // lfu-log-factor
	decayMins int64   // lfu-decay-time
	tieAdmit  bool    // tinylfu: a new key whose estimate ties its victim's is admitted
	touchSet  bool    // tinylfu: the SET after a miss touches the sketch too
	sketchMul int     // tinylfu: the sketch's capacity hint is this many times the cache's
	tieNewer  bool    // tinylfu: among equal estimates evict the newer access, not the older
	pool      string  // tinylfu: "stale" (Redis's pool), "fresh" (rescored at eviction), "none" (best of the samples)
	window    float64 // tinylfu: W-TinyLFU's share of the capacity kept as an exact LRU window in front of admission (0: none)
	seed      uint64
}

type poolEntry struct {
	id    uint64
	score uint64
	used  bool
}

// model is one cache: ids dense in a slice (so a uniform sample is an index), pos their places.
type model struct {
	cfg    simConfig
	pol    policy
	ids    []uint64
	pos    map[uint64]int32
	last   []int64 // access tick (request number) of each id
	lfu    []uint8 // Redis's logarithmic counter
	ldt    []int64 // the minute the counter was last decremented
	pool   [poolSize]poolEntry
	rng    *rand.Rand
	sketch *evict.Sketch
	win    *lruWindow // W-TinyLFU's window (nil: plain TinyLFU)
	main   int        // keys the sampled part holds: capacity less the window
	now    int64      // request number
	// counts
	evicted, rejected int64
}

func newModel(pol policy, cfg simConfig) *model {
	m := &model{cfg: cfg, pol: pol, pos: make(map[uint64]int32, cfg.capacity),
		rng: rand.New(rand.NewPCG(cfg.seed, 0xe71c7))}
	m.main = cfg.capacity
	if pol == polTinyLFU {
		m.sketch = evict.NewSketch(cfg.capacity * max(1, cfg.sketchMul))
		if w := int(cfg.window * float64(cfg.capacity)); w > 0 && w < cfg.capacity {
			m.win = &lruWindow{cap: w, l: list.New(), pos: make(map[uint64]*list.Element, w+1)}
			m.main = cfg.capacity - w
		}
	}
	return m
}

// lruWindow is W-TinyLFU's window: every new key enters it, an exact LRU; the key it pushes out
// is the candidate TinyLFU's admission weighs against the sampled part's victim.
type lruWindow struct {
	cap int
	l   *list.List
	pos map[uint64]*list.Element
}

// hash is what the server would feed the sketch: any good hash of the key.
func hash(id uint64) uint64 {
	id += 0x9e3779b97f4a7c15
	id = (id ^ id>>30) * 0xbf58476d1ce4e5b9
	id = (id ^ id>>27) * 0x94d049bb133111eb
	return id ^ id>>31
}

func (m *model) seconds() int64 { return int64(float64(m.now) / m.cfg.rate) }
func (m *model) minutes() int64 { return int64(float64(m.now) / m.cfg.rate / 60) }

// access is one request: a GET, and on a miss a SET. It reports a hit.
func (m *model) access(id uint64) bool {
	m.now++
	if m.sketch != nil {
		m.sketch.Touch(hash(id))
	}
	if m.win != nil {
		if e, ok := m.win.pos[id]; ok {
			m.win.l.MoveToFront(e)
			return true
		}
	}
	if i, ok := m.pos[id]; ok {
		m.hit(int(i))
		return true
	}
	if m.sketch != nil && m.cfg.touchSet {
		m.sketch.Touch(hash(id))
	}
	if m.win != nil {
		m.win.pos[id] = m.win.l.PushFront(id)
		if m.win.l.Len() <= m.win.cap {
			return false
		}
		id = m.win.l.Remove(m.win.l.Back()).(uint64)
		delete(m.win.pos, id)
	}
	m.insert(id)
	return false
}

func (m *model) hit(i int) {
	m.last[i] = m.now
	if m.pol == polLFU {
		c := m.decayed(i)
		m.lfu[i] = m.logIncr(c)
		m.ldt[i] = m.minutes()
	}
}

// logIncr is Redis's LFULogIncr: the counter grows with probability 1/((c-5)·factor+1).
func (m *model) logIncr(c uint8) uint8 {
	if c == 255 {
		return c
	}
	base := float64(c) - 5
	if base < 0 {
		base = 0
	}
	if m.rng.Float64() < 1/(base*m.cfg.logFactor+1) {
		c++
	}
	return c
}

// decayed is Redis's LFUDecrAndReturn: one less per lfu-decay-time minutes since ldt.
func (m *model) decayed(i int) uint8 {
	if m.cfg.decayMins == 0 {
		return m.lfu[i]
	}
	periods := (m.minutes() - m.ldt[i]) / m.cfg.decayMins
	if periods >= int64(m.lfu[i]) {
		return 0
	}
	return m.lfu[i] - uint8(periods)
}

func (m *model) insert(id uint64) {
	if len(m.ids) >= m.main {
		if !m.evictFor(id) {
			m.rejected++
			return
		}
	}
	m.pos[id] = int32(len(m.ids))
	m.ids = append(m.ids, id)
	m.last = append(m.last, m.now)
	m.lfu = append(m.lfu, 5) // LFU_INIT_VAL
	m.ldt = append(m.ldt, m.minutes())
}

func (m *model) remove(i int) {
	id := m.ids[i]
	j := len(m.ids) - 1
	m.ids[i], m.last[i], m.lfu[i], m.ldt[i] = m.ids[j], m.last[j], m.lfu[j], m.ldt[j]
	m.pos[m.ids[i]] = int32(i)
	m.ids, m.last, m.lfu, m.ldt = m.ids[:j], m.last[:j], m.lfu[:j], m.ldt[:j]
	delete(m.pos, id)
	m.evicted++
}

// score is a key's eviction score, higher evicted first: Redis's idle time (in its 1 s LRU
// clock) for lru, 255 minus the decayed counter for lfu; for tinylfu the sketch's estimate first
// (lower evicted first), then the older access.
func (m *model) score(i int) uint64 {
	switch m.pol {
	case polLRU:
		return uint64(m.seconds() - int64(float64(m.last[i])/m.cfg.rate))
	case polLFU:
		return 255 - uint64(m.decayed(i))
	default:
		est := uint64(m.sketch.Estimate(hash(m.ids[i])))
		idle := uint64(m.now - m.last[i])
		if m.cfg.tieNewer {
			idle = 1<<40 - 1 - idle
		}
		return (32-est)<<40 | idle
	}
}

// populate is evictionPoolPopulate: sample keys and insert each into the ascending pool.
func (m *model) populate() {
	for range m.cfg.samples {
		i := m.rng.IntN(len(m.ids))
		s := m.score(i)
		k := 0
		for k < poolSize && m.pool[k].used && m.pool[k].score < s {
			k++
		}
		if k == 0 && m.pool[poolSize-1].used {
			continue // worse than everything in a full pool
		}
		if k < poolSize && !m.pool[k].used {
			// an empty slot: insert there
		} else if !m.pool[poolSize-1].used {
			copy(m.pool[k+1:], m.pool[k:poolSize-1])
		} else {
			k--
			copy(m.pool[:k], m.pool[1:k+1])
		}
		m.pool[k] = poolEntry{id: m.ids[i], score: s, used: true}
	}
}

// evictFor evicts one key to make room for id, or (tinylfu's admission) reports false when id
// should not be stored at all.
func (m *model) evictFor(id uint64) bool {
	if m.sketch != nil && m.cfg.pool == "none" {
		return m.evictSampled(id)
	}
	for {
		if m.sketch != nil && m.cfg.pool == "fresh" {
			for k := range m.pool {
				if i, ok := m.pos[m.pool[k].id]; ok && m.pool[k].used {
					m.pool[k].score = m.score(int(i))
				}
			}
			sort.Slice(m.pool[:], func(a, b int) bool {
				x, y := m.pool[a], m.pool[b]
				if x.used != y.used {
					return !x.used
				}
				return x.score < y.score
			})
		}
		m.populate()
		for k := poolSize - 1; k >= 0; k-- {
			e := m.pool[k]
			if !e.used {
				continue
			}
			i, ok := m.pos[e.id]
			if !ok {
				m.pool[k] = poolEntry{}
				continue
			}
			if m.sketch != nil {
				c, v := m.sketch.Estimate(hash(id)), m.sketch.Estimate(e.id2hash())
				if c < v || (c == v && !m.cfg.tieAdmit) {
					return false // the new key is evicted instead; the victim stays in the pool
				}
			}
			m.pool[k] = poolEntry{}
			m.remove(int(i))
			return true
		}
	}
}

func (e poolEntry) id2hash() uint64 { return hash(e.id) }

// evictSampled is tinylfu without a pool: the best-scoring of this eviction's samples.
func (m *model) evictSampled(id uint64) bool {
	best, bs := -1, uint64(0)
	for range m.cfg.samples {
		i := m.rng.IntN(len(m.ids))
		if s := m.score(i); best < 0 || s > bs {
			best, bs = i, s
		}
	}
	c, v := m.sketch.Estimate(hash(id)), m.sketch.Estimate(hash(m.ids[best]))
	if c < v || (c == v && !m.cfg.tieAdmit) {
		return false
	}
	m.remove(best)
	return true
}

// simResult is one model's run.
type simResult struct {
	policy            policy
	hits, requests    int64
	zipfHits, zipfN   int64
	evicted, rejected int64
}

func (r simResult) ratio() float64     { return float64(r.hits) / math.Max(1, float64(r.requests)) }
func (r simResult) zipfRatio() float64 { return float64(r.zipfHits) / math.Max(1, float64(r.zipfN)) }
