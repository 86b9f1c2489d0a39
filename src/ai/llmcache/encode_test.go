package llmcache

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// randomCache holds n entries with random vectors of dim over two namespaces, a few without a
// vector, a few with tags, and one FEEDBACK pair.
func randomCache(t *testing.T, n, dim int, seed uint64) (*Cache, *rand.Rand) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	c, err := New(Config{Threshold: 0.5, Guard: GuardNumbers})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		a := SetArgs{NS: []byte(fmt.Sprint("ns", i%2)), Prompt: []byte(fmt.Sprint("question ", i)),
			Response: []byte("answer"), TokensIn: 2, TokensOut: 3}
		if i%10 != 9 {
			a.Vector = randomVec(r, dim)
		}
		if i%4 == 0 {
			a.Tags = [][]byte{[]byte("t")}
		}
		if _, _, err := c.Set(a, int64(1000+i)); err != nil {
			t.Fatal(err)
		}
	}
	c.Feedback(3, []byte("a paraphrase"))
	return c, r
}

func randomVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for k := range v {
		v[k] = float32(r.NormFloat64())
	}
	return v
}

// The encoding keeps each namespace's graph: a decoded cache answers every lookup as the original
// does (the same entry and score), without rebuilding its indexes.
func TestEncodeKeepsIndex(t *testing.T) {
	c, r := randomCache(t, 3000, 16, 1)
	enc := c.AppendBinary(nil)
	d, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.AppendBinary(nil), enc) {
		t.Fatal("the encoding does not round-trip")
	}
	for i := range 500 {
		q := Query{NS: []byte(fmt.Sprint("ns", i%2)), Prompt: []byte("x"), Vector: randomVec(r, 16),
			Mode: ModeSemantic, Threshold: -1, HasThreshold: true, NowMS: 5000, EF: 16}
		if i%3 == 0 {
			q.Tags = [][]byte{[]byte("t")}
		}
		h1, ok1, _ := c.Get(q)
		h2, ok2, _ := d.Get(q)
		if ok1 != ok2 || ok1 && (h1.Entry.ID != h2.Entry.ID || h1.Score != h2.Score) {
			t.Fatalf("lookup %d: %v %+v, decoded %v %+v", i, ok1, h1, ok2, h2)
		}
	}
	// Entries without a vector are found exactly, never semantically, after decoding too.
	if _, ok, _ := d.Get(Query{NS: []byte("ns1"), Prompt: []byte("Question 9"), NowMS: 5000}); !ok {
		t.Fatal("exact lookup of an entry without a vector missed")
	}
	if d.Vector(10) != nil || d.Vector(9) == nil {
		t.Fatal("decoded vectors")
	}
	// Writes after decoding keep the index in step.
	if n := d.Del(2, 4, 6); n != 3 || d.Len() != c.Len()-3 {
		t.Fatalf("del %d", n)
	}
	if _, err := Decode(d.AppendBinary(nil)); err != nil {
		t.Fatal(err)
	}
}

// A version 2 payload (written by the code before version 3, testdata/v2.hex: 41 entries of 4
// dims over three namespaces, one without vectors, tags, a FEEDBACK pair, EF 64) still decodes,
// its indexes rebuilt, and is written back as version 3.
func TestDecodeVersion2(t *testing.T) {
	raw, err := os.ReadFile("testdata/v2.hex")
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(string(raw))
	if err != nil || b[4] != 2 {
		t.Fatal("testdata/v2.hex is not a version 2 encoding")
	}
	c, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 40 || c.Config().EF != 64 || c.Vector(1) == nil || len(c.bad) != 1 {
		t.Fatalf("len %d ef %d vec %v bad %d", c.Len(), c.Config().EF, c.Vector(1), len(c.bad))
	}
	h, ok, _ := c.Get(Query{NS: []byte("ns0"), Prompt: []byte("prompt 2 again"), Vector: []float32{1, 2, 2, 0.2}, NowMS: 3000})
	if !ok || !h.Semantic || h.Entry.ID != 3 {
		t.Fatalf("semantic lookup after a version 2 decode: %v %+v", ok, h)
	}
	v3 := c.AppendBinary(nil)
	if v3[4] != encVersion {
		t.Fatal("not written as the current version")
	}
	d, err := Decode(v3)
	if err != nil || !slices.Equal(d.AppendBinary(nil), v3) {
		t.Fatalf("version 3 round trip: %v", err)
	}
}

// Payloads whose indexes disagree with their entries are refused, never attached.
func TestDecodeIndexMismatch(t *testing.T) {
	c, _ := randomCache(t, 50, 4, 2)
	other, _ := randomCache(t, 51, 4, 3) // one more entry: ns0's index has another element
	enc, bad := c.AppendBinary(nil), other.AppendBinary(nil)
	if _, err := Decode(enc); err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(bad); err != nil {
		t.Fatal(err)
	}
	// c's head and entries, then other's indexes and FEEDBACK pairs.
	mixed := c.appendTail(slices.Clone(enc[:len(enc)-len(c.appendTail(nil))]))
	if !slices.Equal(mixed, enc) {
		t.Fatal("appendTail is not the encoding's tail")
	}
	mixed = other.appendTail(slices.Clone(enc[:len(enc)-len(c.appendTail(nil))]))
	if _, err := Decode(mixed); err == nil {
		t.Fatal("an index of other entries decoded")
	}
}
