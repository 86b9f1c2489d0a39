package llmcache

import (
	"encoding/hex"
	"os"
	"slices"
	"testing"
)

// FuzzDecode feeds Decode arbitrary bytes (RESTORE and RDB hand it whatever a client or a file
// holds), seeded with valid encodings of versions 2 and 3. It must never panic; what decodes must
// re-encode to bytes that decode to the same encoding, and must answer a lookup and take a SET
// and a DEL (a decoded index that disagreed with its entries would fail there).
func FuzzDecode(f *testing.F) {
	if raw, err := os.ReadFile("testdata/v2.hex"); err == nil {
		if b, err := hex.DecodeString(string(raw)); err == nil {
			f.Add(b)
		}
	}
	c, _ := New(Config{Dim: 3, Threshold: 0.5, Guard: GuardNumbers, Quant: 1})
	for i, p := range []string{"a", "b", "c 1", "d", "e"} {
		c.Set(SetArgs{NS: []byte{'n', byte('0' + i%2)}, Prompt: []byte(p), Response: []byte("r"),
			Vector: []float32{1, float32(i), -float32(i)}, Tags: [][]byte{[]byte("t")}}, int64(i))
	}
	c.Set(SetArgs{NS: []byte("x"), Prompt: []byte("no vector"), Response: []byte("r")}, 9)
	c.Feedback(2, []byte("para"))
	f.Add(c.AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Decode(b)
		if err != nil {
			return
		}
		enc := d.AppendBinary(nil)
		d2, err := Decode(enc)
		if err != nil {
			t.Fatalf("a decoded cache's encoding does not decode: %v", err)
		}
		if !slices.Equal(d2.AppendBinary(nil), enc) {
			t.Fatal("re-encoding differs")
		}
		dim := max(d.Config().Dim, 1)
		v := make([]float32, dim)
		v[0] = 1
		for ns := range d.ns {
			d.Get(Query{NS: []byte(ns), Prompt: []byte("a"), Vector: v, NowMS: 10})
		}
		if _, _, err := d.Set(SetArgs{NS: []byte("n0"), Prompt: []byte("a"), Response: []byte("s"), Vector: v}, 20); err != nil {
			t.Fatalf("SET after decoding: %v", err)
		}
		for id := range d.byID {
			d.Del(id)
			break
		}
		if _, err := Decode(d.AppendBinary(nil)); err != nil {
			t.Fatalf("after SET and DEL: %v", err)
		}
	})
}
