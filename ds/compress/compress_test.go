package compress

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// jsonish returns n bytes of JSON-like text from r: repeated field names, varying values.
func jsonish(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	b.WriteString("[")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"id":%d,"user":"user%04d","email":"u%d@example.com","active":%t,"score":%.3f,"tags":["a%d","b%d"]},`,
			r.IntN(1e6), r.IntN(5000), r.IntN(1e5), r.IntN(2) == 0, r.Float64()*100, r.IntN(9), r.IntN(9))
	}
	return b.Bytes()[:n]
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, a := range []Algo{LZ4, Zstd} {
		for _, n := range []int{8, 9, 100, 511, 512, 4096, 70_000, 300_000} {
			for _, kind := range []string{"json", "random", "zeros"} {
				var raw []byte
				switch kind {
				case "json":
					raw = jsonish(r, n)
				case "random":
					raw = randomBytes(r, n)
				default:
					raw = make([]byte, n)
				}
				p, ok := Pack(nil, a, raw)
				if kind == "random" {
					if ok {
						t.Fatalf("%v %s %d: random bytes packed to %d", a, kind, n, len(p))
					}
					continue
				}
				if kind == "zeros" && n >= 100 && !ok {
					t.Fatalf("%v zeros %d: not packed", a, n)
				}
				if !ok {
					continue
				}
				if !Worth(len(p), n) || RawLen(p) != n || Algo(p[4]) != a {
					t.Fatalf("%v %s %d: packed %d bytes, header %d/%d", a, kind, n, len(p), RawLen(p), p[4])
				}
				got, err := Unpack(nil, p)
				if err != nil || !bytes.Equal(got, raw) {
					t.Fatalf("%v %s %d: unpack err %v, equal %v", a, kind, n, err, bytes.Equal(got, raw))
				}
			}
		}
	}
}

func TestNoneAndShort(t *testing.T) {
	if _, ok := Pack(nil, None, make([]byte, 1000)); ok {
		t.Fatal("None packed")
	}
	if _, ok := Pack(nil, LZ4, []byte("aaaa")); ok {
		t.Fatal("a 4-byte value packed")
	}
	for _, p := range [][]byte{nil, {1, 0, 0}, {1, 0, 0, 0, 9, 1}, {0, 0, 0, 1, 1, 0}} {
		if _, err := Unpack(nil, p); err == nil {
			t.Fatalf("Unpack(%v) accepted", p)
		}
	}
}

// A declared length far beyond what the body could hold is refused before any allocation.
func TestUnpackDeclaredLengthChecked(t *testing.T) {
	for _, a := range []Algo{LZ4, Zstd} {
		p := []byte{0xff, 0xff, 0xff, 0xff, byte(a), 0, 0, 0, 0}
		allocs := testing.AllocsPerRun(10, func() {
			if _, err := Unpack(nil, p); err != ErrHeader {
				t.Fatalf("%v: err %v", a, err)
			}
		})
		if allocs != 0 {
			t.Fatalf("%v: %v allocations for a refused header", a, allocs)
		}
	}
}

// A length that passes the ratio check but not the body still allocates only that length.
func TestUnpackWrongLength(t *testing.T) {
	raw := bytes.Repeat([]byte("hello world "), 100)
	for _, a := range []Algo{LZ4, Zstd} {
		p, ok := Pack(nil, a, raw)
		if !ok {
			t.Fatalf("%v: not packed", a)
		}
		for _, d := range []int{-1, 1} {
			q := append([]byte(nil), p...)
			q[0] = byte(len(raw) + d)
			q[1] = byte((len(raw) + d) >> 8)
			if _, err := Unpack(nil, q); err == nil {
				t.Fatalf("%v: length %+d accepted", a, d)
			}
		}
	}
}

func TestUnpackAllocs(t *testing.T) {
	if raceOn {
		t.Skip("sync.Pool drops items at random under -race")
	}
	raw := jsonish(rand.New(rand.NewPCG(3, 4)), 2048)
	for _, a := range []Algo{LZ4, Zstd} {
		p, _ := Pack(nil, a, raw)
		dst := make([]byte, 0, 4096)
		scratch := make([]byte, 0, 4096)
		Unpack(dst, p)
		if n := testing.AllocsPerRun(100, func() { dst, _ = Unpack(dst, p) }); n != 0 {
			t.Errorf("%v Unpack: %v allocs", a, n)
		}
		if n := testing.AllocsPerRun(100, func() { scratch, _ = Pack(scratch, a, raw) }); n != 0 {
			t.Errorf("%v Pack: %v allocs", a, n)
		}
	}
}

func FuzzUnpack(f *testing.F) {
	raw := jsonish(rand.New(rand.NewPCG(5, 6)), 700)
	for _, a := range []Algo{LZ4, Zstd} {
		p, _ := Pack(nil, a, raw)
		f.Add(p)
		f.Add(p[:len(p)/2])
	}
	f.Add([]byte{0, 1, 0, 0, 1})
	f.Fuzz(func(t *testing.T, p []byte) {
		out, err := Unpack(nil, p)
		if err != nil {
			return
		}
		if len(out) != RawLen(p) {
			t.Fatalf("decoded %d bytes, header says %d", len(out), RawLen(p))
		}
		if uint64(len(out)) > zstdMaxRatio*uint64(len(p))+16 {
			t.Fatalf("decoded %d bytes from %d", len(out), len(p))
		}
	})
}

func BenchmarkCodec(b *testing.B) {
	raw := jsonish(rand.New(rand.NewPCG(9, 9)), 2048)
	for _, a := range []Algo{LZ4, Zstd} {
		p, _ := Pack(nil, a, raw)
		b.Run(a.String()+"/pack", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			var dst []byte
			for b.Loop() {
				dst, _ = Pack(dst, a, raw)
			}
		})
		b.Run(a.String()+"/unpack", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			var dst []byte
			for b.Loop() {
				dst, _ = Unpack(dst, p)
			}
		})
	}
}
