// Package zset is the sorted set value: members (byte strings) with float64 scores, ordered by
// score and then by member bytes. Like Redis it has two encodings, chosen by the same
// thresholds (zset-max-listpack-entries and -value): a small set is one packed buffer
// ("listpack", packed.go), a large one a slab of items with a hash index and an order-statistic
// B+tree ("skiplist", big.go), where rank and range queries are O(log n).
//
// A ZSet is touched only by the holder of its shard's token, so it has no locks. It knows
// nothing of RESP. Member bytes passed to callbacks are views into the set, valid until the
// set is next modified; callers copy what they keep.
package zset

import (
	"errors"
	"math"
	"unsafe"
)

// ZSet is a sorted set. The zero value is an empty listpack-encoded set.
//
// It takes 16 bytes, as a keyspace may hold millions of small sets: p is the listpack buffer's
// first byte with its length and capacity, or the large set when capacity is isLarge. Both are
// ordinary Go allocations that p keeps alive.
type ZSet struct {
	p   unsafe.Pointer
	len uint32
	cap uint32
}

const isLarge = math.MaxUint32

// large returns the large encoding, or nil for a listpack.
func (z *ZSet) large() *big {
	if z.cap == isLarge {
		return (*big)(z.p)
	}
	return nil
}

func (z *ZSet) setLarge(b *big) { z.p, z.len, z.cap = unsafe.Pointer(b), 0, isLarge }

// BufferCap returns the capacity of a listpack's buffer (0 while empty) and true, or false for
// the large encoding: what a small sorted set holds besides its header, exactly.
func (z *ZSet) BufferCap() (int, bool) {
	if z.cap == isLarge {
		return 0, false
	}
	return int(z.cap), true
}

// buf returns a listpack's buffer: its records, then its count (see packed.go).
func (z *ZSet) buf() []byte {
	if z.p == nil || z.cap == isLarge {
		return nil
	}
	return unsafe.Slice((*byte)(z.p), z.cap)[:z.len]
}

func (z *ZSet) setBuf(b []byte) {
	if cap(b) == 0 {
		z.p, z.len, z.cap = nil, 0, 0
		return
	}
	z.p, z.len, z.cap = unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)), uint32(cap(b))
}

// Limits are the encoding thresholds: a set stays packed while it has at most MaxEntries
// members, none longer than MaxValue bytes.
type Limits struct {
	MaxEntries int64
	MaxValue   int64
}

// maxPackedBytes is Redis's listpack safety limit: a listpack never grows past 1 GiB.
const maxPackedBytes = 1 << 30

func (l Limits) fits(n, maxLen, total int) bool {
	return int64(n) <= l.MaxEntries && int64(maxLen) <= l.MaxValue && total <= maxPackedBytes
}

// New returns an empty set in the listpack encoding.
func New() *ZSet { return &ZSet{} }

// Len returns the number of members.
func (z *ZSet) Len() int {
	if b := z.large(); b != nil {
		return b.n
	}
	return lpLen(z.buf())
}

// Encoding names the encoding as OBJECT ENCODING does.
func (z *ZSet) Encoding() string {
	if z.large() != nil {
		return "skiplist"
	}
	return "listpack"
}

// Clone returns an independent copy in the same encoding.
func (z *ZSet) Clone() any {
	c := &ZSet{}
	b := z.large()
	if b == nil {
		c.setBuf(append([]byte(nil), z.buf()...))
		return c
	}
	c.setLarge(bigFrom(b.n, func(yield func([]byte, float64)) {
		b.walk(0, false, func(m []byte, s float64) bool { yield(m, s); return true })
	}))
	return c
}

// Score returns member's score.
func (z *ZSet) Score(member []byte) (float64, bool) {
	if b := z.large(); b != nil {
		id, ok := b.find(member)
		if !ok {
			return 0, false
		}
		return b.item(id).score, true
	}
	_, s, ok := lpFind(lpRecords(z.buf()), member)
	return s, ok
}

// Flags are ZADD's options.
type Flags uint8

// The ZADD options.
const (
	NX Flags = 1 << iota
	XX
	GT
	LT
	Incr
)

// Outcome says what Add did.
type Outcome uint8

// Add outcomes. None means the member was present and its score did not change.
const (
	None Outcome = iota
	Added
	Updated
	Nop // skipped because of NX, XX, GT or LT
)

// ErrNaN is returned when an increment makes a score NaN.
var ErrNaN = errors.New("resulting score is not a number (NaN)")

// Add adds member or updates its score as Redis's zsetAdd does, converting a packed set that
// would exceed lim. It returns what happened and the member's score afterwards (the new
// score for Incr).
func (z *ZSet) Add(member []byte, score float64, f Flags, lim Limits) (Outcome, float64, error) {
	if math.IsNaN(score) {
		return None, 0, ErrNaN
	}
	cur, found := z.Score(member)
	if found {
		return z.update(member, cur, score, f)
	}
	if f&XX != 0 {
		return Nop, 0, nil
	}
	if z.large() == nil && !lim.fits(z.Len()+1, len(member), int(z.len)+len(member)) {
		z.convert()
	}
	if b := z.large(); b != nil {
		b.insert(member, score)
	} else {
		z.setBuf(lpAdd(z.buf(), member, score))
	}
	return Added, score, nil
}

