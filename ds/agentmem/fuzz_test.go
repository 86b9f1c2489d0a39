package agentmem

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// FuzzDecode: any input is decoded or refused, never a panic; what decodes re-encodes to
// something that decodes to the same encoding. Seeds: small stores with records, versions,
// expiries and windows. `go test ./ds/agentmem -run '^$' -fuzz FuzzDecode -fuzztime 30s`.
func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 9))
	for n := range 4 {
		s := must(New(Config{Dim: 3, Window: 10, Embedder: []string{"", "lexical"}[n%2]}))
		for range n * 3 {
			must(s.Put(randRecord(rng, s, s.NextID(), 1e12)))
		}
		if n > 1 {
			_ = s.Supersede("1", "2", 1e12+5)
			_, _ = s.Append("s", "user", []byte("hi"), 2, 0)
		}
		f.Add(s.AppendBinary(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(b)
		if err != nil {
			return
		}
		enc := s.AppendBinary(nil)
		s2, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if !bytes.Equal(s2.AppendBinary(nil), enc) {
			t.Fatal("re-encoding is not stable")
		}
	})
}
