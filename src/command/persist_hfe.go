package command

// Hash-field TTLs in the RDB: RDB 10 (Redis 7.0) has no room for them, so HotKV writes its own
// aux field hotkv-hfe, one per serializer that met a hash with field TTLs, after the keys and
// before EOF (like hotkv-tags, persist_tags.go). Redis 7.0.15 loads the file and skips the
// field; HotKV's loader sets the TTLs on the loaded hashes and queues them for active field
// expiry. A full sync to a HotKV replica (capa hotkv) keeps its field TTLs this way; a Redis
// replica's RDB (RDBOptions.Redis70) carries none.
//
// Layout: "HFE1", then records: uvarint db, uvarint key length, key, uvarint field count, and
// per field uvarint length, field, uvarint expiry (unix ms). The TTLs are read while the hash
// is written, from the value as of the snapshot's instant.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/persist/rdb"
)

const hfeAux = "hotkv-hfe"

var hfeMagic = []byte("HFE1")

// recordHFE appends h's live field TTLs, if it has any, as the hash is emitted.
func (s *RDBSerializer) recordHFE(db int, key string, h *hash.Hash) {
	if h.NextExpiry() == 0 {
		return
	}
	nowMs := s.now / 1e6
	n := 0
	for it := h.Iter(); it.Next(); {
		if t := it.TTL(); t != 0 && t > nowMs {
			n++
		}
	}
	if n == 0 {
		return
	}
	b := s.hfe
	if b == nil {
		b = append(b, hfeMagic...)
	}
	b = binary.AppendUvarint(b, uint64(db))
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(n))
	for it := h.Iter(); it.Next(); {
		if t := it.TTL(); t != 0 && t > nowMs {
			f := it.Field()
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
			b = binary.AppendUvarint(b, uint64(t))
		}
	}
	s.hfe = b
}

// appendHFEAux appends the hotkv-hfe fields of every serializer (and twin) that recorded TTLs.
func appendHFEAux(enc *rdb.Encoder, sers []*RDBSerializer) {
	for _, s := range sers {
		for _, x := range []*RDBSerializer{s, s.twin} {
			if x != nil && len(x.hfe) > 0 {
				enc.Aux(hfeAux, string(x.hfe))
			}
		}
	}
}

func isHFEAux(key []byte) bool { return bytes.Equal(key, []byte(hfeAux)) }

var errHFE = errors.New("malformed record")

type hfeRec struct {
	db     int
	key    []byte
	fields [][]byte
	at     []int64
}

// decodeHFE parses one hotkv-hfe field; allocation follows the bytes (counts are checked
// against what is left).
func decodeHFE(b []byte, each func(r hfeRec)) error {
	if !bytes.HasPrefix(b, hfeMagic) {
		return errHFE
	}
	b = b[len(hfeMagic):]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	bytesOf := func() ([]byte, bool) {
		l, ok := uv()
		if !ok || l > uint64(len(b)) {
			return nil, false
		}
		v := b[:l]
		b = b[l:]
		return v, true
	}
	for len(b) > 0 {
		db, ok := uv()
		if !ok || db > 1<<20 {
			return errHFE
		}
		key, ok := bytesOf()
		if !ok {
			return errHFE
		}
		n, ok := uv()
		if !ok || n > uint64(len(b)) { // every field takes 2 bytes or more
			return errHFE
		}
		r := hfeRec{db: int(db), key: key}
		for range n {
			f, ok := bytesOf()
			if !ok {
				return errHFE
			}
			at, ok := uv()
			if !ok || at > 1<<62 {
				return errHFE
			}
			r.fields = append(r.fields, f)
			r.at = append(r.at, int64(at))
		}
		each(r)
	}
	return nil
}

// loadHFE applies the hotkv-hfe fields a load met, after its keys: each field of a hash
// present gets its TTL, and the hash is queued for active field expiry.
func (e *Engine) loadHFE(fields [][]byte) error {
	perShard := make([][]hfeRec, len(e.Group.Shards))
	for _, f := range fields {
		err := decodeHFE(f, func(r hfeRec) {
			if r.db < e.dbCount {
				sh := e.shardOf(r.key)
				perShard[sh] = append(perShard[sh], r)
			}
		})
		if err != nil {
			return fmt.Errorf("cannot load RDB: %s aux field: %w", hfeAux, err)
		}
	}
	applyPerShard(e, perShard, func(d *shardData, r hfeRec) {
		ks := d.dbs[r.db]
		en := ks.Peek(r.key, 0)
		if en == nil || en.Kind != keyspace.KindHash {
			return
		}
		h := keyspace.Obj[hash.Hash](en)
		before := h.NextExpiry()
		for j, f := range r.fields {
			h.SetTTL(f, r.at[j])
		}
		d.hfe.trackLocked(ks, r.key, before, h.NextExpiry())
	})
	return nil
}
