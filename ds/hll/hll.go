// Package hll is Redis's HyperLogLog (hyperloglog.c) on the bytes of a string value: the 16-byte
// "HYLL" header with its cached cardinality, the sparse encoding (ZERO, XZERO and VAL opcodes)
// and the dense one (16384 6-bit registers), MurmurHash64A with Redis's seed, and the estimator
// of Redis 7 (Ertl's improved raw estimator). The bytes are exactly Redis's, so a value moves
// between the two servers (GET, SET, DUMP) unchanged.
//
// Every function accepts arbitrary bytes: a value that is not a valid HLL is refused by Check,
// and a corrupted body (which Check cannot see) gives ok false, never a panic or a read out of
// bounds.
package hll

import "encoding/binary"

// The layout.
const (
	P          = 14       // index bits
	Q          = 64 - P   // bits left for the run of zeros
	Registers  = 1 << P   // 16384
	regBits    = 6        // a dense register's width
	regMax     = 1<<6 - 1 // 63
	HeaderSize = 16       // "HYLL", encoding, 3 unused bytes, 8-byte cardinality
	DenseSize  = HeaderSize + (Registers*regBits+7)/8
	seed       = 0xadc83b19
)

// Encodings, the header's fifth byte.
const (
	Dense  = 0
	Sparse = 1
)

// Sparse opcodes' limits.
const (
	zeroMaxLen  = 64
	xzeroMaxLen = 16384
	valMaxValue = 32
	valMaxLen   = 4
)

// New returns an empty HLL as Redis creates it: sparse, one XZERO covering every register, the
// cached cardinality 0 and valid.
func New() []byte {
	b := make([]byte, HeaderSize+2, HeaderSize+8)
	copy(b, "HYLL")
	b[4] = Sparse
	putXZero(b[HeaderSize:], Registers)
	return b
}

// Check reports whether b is a valid HyperLogLog string as Redis's isHLLObjectOrReply decides:
// a header with the magic and a known encoding, and a dense one of exactly DenseSize bytes. The
// sparse body is checked only as it is read.
func Check(b []byte) bool {
	if len(b) < HeaderSize || string(b[:4]) != "HYLL" || b[4] > Sparse {
		return false
	}
	return b[4] != Dense || len(b) == DenseSize
}

// Encoding returns b's encoding (Dense or Sparse); b must have passed Check.
func Encoding(b []byte) int { return int(b[4]) }

// Cached returns the cardinality cached in the header and whether it is valid.
func Cached(b []byte) (uint64, bool) {
	return binary.LittleEndian.Uint64(b[8:16]), b[15]&0x80 == 0
}

// SetCached stores n as the cached cardinality.
func SetCached(b []byte, n uint64) { binary.LittleEndian.PutUint64(b[8:16], n) }

// Invalidate marks the cached cardinality stale.
func Invalidate(b []byte) { b[15] |= 0x80 }

// hashElement is Redis's hllPatLen: the register an element goes to and the length of the run of
// zeros after the index bits, plus one.
func hashElement(ele []byte) (index int, count uint8) {
	h := murmur64A(ele, seed)
	index = int(h & (Registers - 1))
	h >>= P
	h |= 1 << Q // the run ends within Q bits
	n := uint8(1)
	for h&1 == 0 {
		n++
		h >>= 1
	}
	return index, n
}

// murmur64A is MurmurHash64A as Redis computes it, reading 8-byte blocks little-endian.
func murmur64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ uint64(len(key))*m
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// Add adds ele to the HLL b (which passed Check) and returns the bytes, which may have moved
// (a sparse value grows, or turns dense past maxSparse() bytes, hll-sparse-max-bytes, which is
// called only when a sparse value would grow). changed says whether a register rose; ok is false
// for a corrupted sparse body.
func Add(b, ele []byte, maxSparse func() int) (out []byte, changed, ok bool) {
	index, count := hashElement(ele)
	return SetRegister(b, index, count, maxSparse)
}

// SetRegister raises register index of b to count if it is lower, as Add does.
func SetRegister(b []byte, index int, count uint8, maxSparse func() int) (out []byte, changed, ok bool) {
	if b[4] == Dense {
		return b, denseSet(b[HeaderSize:], index, count), true
	}
	return sparseSet(b, index, count, maxSparse)
}

// denseGet and denseSet read and write 6-bit register i, packed from the low bits of each byte.
// The last register ends inside the last byte (Redis reads the byte after it, the string's NUL,
// and writes nothing there).
func denseGet(regs []byte, i int) uint8 {
	byt, fb := i*regBits/8, uint(i*regBits&7)
	v := uint(regs[byt]) >> fb
	if fb > 8-regBits {
		v |= uint(regs[byt+1]) << (8 - fb)
	}
	return uint8(v & regMax)
}

// unpack4 returns the four registers three dense bytes hold (denseGet's layout, four at a time).
func unpack4(b0, b1, b2 byte) [4]uint8 {
	return [4]uint8{b0 & regMax, (b0>>6 | b1<<2) & regMax, (b1>>4 | b2<<4) & regMax, b2 >> 2}
}

func denseSet(regs []byte, i int, v uint8) bool {
	if v <= denseGet(regs, i) {
		return false
	}
	denseStore(regs, i, v)
	return true
}

func denseStore(regs []byte, i int, v uint8) {
	byt, fb := i*regBits/8, uint(i*regBits&7)
	regs[byt] = regs[byt]&^byte(regMax<<fb) | byte(uint(v)<<fb)
	if fb > 8-regBits {
		regs[byt+1] = regs[byt+1]&^byte(regMax>>(8-fb)) | byte(uint(v)>>(8-fb))
	}
}

// ReadRegisters fills regs with the register values of b (which passed Check), as DENSE or after
// decoding the sparse opcodes; ok is false when the sparse opcodes do not cover exactly
// Registers registers.
func ReadRegisters(b []byte, regs *[Registers]uint8) bool {
	*regs = [Registers]uint8{}
	return MaxInto(regs, b)
}

// MaxInto raises each of regs to b's register where b's is higher (Redis's hllMerge); ok is
// false for a corrupted sparse body.
func MaxInto(regs *[Registers]uint8, b []byte) bool {
	if b[4] == Dense {
		body := b[HeaderSize:DenseSize]
		for i, j := 0, 0; j+3 <= len(body); i, j = i+4, j+3 {
			r := unpack4(body[j], body[j+1], body[j+2])
			regs[i] = max(regs[i], r[0])
			regs[i+1] = max(regs[i+1], r[1])
			regs[i+2] = max(regs[i+2], r[2])
			regs[i+3] = max(regs[i+3], r[3])
		}
		return true
	}
	i := 0
	for p := HeaderSize; p < len(b); {
		op, n := opAt(b, p)
		if op.val == 0 {
			i += op.run
			p += n
			continue
		}
		if i+op.run > Registers {
			return false
		}
		for range op.run {
			regs[i] = max(regs[i], op.val)
			i++
		}
		p += n
	}
	return i == Registers
}

// Fixed returns a limit for Add that is always n.
func Fixed(n int) func() int { return func() int { return n } }
