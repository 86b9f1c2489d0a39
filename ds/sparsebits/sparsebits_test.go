package sparsebits

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/hotkv/hotkv/ds/bitmap"
)

// TestAgainstDense runs random bit writes on a sparse form and on a plain []byte (ds/bitmap, the
// dense reference) and compares every read: bits, counts and positions over random spans,
// windows, and the dense bytes themselves.
func TestAgainstDense(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		size := 1 + r.IntN(3000)
		p, ref := New(0), []byte(nil)
		for range 1 + r.IntN(300) {
			off := uint64(r.IntN(size * 8))
			if r.IntN(4) == 0 { // clustered offsets give runs of set bits for BITPOS 0
				off = uint64(r.IntN(64))
			}
			on := r.IntN(3) & 1 // mostly clears of what is set, some sets
			if r.IntN(2) == 0 {
				on = 1
			}
			ref = bitmap.Grow(ref, int(off>>3)+1)
			p = Grow(p, len(ref))
			var old int
			p, old = SetBit(p, off, on)
			if want := bitmap.SetBit(ref, off, on); old != want {
				t.Fatalf("round %d: SetBit(%d) old %d, want %d", round, off, old, want)
			}
			if !Valid(p) || Len(p) != len(ref) {
				t.Fatalf("round %d: invalid form or length %d, want %d", round, Len(p), len(ref))
			}
		}
		if !bytes.Equal(Dense(nil, p), ref) {
			t.Fatalf("round %d: Dense differs", round)
		}
		if Count(p) != int(bitmap.Popcount(ref)) {
			t.Fatalf("round %d: Count %d, want %d", round, Count(p), bitmap.Popcount(ref))
		}
		bitsN := int64(len(ref)) * 8
		for range 50 {
			off := uint64(r.Int64N(bitsN + 16))
			if Bit(p, off) != bitmap.Bit(ref, off) {
				t.Fatalf("round %d: Bit(%d)", round, off)
			}
			s := bitmap.Normalize(int64(len(ref)), r.Int64N(bitsN+8)-4, r.Int64N(bitsN+8)-4, true)
			if got, want := CountRange(p, s.First, s.Last), bitmap.Count(ref, s); got != want {
				t.Fatalf("round %d: CountRange(%v) %d, want %d", round, s, got, want)
			}
			for bit := range 2 {
				if got, want := Pos(p, bit, s.First, s.Last), bitmap.Pos(ref, bit, s); got != want {
					t.Fatalf("round %d: Pos(%d, %v) %d, want %d", round, bit, s, got, want)
				}
			}
			from, n := r.IntN(len(ref)+4), r.IntN(10)
			want := make([]byte, n)
			if from < len(ref) {
				copy(want, ref[from:])
			}
			if got := Window([]byte("x"), p, from, n); !bytes.Equal(got[1:], want) || got[0] != 'x' {
				t.Fatalf("round %d: Window(%d, %d) %x, want %x", round, from, n, got, want)
			}
		}
	}
}

func TestValidRejects(t *testing.T) {
	p := Grow(New(0), 4)
	p, _ = SetBit(p, 3, 1)
	p, _ = SetBit(p, 9, 1)
	f := func(name string, q []byte) {
		if Valid(q) {
			t.Errorf("%s: %x passes Valid", name, q)
		}
	}
	if !Valid(p) {
		t.Fatalf("%x fails Valid", p)
	}
	f("short", p[:4])
	f("partial offset", p[:len(p)-1])
	bad := bytes.Clone(p)
	bad[4] = 1
	f("tag", bad)
	swapped := bytes.Clone(p)
	copy(swapped[5:9], p[9:13])
	copy(swapped[9:13], p[5:9])
	f("order", swapped)
	f("past the end", Grow(append(New(1), 8, 0, 0, 0), 1))
}

func TestFits(t *testing.T) {
	f := func(length int64, count int, want bool) {
		if Fits(length, count) != want {
			t.Errorf("Fits(%d, %d) = %v", length, count, !want)
		}
	}
	f(MinLen-1, 1, false)
	f(MinLen, 1, true)
	f(MinLen, (MinLen/16-HeaderLen)/4, true)
	f(MinLen, (MinLen/16-HeaderLen)/4+1, false)
	f(1<<29, MaxBits, true)
	f(1<<29, MaxBits+1, false)
}
