package command

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/zset"
)

// DEBUG DIGEST and DIGEST-VALUE, as Redis 7.0.15's computeDatasetDigest and xorObjectDigest
// (debug.c), byte for byte, so a HotKV replica and a Redis primary (or the reverse) compare
// their data sets with one command:
//
//   - mix(d, p) is d ^= sha1(p) then d = sha1(d) (mixDigest); xor(d, p) is d ^= sha1(p).
//   - A key: d = 0, mix(name), mix(htonl(type)) with Redis's type numbers, then the value:
//     a string mixes its bytes; a list mixes each element in order; a set xors each member;
//     a sorted set xors, per member, the sha1 of mix(mix(0, member), "%.17g" of its score);
//     a hash the sha1 of mix(mix(0, field), value) per field (xorDigest hashes what it is
//     given, element digests included); a stream mixes each entry's "ms.seq" id, then each
//     field and value (its consumer groups are not in the digest). A key with a TTL xors
//     "!!expire!!" (the time is not mixed in). The data set xors the sha1 of its keys' digests, after
//     mixing in htonl(db) for each non-empty database. An empty data set is 40 zeros.
//   - HotKV's own types (vector sets, IP sets, …) are module values to Redis (type 5): their
//     serialized form is mixed in, which only HotKV compares; a vector set mixes its elements
//     instead (vset_digest.go), so a replica that built its own graph digests the same.
//   - Logically expired keys are digested as long as they are held, as Redis digests its dict:
//     a replica holds them until the primary's DEL, so its digest equals a Redis replica's and
//     its primary's. DIGEST-VALUE too reads held keys, expired or not, and reclaims nothing.

type digest [sha1.Size]byte

func (d *digest) hex() string { return hex.EncodeToString(d[:]) }

