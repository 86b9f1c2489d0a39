package command

import (
	"github.com/hotkv/hotkv/ds/budget"
	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/zset"
)

// Value size estimates: what MEMORY USAGE answers and what the used-memory counter accounts
// for a collection after each write (memory_acct.go). Like Redis's objectComputeSize, a
// collection's size is its length times the average size of a few elements, sampled from its
// start (so two estimates of an unchanged value agree, and the counter equals a recount of
// MEMORY USAGE), plus what each element costs in its encoding. The per-element costs are
// HotKV's layouts' (ds/hash's arena records and slots, ds/set's and ds/zset's arenas and
// indexes, ds/list's chunks), rounded; TestMemoryUsageAgainstRedis keeps them within a factor
// of 1.5 of Redis 7.0.15's figures for every type and encoding. A stream counts its blocks
// (ds/stream's MemoryBytes).

// acctSamples is how many elements the counter's estimate samples: MEMORY USAGE's default.
const acctSamples = 5

// Per-element bytes by encoding, besides the element's own bytes, and each value's header.
const (
	listElemCost   = 2 // a chunk entry's header and back length
	listChunkBytes = 8192
	listChunkCost  = 48 // a chunk's header and its slot in the list's deque
	packElemCost   = 2  // a listpack-like entry's header and back length (hash, set, zset)
	hashSlotCost   = 32 // an arena record header, its slot and the table's spare room
	setTableCost   = 32 // an arena member's header, its index slot and spare room
	zsetPackScore  = 4  // a small sorted set's score entry (an integer score is short)
	zsetNodeCost   = 80 // an item (score, ref, rank links) and its index slot
	collHeader     = 48 // the collection's own struct and its table's header
	packHeader     = 16 // a small encoding's struct and buffer header
)

// valueSize estimates the bytes e's value holds, sampling samples elements of a collection (0:
// every element). A string's is its capacity, exactly.
func valueSize(e *keyspace.Entry, samples int) int64 {
	switch e.Kind {
	case keyspace.KindList:
		return listSize(keyspace.Obj[list.List](e), samples)
	case keyspace.KindHash:
		return inlineRound(hashSize(keyspace.Obj[hash.Hash](e), samples))
	case keyspace.KindSet:
		return setSize(keyspace.Obj[dset.Set](e), samples)
	case keyspace.KindZSet:
		return inlineRound(zsetSize(keyspace.Obj[zset.ZSet](e), samples))
	case keyspace.KindStream:
		return int64(keyspace.Obj[stream.Stream](e).MemoryBytes())
	case keyspace.KindVectorSet:
		return keyspace.Obj[vsetValue](e).memoryEstimate(samples)
	case keyspace.KindLLMCache:
		return keyspace.Obj[llmValue](e).c.MemoryUsage()
	case keyspace.KindIPSet:
		return keyspace.Obj[ipsetValue](e).set.MemoryUsage()
	case keyspace.KindAgentMem:
		return keyspace.Obj[memValue](e).s.MemoryUsage()
	case keyspace.KindBudget:
		return keyspace.Obj[budget.Budget](e).MemoryBytes()
	}
	return e.Accounted()
}

// inlineRound rounds an inline kind's estimate (hashes, sorted sets: keyspace.Inline) up to
// the 8 bytes its entry keeps a large layout's estimate in, so MEMORY USAGE and the counter
// agree; a buffer's capacity is a multiple of 8 already (the allocator's size classes).
func inlineRound(n int64) int64 { return (n + 7) &^ 7 }

// keySize is MEMORY USAGE's figure: the entry, a long key's bytes and the value.
func keySize(e *keyspace.Entry, samples int) int64 {
	return e.Footprint() - e.Accounted() + valueSize(e, samples)
}

// scaled is n elements whose first k sampled ones hold sum bytes, each costing per more.
func scaled(n, k int, sum int64, per int64) int64 {
	if k == 0 {
		return 0
	}
	return int64(n) * (sum/int64(k) + per)
}

// limit is how many elements to sample of n.
func limit(n, samples int) int {
	if samples <= 0 || samples > n {
		return n
	}
	return samples
}

func listSize(l *list.List, samples int) int64 {
	n := l.Len()
	if n == 0 {
		return collHeader
	}
	k := limit(n, samples)
	var sum int64
	it := l.IterAt(0, false)
	for range k {
		v, _ := it.Next()
		sum += int64(len(v))
	}
	bytes := scaled(n, k, sum, listElemCost)
	return packHeader + bytes + (bytes/listChunkBytes+1)*listChunkCost
}

// hashSize is a hash's bytes besides its entry: a hash in one buffer (packed or flat: every
// small hash) keeps its 16-byte header in the entry (keyspace.Inline), so its size is the
// buffer's capacity, exactly, which the keyspace reads off the header itself.
func hashSize(h *hash.Hash, samples int) int64 {
	if c, ok := h.BufferCap(); ok {
		return int64(c)
	}
	n := h.Len()
	k, sum := limit(n, samples), int64(0)
	it := h.Iter()
	for i := 0; i < k && it.Next(); i++ {
		sum += int64(len(it.Field()) + len(it.Value()))
	}
	return collHeader + scaled(n, k, sum, hashSlotCost)
}

func setSize(s *dset.Set, samples int) int64 {
	n := s.Len()
	k, sum, i := limit(n, samples), int64(0), 0
	enc := s.Encoding()
	if enc == "intset" {
		return packHeader + int64(n)*intsetWidth(s, k)
	}
	s.Each(func(m []byte) bool {
		if i >= k {
			return false
		}
		sum += int64(len(m))
		i++
		return true
	})
	if enc == "listpack" {
		return packHeader + scaled(n, i, sum, packElemCost)
	}
	return collHeader + scaled(n, i, sum, setTableCost)
}

// intsetWidth is the bytes an intset member takes: 2, 4 or 8, as wide as the first k members
// (the smallest: an intset is sorted) need.
func intsetWidth(s *dset.Set, k int) int64 {
	w, i := int64(2), 0
	widen := func(v int64) {
		switch {
		case v < -1<<31 || v >= 1<<31:
			w = 8
		case (v < -1<<15 || v >= 1<<15) && w < 4:
			w = 4
		}
	}
	s.Walk(func(v int64) bool {
		widen(v)
		i++
		return i < k
	}, func([]byte) bool { return i < k })
	return w
}

// zsetSize is a sorted set's bytes besides its entry: a listpack's buffer capacity, exactly
// (its header is in the entry, keyspace.Inline), or an estimate of the large encoding.
func zsetSize(z *zset.ZSet, samples int) int64 {
	if c, ok := z.BufferCap(); ok {
		return int64(c)
	}
	n := z.Len()
	k, sum, i := limit(n, samples), int64(0), 0
	z.Walk(0, false, func(m []byte, _ float64) bool {
		if i >= k {
			return false
		}
		sum += int64(len(m))
		i++
		return true
	})
	return collHeader + scaled(n, i, sum, zsetNodeCost)
}
