package command

// RDBSerializer: HotKV's values in the encodings Redis 7.0.15 writes for them (issue 17 item 1),
// for snapshots (snapshot.go's Serializer) and DUMP (dump.go).
//
// Which form a value takes follows what OBJECT ENCODING answers for it, as Redis writes the
// encoding the object has in memory: a hash or sorted set that answers listpack is written as a
// listpack, one that answers hashtable/skiplist in the general form even when it is small again;
// a set that answers intset as an intset. Lists are always QUICKLIST_2 with listpack nodes filled
// to list-max-listpack-size, as Redis 7.0 builds them by pushes. A hash with field TTLs (Redis
// 7.4's, not 7.0's) is written as the plain hash Redis 7.0 can load: its live fields without
// their TTLs (fields already expired are left out), in the listpack form when it is a small one.

import (
	"strings"
	"time"
	"unsafe"

	"github.com/hotkv/hotkv/ds/budget"
	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/zset"
	"github.com/hotkv/hotkv/persist/rdb"
)

// accessMode says which access record Redis writes before a key: IDLE under the LRU policies,
// FREQ under the LFU ones, nothing otherwise (rdbSaveKeyValuePair's savelru/savelfu).
type accessMode uint8

const (
	accessNone accessMode = iota
	accessIdle
	accessFreq
)

func accessModeOf(policy string) accessMode {
	switch {
	case strings.HasSuffix(policy, "-lru"):
		return accessIdle
	case strings.HasSuffix(policy, "-lfu"):
		return accessFreq
	}
	return accessNone
}

// RDBSerializer writes entries as RDB records: snapshot.go's Serializer for one shard. It keeps
// its own scratch (encoder buffers, member arenas), so it is used only while its shard's token
// is held; once they have grown it allocates nothing per key (BenchmarkRDBSerializer).
type RDBSerializer struct {
	enc     rdb.Encoder
	lim     rdb.Limits // the configured thresholds
	general rdb.Limits // thresholds no value fits: the general form of a value Redis holds so
	access  accessMode
	decay   int64 // lfu-decay-time minutes
	now     int64 // unix ns: idle times and expired hash fields
	keys    int64
	expires int64
	tags    rdbTags // the shard's key tags (persist_tags.go)

	arena []byte // members of a set or sorted set being written, or a stream's entries
	spans []int  // ends of the members in arena
	zs    []float64
	next  int // member handed out next by the set and sorted-set callbacks
	st    rdb.Stream
	// The iterators live here: the bytes they hand out point into them, which would move a
	// local iterator to the heap on every key.
	lit list.Iter
	hit hash.Iter
	raw []byte // a packed string's raw bytes (strings_packed.go): files hold plain strings
	// twin writes the large values Freeze copied, on the snapshot's goroutine (persist_freeze.go).
	twin *RDBSerializer
	// redis70 leaves out keys of HotKV's own types (RDBOptions.Redis70), counted in skipped.
	redis70 bool
	skipped int64
	hfe     []byte // hotkv-hfe records of the hashes with field TTLs written (persist_hfe.go)
}

// redisKind reports whether Redis 7.0 has values of kind k.
func redisKind(k keyspace.Kind) bool {
	switch k {
	case keyspace.KindString, keyspace.KindList, keyspace.KindHash, keyspace.KindSet, keyspace.KindZSet, keyspace.KindStream:
		return true
	}
	return false
}

// newRDBSerializer returns a serializer for values as of now, under the engine's thresholds and
// maxmemory-policy; compress is rdbcompression.
func (e *Engine) newRDBSerializer(compress bool, now time.Time) *RDBSerializer {
	s := &RDBSerializer{now: now.UnixNano(), decay: configInt(e, "lfu-decay-time", 1)}
	st := e.Settings()
	s.lim = rdb.Limits{ListMaxListpackSize: int(st.ListMaxListpackSize),
		SetMaxIntsetEntries:    int(st.SetMaxIntsetEntries),
		HashMaxListpackEntries: int(st.HashMaxListpackEntries),
		HashMaxListpackValue:   int(st.HashMaxListpackValue),
		ZSetMaxListpackEntries: int(st.ZSetMaxListpackEntries),
		ZSetMaxListpackValue:   int(st.ZSetMaxListpackValue),
		StreamNodeMaxBytes:     int(st.StreamNodeMaxBytes),
		StreamNodeMaxEntries:   int(st.StreamNodeMaxEntries)}
	s.general = s.lim
	s.general.SetMaxIntsetEntries, s.general.HashMaxListpackEntries, s.general.ZSetMaxListpackEntries = -1, -1, -1
	s.enc.Compress = compress
	s.enc.Limits = &s.lim
	s.access = accessModeOf(maxmemoryPolicy(e))
	return s
}

