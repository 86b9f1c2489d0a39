package set

import (
	"math"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
)

// big is a set past the small encodings: members that are integers in [0, 2^32) live in a
// roaring bitmap (a few bytes, often bits, per member), every other member in the table. Redis
// calls this encoding "hashtable", and so does OBJECT ENCODING.
type big struct {
	ints  *roaring.Bitmap // nil until the first integer member
	nInts int             // the bitmap's cardinality, which roaring computes in O(containers)
	strs  table
}

func (b *big) len() int { return b.nInts + b.strs.n }

func (b *big) has(m []byte) bool {
	if v, ok := parseUint32(m); ok {
		return b.ints != nil && b.ints.Contains(v)
	}
	return b.strs.has(m)
}

func (b *big) add(m []byte) bool {
	v, ok := parseUint32(m)
	if !ok {
		return b.strs.add(m)
	}
	if b.ints == nil {
		b.ints = roaring.New()
	}
	if !b.ints.CheckedAdd(v) {
		return false
	}
	b.nInts++
	return true
}

func (b *big) remove(m []byte) bool {
	v, ok := parseUint32(m)
	if !ok {
		return b.strs.remove(m)
	}
	if b.ints == nil || !b.ints.CheckedRemove(v) {
		return false
	}
	b.nInts--
	return true
}

// walk calls num with the integers in ascending order, then str with the strings, until one
// returns false.
func (b *big) walk(num func(v int64) bool, str func(m []byte) bool) bool {
	if b.nInts > 0 {
		it := b.ints.Iterator()
		for it.HasNext() {
			if !num(int64(it.Next())) {
				return false
			}
		}
	}
	return b.strs.mem.each(str)
}

// hasInt is has for an integer member.
func (b *big) hasInt(v int64) bool {
	if v >= 0 && v <= math.MaxUint32 {
		return b.ints != nil && b.ints.Contains(uint32(v))
	}
	var buf [20]byte
	return b.strs.has(formatInt(buf[:], v))
}

// Positions name members for random choice: an integer member is its own value, below 2^32;
// a string is 2^32 plus its slot index.
const strPos = 1 << 32

// randomPos chooses a member uniformly: an integer with probability nInts/len, drawn by
// rejection sampling over the bitmap's value range (a few tries for any but the sparsest
// bitmaps), falling back to a rank lookup, which costs a pass over the containers.
func (b *big) randomPos(r *rng) uint64 {
	if r.below(uint64(b.len())) >= uint64(b.nInts) {
		return strPos + b.strs.random(r)
	}
	lo, hi := uint64(b.ints.Minimum()), uint64(b.ints.Maximum())
	for range 16 {
		if v := lo + r.below(hi-lo+1); b.ints.Contains(uint32(v)) {
			return v
		}
	}
	v, err := b.ints.Select(uint32(r.below(uint64(b.nInts))))
	if err != nil {
		panic("BUG: roaring rank out of range: " + err.Error())
	}
	return uint64(v)
}

// at returns the member at position pos, formatting integers into buf.
func (b *big) at(pos uint64, buf []byte) []byte {
	if pos < strPos {
		return strconv.AppendUint(buf[:0], pos, 10)
	}
	return b.strs.member(b.strs.slots[pos-strPos])
}

// removeAt removes the member at position pos.
func (b *big) removeAt(pos uint64) {
	if pos < strPos {
		b.ints.Remove(uint32(pos))
		b.nInts--
		return
	}
	b.strs.removeAt(pos - strPos)
}

// scan continues a scan from cursor. An even cursor 2v resumes the integers at value v; an odd
// cursor 2c+1 resumes the table at its cursor c. Both walks keep Redis's guarantee, the
// integers because they are visited in increasing order.
func (b *big) scan(cursor uint64, count int, fn func(m []byte)) uint64 {
	if cursor&1 == 0 {
		next, done := b.scanInts(cursor>>1, count, fn)
		if !done {
			return next << 1
		}
		if b.strs.n == 0 {
			return 0
		}
		cursor = 1
	}
	next := b.strs.scan(cursor>>1, count, fn)
	if next == 0 {
		return 0
	}
	return next<<1 | 1
}

// scanInts returns up to count integers from from upwards, and the value to resume at.
func (b *big) scanInts(from uint64, count int, fn func(m []byte)) (next uint64, done bool) {
	if b.nInts == 0 || from > math.MaxUint32 {
		return 0, true
	}
	var buf [20]byte
	it := b.ints.Iterator()
	it.AdvanceIfNeeded(uint32(from))
	for n := 0; it.HasNext(); n++ {
		if n == count {
			return uint64(it.PeekNext()), false
		}
		fn(strconv.AppendUint(buf[:0], uint64(it.Next()), 10))
	}
	return 0, true
}

func (b *big) clone() *big {
	out := &big{nInts: b.nInts, strs: *b.strs.clone()}
	if b.ints != nil {
		out.ints = b.ints.Clone()
	}
	return out
}

// WarmMember loads the table slot and the packed bytes that a lookup of m will read, for a batch
// that looks up many members (command's warm.go), and returns a value that depends on them.
// Integers and small encodings need nothing.
func (s *Set) WarmMember(m []byte) uint64 {
	if s.enc != encBig || len(s.big.strs.slots) == 0 {
		return 0
	}
	if _, ok := parseUint32(m); ok {
		return 0
	}
	t := &s.big.strs
	sl := t.slots[hashOf(m)&t.mask()]
	if sl == 0 {
		return 0
	}
	ref := slotRef(sl)
	return uint64(t.mem.chunks[ref>>16][ref&0xFFFF])
}
