package rdb

import (
	"bytes"
	"hash/crc64"
	"math/rand/v2"
	"runtime"
	"testing"
)

func TestCRC64(t *testing.T) {
	// The test vector in Redis's crc64.c.
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %x", got)
	}
	// Against the standard library's bytewise CRC over the same reflected
	// polynomial, which starts and ends with an inversion Redis's lacks.
	tab := crc64.MakeTable(crc64Poly)
	ref := func(crc uint64, b []byte) uint64 { return ^crc64.Update(^crc, tab, b) }
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, r.IntN(3000))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		seed := r.Uint64()
		if got, want := CRC64(seed, b), ref(seed, b); got != want {
			t.Fatalf("len %d: %x, reference %x", len(b), got, want)
		}
		k := r.IntN(len(b) + 1)
		if got := CRC64(CRC64(seed, b[:k]), b[k:]); got != ref(seed, b) {
			t.Fatalf("split at %d differs", k)
		}
	}
}

func TestLZFRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	inputs := [][]byte{nil, []byte("a"), []byte("abcabcabcabcabcabcabcabc"), bytes.Repeat([]byte("x"), 100000)}
	for range 300 {
		n := r.IntN(20000)
		b := make([]byte, n)
		alpha := 1 + r.IntN(255)
		for i := range b {
			if i > 10 && r.IntN(3) == 0 {
				b[i] = b[i-1-r.IntN(min(i, 9000))]
			} else {
				b[i] = byte(r.IntN(alpha))
			}
		}
		inputs = append(inputs, b)
	}
	var tab lzfTable
	for _, in := range inputs {
		c := LZFCompress([]byte("prefix"), in)
		if string(c[:6]) != "prefix" {
			t.Fatal("LZFCompress did not append")
		}
		out, err := LZFDecompress([]byte("p"), c[6:], len(in))
		if err != nil || !bytes.Equal(out[1:], in) {
			t.Fatalf("round trip of %d bytes: %v", len(in), err)
		}
		if c2, _ := tab.compress(nil, in, -1); !bytes.Equal(c2, c[6:]) {
			t.Fatal("a reused table compressed differently")
		}
		if len(in) > 0 {
			if _, err := LZFDecompress(nil, c[6:], len(in)-1); err == nil {
				t.Fatal("short declared length accepted")
			}
			if _, err := LZFDecompress(nil, c[6:], len(in)+1); err == nil {
				t.Fatal("long declared length accepted")
			}
		}
	}
	// A back reference before the start, and a truncated run.
	for _, bad := range [][]byte{{0x20, 0x00}, {0x05, 'a'}, {0xe0}, {0x00, 'a', 0xe0, 0x01}} {
		if _, err := LZFDecompress(nil, bad, 10); err == nil {
			t.Fatalf("%x accepted", bad)
		}
	}
	// A declared length its input cannot reach is refused before any allocation.
	if n := bytesAllocated(func() { LZFDecompress(nil, []byte{0, 'a'}, 1<<40) }); n > 4096 {
		t.Fatalf("%d bytes allocated for a 2-byte input declaring 1 TB", n)
	}
}

// bytesAllocated is how many heap bytes f allocates, averaged over 10 runs.
func bytesAllocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	for range 10 {
		f()
	}
	runtime.ReadMemStats(&b)
	return (b.TotalAlloc - a.TotalAlloc) / 10
}