func (z *ZSet) update(member []byte, cur, score float64, f Flags) (Outcome, float64, error) {
	if f&NX != 0 {
		return Nop, cur, nil
	}
	if f&Incr != 0 {
		score += cur
		if math.IsNaN(score) {
			return None, 0, ErrNaN
		}
	}
	if (f&LT != 0 && score >= cur) || (f&GT != 0 && score <= cur) {
		return Nop, cur, nil
	}
	if score == cur {
		return None, score, nil
	}
	if b := z.large(); b != nil {
		id, _ := b.find(member)
		b.setScore(id, score)
	} else {
		lp := z.buf()
		off, _, _ := lpFind(lpRecords(lp), member)
		z.setBuf(lpAdd(lpRemove(lp, off, 1), member, score))
	}
	return Updated, score, nil
}

// convert moves a packed set to the large encoding.
func (z *ZSet) convert() {
	lp := z.buf()
	recs := lpRecords(lp)
	z.setLarge(bigFrom(lpLen(lp)+1, func(yield func([]byte, float64)) {
		for off := 0; off < len(recs); {
			m, s, next := recordAt(recs, off)
			yield(m, s)
			off = next
		}
	}))
}

// Remove deletes member and reports whether it was present.
func (z *ZSet) Remove(member []byte) bool {
	if b := z.large(); b != nil {
		id, ok := b.find(member)
		if ok {
			b.remove(id)
		}
		return ok
	}
	lp := z.buf()
	off, _, ok := lpFind(lpRecords(lp), member)
	if ok {
		z.setBuf(lpRemove(lp, off, 1))
	}
	return ok
}

// Rank returns member's 0-based rank in ascending order, and its score.
func (z *ZSet) Rank(member []byte) (int, float64, bool) {
	if b := z.large(); b != nil {
		id, ok := b.find(member)
		if !ok {
			return 0, 0, false
		}
		return b.rankOf(id), b.item(id).score, true
	}
	r, recs := 0, lpRecords(z.buf())
	for off := 0; off < len(recs); r++ {
		m, s, next := recordAt(recs, off)
		if string(m) == string(member) {
			return r, s, true
		}
		off = next
	}
	return 0, 0, false
}

// Warm prepares a Walk from rank r that will visit about n members, loading their data ahead so
// that the walk's cache misses overlap (large sets only; small ones are one buffer).
func (z *ZSet) Warm(r int, rev bool, n int) {
	if b := z.large(); b != nil && r >= 0 && n > 1 {
		b.sink += b.warm(r, rev, n)
	}
}

// Walk calls fn for members from rank r (0 <= r < Len) towards the highest rank, or towards
// rank 0 when rev, until fn returns false.
func (z *ZSet) Walk(r int, rev bool, fn func(member []byte, score float64) bool) {
	if r < 0 || r >= z.Len() {
		return
	}
	if b := z.large(); b != nil {
		b.walk(r, rev, fn)
		return
	}
	lpWalk(lpRecords(z.buf()), r, rev, fn)
}

// At returns the member of rank r (0 <= r < Len).
func (z *ZSet) At(r int) (member []byte, score float64) {
	if b := z.large(); b != nil {
		it := b.item(b.idAt(r))
		return b.arena.get(it.ref), it.score
	}
	recs := lpRecords(z.buf())
	m, s, _ := recordAt(recs, lpOffset(recs, r))
	return m, s
}

// RandomAt returns the member at position i (0 <= i < Len) of the set's storage order, which
// is uniform for a uniform i and O(1) for the large encoding.
func (z *ZSet) RandomAt(i int) (member []byte, score float64) {
	if b := z.large(); b != nil {
		it := b.item(uint32(i))
		return b.arena.get(it.ref), it.score
	}
	return z.At(i)
}

// RemoveRange deletes the members of ranks start..end (0 <= start <= end < Len) and returns
// how many it deleted.
func (z *ZSet) RemoveRange(start, end int) int {
	count := end - start + 1
	if b := z.large(); b != nil {
		for range count {
			b.remove(b.idAt(start))
		}
		return count
	}
	lp := z.buf()
	z.setBuf(lpRemove(lp, lpOffset(lpRecords(lp), start), count))
	return count
}

// WarmMember loads what Score(member) reads: the member's index slot, its item and the member's
// bytes, or the start of the packed encoding. A batch that looks members up in many sets calls it
// for all of them before running any, so that their cache misses overlap (command's warm.go).
func (z *ZSet) WarmMember(member []byte) uint64 {
	b := z.large()
	if b == nil {
		return z.warmPacked()
	}
	if len(b.slots) == 0 {
		return 0
	}
	s := b.slots[int(hashOf(member))&(len(b.slots)-1)]
	if s == 0 {
		return 0
	}
	rf := b.item(slotID(s)).ref
	return uint64(b.arena.chunks[rf.chunk()][rf.off()])
}

// WarmRank loads what reading from rank r (negative: from the end) reads first: the tree's path
// to r, the item and its member's bytes. Batch warming calls it for ZRANGE's start (command's
// warm.go); a rank out of range loads nothing.
func (z *ZSet) WarmRank(r int) uint64 {
	b := z.large()
	if b == nil {
		return z.warmPacked()
	}
	if r < 0 {
		r += b.n
	}
	if r < 0 || r >= b.n {
		return 0
	}
	return b.warm(r, false, 1)
}

// warmPacked loads the start of a small set's buffer, which any read of it scans from.
func (z *ZSet) warmPacked() uint64 {
	if buf := z.buf(); len(buf) > 0 {
		return uint64(buf[0])
	}
	return 0
}
