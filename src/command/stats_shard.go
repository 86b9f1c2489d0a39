package command

import (
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/pipeline"
)

// Statistics of commands that run on a shard actor are kept per shard, without atomics, by the
// token holder: shared counters bounced one cache line between cores on every GET. INFO holds
// every shard's token (ScopeAll) when it sums them. Connection and barrier commands, which are
// rare, count in their Spec's atomics.

// shardStats are one shard's counters, touched only by its token holder except done.
type shardStats struct {
	cmds   []cmdCounter // by Spec.id
	hits   int64
	misses int64
	works  uint32       // work items run, for sampling their duration
	done   atomic.Int64 // commands run: read without the token by the ops/sec sampler
}

type cmdCounter struct {
	calls, nsec, failed int64
}

// timeSample: one work item in timeSample has its duration measured, and charged timeSample
// times over, so command statistics cost no clock reads on most batches.
const timeSample = 32

// count records one call of spec on this shard.
func (st *shardStats) count(spec *Spec, failed bool) {
	c := &st.cmds[spec.id]
	c.calls++
	if failed {
		c.failed++
	}
}

// execWork is the shards' executor: it runs one batch's slots for one shard, in order, at the
// batch's time. The clock is read only for the sampled work items.
func (e *Engine) execWork(sh *pipeline.Shard, w *pipeline.Work) {
	if p := w.Reader(); p >= 0 {
		e.execShared(&e.readers[p], w)
		return
	}
	d := sh.Data.(*shardData)
	b := w.Batch()
	now := b.Now
	d.stats.works++
	timed := d.stats.works%timeSample == 0
	var start time.Time
	if timed {
		start = time.Now()
	}
	for _, i := range w.Slots {
		e.call(&d.ctx, &b.Slots[i], now)
		if len(d.block.ready) > 0 {
			e.serveReadyLocked(d, now)
		}
	}
	d.stats.done.Add(int64(len(w.Slots)))
	if timed {
		per := int64(time.Since(start)) * timeSample / int64(len(w.Slots))
		for _, i := range w.Slots {
			d.stats.cmds[b.Slots[i].Cmd.(*Spec).id].nsec += per
		}
	}
}

// cmdStats sums spec's statistics over its atomics and every shard. The caller holds every
// shard's token.
func (e *Engine) cmdStats(spec *Spec) (calls, nsec, rejected, failed int64) {
	calls, nsec = spec.stats.calls.Load(), spec.stats.nsec.Load()
	rejected, failed = spec.stats.rejected.Load(), spec.stats.failed.Load()
	for i := range e.Group.Shards {
		c := e.data(int32(i)).stats.cmds[spec.id]
		calls, nsec, failed = calls+c.calls, nsec+c.nsec, failed+c.failed
	}
	rc, rn, rf := e.readerCalls(spec)
	return calls + rc, nsec + rn, rejected, failed + rf
}

// keyspaceHits sums keyspace hits and misses. The caller holds every shard's token.
func (e *Engine) keyspaceHits() (hits, misses int64) {
	hits, misses = e.stats.hits.Load(), e.stats.misses.Load()
	for i := range e.Group.Shards {
		st := &e.data(int32(i)).stats
		hits, misses = hits+st.hits, misses+st.misses
	}
	rh, rm, _ := e.readerTotals()
	return hits + rh, misses + rm
}

// resetShardStatsLocked clears the per-shard counters. The caller holds every shard's token.
func (e *Engine) resetShardStatsLocked() {
	for i := range e.Group.Shards {
		st := &e.data(int32(i)).stats
		clear(st.cmds)
		st.hits, st.misses = 0, 0
	}
	e.resetReaderStats()
}

// FindRead finds key for a read, counting a keyspace hit or miss for INFO as Redis's
// lookupKeyRead does.
func (c *Ctx) FindRead(key []byte) *keyspace.Entry {
	ks, h := c.lookup(key)
	if st := c.rstats; st != nil { // shared work (shared.go)
		e, expired := ks.FindShared(key, h, c.Now)
		switch {
		case expired:
			c.needToken = true
		case e == nil:
			st.misses.Add(1)
		default:
			st.hits.Add(1)
		}
		return e
	}
	e := ks.FindHashed(key, h, c.Now)
	st := &c.E.data(c.E.shardOfHash(h)).stats
	if e == nil {
		st.misses++
	} else {
		st.hits++
	}
	return e
}
