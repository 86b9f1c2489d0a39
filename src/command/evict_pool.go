package command

import "github.com/hotkv/hotkv/ds/keyspace"

// The eviction pool of a shard, as evict.c's: up to evictPoolSize candidates, kept in order of
// score (lowest first), filled by sampling maxmemory-samples keys of each database, and kept
// between evictions, so that each eviction picks the best of many more keys than one sample
// holds. A candidate names its key (the entry may be gone by the time it is picked, or
// rewritten: it is looked up again). Its key bytes are reused from one candidate to the next.

const evictPoolSize = 16

type poolSlot struct {
	score uint64
	db    int
	h     uint64
	key   []byte
}

type evictPool struct {
	slots [evictPoolSize]poolSlot
	n     int
}

// insert adds a candidate unless the pool is full of better ones or holds it already.
func (p *evictPool) insert(score uint64, db int, h uint64, key string) {
	for i := 0; i < p.n; i++ {
		if s := &p.slots[i]; s.h == h && s.db == db && string(s.key) == key {
			return
		}
	}
	if p.n == evictPoolSize {
		if score <= p.slots[0].score {
			return
		}
		// Drop the worst; its key buffer is reused.
		spare := p.slots[0].key
		copy(p.slots[:], p.slots[1:p.n])
		p.n--
		p.slots[p.n].key = spare
	}
	i := p.n
	for i > 0 && p.slots[i-1].score > score {
		i--
	}
	spare := p.slots[p.n].key
	copy(p.slots[i+1:p.n+1], p.slots[i:p.n])
	p.slots[i] = poolSlot{score: score, db: db, h: h, key: append(spare[:0], key...)}
	p.n++
}

// pop removes and returns the best candidate; its key is valid until the next insert.
func (p *evictPool) pop() (db int, h uint64, key []byte, ok bool) {
	if p.n == 0 {
		return 0, 0, nil, false
	}
	p.n--
	s := &p.slots[p.n]
	return s.db, s.h, s.key, true
}

// pickLocked chooses the next key of the held shard d to evict by policy p, or returns nil
// when the shard holds none p may evict.
func (e *Engine) pickLocked(d *shardData, pol *evictPolicy, now int64) (*keyspace.Keyspace, *keyspace.Entry) {
	if pol.score == nil {
		return e.pickRandomLocked(d, pol)
	}
	samples := int(e.mem.samples.Load())
	for round := 0; round < 4; round++ {
		e.populateLocked(d, pol, samples, now)
		for {
			db, h, key, ok := d.mem.pool.pop()
			if !ok {
				break
			}
			ks := d.dbs[db]
			if en := ks.PeekAny(key, h); en != nil && (!pol.volatile || en.ExpireAt() != 0) {
				return ks, en
			}
		}
	}
	return nil, nil
}

// populateLocked samples each database of d with candidates into its pool.
func (e *Engine) populateLocked(d *shardData, pol *evictPolicy, samples int, now int64) {
	for db, ks := range d.dbs {
		if ks.Len() == 0 || pol.volatile && ks.Volatile() == 0 {
			continue
		}
		// A volatile policy meets keys without an expiry too (there is no separate index of
		// keys with one): it samples more, in proportion.
		tries := samples
		if pol.volatile {
			tries = min(samples*ks.Len()/ks.Volatile(), samples*16)
		}
		for range tries {
			en := ks.Sample(d.mem.rnd.next)
			if en == nil || pol.volatile && en.ExpireAt() == 0 {
				continue
			}
			key := en.Key()
			d.mem.pool.insert(pol.score(e, en, now), db, keyspace.HashString(key), key)
		}
	}
}

// pickRandomLocked is the random policies' choice: a random key of a random database that
// holds some.
func (e *Engine) pickRandomLocked(d *shardData, pol *evictPolicy) (*keyspace.Keyspace, *keyspace.Entry) {
	n := len(d.dbs)
	first := int(d.mem.rnd.next() % uint64(n))
	for i := range n {
		ks := d.dbs[(first+i)%n]
		if ks.Len() == 0 || pol.volatile && ks.Volatile() == 0 {
			continue
		}
		for range 64 {
			if en := ks.Sample(d.mem.rnd.next); en != nil && (!pol.volatile || en.ExpireAt() != 0) {
				return ks, en
			}
		}
	}
	return nil, nil
}

// sampleRand is a shard's random source for eviction sampling (splitmix64), used only by the
// holder of the shard's token, so sampling touches no shared counter (Engine.rand's). It was the
// engine's xorshift once: Keyspace.Sample takes a bucket from one number's low bits and a place
// in the bucket's chain from the next number's, and xorshift's next lowest bit is a function of
// bits 0 and 7 of the number before: in a table of 256 buckets or more, whose index holds both,
// a chain of two always gave the same entry. 22% of 15,000 keys were never drawn in 300,000
// samples (TestEvictSamplerCoverage), and what is never drawn is never evicted, however it
// scores: volatile-ttl kept keys that expire soon and evicted far-off ones in their place, and
// volatile-lru evicted hot keys (benchmarks/results/2026-12-04-evict-quality.md).
type sampleRand struct{ s uint64 }

func (r *sampleRand) next() uint64 {
	r.s += splitmixGamma
	return splitmix(r.s)
}

// splitmixGamma is splitmix64's step; splitmix is its output function of the state.
const splitmixGamma = 0x9e3779b97f4a7c15

func splitmix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
