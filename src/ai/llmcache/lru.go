package llmcache

import "sync/atomic"

// Recency without writes on the read path. GET may run as a shared read (several lookups of one
// cache at once, holding no token), so a hit cannot move its entry in a list. It stamps the entry
// instead (used: a value of the cache's clock, raised atomically), and the order is settled only
// where it is needed, by the token holder: MAXENTRIES eviction pops a min-heap keyed by each
// entry's stamp as of its last settling (key <= used). A top whose stamp moved since is re-keyed
// and sifted down; a top whose stamp did not is the least recently used entry of all, since every
// other entry's stamp is at least its key, which is at least the top's. So eviction is exact LRU,
// at O(log n) per entry re-keyed, and a hit costs two atomic operations.

// stamp raises the cache's clock and returns the new value.
func (c *Cache) stamp() uint64 { return c.clock.Add(1) }

// touch records a use of e at clock value s (concurrent touches keep the largest).
func touch(e *Entry, s uint64) {
	for {
		old := e.used.Load()
		if old >= s || e.used.CompareAndSwap(old, s) {
			return
		}
	}
}

// lruPush adds e as the most recently used entry.
func (c *Cache) lruPush(e *Entry) {
	s := c.stamp()
	e.used.Store(s)
	e.key = s
	e.hidx = len(c.lru)
	c.lru = append(c.lru, e)
	c.up(e.hidx)
}

// lruRemove takes e out of the heap.
func (c *Cache) lruRemove(e *Entry) {
	i, last := e.hidx, len(c.lru)-1
	if i < 0 || i > last || c.lru[i] != e {
		panic("BUG: llmcache entry not in its recency heap")
	}
	if i != last {
		c.swap(i, last)
	}
	c.lru[last] = nil
	c.lru = c.lru[:last]
	e.hidx = -1
	if i != last {
		c.down(i)
		c.up(i)
	}
}

// oldest returns the least recently used entry, settling stamps on the way; nil when empty.
func (c *Cache) oldest() *Entry {
	for len(c.lru) > 0 {
		top := c.lru[0]
		u := top.used.Load()
		if u == top.key {
			return top
		}
		top.key = u
		c.down(0)
	}
	return nil
}

func (c *Cache) less(i, j int) bool { return c.lru[i].key < c.lru[j].key }

func (c *Cache) swap(i, j int) {
	c.lru[i], c.lru[j] = c.lru[j], c.lru[i]
	c.lru[i].hidx, c.lru[j].hidx = i, j
}

func (c *Cache) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !c.less(i, p) {
			return
		}
		c.swap(i, p)
		i = p
	}
}

func (c *Cache) down(i int) {
	n := len(c.lru)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && c.less(r, l) {
			m = r
		}
		if !c.less(m, i) {
			return
		}
		c.swap(i, m)
		i = m
	}
}

// byRecency returns the entries least recently used first (the encoding's order).
func (c *Cache) byRecency() []*Entry {
	out := make([]*Entry, len(c.lru))
	copy(out, c.lru)
	sortByUsed(out)
	return out
}

// liveStats are the counters a shared GET raises, with atomic adds (Stats is their snapshot).
type liveStats struct {
	lookups, exactHits, semanticHits, misses, guardRejects atomic.Int64
	tokensSaved, tokensInSaved                             atomic.Int64
	costSaved                                              atomic.Uint64 // float64 bits
	wrongHits, evicted, expired                            atomic.Int64
	hitScores, nearMisses                                  [Buckets]atomic.Int64
}
