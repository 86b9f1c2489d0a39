package sparsebits

import "testing"

// form returns a sparse form of a string of n bytes with bits set bits spread over it.
func form(n, bits int) []byte {
	p := New(uint32(n))
	step := n * 8 / bits
	for i := range bits {
		p, _ = SetBit(p, uint64(i*step+1), 1)
	}
	return p
}

// BenchmarkDense: the conversion to the dense string, 1 MiB with the most bits the rule keeps
// (16,382) and 512 MiB with MaxBits; SetBytes is the dense string's length.
func BenchmarkDense(b *testing.B) {
	for _, c := range []struct {
		name       string
		size, bits int
	}{{"1MiB", 1 << 20, (1<<20/16 - HeaderLen) / 4}, {"512MiB", 512 << 20, MaxBits}} {
		b.Run(c.name, func(b *testing.B) {
			p, dst := form(c.size, c.bits), make([]byte, c.size)
			b.SetBytes(int64(c.size))
			for b.Loop() {
				dst = Dense(dst, p)
			}
		})
	}
}

// BenchmarkSetBit: setting and clearing a bit in the middle (moves half the offsets) and at
// the end (moves none) of a form with MaxBits-1 bits, and reading one.
func BenchmarkSetBit(b *testing.B) {
	p := form(512<<20, MaxBits-1)
	for _, c := range []struct {
		name string
		off  uint64
	}{{"middle", 256 << 23}, {"end", 512<<23 - 1}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				p, _ = SetBit(p, c.off, 1)
				p, _ = SetBit(p, c.off, 0)
			}
		})
	}
	b.Run("Bit", func(b *testing.B) {
		for b.Loop() {
			Bit(p, 256<<23)
		}
	})
}
