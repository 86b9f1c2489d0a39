package command

import (
	"sync/atomic"
)

// Statistics of commands that run on a shard actor are kept per shard, without atomics, by the
// token holder: shared counters bounced one cache line between cores on every GET. INFO holds
// every shard's token (ScopeAll) when it sums them. Connection and barrier commands, which are
// rare, count in their Spec's atomics.

// shardStats are one shard's counters, touched only by its token holder except done.
type shardStats struct {
	cmds   []cmdCounter // by Spec.id
	hists  histSet      // latency histograms by Spec.id (stats_hist.go)
	hits   int64
	misses int64
	dirty  int64        // changes made on this shard (effects.go)
	works  uint32       // work items run, for sampling their duration
	done   atomic.Int64 // commands run: read without the token by the ops/sec sampler
}

type cmdCounter struct {
	calls, nsec, failed int64
}

// count records one call of spec on this shard.
func (st *shardStats) count(spec *Spec, failed bool) {
	c := &st.cmds[spec.id]
	c.calls++
	if failed {
		c.failed++
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
