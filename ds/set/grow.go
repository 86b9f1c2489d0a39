package set

import "slices"

// grow returns b with room for n more bytes. An empty buffer gets what n needs, rounded up to
// the allocator's size class; a full one grows as append grows it (doubling up to 256 bytes, then
// by about a quarter), rounded the same way.
//
// Growing to exactly the need at every add, as Redis's realloc does, was measured and dropped:
// the outgrown buffer is garbage until the next collection rather than freed, so a set of 20
// 16-byte members built one SADD at a time left about ten times its size behind it, and the
// server's RSS right after such a load rose by 200 bytes a key (876 against 675) for 32 bytes a
// key less live data; each add also allocated. The slack append keeps is bounded (under half of
// a buffer of a few hundred bytes), and what made small sets large was elsewhere: long members
// are kept out of line (listpack) and a big set's arena and table start at one member's need.
func grow(b []byte, n int) []byte { return slices.Grow(b, n) }

// resize returns b's bytes in a new buffer of capacity c (at least len(b)) rounded up to the
// allocator's size class.
func resize(b []byte, c int) []byte {
	// Growing a nil slice sizes the new array to the request rounded up to its size class
	// (slices.Grow doubles only a non-empty slice).
	return append(slices.Grow([]byte(nil), c), b...)
}

// fit returns b in a buffer of its length (rounded up to the size class) when it has more than
// an eighth to spare.
func fit(b []byte) []byte {
	if cap(b)-len(b) > len(b)/8+16 {
		return resize(b, len(b))
	}
	return b
}
