package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"testing/iotest"
)

// seedFiles are whole files for FuzzDecoder: the file recorded from
// redis-server 7.0.15, the ziplist-era file, and our own encoding, each also
// with its checksum zeroed so mutations reach past the CRC.
func seedFiles(tb testing.TB) [][]byte {
	rec, err := os.ReadFile("testdata/redis-7.0.15.rdb")
	if err != nil {
		tb.Fatal(err)
	}
	old, _ := ziplistEraFile()
	ours := encodeAll(decodeAll(tb, rec), true)
	var out [][]byte
	for _, f := range [][]byte{rec, old, ours} {
		z := bytes.Clone(f)
		clear(z[len(z)-8:])
		out = append(out, f, z)
	}
	return out
}

// decodeDigest decodes a whole input and describes every record and the
// final error, so two readings of one input can be compared.
func decodeDigest(r io.Reader) (string, error) { return digestOf(NewDecoder(r)) }

func digestOf(d *Decoder) (string, error) {
	var sb bytes.Buffer
	for range 100000 {
		rec, err := d.Next()
		if err != nil {
			if err != io.EOF && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrModuleAux) &&
				!errors.Is(err, ErrModuleType) && !errors.Is(err, ErrFunctionPre) {
				return "", fmt.Errorf("error of no known kind: %w", err)
			}
			fmt.Fprintf(&sb, "end %v", err)
			return sb.String(), nil
		}
		fmt.Fprintf(&sb, "%d %q %q %d %q %d|", rec.Kind, rec.AuxKey, rec.Key, rec.ExpireMs, rec.Value.Encoding, len(rec.Value.Elems)+len(rec.Value.Fields)+len(rec.Value.Members))
	}
	return sb.String(), nil
}

// FuzzDecoder decodes whole files, read at once, one byte at a time and in
// place (NewDecoderBytes): no
// panic, an error of a known kind, and the same outcome both ways.
func FuzzDecoder(f *testing.F) {
	for _, s := range seedFiles(f) {
		f.Add(s)
	}
	// Small files of one key each, so mutations stay cheap.
	for _, obj := range seedObjects(f) {
		if len(obj) > 2000 {
			continue
		}
		b := append([]byte("REDIS0010"), OpSelectDB, 0, obj[0], 1, 'k')
		b = append(append(b, obj[1:]...), OpEOF)
		f.Add(append(b, make([]byte, 8)...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := decodeDigest(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		c, err := decodeDigest(iotest.OneByteReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatal(err)
		}
		if a != c {
			t.Fatalf("whole and byte-at-a-time reads differ:\n%.500s\n%.500s", a, c)
		}
		if c, _ = digestOf(NewDecoderBytes(b)); a != c {
			t.Fatalf("reader and in-place reads differ:\n%.500s\n%.500s", a, c)
		}
	})
}

// seedObjects are DUMP objects of every key of the seed files.
func seedObjects(tb testing.TB) [][]byte {
	var out [][]byte
	e := &Encoder{OmitKey: true}
	for _, f := range seedFiles(tb)[:4] {
		dec := decodeAll(tb, f)
		for _, v := range dec.values {
			e.Buf = e.Buf[:0]
			encodeValue(e, nil, &v)
			out = append(out, bytes.Clone(e.Buf))
		}
	}
	return out
}

// FuzzDecodeObject decodes DUMP objects: no panic, and whatever decodes
// encodes again to an object that decodes to the same contents.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range seedObjects(f) {
		if len(s) <= 4000 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeObject(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrModuleType) {
				t.Fatalf("error of no known kind: %v", err)
			}
			return
		}
		if v.Type == ValStream && !streamConsistent(v.Stream) {
			return // the Encoder writes what it is given; an inconsistent stream need not round-trip
		}
		e := &Encoder{OmitKey: true}
		encodeValue(e, nil, &v)
		w, err := DecodeObject(e.Buf)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", v.Encoding, err)
		}
		if a, b := modelOf(&v, -1), modelOf(&w, -1); !modelEqual(withoutEnc(a), withoutEnc(b)) {
			t.Fatalf("round trip differs:\n%+v\n%+v", a, b)
		}
	})
}

func withoutEnc(m keyModel) keyModel { m.Enc = ""; return m }

// streamConsistent reports whether entry IDs ascend and every entry has pairs.
func streamConsistent(s *Stream) bool {
	for i, e := range s.Entries {
		if len(e.Fields)%2 != 0 || i > 0 && !(s.Entries[i-1].ID.Ms < e.ID.Ms ||
			s.Entries[i-1].ID.Ms == e.ID.Ms && s.Entries[i-1].ID.Seq < e.ID.Seq) {
			return false
		}
	}
	return true
}

// TestDeclaredLengthsAllocateLittle: tiny inputs declaring huge lengths fail
// cleanly and allocate about what their bytes justify (plus the decoder's
// fixed 64 KiB window), never the declared size.
func TestDeclaredLengthsAllocateLittle(t *testing.T) {
	huge := func(n uint64) []byte { return binary.BigEndian.AppendUint64([]byte{0x81}, n) }
	file := func(body ...[]byte) []byte {
		return append([]byte("REDIS0010"), bytes.Join(body, nil)...)
	}
	cases := map[string][]byte{
		"aux string 2^40":    file([]byte{OpAux}, huge(1<<40), []byte("abc")),
		"key string 2^40":    file([]byte{TypeString}, huge(1<<40), []byte("k")),
		"set of 2^31 - 1":    file([]byte{TypeSet, 1, 'k', 0x80, 0x7f, 0xff, 0xff, 0xff, 1, 'a'}),
		"list nodes 2^31-1":  file([]byte{TypeListQuicklist2, 1, 'k', 0x80, 0x7f, 0xff, 0xff, 0xff, 2, 0}),
		"lzf 2^31 from 3":    file([]byte{TypeString, 1, 'k', 0xc3, 3, 0x80, 0x7f, 0xff, 0xff, 0xff, 0, 'a', 0}),
		"stream nodes 2^31":  file([]byte{TypeStreamListpacks2, 1, 'k', 0x80, 0x7f, 0xff, 0xff, 0xff}),
		"zset2 of 2^40":      file([]byte{TypeZSet2, 1, 'k'}, huge(1<<40)),
		"listpack of 2^32-1": file([]byte{TypeHashListpack, 1, 'k', 0x80, 0xff, 0xff, 0xff, 0xff, 1, 2, 3}),
	}
	for name, b := range cases {
		if err := decodeErr(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want a corrupt-file error", name, err)
		}
		if n := bytesAllocated(func() { decodeErr(b) }); n > 80<<10 {
			t.Errorf("%s: %d bytes allocated", name, n)
		}
		obj := b[9:]
		if obj[0] == OpAux {
			continue
		}
		if obj[1] == 1 && obj[2] == 'k' { // a DUMP object has no key
			obj = append([]byte{obj[0]}, obj[3:]...)
		}
		if _, err := DecodeObject(obj); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s as DUMP object: %v", name, err)
		}
		if n := bytesAllocated(func() { DecodeObject(obj) }); n > 4<<10 {
			t.Errorf("%s as DUMP object: %d bytes allocated", name, n)
		}
	}
}
