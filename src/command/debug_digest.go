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
	"github.com/hotkv/hotkv/ds/zset"
)

// DEBUG DIGEST and DIGEST-VALUE: a digest of HotKV's own with Redis's contract (debug.c's
// computeDatasetDigest): equal data give equal digests, whatever order keys, set members and
// hash fields were added in or sit in. Each key's digest mixes its name, its type, its value
// and its expiry; a database's keys are XORed together, so their order does not count, and the
// database number is mixed in before them. Ordered values (lists, sorted sets, streams) are
// chained in order; sets and hashes XOR their members' digests. An empty dataset, and a key
// that does not exist, digest to 40 zeros, as in Redis. The bytes differ from Redis's: only
// equality means anything.

type digest [sha1.Size]byte

func (d *digest) hex() string { return hex.EncodeToString(d[:]) }

// mix replaces d with sha1(d || b), as Redis's mixDigest.
func (d *digest) mix(b []byte) {
	h := sha1.New()
	h.Write(d[:])
	h.Write(b)
	h.Sum(d[:0])
}

// xor folds another digest in, order-independently.
func (d *digest) xor(o *digest) {
	for i := range d {
		d[i] ^= o[i]
	}
}

func sha1Of(parts ...[]byte) digest {
	h := sha1.New()
	for _, p := range parts {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(p)))
		h.Write(n[:]) // length-prefixed: ("ab","c") and ("a","bc") differ
		h.Write(p)
	}
	var d digest
	h.Sum(d[:0])
	return d
}

// valueDigest digests e's value (not its key or expiry).
func (e *Engine) valueDigest(en *keyspace.Entry, now int64) digest {
	d := sha1Of([]byte(en.Kind.String()))
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
			x := sha1Of(v)
			d.mix(x[:])
		}
	case keyspace.KindSet:
		var acc digest
		keyspace.Obj[dset.Set](en).Each(func(m []byte) bool {
			x := sha1Of(m)
			acc.xor(&x)
			return true
		})
		d.mix(acc[:])
	case keyspace.KindHash:
		var acc digest
		nowMs := now / 1e6
		for it := keyspace.Obj[hash.Hash](en).Iter(); it.Next(); {
			if t := it.TTL(); t != 0 && t <= nowMs {
				continue
			}
			ttl := []byte(nil)
			if t := it.TTL(); t != 0 {
				ttl = strconv.AppendInt(nil, t, 10)
			}
			x := sha1Of(it.Field(), it.Value(), ttl)
			acc.xor(&x)
		}
		d.mix(acc[:])
	case keyspace.KindZSet:
		keyspace.Obj[zset.ZSet](en).Walk(0, false, func(m []byte, score float64) bool {
			var s [8]byte
			binary.BigEndian.PutUint64(s[:], math.Float64bits(score+0)) // -0 and 0 alike
			x := sha1Of(m, s[:])
			d.mix(x[:])
			return true
		})
	default: // streams: their serialized form is ordered (entries, groups, consumers by name)
		d.mix(e.dumpObject(en, now))
	}
	return d
}

// keyDigest digests one key: name, value and expiry.
func (e *Engine) keyDigest(ks *keyspace.Keyspace, en *keyspace.Entry, now int64) digest {
	d := sha1Of([]byte(en.Key()))
	v := e.valueDigest(en, now)
	d.mix(v[:])
	if en.ExpireAt() > 0 {
		d.mix([]byte("!!expire!!" + strconv.FormatInt(ks.ExpireMs(en), 10)))
	}
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
					if at := en.ExpireAt(); at > 0 && at <= now {
						return
					}
					x := e.keyDigest(ks, en, now)
					keys.xor(&x)
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
		if en := c.KS(k).FindQuiet(k, c.Now); en != nil {
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
