package bitmap

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// The reference is a []bool of bits, bit 0 first, and Redis's rules written the slow way.

func bitsOf(b []byte) []bool {
	out := make([]bool, len(b)*8)
	for i := range out {
		out[i] = b[i/8]>>(7-i%8)&1 == 1
	}
	return out
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		switch r.IntN(4) {
		case 0:
			b[i] = 0
		case 1:
			b[i] = 0xff
		default:
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

// refSpan is Redis's range normalization done on bit indexes one by one.
func refSpan(size, start, end int64, inBits bool) (first, last int64) {
	total := size
	if inBits {
		total *= 8
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= total {
		end = total - 1
	}
	if start > end {
		return 0, -1
	}
	if !inBits {
		return start * 8, end*8 + 7
	}
	return start, end
}

func TestCountAndPosAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 20000 {
		b := randBytes(r, r.IntN(40))
		ref := bitsOf(b)
		n := int64(len(b))
		lim := n*8 + 10
		start, end := r.Int64N(2*lim+1)-lim, r.Int64N(2*lim+1)-lim
		inBits := r.IntN(2) == 0
		first, last := refSpan(n, start, end, inBits)
		s := Normalize(n, start, end, inBits)
		if s.First != first || s.Last != last && !(s.Empty() && first > last) {
			t.Fatalf("Normalize(%d, %d, %d, %v) = %+v, want %d..%d", n, start, end, inBits, s, first, last)
		}
		var count int64
		pos := [2]int64{-1, -1}
		for i := first; i <= last; i++ {
			v := 0
			if ref[i] {
				v = 1
				count++
			}
			if pos[v] < 0 {
				pos[v] = i
			}
		}
		if got := Count(b, s); got != count {
			t.Fatalf("Count(%x, %+v) = %d, want %d", b, s, got, count)
		}
		for bit := range 2 {
			if got := Pos(b, bit, s); got != pos[bit] {
				t.Fatalf("Pos(%x, %d, %+v) = %d, want %d", b, bit, s, got, pos[bit])
			}
		}
		if got, want := Popcount(b), Count(b, Span{0, n*8 - 1}); got != want {
			t.Fatalf("Popcount(%x) = %d, Count of everything %d", b, got, want)
		}
	}
}

func TestSetBitAndGrowAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	var b []byte
	ref := map[uint64]bool{}
	for range 20000 {
		off := uint64(r.IntN(3000))
		if r.IntN(10) == 0 {
			off = uint64(r.IntN(64))
		}
		on := r.IntN(2)
		b = Grow(b, int(off/8)+1)
		old := SetBit(b, off, on)
		if want := ref[off]; (old == 1) != want {
			t.Fatalf("SetBit(%d) returned %d, reference has %v", off, old, want)
		}
		ref[off] = on == 1
		probe := uint64(r.IntN(4000))
		if got := Bit(b, probe); (got == 1) != ref[probe] {
			t.Fatalf("Bit(%d) = %d, reference has %v", probe, got, ref[probe])
		}
	}
	for i := uint64(0); i < uint64(len(b))*8; i++ {
		if (Bit(b, i) == 1) != ref[i] {
			t.Fatalf("bit %d differs from the reference", i)
		}
	}
}

func TestApplyAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 5000 {
		op := Op(r.IntN(4))
		srcs := make([][]byte, 1+r.IntN(4))
		if op == Not {
			srcs = srcs[:1]
		}
		n := 0
		for i := range srcs {
			if r.IntN(6) > 0 {
				srcs[i] = randBytes(r, r.IntN(30))
			}
			n = max(n, len(srcs[i]))
		}
		want := make([]byte, n)
		for i := range want {
			at := func(s []byte) byte {
				if i < len(s) {
					return s[i]
				}
				return 0
			}
			v := at(srcs[0])
			for _, s := range srcs[1:] {
				switch op {
				case And:
					v &= at(s)
				case Or:
					v |= at(s)
				case Xor:
					v ^= at(s)
				}
			}
			if op == Not {
				v = ^v
			}
			want[i] = v
		}
		got := Apply(op, randBytes(r, r.IntN(40))[:0], srcs)
		if string(got) != string(want) {
			t.Fatalf("Apply(%d, %x) = %x, want %x", op, srcs, got, want)
		}
	}
}

