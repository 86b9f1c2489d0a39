package rdb

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// lzfReference decodes an LZF stream byte by byte, as liblzf's lzf_decompress does, without
// its checks (the stream is well formed by construction).
func lzfReference(src []byte) []byte {
	var out []byte
	for i := 0; i < len(src); {
		ctrl := int(src[i])
		i++
		if ctrl < 32 {
			out = append(out, src[i:i+ctrl+1]...)
			i += ctrl + 1
			continue
		}
		l := ctrl >> 5
		if l == 7 {
			l += int(src[i])
			i++
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(src[i]) - 1
		i++
		for k := range l + 2 {
			out = append(out, out[ref+k])
		}
	}
	return out
}

// LZFDecompress agrees with the byte-by-byte reference on random streams of literal runs and
// back references at every distance, overlapping ones (runs) included, which the compressor's
// own output rarely mixes this way.
func TestLZFDecompressAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		var src []byte
		n := 0
		for range 1 + r.IntN(40) {
			if n == 0 || r.IntN(3) == 0 {
				k := 1 + r.IntN(32)
				src = append(src, byte(k-1))
				for range k {
					src = append(src, byte(r.IntN(256)))
				}
				n += k
				continue
			}
			dist := 1 + r.IntN(min(n, 8192))
			if r.IntN(2) == 0 {
				dist = 1 + r.IntN(min(n, 4)) // short distances: overlapping copies
			}
			l := 3 + r.IntN(262)
			d := dist - 1
			if l-2 < 7 {
				src = append(src, byte((l-2)<<5|d>>8), byte(d))
			} else {
				src = append(src, byte(7<<5|d>>8), byte(l-2-7), byte(d))
			}
			n += l
		}
		want := lzfReference(src)
		got, err := LZFDecompress([]byte("p"), src, len(want))
		if err != nil || !bytes.Equal(got[1:], want) {
			t.Fatalf("stream % x: %v, got %d bytes, want %d", src[:min(len(src), 40)], err, len(got)-1, len(want))
		}
	}
}
