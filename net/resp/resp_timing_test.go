package resp

import (
	"bytes"
	"strconv"
	"testing"
)

// pipeline30 is what a pipelining client (memtier, redis-benchmark -P 30) sends: 30 GET/SET commands
// with 256-byte values.
func pipeline30() []byte {
	value := string(bytes.Repeat([]byte("v"), 256))
	var b []byte
	for i := range 30 {
		key := "key:" + strconv.Itoa(100000+i)
		if i%2 == 0 {
			b = append(b, command("SET", key, value)...)
		} else {
			b = append(b, command("GET", key)...)
		}
	}
	return b
}

func BenchmarkParsePipeline(b *testing.B) {
	buf := pipeline30()
	lim := DefaultLimits()
	args := make([][]byte, 0, 8)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		for rest := buf; len(rest) > 0; {
			var n int
			args, n, _, _ = Parse(args[:0], rest, &lim)
			rest = rest[n:]
		}
	}
}

func BenchmarkParseInline(b *testing.B) {
	line := []byte("SET key:100000 " + string(bytes.Repeat([]byte("v"), 256)) + "\r\n")
	lim := DefaultLimits()
	args := make([][]byte, 0, 8)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		args, _, _, _ = Parse(args[:0], line, &lim)
	}
}

// BenchmarkEncodePipeline encodes the replies to pipeline30: 15 +OK and 15 256-byte bulks.
func BenchmarkEncodePipeline(b *testing.B) {
	value := bytes.Repeat([]byte("v"), 256)
	dst := make([]byte, 0, 16*1024)
	b.SetBytes(int64(len(encodePipeline(nil, value))))
	b.ReportAllocs()
	for b.Loop() {
		dst = encodePipeline(dst[:0], value)
	}
}

func encodePipeline(dst, value []byte) []byte {
	for i := range 30 {
		if i%2 == 0 {
			dst = AppendSimple(dst, "OK")
		} else {
			dst = AppendBulk(dst, value)
		}
	}
	return dst
}

func BenchmarkEncodeScalars(b *testing.B) {
	dst := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		d := AppendInt(dst[:0], 1234567)
		d = AppendBulkInt(d, -42)
		d = AppendArrayLen(d, 30)
		d = AppendNull(d, 2)
		dst = d
	}
}

func BenchmarkAppendDouble(b *testing.B) {
	dst := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendDouble(dst[:0], 2, 0.1)
	}
}
