// Package set is Redis's set value: a collection of distinct byte strings.
//
// A set starts as an intset (sorted integers, Redis's encoding and memory) while every member is
// an integer and there are at most Limits.Intset of them. Otherwise a small set (at most
// Limits.Listpack members, and at most lpExtMax of them longer than Limits.ListpackValue) is a
// listpack: a packed buffer in insertion order that holds the long members out of line, so a
// one-member set costs its member and a few words. A large set is a roaring bitmap for its
// integer members in [0, 2^32) plus a hash table of the others with the members packed in an
// arena, so a million integers cost a few bytes each and a million 16-byte strings about half of
// Redis's memory. How buffers grow, and why not to the byte: grow.go.
//
// Redis 7.0 has no listpack sets, so OBJECT ENCODING names both non-intset encodings
// "hashtable", as Redis 7.0 would for the same commands. A set never goes back to a smaller
// encoding, except when rebuilt whole (SPOP's large counts), as in Redis.
//
// Sets are touched only by their shard's token holder; nothing here locks. Members passed to
// callbacks are valid only during the call unless said otherwise.
package set

import (
	"math"

	"github.com/hotkv/hotkv/ds/strs"
)

// Limits are the encoding thresholds, from set-max-intset-entries and set-max-listpack-entries
// and -value.
type Limits struct {
	Intset        int
	Listpack      int
	ListpackValue int
}

type encoding uint8

const (
	encIntset encoding = iota
	encListpack
	encBig
)

// Set is a set value. The zero value is an empty intset, as Redis creates a set for a first
// integer member.
type Set struct {
	small
	big *big
}

// small is the storage of the compact encodings, kept inline so a small set is two allocations:
// the Set and its buffer (and one per member too long to be packed, see listpack).
type small struct {
	enc   encoding
	width uint8     // intset: bytes per member
	n     uint32    // listpack: members
	b     []byte    // intset or listpack bytes
	ext   *[][]byte // listpack: the members kept out of line; nil when none
}

func (s *Set) is() *intset   { return (*intset)(&s.small) }
func (s *Set) lp() *listpack { return (*listpack)(&s.small) }

// New returns an empty set.
func New() *Set { return &Set{} }

// Len returns the number of members.
func (s *Set) Len() int {
	switch s.enc {
	case encIntset:
		return s.is().len()
	case encListpack:
		return int(s.lp().n)
	}
	return s.big.len()
}

// Encoding names the encoding as Redis 7.0's OBJECT ENCODING does.
func (s *Set) Encoding() string {
	if s.enc == encIntset {
		return "intset"
	}
	return "hashtable"
}

// Has reports whether m is a member.
func (s *Set) Has(m []byte) bool {
	switch s.enc {
	case encIntset:
		v, ok := strs.ParseInt(m)
		return ok && s.is().has(v)
	case encListpack:
		off, _ := s.lp().find(m)
		return off >= 0
	}
	return s.big.has(m)
}

// Add adds a copy of m and reports whether it was absent, converting the encoding as Redis's
// setTypeAdd does when the intset limit is passed or m is not an integer.
func (s *Set) Add(m []byte, lim *Limits) bool { return s.add(m, lim, false) }

// add is Add. A borrowed m, which the caller keeps valid and unchanged until it calls own (a
// builder), is kept out of line without a copy.
func (s *Set) add(m []byte, lim *Limits, borrowed bool) bool {
	switch s.enc {
	case encIntset:
		if v, ok := strs.ParseInt(m); ok {
			return s.addInt(v, lim)
		}
		s.convert(lim, len(m))
		if s.enc == encListpack {
			s.lp().push(m, lim)
			return true
		}
	case encListpack:
		lp := s.lp()
		if len(m) <= lim.ListpackValue {
			if off, _ := lp.find(m); off >= 0 {
				return false
			}
			if lim.packs(int(lp.n)+1, lp.extLen()) {
				lp.pushShort(m)
				return true
			}
		} else {
			tag := tagOf(m) // once, for the lookup and the entry
			if off, _ := lp.findTag(m, tag, true); off >= 0 {
				return false
			}
			if lim.packs(int(lp.n)+1, lp.extLen()+1) {
				if !borrowed {
					m = append([]byte(nil), m...)
				}
				lp.pushLong(m, tag)
				return true
			}
		}
		s.convert(lim, len(m))
	}
	return s.big.add(m)
}

