package command

// Large values written off the shard (snapshot.go's Freezer): an RDBSerializer freezes a value
// that would hold its shard for long while it is written, and its twin writes the copy on the
// snapshot's goroutine.
//
// Measured (TestSnapshotLargeKeysServeShard logs it: one 1,000,000-element value, rdbcompression
// on, the project's loaded VM): writing a list took 40-100 ms holding its shard, a set 110-420
// ms, a hash 230-560 ms, a sorted set 130-550 ms and a stream 0.4-1.6 s, during which every other
// client of that shard waited. A copy costs 2-8 ms (list, Clone), 13-26 ms (set, Clone), 6-13 ms
// (stream, Clone); a hash's and a sorted set's Clone re-adds every element (320 and 200 ms), so
// their Freeze copies the storage as it is instead (12-28 and 11-22 ms). A vector set's Freeze
// copies the index's arrays as they are: 4-18 ms against 225-332 ms to write it holding the shard
// for 20,000 x 784 Q8 elements (TestVsetFreezeCost, HOTKV_VSET_FREEZE_N=20000). The copy
// is private to the snapshot: nothing changes it, so it is read without any token while the
// live value goes on changing, and it is dropped once written.

import (
	"bytes"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/zset"
)

// A collection of more elements than freezeMinElems, or a string longer than freezeMinBytes, is
// frozen: below them writing it costs about what the copy does (under a millisecond).
const (
	freezeMinElems = 1024
	freezeMinBytes = 256 << 10
)

// rdbFrozen is one frozen entry: a copy of the Entry (key, expiry, access data) holding a copy
// of the value, written by the shard serializer's twin.
type rdbFrozen struct {
	twin *RDBSerializer
	db   int
	exp  int64 // expiry in ms when en has one
	size int64
	en   keyspace.Entry
}

// Freeze implements Freezer: a copy of a large value, with the key's tags recorded now (they
// are the instant's while the shard is held, persist_tags.go); nil for a value written now.
func (s *RDBSerializer) Freeze(db int, en *keyspace.Entry, ks *keyspace.Keyspace) Frozen {
	if !en.HasValue() || !worthFreezing(en) || s.redis70 && !redisKind(en.Kind) {
		return nil
	}
	if en.Kind == keyspace.KindHash && s.liveFields(keyspace.Obj[hash.Hash](en)) == 0 {
		return nil // Entry writes nothing for it
	}
	f := &rdbFrozen{twin: s.twinSerializer(), db: db, en: *en}
	if en.ExpireAt() != 0 {
		f.exp = ks.ExpireMs(en)
	}
	switch en.Kind {
	case keyspace.KindString:
		f.en.SetBytes(bytes.Clone(en.Bytes()))
	case keyspace.KindList:
		keyspace.SetObj(&f.en, keyspace.KindList, keyspace.Obj[list.List](en).Clone().(*list.List))
	case keyspace.KindHash:
		keyspace.SetObj(&f.en, keyspace.KindHash, keyspace.Obj[hash.Hash](en).Freeze())
	case keyspace.KindSet:
		keyspace.SetObj(&f.en, keyspace.KindSet, keyspace.Obj[dset.Set](en).Clone().(*dset.Set))
	case keyspace.KindZSet:
		keyspace.SetObj(&f.en, keyspace.KindZSet, keyspace.Obj[zset.ZSet](en).Freeze())
	case keyspace.KindStream:
		keyspace.SetObj(&f.en, keyspace.KindStream, keyspace.Obj[stream.Stream](en).Clone().(*stream.Stream))
	case keyspace.KindVectorSet: // the index's arrays as they are (vset.go's Freeze)
		keyspace.SetObj(&f.en, keyspace.KindVectorSet, keyspace.Obj[vsetValue](en).Freeze())
	default:
		return nil
	}
	f.size = valueSize(&f.en, 5)
	s.recordTags(db, en.Key())
	return f
}

// worthFreezing reports whether writing en's value would take long enough to copy it first.
func worthFreezing(en *keyspace.Entry) bool {
	if en.Kind == keyspace.KindString { // the raw length: a packed or sparse value is unpacked to be written
		return en.RawLen() > freezeMinBytes
	}
	return freeEffort(en) > freezeMinElems
}

// Append writes the frozen entry, after a switch to its database, with the twin's scratch.
func (f *rdbFrozen) Append(dst []byte) []byte {
	dst = f.twin.SelectDB(dst, f.db)
	return f.twin.record(dst, f.db, &f.en, f.exp)
}

// Size is the estimate MEMORY USAGE makes of the copy.
func (f *rdbFrozen) Size() int64 { return f.size }

// twinSerializer returns the serializer that writes s's frozen entries on the snapshot's
// goroutine: s's settings, scratch of its own, no tags (Freeze recorded them). Its key counts
// are s's too (WriteRDB adds them up).
func (s *RDBSerializer) twinSerializer() *RDBSerializer {
	if s.twin == nil {
		t := &RDBSerializer{lim: s.lim, general: s.general, access: s.access, decay: s.decay, now: s.now, redis70: s.redis70}
		t.enc.Compress = s.enc.Compress
		t.enc.Limits = &t.lim
		s.twin = t
	}
	return s.twin
}