// xorIn is Redis's xorDigest: d ^= sha1(b).
func (d *digest) xorIn(b []byte) {
	h := sha1.Sum(b)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mix is Redis's mixDigest: d ^= sha1(b), then d = sha1(d).
func (d *digest) mix(b []byte) {
	d.xorIn(b)
	*d = sha1.Sum(d[:])
}

// xor folds another digest in, order-independently (xorDigest of a digest's bytes is not
// this: Redis xors the element digests themselves into the key's).
func (d *digest) xor(o *digest) {
	for i := range d {
		d[i] ^= o[i]
	}
}

// redisType is the object type number Redis mixes in (server.h's OBJ_*).
func redisType(k keyspace.Kind) uint32 {
	switch k {
	case keyspace.KindString:
		return 0
	case keyspace.KindList:
		return 1
	case keyspace.KindSet:
		return 2
	case keyspace.KindZSet:
		return 3
	case keyspace.KindHash:
		return 4
	case keyspace.KindStream:
		return 6
	}
	return 5 // OBJ_MODULE
}

// appendScore formats a score as C's "%.17g".
func appendScore(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// objectDigest is Redis's xorObjectDigest: it mixes en's type, value and TTL marker into d.
func (e *Engine) objectDigest(d *digest, en *keyspace.Entry, now int64) {
	var t [4]byte
	binary.BigEndian.PutUint32(t[:], redisType(en.Kind))
	d.mix(t[:])
	switch en.Kind {
	case keyspace.KindString:
		v := en.Bytes()
		if en.Packed() {
			v = unpackOrPanic(nil, en)
		}
		d.mix(v)
	case keyspace.KindList:
		l := keyspace.Obj[list.List](en)
		it := l.IterAt(0, false)
		for v, ok := it.Next(); ok; v, ok = it.Next() {
			d.mix(v)
		}
	case keyspace.KindSet:
		keyspace.Obj[dset.Set](en).Each(func(m []byte) bool {
			d.xorIn(m)
			return true
		})
	case keyspace.KindHash:
		nowMs := now / 1e6
		for it := keyspace.Obj[hash.Hash](en).Iter(); it.Next(); {
			if t := it.TTL(); t != 0 && t <= nowMs {
				continue
			}
			var el digest
			el.mix(it.Field())
			el.mix(it.Value())
			d.xorIn(el[:])
		}
	case keyspace.KindZSet:
		var buf [32]byte
		keyspace.Obj[zset.ZSet](en).Walk(0, false, func(m []byte, score float64) bool {
			var el digest
			el.mix(m)
			el.mix(appendScore(buf[:0], score))
			d.xorIn(el[:])
			return true
		})
	case keyspace.KindStream:
		var buf [48]byte
		it := keyspace.Obj[stream.Stream](en).Range(stream.ID{}, stream.ID{Ms: math.MaxUint64, Seq: math.MaxUint64}, false)
		for id, fv, ok := it.Next(); ok; id, fv, ok = it.Next() {
			b := strconv.AppendUint(buf[:0], id.Ms, 10)
			b = append(b, '.')
			d.mix(strconv.AppendUint(b, id.Seq, 10))
			for _, x := range fv {
				d.mix(x)
			}
		}
	case keyspace.KindVectorSet: // its elements, not its graph (vset_digest.go)
		vsetDigest(d, keyspace.Obj[vsetValue](en), now)
	default: // HotKV's own types, module values to Redis
		d.mix(e.dumpObject(en, now))
	}
	if en.ExpireAt() > 0 {
		d.xorIn([]byte("!!expire!!"))
	}
}

// valueDigest is DEBUG DIGEST-VALUE's digest of en (no key name).
func (e *Engine) valueDigest(en *keyspace.Entry, now int64) digest {
	var d digest
	e.objectDigest(&d, en, now)
	return d
}

// keyDigest digests one key: name, type, value and TTL marker.
func (e *Engine) keyDigest(_ *keyspace.Keyspace, en *keyspace.Entry, now int64) digest {
	var d digest
	d.mix([]byte(en.Key()))
	e.objectDigest(&d, en, now)
	return d
}

// datasetDigestLocked digests every database. The caller holds every shard.
func (e *Engine) datasetDigestLocked(now int64) digest {
	var final digest
	for db := range e.dbCount {
		var keys digest
		n := 0
		e.eachKeyspace(db, func(ks *keyspace.Keyspace) {
			for cursor := uint64(0); ; {
				cursor = ks.Scan(cursor, func(en *keyspace.Entry) {
					x := e.keyDigest(ks, en, now)
					keys.xorIn(x[:]) // xorDigest: the sha1 of the key's digest

					n++
				})
				if cursor == 0 {
					break
				}
			}
		})
		if n == 0 {
			continue
		}
		var id [4]byte
		binary.BigEndian.PutUint32(id[:], uint32(db))
		final.mix(id[:])
		final.xor(&keys)
	}
	return final
}

// DEBUG DIGEST
func debugDigest(c *Ctx) {
	e := c.E
	switch tx := c.tx; {
	case tx != nil && tx.heldAll:
	case tx != nil:
		c.Err(ErrDebugDigestMulti)
		return
	default:
		e.Group.LockAll()
		defer e.Group.UnlockAll()
	}
	d := e.datasetDigestLocked(c.Now)
	c.Simple(d.hex())
}

// DEBUG DIGEST-VALUE key [key ...]
func debugDigestValue(c *Ctx) {
	keys := c.Args[2:]
	c.ArrayLen(len(keys))
	for _, k := range keys {
		var d digest
		if en := c.KS(k).PeekAny(k, keyspace.Hash(k)); en != nil { // expired or not, as Redis
			d = c.E.valueDigest(en, c.Now)
		}
		c.Simple(d.hex())
	}
}

// valueLen is the number of elements of a collection (1 for a string).
func valueLen(en *keyspace.Entry) int {
	switch en.Kind {
	case keyspace.KindList:
		return keyspace.Obj[list.List](en).Len()
	case keyspace.KindSet:
		return keyspace.Obj[dset.Set](en).Len()
	case keyspace.KindHash:
		return keyspace.Obj[hash.Hash](en).Len()
	case keyspace.KindZSet:
		return keyspace.Obj[zset.ZSet](en).Len()
	}
	return 1
}