// convert moves the members out of the current encoding: to a listpack when an intset's members
// and the member about to be added (of length extra; -1 when none) fit the listpack limits,
// else to the big encoding. The new storage is sized for them and that member up front.
func (s *Set) convert(lim *Limits, extra int) {
	n, long, size := s.Len(), 0, 0 // size: the listpack's bytes
	strN, strBytes := 0, 0         // the big encoding's table members and their arena bytes
	note := func(l int, str bool) {
		if l > lim.ListpackValue {
			long++
			size += uvarintLen(uint64(l)<<1|1) + tagLen
		} else {
			size += uvarintLen(uint64(l)<<1) + l
		}
		if str {
			strN++
			if e := entrySize(l); e <= ownChunk {
				strBytes += e
			}
		}
	}
	if extra >= 0 {
		n++
		note(extra, true)
	}
	var buf [20]byte
	s.Walk(func(v int64) bool { note(len(formatInt(buf[:], v)), v < 0 || v > math.MaxUint32); return true },
		func(m []byte) bool { _, isInt := parseUint32(m); note(len(m), !isInt); return true })
	old := *s
	*s = Set{}
	if old.enc == encIntset && lim.packs(n, long) {
		s.enc, s.b = encListpack, grow(nil, size)
	} else {
		s.enc, s.big = encBig, &big{}
		s.big.strs.reserve(strN, strBytes)
	}
	old.Each(func(m []byte) bool {
		if s.enc == encListpack {
			s.lp().push(m, lim)
		} else {
			s.big.add(m)
		}
		return true
	})
}

// Remove deletes m and reports whether it was present.
func (s *Set) Remove(m []byte) bool {
	switch s.enc {
	case encIntset:
		v, ok := strs.ParseInt(m)
		return ok && s.is().remove(v)
	case encListpack:
		off, k := s.lp().find(m)
		if off >= 0 {
			s.lp().removeAt(off, k)
		}
		return off >= 0
	}
	return s.big.remove(m)
}

// Walk calls num with each integer member and str with each other member until one returns
// false: an intset in ascending order, a listpack in insertion order (every member as bytes),
// a big set its integers ascending and then its strings. Integers come as values, so a caller
// can encode them without a buffer. The set must not change during the walk.
func (s *Set) Walk(num func(v int64) bool, str func(m []byte) bool) bool {
	switch s.enc {
	case encIntset:
		is := s.is()
		for i := range is.len() {
			if !num(is.at(i)) {
				return false
			}
		}
		return true
	case encListpack:
		return s.lp().each(str)
	}
	return s.big.walk(num, str)
}

// Each is Walk with the integers formatted as bytes.
func (s *Set) Each(fn func(m []byte) bool) {
	var buf [20]byte
	s.Walk(func(v int64) bool { return fn(formatInt(buf[:], v)) }, fn)
}

// hasInt is Has for an integer member.
func (s *Set) hasInt(v int64) bool {
	switch s.enc {
	case encIntset:
		return s.is().has(v)
	case encListpack:
		var buf [20]byte
		off, _ := s.lp().find(formatInt(buf[:], v))
		return off >= 0
	}
	return s.big.hasInt(v)
}

// addInt is Add for an integer member.
func (s *Set) addInt(v int64, lim *Limits) bool {
	if s.enc == encIntset {
		if !s.is().add(v) {
			return false
		}
		if s.is().len() > min(lim.Intset, 1<<30) {
			s.convert(lim, -1)
		}
		return true
	}
	var buf [20]byte
	return s.Add(formatInt(buf[:], v), lim)
}

// Clone returns an independent copy with the same encoding (keyspace.Cloner, for COPY).
func (s *Set) Clone() any {
	out := &Set{small: s.lp().clone()}
	if s.big != nil {
		out.big = s.big.clone()
	}
	return out
}

// Scan continues a SSCAN from cursor, calling fn with about count members, and returns the next
// cursor (0 when done). Small encodings return every member at once with cursor 0, as Redis
// does for its compact encodings.
func (s *Set) Scan(cursor uint64, count int, fn func(m []byte)) uint64 {
	if s.enc != encBig {
		s.Each(func(m []byte) bool { fn(m); return true })
		return 0
	}
	return s.big.scan(cursor, max(count, 1), fn)
}