// SelectDB appends RDB's SELECTDB record.
func (s *RDBSerializer) SelectDB(dst []byte, db int) []byte {
	s.enc.Buf = dst
	s.enc.SelectDB(db)
	dst, s.enc.Buf = s.enc.Buf, nil
	return dst
}

// Entry appends en's record: its expiry in ms, IDLE or FREQ by the policy, then type, key and
// value.
func (s *RDBSerializer) Entry(dst []byte, db int, en *keyspace.Entry, ks *keyspace.Keyspace) []byte {
	if !en.HasValue() {
		return dst // an entry being created, without a value yet: not a key
	}
	var exp int64
	if en.ExpireAt() != 0 {
		exp = ks.ExpireMs(en)
	}
	return s.record(dst, db, en, exp)
}

// record appends en's record with expMs its expiry (read only when en has one).
func (s *RDBSerializer) record(dst []byte, db int, en *keyspace.Entry, expMs int64) []byte {
	if en.Kind == keyspace.KindHash && s.liveFields(keyspace.Obj[hash.Hash](en)) == 0 {
		return dst // every field expired: Redis loads no empty hash
	}
	if s.redis70 && !redisKind(en.Kind) {
		s.skipped++
		return dst
	}
	s.enc.Buf = dst
	if en.ExpireAt() != 0 {
		s.enc.ExpireMs(expMs)
		s.expires++
	}
	switch s.access {
	case accessIdle:
		s.enc.Idle(uint64(idleSeconds(en, s.now)))
	case accessFreq:
		s.enc.Freq(s.freqOf(en))
	}
	k := en.Key()
	s.value(unsafe.Slice(unsafe.StringData(k), len(k)), en)
	if en.Kind == keyspace.KindHash && !s.redis70 {
		s.recordHFE(db, k, keyspace.Obj[hash.Hash](en))
	}
	s.keys++
	s.recordTags(db, k)
	dst, s.enc.Buf = s.enc.Buf, nil
	return dst
}

// freqOf is OBJECT FREQ's value: the counter less one per lfu-decay-time idle minutes
// (Redis's LFUDecrAndReturn, which rdbSaveKeyValuePair writes).
func (s *RDBSerializer) freqOf(en *keyspace.Entry) uint8 {
	f := int64(en.Freq)
	if s.decay > 0 {
		f = max(f-int64(idleSeconds(en, s.now)/60)/s.decay, 0)
	}
	return uint8(f)
}

// value appends en's type byte, key (unless the encoder omits keys) and value.
func (s *RDBSerializer) value(key []byte, en *keyspace.Entry) {
	switch en.Kind {
	case keyspace.KindString:
		s.enc.StringValue(key, s.stringBytes(en))
	case keyspace.KindList:
		l := keyspace.Obj[list.List](en)
		s.lit = l.IterAt(0, false)
		s.enc.ListValue(key, l.Len(), func() []byte { v, _ := s.lit.Next(); return v })
	case keyspace.KindHash:
		s.hashValue(key, keyspace.Obj[hash.Hash](en))
	case keyspace.KindSet:
		s.setValue(key, keyspace.Obj[dset.Set](en))
	case keyspace.KindZSet:
		s.zsetValue(key, keyspace.Obj[zset.ZSet](en))
	case keyspace.KindStream:
		s.streamValue(key, keyspace.Obj[stream.Stream](en))
	case keyspace.KindVectorSet: // vset_persist.go
		s.raw = appendVset(s.raw[:0], keyspace.Obj[vsetValue](en))
		s.enc.ModuleValue(key, rdb.VectorSetModule, s.raw)
	case keyspace.KindLLMCache: // llmcache_persist.go
		s.raw = keyspace.Obj[llmValue](en).c.AppendBinary(s.raw[:0])
		s.enc.ModuleValue(key, rdb.LLMCacheModule, s.raw)
	case keyspace.KindAgentMem: // mem_persist.go
		s.raw = keyspace.Obj[memValue](en).s.AppendBinary(s.raw[:0])
		s.enc.ModuleValue(key, rdb.AgentMemModule, s.raw)
	case keyspace.KindBudget: // budget.go
		s.raw = keyspace.Obj[budget.Budget](en).AppendBinary(s.raw[:0])
		s.enc.ModuleValue(key, rdb.BudgetModule, s.raw)
	case keyspace.KindIPSet: // ipset_persist.go
		s.ipsetValueRDB(key, keyspace.Obj[ipsetValue](en))
	default:
		panic("BUG: an entry of kind " + en.Kind.String() + " cannot be serialized")
	}
}

// form points the encoder at the configured thresholds when the value is in its compact
// encoding, else at thresholds nothing fits.
func (s *RDBSerializer) form(compact bool) {
	if compact {
		s.enc.Limits = &s.lim
	} else {
		s.enc.Limits = &s.general
	}
}

