package main

// The datasets are pseudo-random but fixed: member i of a dataset is a function of i and the seed,
// so two servers get the same bytes in the same order, and distinct i give distinct members
// without a set of the members drawn so far.

const mask63 = 1<<63 - 1

// mix63 is a bijection of [0, 2^63) that scatters consecutive numbers: multiplication by an odd
// constant and xor with a right shift are each invertible modulo 2^63, so distinct inputs give
// distinct outputs.
func mix63(x, seed uint64) uint64 {
	x = (x ^ seed) & mask63
	x = (x * 0xbf58476d1ce4e5b9) & mask63
	x ^= x >> 31
	x = (x * 0x94d049bb133111eb) & mask63
	x ^= x >> 29
	x = (x * 0xd6e8feb86659fd93) & mask63
	return x ^ x>>32
}

const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// appendWord appends n alphanumeric characters that depend on i and seed; each run of ten comes
// from its own draw (62^10 < 2^63).
func appendWord(dst []byte, i, seed uint64, n int) []byte {
	var x uint64
	for c := range n {
		if c%10 == 0 {
			x = mix63(i, seed+uint64(c)*0x9e3779b97f4a7c15)
		}
		dst = append(dst, alphabet[x%62])
		x /= 62
	}
	return dst
}

// appendUniqueWord appends a 16-byte string that is distinct for each i: its first 11 characters
// are mix63(i) in base 62 (62^11 > 2^63, so they alone tell i apart), the last 5 come from a
// second, independent draw.
func appendUniqueWord(dst []byte, i, seed uint64) []byte {
	x := mix63(i, seed)
	for range 11 {
		dst = append(dst, alphabet[x%62])
		x /= 62
	}
	return appendWord(dst, i, ^seed, 5)
}

// unitFloat is a float64 in [0, 1) with 53 random bits.
func unitFloat(i, seed uint64) float64 {
	return float64(mix63(i, seed)>>10) / (1 << 53)
}
