package transport

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestInbufModel drives inbuf with random arrivals, peeks, skips and releases against a plain byte
// slice, and checks after every step that the unread bytes match and that no slice peeked since the last
// release has changed.
func TestInbufModel(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var b inbuf
		var model []byte            // unread bytes, the reference
		var held, heldCopy [][]byte // peeked since the last release
		next := byte(0)
		for step := range 2000 {
			switch op := rng.IntN(10); {
			case op < 4: // bytes arrive; sometimes a big burst
				n := 1 + rng.IntN(100)
				if rng.IntN(20) == 0 {
					n = 1 + rng.IntN(3*minBuf)
				}
				dst := b.space(1 + rng.IntN(n))
				n = min(n, len(dst))
				for i := range n {
					dst[i] = next
					model = append(model, next)
					next++
				}
				b.commit(n)
			case op < 7 && len(model) > 0: // peek
				n := rng.IntN(len(model) + 1)
				p := b.peek(n)
				held, heldCopy = append(held, p), append(heldCopy, bytes.Clone(p))
			case op < 9: // skip
				n := rng.IntN(len(model) + 1)
				if !b.skip(n) {
					t.Fatalf("seed %d step %d: skip(%d) of %d refused", seed, step, n, len(model))
				}
				model = model[n:]
			default:
				b.release()
				held, heldCopy = held[:0], heldCopy[:0]
			}
			if b.Len() != len(model) || !bytes.Equal(b.peek(b.Len()), model) {
				t.Fatalf("seed %d step %d: unread bytes differ from the model", seed, step)
			}
			for i := range held {
				if !bytes.Equal(held[i], heldCopy[i]) {
					t.Fatalf("seed %d step %d: a peeked slice changed before release", seed, step)
				}
			}
		}
	}
}

func TestInbufSkipBeyond(t *testing.T) {
	var b inbuf
	copy(b.space(3), "abc")
	b.commit(3)
	if b.skip(4) || b.skip(-1) || !b.skip(3) || b.Len() != 0 {
		t.Fatal("skip bounds")
	}
}

// TestInbufGrowthFollowsArrivals: a buffer fed in small pieces up to 1MB never holds more than about
// twice what arrived, and a drained big buffer is dropped on release.
func TestInbufGrowthFollowsArrivals(t *testing.T) {
	var b inbuf
	arrived := 0
	for arrived < 1<<20 {
		dst := b.space(1)
		n := min(len(dst), 1000)
		b.commit(n)
		arrived += n
		if limit := max(minBuf, 2*arrived+1000); len(b.buf) > limit {
			t.Fatalf("buffer of %d bytes for %d arrived", len(b.buf), arrived)
		}
	}
	b.skip(b.Len())
	b.release()
	if b.buf != nil {
		t.Fatalf("drained %d-byte buffer kept", len(b.buf))
	}
}

// TestInbufReleaseKeepsPartial: release moves the unread tail to the front and reuses the array.
func TestInbufReleaseKeepsPartial(t *testing.T) {
	var b inbuf
	copy(b.space(10), "PING\r\nPI")
	b.commit(8)
	arr := &b.buf[0]
	b.skip(6)
	b.release()
	if string(b.peek(b.Len())) != "PI" || &b.buf[0] != arr {
		t.Fatalf("after release: %q, same array %v", b.peek(b.Len()), &b.buf[0] == arr)
	}
}

// BenchmarkInbufCycle is the steady state of a pipelined connection: arrive, peek, skip, release.
func BenchmarkInbufCycle(b *testing.B) {
	var in inbuf
	batch := bytes.Repeat([]byte("PING\r\n"), 30)
	b.ReportAllocs()
	for b.Loop() {
		in.commit(copy(in.space(len(batch)), batch))
		p := in.peek(in.Len())
		in.skip(len(p))
		in.release()
	}
}
