package ipset

import (
	"math/rand/v2"
	"testing"
)

// TestKeyBits: the filter exists from keyBitsFrom keys on, never says no to a key in its map,
// across every growth, and says yes to under 15% of keys that are not (8 bits a key at least:
// about 12%).
func TestKeyBits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var b keyBits
	m := map[uint64]uint32{}
	for i := range 50000 {
		k := r.Uint64()
		m[k] = uint32(i)
		b.add(k, m)
		if i < 100 && (len(b.w) > 0) != (len(m) >= keyBitsFrom) {
			t.Fatalf("%d keys: a filter of %d words", len(m), len(b.w))
		}
		if i == 100 { // the map shrinks below keyBitsFrom: keys added then are let through too
			for k := range m {
				if len(m) < keyBitsFrom/2 {
					break
				}
				delete(m, k)
			}
			for range 10 {
				k := r.Uint64()
				m[k] = 0
				b.add(k, m)
				if !b.may(k) {
					t.Fatalf("a key added to a map shrunk to %d keys is refused", len(m))
				}
			}
		}
		if i%997 == 0 {
			for k := range m {
				if !b.may(k) {
					t.Fatalf("after %d keys: key %x refused", i+1, k)
				}
			}
		}
	}
	if bits := len(b.w) * 64; bits < len(m)*8 {
		t.Fatalf("%d bits for %d keys", bits, len(m))
	}
	fp := 0
	for range 100000 {
		if k := r.Uint64(); m[k] == 0 && b.may(k) {
			fp++
		}
	}
	if fp > 15000 {
		t.Fatalf("%d of 100000 absent keys let through", fp)
	}
	t.Logf("%d keys, %d bits, %.1f%% false positives", len(m), len(b.w)*64, float64(fp)/1000)
}
