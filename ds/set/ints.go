package set

import (
	"math"
	"strconv"
)

// parseUint32 reports whether m is the canonical form of an integer in [0, 2^32), the members
// a roaring bitmap holds.
func parseUint32(m []byte) (uint32, bool) {
	if len(m) == 0 || len(m) > 10 || (m[0] == '0' && len(m) > 1) {
		return 0, false
	}
	var u uint64
	for _, c := range m {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if u > math.MaxUint32 {
		return 0, false
	}
	return uint32(u), true
}

// formatInt writes v's decimal form into buf's storage and returns it.
func formatInt(buf []byte, v int64) []byte { return strconv.AppendInt(buf[:0], v, 10) }

// rng is a splitmix64 generator: the data structures take a seed from the caller (so they stay
// deterministic and free of shared state) and draw as many numbers as they need from it.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// below returns a number in [0, n); n must be positive.
func (r *rng) below(n uint64) uint64 { return r.next() % n }
