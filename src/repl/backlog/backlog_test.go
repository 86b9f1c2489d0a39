package backlog

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestRingAgainstSlice drives a ring and a plain byte slice of the whole stream with random
// writes, resizes and reads: every read the ring answers equals the slice's bytes, and it
// answers exactly the offsets within the last histlen bytes.
func TestRingAgainstSlice(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		base := rng.Int63n(1000)
		size := 1 + rng.Intn(64)
		r := New(size, base)
		var all []byte // the stream after offset base
		for step := 0; step < 300; step++ {
			switch op := rng.Intn(10); {
			case op < 6:
				p := make([]byte, rng.Intn(2*size+3))
				rng.Read(p)
				r.Write(p)
				all = append(all, p...)
			case op < 7:
				size = 1 + rng.Intn(64)
				r.Resize(size)
			default:
				end := base + int64(len(all))
				if r.Offset() != end {
					t.Fatalf("seed %d: offset %d, want %d", seed, r.Offset(), end)
				}
				from := base + rng.Int63n(int64(len(all))+2) - 1
				wantOK := from >= base && from <= end && end-from <= r.Histlen()
				got, ok := r.ReadFrom(nil, from, 1<<30)
				if ok != wantOK {
					t.Fatalf("seed %d: ReadFrom(%d) ok %v want %v (end %d hist %d)", seed, from, ok, wantOK, end, r.Histlen())
				}
				if ok && !bytes.Equal(got, all[from-base:]) {
					t.Fatalf("seed %d: ReadFrom(%d) bytes differ", seed, from)
				}
				if r.Histlen() > int64(r.Size()) || r.Histlen() > int64(len(all)) {
					t.Fatalf("seed %d: histlen %d over size %d or written %d", seed, r.Histlen(), r.Size(), len(all))
				}
				if r.First() != end-r.Histlen()+1 {
					t.Fatalf("seed %d: first %d", seed, r.First())
				}
			}
		}
	}
}

func TestRingLimit(t *testing.T) {
	r := New(8, 0)
	r.Write([]byte("abcdef"))
	got, ok := r.ReadFrom(nil, 1, 3)
	if !ok || string(got) != "bcd" {
		t.Fatalf("got %q %v", got, ok)
	}
	if r.First() != 1 || r.Histlen() != 6 {
		t.Fatalf("first %d hist %d", r.First(), r.Histlen())
	}
}
