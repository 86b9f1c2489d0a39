package bitmap

import "encoding/binary"

// Op is a BITOP operation.
type Op uint8

// The BITOP operations.
const (
	And Op = iota
	Or
	Xor
	Not
)

// Apply computes op over srcs into dst[:0] (reusing its storage when it fits) and returns it: as
// long as the longest source, shorter sources read as zero bytes past their end. Not takes one
// source. dst must not overlap any source.
func Apply(op Op, dst []byte, srcs [][]byte) []byte {
	n := 0
	for _, s := range srcs {
		n = max(n, len(s))
	}
	if n == 0 {
		return dst[:0]
	}
	dst = Grow(dst[:0], n)
	if op == Not {
		s := srcs[0]
		i := 0
		for ; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(dst[i:], ^binary.LittleEndian.Uint64(s[i:]))
		}
		for ; i < n; i++ {
			dst[i] = ^s[i]
		}
		return dst
	}
	copy(dst, srcs[0]) // Grow zeroed the rest
	for _, s := range srcs[1:] {
		combine(op, dst, s)
	}
	if op == And {
		for _, s := range srcs {
			clear(dst[len(s):]) // a shorter source's missing bytes are zeros
		}
	}
	return dst
}

// combine applies op of dst and s into dst over s's length.
func combine(op Op, dst, s []byte) {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		a, b := binary.LittleEndian.Uint64(dst[i:]), binary.LittleEndian.Uint64(s[i:])
		switch op {
		case And:
			a &= b
		case Or:
			a |= b
		case Xor:
			a ^= b
		}
		binary.LittleEndian.PutUint64(dst[i:], a)
	}
	for ; i < len(s); i++ {
		switch op {
		case And:
			dst[i] &= s[i]
		case Or:
			dst[i] |= s[i]
		case Xor:
			dst[i] ^= s[i]
		}
	}
}
