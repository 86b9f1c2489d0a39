package bitmap

import "math"

// Overflow is BITFIELD's OVERFLOW behaviour.
type Overflow uint8

// The overflow behaviours.
const (
	Wrap Overflow = iota
	Sat
	Fail
)

// Field is a BITFIELD integer type: i1..i64 or u1..u63.
type Field struct {
	Bits   uint // 1..64
	Signed bool
}

// Get reads the field at bit offset off of b; bits past b's end read as zero.
func (f Field) Get(b []byte, off uint64) int64 {
	var v uint64
	for i := range uint64(f.Bits) {
		v = v<<1 | uint64(Bit(b, off+i))
	}
	if f.Signed && f.Bits < 64 && v&(1<<(f.Bits-1)) != 0 {
		v |= math.MaxUint64 << f.Bits // extend the sign
	}
	return int64(v)
}

// Set writes the low Bits of v at bit offset off of b, which must hold them.
func (f Field) Set(b []byte, off uint64, v int64) {
	for i := range uint64(f.Bits) {
		SetBit(b, off+i, int(uint64(v)>>(uint64(f.Bits)-1-i))&1)
	}
}

// Add returns what a field holding v becomes when incr is added to it under ow (SET stores v
// itself, as Add(v, 0)), and whether it overflowed. Under Fail an overflow writes nothing; the
// value returned then is meaningless.
func (f Field) Add(v, incr int64, ow Overflow) (int64, bool) {
	if f.Signed {
		return f.addSigned(v, incr, ow)
	}
	return f.addUnsigned(uint64(v), incr, ow)
}

func (f Field) addUnsigned(v uint64, incr int64, ow Overflow) (int64, bool) {
	limit := uint64(math.MaxUint64)
	if f.Bits < 64 {
		limit = 1<<f.Bits - 1
	}
	// Redis compares in signed 64-bit arithmetic: v may be a negative SET value seen unsigned.
	up, down := int64(limit-v), -int64(v)
	var sat uint64
	switch {
	case v > limit || (incr > 0 && incr > up):
		sat = limit
	case incr < 0 && incr < down:
		sat = 0
	default:
		return int64(v + uint64(incr)), false
	}
	if ow == Wrap {
		return int64((v + uint64(incr)) &^ (math.MaxUint64 << f.Bits)), true
	}
	return int64(sat), true
}

func (f Field) addSigned(v, incr int64, ow Overflow) (int64, bool) {
	hi := int64(math.MaxInt64)
	if f.Bits < 64 {
		hi = 1<<(f.Bits-1) - 1
	}
	lo := -hi - 1
	// Both differences may wrap; Redis only relies on them where they do not.
	up, down := int64(uint64(hi)-uint64(v)), lo-v
	var sat int64
	switch {
	case v > hi || (f.Bits != 64 && incr > up) || (v >= 0 && incr > 0 && incr > up):
		sat = hi
	case v < lo || (f.Bits != 64 && incr < down) || (v < 0 && incr < 0 && incr < down):
		sat = lo
	default:
		return v + incr, false
	}
	if ow != Wrap {
		return sat, true
	}
	c := uint64(v) + uint64(incr)
	if f.Bits < 64 {
		if c&(1<<(f.Bits-1)) != 0 {
			c |= math.MaxUint64 << f.Bits
		} else {
			c &^= math.MaxUint64 << f.Bits
		}
	}
	return int64(c), true
}