// refField reads and writes fields through a big.Int holding the string's bits, and applies
// overflow by exact arithmetic: the sum against the type's range.
func refAdd(f Field, v, incr int64, ow Overflow) (int64, bool) {
	lo, hi := new(big.Int), new(big.Int)
	if f.Signed {
		hi.Lsh(big.NewInt(1), f.Bits-1)
		lo.Neg(hi)
		hi.Sub(hi, big.NewInt(1))
	} else {
		hi.Lsh(big.NewInt(1), f.Bits)
		hi.Sub(hi, big.NewInt(1))
	}
	cur := big.NewInt(v)
	if !f.Signed {
		cur.SetUint64(uint64(v))
	}
	sum := new(big.Int).Add(cur, big.NewInt(incr))
	if sum.Cmp(lo) >= 0 && sum.Cmp(hi) <= 0 {
		return sum.Int64(), false
	}
	if ow == Sat {
		// Redis's quirk, kept: its signed check computes max-value in 64 bits, which wraps for a
		// SET value below max-2^63, and such a value saturates to max, not min.
		quirk := new(big.Int).Sub(hi, cur).Cmp(big.NewInt(1<<63-1)) > 0 && f.Signed && f.Bits < 64
		if sum.Cmp(lo) < 0 && !quirk {
			return lo.Int64(), true
		}
		if f.Signed {
			return hi.Int64(), true
		}
		return int64(hi.Uint64()), true
	}
	mod := new(big.Int).Lsh(big.NewInt(1), f.Bits)
	w := new(big.Int).Mod(sum, mod) // 0 <= w < 2^bits
	if f.Signed && w.Cmp(hi) > 0 {
		w.Sub(w, mod)
	}
	if f.Signed {
		return w.Int64(), true
	}
	return int64(w.Uint64()), true
}

func TestFieldAgainstBigInt(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	edge := []int64{0, 1, -1, 2, -2, 127, -128, 255, 1 << 31, -1 << 63, 1<<63 - 1, 1 << 62}
	num := func() int64 {
		if r.IntN(3) == 0 {
			return edge[r.IntN(len(edge))]
		}
		return int64(r.Uint64()) >> r.IntN(64)
	}
	for range 200000 {
		f := Field{Bits: uint(1 + r.IntN(64)), Signed: r.IntN(2) == 0}
		if !f.Signed && f.Bits == 64 {
			f.Bits = 63
		}
		ow := Overflow(r.IntN(2)) // Fail computes what Sat does; only the write is skipped
		// The stored value is always in range (it was read from the string); SET's value is
		// any integer, added to as incr 0.
		b := randBytes(r, 10)
		off := uint64(r.IntN(16))
		old := f.Get(b, off)
		incr := num()
		if r.IntN(4) == 0 {
			old, incr = num(), 0 // a SET
			if !f.Signed && old < 0 {
				continue // SET of a negative unsigned: checked by the transcripts, not here
			}
		}
		got, over := f.Add(old, incr, ow)
		want, wover := refAdd(f, old, incr, ow)
		if got != want || over != wover {
			t.Fatalf("%+v Add(%d, %d, %d) = %d %v, want %d %v", f, old, incr, ow, got, over, want, wover)
		}
		before := new(big.Int).SetBytes(b)
		f.Set(b, off, got)
		if back := f.Get(b, off); back != got {
			t.Fatalf("%+v Set(%d) read back %d", f, got, back)
		}
		// Only the field's bits changed: the XOR of before and after lies inside its mask.
		mask := new(big.Int).Lsh(big.NewInt(1), f.Bits)
		mask.Sub(mask, big.NewInt(1))
		mask.Lsh(mask, uint(len(b)*8)-uint(off)-f.Bits)
		diff := new(big.Int).Xor(before, new(big.Int).SetBytes(b))
		if diff.AndNot(diff, mask).Sign() != 0 {
			t.Fatalf("%+v Set at %d changed bits outside the field", f, off)
		}
	}
}
