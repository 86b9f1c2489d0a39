package command

import (
	"math/rand"
	"testing"
)

// TestDecodeHFE: a record round-trips; every truncation and random bytes are refused or parsed
// without a panic.
func TestDecodeHFE(t *testing.T) {
	b := append([]byte(nil), hfeMagic...)
	b = append(b, 3, 1, 'k', 2, 2, 'f', '1', 0x80, 0x01, 1, 'g', 5)
	var got []hfeRec
	if err := decodeHFE(b, func(r hfeRec) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].db != 3 || string(got[0].key) != "k" || len(got[0].fields) != 2 ||
		string(got[0].fields[0]) != "f1" || got[0].at[0] != 128 || string(got[0].fields[1]) != "g" || got[0].at[1] != 5 {
		t.Fatalf("decoded %+v", got)
	}
	for i := range len(b) {
		if err := decodeHFE(b[:i], func(hfeRec) {}); err == nil && i > len(hfeMagic) {
			t.Fatalf("truncated at %d: no error", i)
		}
	}
	rng := rand.New(rand.NewSource(1))
	for range 20000 {
		x := append([]byte(nil), hfeMagic...)
		for range rng.Intn(40) {
			x = append(x, byte(rng.Intn(256)))
		}
		decodeHFE(x, func(hfeRec) {})
	}
}
