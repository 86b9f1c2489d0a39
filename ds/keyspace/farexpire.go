package keyspace

import "math"

// Redis keeps an expiry as int64 unix milliseconds, so it accepts times up to about the year
// 292 million; an Entry keeps nanoseconds, which end in 2262. Rather than widen every entry for
// times no key will live to see, an expiry past the nanosecond range is stored in the entry as
// farExpire, which the clock never reaches, and its exact millisecond value in Keyspace.far.
// PEXPIRETIME, the GT/LT comparisons and RENAME/COPY/MOVE then see exactly what Redis would.
//
// The side map holds only far entries: unlink, SetExpire and Clear drop them, so it never
// outlives its entries.

// farExpire is the in-entry expiry of a far entry. An entry given exactly this time in
// nanoseconds (NEXPIREAT 9223372036854775807) has no far record and means what it says.
const farExpire = math.MaxInt64

const nsPerMs = 1_000_000

// MaxNearMs is the latest unix millisecond time that an entry holds in nanoseconds; later
// times are far.
const MaxNearMs = math.MaxInt64 / nsPerMs

// SetExpireMs sets e's expiry to the unix time ms in milliseconds, exactly, or persists e when
// ms is 0. ms must not be negative: a time already past deletes the key instead, as Redis does.
func (ks *Keyspace) SetExpireMs(e *Entry, ms int64) {
	switch {
	case ms < 0:
		panic("BUG: negative expiry time")
	case ms <= MaxNearMs:
		ks.SetExpire(e, ms*nsPerMs)
	default:
		ks.SetExpire(e, farExpire) // drops any old far record first
		if ks.far == nil {
			ks.far = make(map[*Entry]int64)
		}
		ks.far[e] = ms
	}
}

// ExpireMs returns e's expiry as a unix time in milliseconds (a nanosecond time rounded down,
// as Redis's commands see it), or 0 when e is persistent. An expiry within the first
// millisecond of 1970, always past, reads 0 too, so callers test ExpireAt() == 0 for
// persistence.
func (ks *Keyspace) ExpireMs(e *Entry) int64 {
	if e.expire == farExpire {
		if ms, ok := ks.far[e]; ok {
			return ms
		}
	}
	return e.expire / nsPerMs
}

// CopyExpire gives de, an entry of dst, the expiry of se, an entry of src, exactly: far times
// keep their milliseconds and near ones their nanoseconds. dst and src may be the same.
func (dst *Keyspace) CopyExpire(de *Entry, src *Keyspace, se *Entry) {
	if se.expire == farExpire {
		if ms, ok := src.far[se]; ok {
			dst.SetExpireMs(de, ms)
			return
		}
	}
	dst.SetExpire(de, se.expire)
}

// dropFar forgets e's far record, if any; the caller has seen e.expire == farExpire. The map
// is released when it empties so a burst of far keys does not pin its buckets.
func (ks *Keyspace) dropFar(e *Entry) {
	delete(ks.far, e)
	if len(ks.far) == 0 {
		ks.far = nil
	}
}
