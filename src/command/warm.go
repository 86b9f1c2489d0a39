package command

import (
	"math"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/pipeline"
)

// warmChunk is how many lookups warm overlaps at a time (arrays on the stack).
const warmChunk = 64

// warm is the Group's Warm hook (pipeline.Group.Warm): for every command of the held shards' work
// that names a key, it loads that key's bucket, entry, key bytes and value bytes, one level for
// all keys before the next level, so that the lookups' cache misses overlap. It reads only; a
// command then finds its data in the cache. Measured on pipelined GET over 1,000,000 keys, the
// lookup was half of the server's CPU time before.
func (e *Engine) warm(b *pipeline.Batch, held []int32) {
	var w warmer
	for _, id := range held {
		d := e.data(id)
		for _, i := range b.Work(id).Slots {
			s := &b.Slots[i]
			spec := s.Cmd.(*Spec)
			if spec.FirstKey <= 0 || spec.FirstKey >= len(s.Args) || int(s.DB) >= len(d.dbs) {
				continue
			}
			key := s.Args[spec.FirstKey]
			h := s.KeyHash // route hashed the first key; a movable-keys command's may not be this one
			if spec.Keys != nil {
				h = keyspace.Hash(key)
			}
			var m []byte
			rank := false
			switch {
			case spec.Member > 0 && spec.Member < len(s.Args):
				m = s.Args[spec.Member]
			case spec.Rank > 0 && spec.Rank < len(s.Args):
				m, rank = s.Args[spec.Rank], true
			}
			w.add(d.dbs[s.DB], h, key, m, rank)
		}
	}
	w.run()
	if p := b.Work(held[0]).Reader(); p >= 0 {
		e.readers[p].sink.Add(w.sink) // shared work: the shard's data is not this goroutine's
		return
	}
	d := e.data(held[0])
	d.warmSink += w.sink
}

// warmKeys warms the keys at positions pos of a multi-key command (MGET, MSET, ...) whose shards
// the caller holds or reads shared, and returns the sum that keeps the loads from being
// optimised away, for the caller to store.
func (e *Engine) warmKeys(s *pipeline.Slot, pos []int) uint64 {
	if !e.warmOn {
		return 0
	}
	var w warmer
	for _, i := range pos {
		h := keyspace.Hash(s.Args[i])
		w.add(e.data(e.shardOfKey(s.Args[i], h)).dbs[s.DB], h, s.Args[i], nil, false)
	}
	w.run()
	return w.sink
}

// memberWarmer is a collection that can load what a lookup of one member will read.
type memberWarmer interface{ WarmMember(m []byte) uint64 }

// rankWarmer is a collection that can load what reading from rank r on will read first.
type rankWarmer interface{ WarmRank(r int) uint64 }

// warmer collects a chunk of lookups and runs them level by level.
type warmer struct {
	n      int
	hashes [warmChunk]uint64
	keys   [warmChunk][]byte
	// members are the arguments looked up inside the keys' collections (Spec.Member), or nil.
	members [warmChunk][]byte
	rank    [warmChunk]bool // members[i] is a rank (Spec.Rank), not a member
	ks      [warmChunk]*keyspace.Keyspace
	ents    [warmChunk]*keyspace.Entry
	sink    uint64
}

// add queues the lookup of key (hashed h) in ks and, when m is not nil, of member m inside it
// (rank: m is a rank to read from); a full chunk runs at once.
func (w *warmer) add(ks *keyspace.Keyspace, h uint64, key, m []byte, rank bool) {
	w.ks[w.n], w.hashes[w.n], w.keys[w.n] = ks, h, key
	w.members[w.n], w.rank[w.n] = m, rank
	w.n++
	if w.n == warmChunk {
		w.run()
	}
}

func (w *warmer) run() {
	n := w.n
	for i := range n {
		w.ents[i] = w.ks[i].Head(w.hashes[i])
	}
	for i := range n {
		w.ents[i] = keyspace.Match(w.ents[i], w.keys[i])
	}
	for i := range n {
		if e := w.ents[i]; e != nil {
			w.sink += e.Touch()
		}
	}
	for i := range n {
		m, rank := w.members[i], w.rank[i]
		w.members[i], w.rank[i] = nil, false
		if m == nil || w.ents[i] == nil {
			continue
		}
		if !rank {
			if mw, ok := objOf(w.ents[i]).(memberWarmer); ok {
				w.sink += mw.WarmMember(m)
			}
		} else if rw, ok := objOf(w.ents[i]).(rankWarmer); ok {
			if r, ok := strs.ParseInt(m); ok && r >= math.MinInt32 && r <= math.MaxInt32 {
				w.sink += rw.WarmRank(int(r))
			}
		}
	}
	w.n = 0
}
