package command

// Key tags in the RDB (tags.go): HotKV's own aux field hotkv-tags, one per shard that has tagged
// keys, written after the keys and before EOF. Redis 7.0.15 loads such a file and ignores the
// field (rdbLoadRio skips an aux field it does not know), so the file stays Redis's.
//
// Point in time: the serializer records a key's tags as it emits the key, holding the shard,
// from the index the key's database had at the snapshot's instant (tagsAtInstant). Every TAG.*
// change, and every deletion or overwrite that drops tags, first looks the key up (Find,
// FindQuiet, Delete, Remove), which emits the key's bucket if the snapshot has not yet: the
// tags emitted are the instant's. FLUSHDB and FLUSHALL give the database a new index
// (resetTagsLocked), so the instant's stays as it was for the keys Clear detached.

import (
	"bytes"
	"fmt"

	"github.com/hotkv/hotkv/ds/tags"
	"github.com/hotkv/hotkv/persist/rdb"
	"github.com/hotkv/hotkv/pipeline"
)

// tagsAux is the aux field's name.
const tagsAux = "hotkv-tags"

// rdbTags is an RDBSerializer's record of its shard's tags.
type rdbTags struct {
	at  []*tags.Index // by database, as of the instant
	buf []byte        // records (ds/tags AppendRecord) of the keys emitted so far
}

// atInstantLocked is called by StartSnapshot holding every token, with the shard's indexes.
func (s *RDBSerializer) atInstantLocked(d *shardData) {
	s.tags.at = append([]*tags.Index(nil), d.tags...)
}

// recordTags appends key's tags, if it has any, as the key is emitted.
func (s *RDBSerializer) recordTags(db int, key string) {
	if db >= len(s.tags.at) {
		return
	}
	ix := s.tags.at[db]
	if ix == nil || ix.Len() == 0 || !ix.Has(key) {
		return
	}
	if s.tags.buf == nil {
		s.tags.buf = tags.AppendHeader(nil)
	}
	s.tags.buf = tags.AppendRecord(s.tags.buf, db, key, ix.Tags(key))
}

// appendTagsAux appends the aux fields of every serializer that recorded tags.
func appendTagsAux(enc *rdb.Encoder, sers []*RDBSerializer) {
	for _, s := range sers {
		if len(s.tags.buf) > 0 {
			enc.Aux(tagsAux, string(s.tags.buf))
		}
	}
}

// loadTags applies the hotkv-tags fields a load met, after its keys: each key present (live)
// gets its tags; a key the file did not keep (expired) is skipped. Records are applied holding
// each shard for at most loadBatchKeys of them.
func (e *Engine) loadTags(fields [][]byte) error {
	type rec struct {
		db   int
		key  []byte
		tags [][]byte
	}
	perShard := make([][]rec, len(e.Group.Shards))
	for _, f := range fields {
		err := tags.Decode(f, func(db int, key []byte, ts [][]byte) {
			if db < e.dbCount {
				sh := e.shardOf(key)
				perShard[sh] = append(perShard[sh], rec{db: db, key: key, tags: append([][]byte(nil), ts...)})
			}
		})
		if err != nil {
			return fmt.Errorf("cannot load RDB: %s aux field: %w", tagsAux, err)
		}
	}
	applyPerShard(e, perShard, func(d *shardData, r rec) {
		if d.dbs[r.db].Peek(r.key, 0) != nil {
			d.tags[r.db].Add(string(r.key), r.tags)
			e.tagsOn.Store(true)
		}
	})
	return nil
}

// applyPerShard applies each shard's records of an aux field a load met (perShard[i] are shard
// i's), holding the shard for at most loadBatchKeys records at a time.
func applyPerShard[R any](e *Engine, perShard [][]R, apply func(d *shardData, r R)) {
	for i, recs := range perShard {
		for len(recs) > 0 {
			n := min(len(recs), loadBatchKeys)
			e.Group.Do(i, func(sh *pipeline.Shard) {
				d := sh.Data.(*shardData)
				for _, r := range recs[:n] {
					apply(d, r)
				}
			})
			recs = recs[n:]
		}
	}
}

// isTagsAux reports whether an aux field is hotkv-tags.
func isTagsAux(key []byte) bool { return bytes.Equal(key, []byte(tagsAux)) }

// instantRecorder is a Serializer that wants its shard's state at the snapshot's instant.
type instantRecorder interface{ atInstantLocked(d *shardData) }
