package command

import (
	"math"

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
