// Package compress holds HotKV's compressed string values (value-compression): the only user of
// the lz4 and zstd libraries.
//
// A packed value is a header and a body:
//
//	[0:4] the raw length, little-endian (ds/keyspace reads it: STRLEN and the INFO counters)
//	[4]   the algorithm (LZ4 or Zstd)
//	[5:]  an LZ4 block, or a single zstd frame without checksum
//
// Pack keeps a value only when it saves at least an eighth of the raw bytes, so an
// incompressible value costs one bounded attempt and stays raw. Unpack trusts nothing in its
// input: a declared length is checked against the body's size and the algorithm's best ratio
// before anything is reserved for it.
package compress

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Algo is a compression algorithm.
type Algo uint8

// The algorithms; None means values are stored raw.
const (
	None Algo = iota
	LZ4
	Zstd
)

// String is the algorithm's name in value-compression.
func (a Algo) String() string {
	switch a {
	case LZ4:
		return "lz4"
	case Zstd:
		return "zstd"
	}
	return "no"
}

// HeaderLen is the length of a packed value's header.
const HeaderLen = 5

// MaxRaw is the longest raw value a packed value may declare (an Entry's 32-bit length).
const MaxRaw = 1<<32 - 1

// Best ratios the formats can reach, raw bytes per body byte, rounded up: an LZ4 sequence of 1
// token byte and 2 offset bytes plus 255 per length byte gives under 255; a zstd RLE block is 4
// bytes for up to 128 KiB.
const (
	lz4MaxRatio  = 255
	zstdMaxRatio = 128 << 10 / 4
)

// Errors of Unpack.
var (
	ErrHeader  = errors.New("compress: bad header")
	ErrCorrupt = errors.New("compress: corrupt body")
)

var (
	lz4Pool = sync.Pool{New: func() any { return new(lz4.Compressor) }}

	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
)

// zstdCodecs returns the process's zstd encoder and decoder; both are safe for concurrent use
// through EncodeAll and DecodeAll.
func zstdCodecs() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		var err error
		zstdEnc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderCRC(false), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true),
			zstd.WithSingleSegment(true), zstd.WithZeroFrames(true))
		if err != nil {
			panic("BUG: zstd encoder options: " + err.Error())
		}
		zstdDec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(MaxRaw), zstd.WithDecodeAllCapLimit(true), zstd.IgnoreChecksum(true))
		if err != nil {
			panic("BUG: zstd decoder options: " + err.Error())
		}
	})
	return zstdEnc, zstdDec
}

// Worth reports whether a packed form of n bytes is worth keeping for a raw value of raw bytes:
// it must save at least an eighth.
func Worth(n, raw int) bool { return n <= raw-raw/8 }

// Pack compresses raw with a, appending the packed value to dst[:0]; ok is false (and dst's
// contents undefined) when a is None, raw is longer than MaxRaw, or the packed form would not
// save an eighth of raw. The work is bounded by len(raw): LZ4 stops when its output passes the
// budget.
func Pack(dst []byte, a Algo, raw []byte) (packed []byte, ok bool) {
	if a == None || uint64(len(raw)) > MaxRaw || len(raw) < 8 {
		return dst, false
	}
	budget := len(raw) - len(raw)/8 // the longest packed value worth keeping
	if budget <= HeaderLen {
		return dst, false
	}
	dst = append(dst[:0], 0, 0, 0, 0, byte(a))
	binary.LittleEndian.PutUint32(dst, uint32(len(raw)))
	switch a {
	case LZ4:
		dst = grow(dst, budget)
		c := lz4Pool.Get().(*lz4.Compressor)
		n, err := c.CompressBlock(raw, dst[HeaderLen:budget])
		lz4Pool.Put(c)
		if err != nil || n == 0 {
			return dst[:0], false
		}
		dst = dst[:HeaderLen+n]
	case Zstd:
		enc, _ := zstdCodecs()
		dst = enc.EncodeAll(raw, dst)
	default:
		return dst[:0], false
	}
	if len(dst) > budget {
		return dst[:0], false
	}
	return dst, true
}

// grow returns b with a length of n, keeping its first len(b) bytes.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	nb := make([]byte, n)
	copy(nb, b)
	return nb
}

// RawLen returns the raw length a packed value declares, or -1 when p is too short to be one.
func RawLen(p []byte) int {
	if len(p) < HeaderLen {
		return -1
	}
	return int(binary.LittleEndian.Uint32(p))
}

// Unpack decompresses the packed value p into dst's storage (grown when too small) and returns
// the raw bytes. It never panics: a header that names no algorithm, a raw length the body could
// not hold, and a body that does not decode to exactly that length are errors. Nothing is
// allocated beyond the raw length once it passed those checks.
func Unpack(dst, p []byte) ([]byte, error) {
	n := RawLen(p)
	if n < 0 {
		return dst[:0], ErrHeader
	}
	body := p[HeaderLen:]
	var ratio uint64
	switch Algo(p[4]) {
	case LZ4:
		ratio = lz4MaxRatio
	case Zstd:
		ratio = zstdMaxRatio
	default:
		return dst[:0], ErrHeader
	}
	if uint64(n) > ratio*uint64(len(body))+16 {
		return dst[:0], ErrHeader
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	switch Algo(p[4]) {
	case LZ4:
		m, err := lz4.UncompressBlock(body, dst)
		if err != nil || m != n {
			return dst[:0], ErrCorrupt
		}
	case Zstd:
		_, dec := zstdCodecs()
		out, err := dec.DecodeAll(body, dst[:0])
		if err != nil || len(out) != n || (n > 0 && &out[0] != &dst[0]) {
			return dst[:0], ErrCorrupt
		}
	}
	return dst, nil
}
