package rdb

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

const benchKeys = 1_000_000

// benchValues are 256-byte values: random bytes (LZF gives up on them, as on
// most real payloads) or text-like ones (LZF shrinks them).
func benchValue(text bool) []byte {
	r := rand.New(rand.NewPCG(1, 1))
	b := make([]byte, 256)
	for i := range b {
		if text {
			b[i] = "abcdefgh ijklmnop"[r.IntN(17)]
		} else {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

// BenchmarkEncodeStrings encodes 256-byte string keys as the snapshotter
// would: one key an operation, the chunk handed off (reset) every 4096 keys,
// keys cycling through 1,000,000 names.
func BenchmarkEncodeStrings(b *testing.B) {
	for _, bc := range []struct {
		name     string
		compress bool
		text     bool
	}{{"plain", false, false}, {"lzf-random", true, false}, {"lzf-text", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			val := benchValue(bc.text)
			e := &Encoder{Compress: bc.compress}
			key := make([]byte, 0, 32)
			b.ReportAllocs()
			b.SetBytes(int64(len(val) + len("key:") + 6))
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				key = strconv.AppendInt(append(key[:0], "key:"...), int64(i%benchKeys), 10)
				e.StringValue(key, val)
				if i%4096 == 4095 {
					e.Buf = e.Buf[:0]
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "keys/s")
		})
	}
}

// BenchmarkDecodeStrings decodes a file of 1,000,000 256-byte string keys
// (100,000 distinct records replayed ten times, checksum 0), one key an
// operation, from an io.Reader.
func BenchmarkDecodeStrings(b *testing.B) {
	val := benchValue(false)
	e := &Encoder{}
	for i := range benchKeys / 10 {
		e.StringValue([]byte("key:"+strconv.Itoa(i)), val)
	}
	body := e.Buf
	head := []byte("REDIS0010")
	tail := append([]byte{OpEOF}, make([]byte, 8)...)
	open := func() *Decoder {
		rs := []io.Reader{bytes.NewReader(head)}
		for range 10 {
			rs = append(rs, bytes.NewReader(body))
		}
		return NewDecoder(io.MultiReader(append(rs, bytes.NewReader(tail))...))
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body) / (benchKeys / 10)))
	d := open()
	start := time.Now()
	for b.Loop() {
		rec, err := d.Next()
		if err == io.EOF {
			d = open()
			rec, err = d.Next()
		}
		if err != nil || len(rec.Value.Str) != 256 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "keys/s")
}

func BenchmarkCRC64(b *testing.B) {
	buf := benchValue(false)
	buf = bytes.Repeat(buf, 4096) // 1 MiB
	b.SetBytes(int64(len(buf)))
	var c uint64
	for b.Loop() {
		c = CRC64(c, buf)
	}
}

func BenchmarkLZF(b *testing.B) {
	src := bytes.Repeat(benchValue(true), 256) // 64 KiB of text-like bytes
	var t lzfTable
	comp, _ := t.compress(nil, src, -1)
	b.Run("compress", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		var out []byte
		for b.Loop() {
			out, _ = t.compress(out[:0], src, -1)
		}
		b.ReportMetric(float64(len(src))/float64(len(out)), "ratio")
	})
	b.Run("decompress", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		var out []byte
		for b.Loop() {
			out, _ = LZFDecompress(out[:0], comp, len(src))
		}
	})
}