func (s *RDBSerializer) hashValue(key []byte, h *hash.Hash) {
	enc := h.Encoding()
	s.form(enc != "hashtable")
	defer s.form(true)
	n := s.liveFields(h)
	nowMs := s.now / 1e6
	s.hit = h.Iter()
	s.enc.HashValue(key, n, func() ([]byte, []byte) {
		for s.hit.Next() {
			if t := s.hit.TTL(); t == 0 || t > nowMs {
				return s.hit.Field(), s.hit.Value()
			}
		}
		return nil, nil
	})
}

// liveFields is the number of fields h holds that have not expired.
func (s *RDBSerializer) liveFields(h *hash.Hash) int {
	if h.NextExpiry() == 0 {
		return h.Len()
	}
	n, nowMs := 0, s.now/1e6
	for it := h.Iter(); it.Next(); {
		if t := it.TTL(); t == 0 || t > nowMs {
			n++
		}
	}
	return n
}

// collect copies members into the arena (a set's members are formatted into a buffer that the
// next one reuses); member(i) returns them.
func (s *RDBSerializer) collect(m []byte) {
	s.arena = append(s.arena, m...)
	s.spans = append(s.spans, len(s.arena))
}

func (s *RDBSerializer) member(i int) []byte {
	start := 0
	if i > 0 {
		start = s.spans[i-1]
	}
	return s.arena[start:s.spans[i]]
}

func (s *RDBSerializer) resetArena() {
	s.arena, s.spans, s.zs, s.next = s.arena[:0], s.spans[:0], s.zs[:0], 0
}

func (s *RDBSerializer) setValue(key []byte, set *dset.Set) {
	s.form(set.Encoding() == "intset")
	defer s.form(true)
	s.resetArena()
	set.Each(func(m []byte) bool { s.collect(m); return true })
	s.enc.SetValue(key, len(s.spans), func() []byte { s.next++; return s.member(s.next - 1) })
}

func (s *RDBSerializer) zsetValue(key []byte, z *zset.ZSet) {
	s.form(z.Encoding() == "listpack")
	defer s.form(true)
	s.resetArena()
	z.Walk(0, false, func(m []byte, score float64) bool {
		s.collect(m)
		s.zs = append(s.zs, score)
		return true
	})
	s.enc.ZSetValue(key, len(s.spans), func() ([]byte, float64) {
		s.next++
		return s.member(s.next - 1), s.zs[s.next-1]
	})
}

// streamValue converts a stream to the codec's form (allocating for its groups and pending
// entries: streams are not on the per-key zero-allocation path) and writes it.
func (s *RDBSerializer) streamValue(key []byte, x *stream.Stream) {
	st := &s.st
	st.Entries, st.Groups = st.Entries[:0], nil
	s.resetArena()
	var counts []int // fields of each entry, then their spans: the arena may move while it grows
	for it := x.Range(stream.ID{}, stream.Max, false); ; {
		id, fv, ok := it.Next()
		if !ok {
			break
		}
		st.Entries = append(st.Entries, rdb.StreamEntry{ID: rdb.StreamID{Ms: id.Ms, Seq: id.Seq}})
		counts = append(counts, len(fv))
		for _, f := range fv {
			s.collect(f)
		}
	}
	span := 0
	for i := range st.Entries {
		fv := make([][]byte, counts[i])
		for j := range fv {
			fv[j] = s.member(span)
			span++
		}
		st.Entries[i].Fields = fv
	}
	st.Length = x.Len()
	st.LastID = sid(x.LastID())
	st.FirstID = sid(x.FirstID())
	st.MaxDeletedID = sid(x.MaxDeletedID())
	st.EntriesAdded = x.EntriesAdded()
	for _, g := range x.Groups() {
		rg := rdb.StreamGroup{Name: []byte(g.Name), LastID: sid(g.LastID), EntriesRead: g.EntriesRead}
		for _, n := range g.PEL() {
			rg.PEL = append(rg.PEL, rdb.StreamPending{ID: sid(n.ID), DeliveryTimeMs: n.DeliveryTime,
				DeliveryCount: n.DeliveryCount})
		}
		for _, c := range g.Consumers() {
			rc := rdb.StreamConsumer{Name: []byte(c.Name), SeenTimeMs: c.SeenTime, ActiveTimeMs: -1}
			for _, n := range c.PEL() {
				rc.PEL = append(rc.PEL, sid(n.ID))
			}
			rg.Consumers = append(rg.Consumers, rc)
		}
		st.Groups = append(st.Groups, rg)
	}
	s.enc.StreamValue(key, st)
	for i := range st.Entries {
		st.Entries[i].Fields = nil
	}
}

func sid(id stream.ID) rdb.StreamID { return rdb.StreamID{Ms: id.Ms, Seq: id.Seq} }
