package hll

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"testing"
)

// The reference is a plain array of registers raised by each element's (index, count) pair;
// the encoded HLL must decode to it after every add, whatever its encoding, and count as it does.

func TestAddAgainstRegisters(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, maxSparse := range []int{0, 40, 300, 3000, 20000} {
		b := New()
		var ref, got [Registers]uint8
		for i := range 30000 {
			ele := []byte(strconv.FormatUint(r.Uint64()%50000, 10))
			idx, cnt := hashElement(ele)
			up := cnt > ref[idx]
			ref[idx] = max(ref[idx], cnt)
			nb, changed, ok := Add(b, ele, Fixed(maxSparse))
			if !ok || changed != up {
				t.Fatalf("maxSparse %d add %d: changed %v ok %v, reference rose %v", maxSparse, i, changed, ok, up)
			}
			b = nb
			if Encoding(b) == Sparse && len(b) > max(maxSparse, HeaderSize+2) {
				t.Fatalf("maxSparse %d: sparse HLL of %d bytes", maxSparse, len(b))
			}
			if i%997 != 0 && i > 50 {
				continue
			}
			if !Check(b) || !ReadRegisters(b, &got) || got != ref {
				t.Fatalf("maxSparse %d add %d: registers differ from the reference", maxSparse, i)
			}
			n, ok := Count(b)
			if want := CountRegisters(&ref); !ok || n != want {
				t.Fatalf("maxSparse %d add %d: Count %d %v, of the registers %d", maxSparse, i, n, ok, want)
			}
		}
	}
}

// TestSparseCoversRegisters checks that a long run of sparse updates keeps the opcodes covering
// exactly Registers registers, with no zero-length or over-long run.
func TestSparseCoversRegisters(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	b := New()
	var ele [8]byte
	for range 2000 {
		binary.LittleEndian.PutUint64(ele[:], r.Uint64())
		b, _, _ = Add(b, ele[:], Fixed(1<<20))
	}
	if Encoding(b) != Sparse {
		t.Fatal("2000 elements made the HLL dense with no size limit")
	}
	n := 0
	for p := HeaderSize; p < len(b); {
		o, size := opAt(b, p)
		if o.val != 0 && (o.run > valMaxLen || o.val > valMaxValue) {
			t.Fatalf("VAL opcode %+v at %d", o, p)
		}
		n += o.run
		p += size
	}
	if n != Registers {
		t.Fatalf("sparse opcodes cover %d registers", n)
	}
}

func TestMurmurBlocksAndTail(t *testing.T) {
	// Every length from 0 to 24 goes through the tail switch and the 8-byte blocks; the hash
	// must depend on every byte and on the length.
	seen := map[uint64]int{}
	buf := make([]byte, 25)
	for n := range len(buf) {
		h := murmur64A(buf[:n], seed)
		if m, dup := seen[h]; dup {
			t.Fatalf("length %d and %d of zero bytes hash alike", n, m)
		}
		seen[h] = n
		for i := range n {
			buf[i] ^= 1
			if murmur64A(buf[:n], seed) == h {
				t.Fatalf("byte %d of %d does not change the hash", i, n)
			}
			buf[i] ^= 1
		}
	}
}

func TestSelfTest(t *testing.T) {
	if msg := SelfTest(); msg != "" {
		t.Fatal(msg)
	}
}

// FuzzDecode runs every reader and writer on arbitrary bytes that pass Check: none may panic or
// read out of bounds, and a sparse body that counts as valid decodes, converts and merges alike.
func FuzzDecode(f *testing.F) {
	f.Add(New())
	d, _ := ToDense(New())
	f.Add(d)
	b := New()
	for i := range 300 {
		b, _, _ = Add(b, []byte(strconv.Itoa(i)), Fixed(3000))
	}
	f.Add(b)
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f"))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x80"))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x3f\x7f\xbf\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !Check(b) {
			return
		}
		orig := bytes.Clone(b)
		n, countOK := Count(b)
		var regs [Registers]uint8
		mergeOK := MaxInto(&regs, b)
		dense, denseOK := ToDense(b)
		AppendDecode(nil, b)
		if countOK && (!mergeOK || !denseOK) {
			t.Fatalf("Count accepts what MaxInto (%v) or ToDense (%v) refuses", mergeOK, denseOK)
		}
		if countOK {
			if m := CountRegisters(&regs); m != n {
				t.Fatalf("Count %d, of the merged registers %d", n, m)
			}
			if dn, _ := Count(dense); dn != n {
				t.Fatalf("Count %d, of the dense form %d", n, dn)
			}
		}
		if !bytes.Equal(b, orig) {
			t.Fatal("a reader changed the value")
		}
		for i := range 20 {
			nb, _, ok := Add(b, []byte{byte(i), byte(len(b))}, Fixed(3000))
			if !ok {
				break
			}
			b = nb
		}
		SetRegister(b, int(orig[len(orig)-1])<<6%Registers, 40, Fixed(3000))
	})
}

func TestUnpackMatchesDenseGet(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	body := make([]byte, DenseSize-HeaderSize)
	for i := range body {
		body[i] = byte(r.Uint32())
	}
	for j := 0; j < len(body); j += 3 {
		u := unpack4(body[j], body[j+1], body[j+2])
		for k := range 4 {
			if want := denseGet(body, j/3*4+k); u[k] != want {
				t.Fatalf("register %d: unpack4 %d, denseGet %d", j/3*4+k, u[k], want)
			}
		}
	}
}
