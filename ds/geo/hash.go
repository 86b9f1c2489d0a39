// Package geo is Redis's geospatial arithmetic: the 52-bit interleaved geohash a point is stored
// as (a sorted-set score), its decoding back to the centre of its cell, the haversine distance
// on Redis's earth, and the nine geohash boxes a radius or box search scans. It knows nothing of
// sorted sets or RESP: the caller walks the score ranges Boxes returns and asks Shape.Within of
// each score it meets.
//
// Every formula follows Redis 7.0.15's geohash.c, geohash_helper.c and geo.c operation for
// operation, in float64, with explicit conversions where Go could otherwise fuse a multiply and
// an add, so that the same inputs give the same bits: the same members in the same order with the
// same digits. Invariants:
//
//  1. Encode(lon, lat) is the score GEOADD stores; Decode(score) the position GEOPOS answers.
//  2. A point a search returns has Within's distance, computed from the decoded position.
//  3. Boxes lists the ranges in Redis's order (centre, N, S, E, W, NE, NW, SE, SW), without the
//     boxes Redis excludes or skips, so a walk in that order meets members in Redis's order.
package geo

// The limits of EPSG:900913 that Redis encodes within: latitudes beyond ±85.05112878 cannot be
// stored.
const (
	LongMin = -180.0
	LongMax = 180.0
	LatMin  = -85.05112878
	LatMax  = 85.05112878
	// StepMax is the precision of a stored point: 26 bits of longitude and 26 of latitude.
	StepMax = 26
)

// Hash is a geohash of step bits per coordinate: latitude in the even bits, longitude in the odd.
type Hash struct {
	Bits uint64
	Step uint8
}

func (h Hash) zero() bool { return h.Bits == 0 && h.Step == 0 }

// Range is a coordinate interval.
type Range struct{ Min, Max float64 }

var (
	wgsLong = Range{LongMin, LongMax}
	wgsLat  = Range{LatMin, LatMax}
	// stdLat is the latitude range of the standard geohash GEOHASH answers in.
	stdLat = Range{-90, 90}
)

// spread moves the low 32 bits of v to the even bit positions.
func spread(v uint64) uint64 {
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	v = (v | v<<8) & 0x00FF00FF00FF00FF
	v = (v | v<<4) & 0x0F0F0F0F0F0F0F0F
	v = (v | v<<2) & 0x3333333333333333
	return (v | v<<1) & 0x5555555555555555
}

// squeeze gathers the even bits of v into its low 32 bits.
func squeeze(v uint64) uint64 {
	v &= 0x5555555555555555
	v = (v | v>>1) & 0x3333333333333333
	v = (v | v>>2) & 0x0F0F0F0F0F0F0F0F
	v = (v | v>>4) & 0x00FF00FF00FF00FF
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	return (v | v>>16) & 0x00000000FFFFFFFF
}

// encode is geohashEncode: the cell of (lon, lat) at step within the ranges. It fails outside
// the WGS84 limits, whatever the ranges.
func encode(longR, latR Range, lon, lat float64, step uint8) (Hash, bool) {
	if step > 32 || step == 0 || lon > LongMax || lon < LongMin || lat > LatMax || lat < LatMin ||
		lat < latR.Min || lat > latR.Max || lon < longR.Min || lon > longR.Max {
		return Hash{}, false
	}
	latOff := (lat - latR.Min) / (latR.Max - latR.Min)
	longOff := (lon - longR.Min) / (longR.Max - longR.Min)
	cells := float64(uint64(1) << step)
	latOff *= cells
	longOff *= cells
	// The offsets are at most 2^step (a point on the upper limit), so they fit 32 bits.
	return Hash{Bits: spread(uint64(uint32(latOff))) | spread(uint64(uint32(longOff)))<<1, Step: step}, true
}

// Align52 shifts a hash of any step to the 52-bit scale of stored scores.
func Align52(h Hash) uint64 { return h.Bits << (52 - 2*uint(h.Step)) }

// Encode returns the score GEOADD stores for a point, and false outside the WGS84 limits.
func Encode(lon, lat float64) (uint64, bool) {
	h, ok := encode(wgsLong, wgsLat, lon, lat, StepMax)
	return Align52(h), ok
}

// area is a decoded cell.
type area struct{ long, lat Range }

// decode is geohashDecode: the cell a hash names.
func decode(longR, latR Range, h Hash) (area, bool) {
	if h.zero() {
		return area{}, false
	}
	ilat, ilong := uint32(squeeze(h.Bits)), uint32(squeeze(h.Bits>>1))
	cells := float64(uint64(1) << h.Step)
	latScale, longScale := latR.Max-latR.Min, longR.Max-longR.Min
	var a area
	a.lat.Min = cellEdge(latR.Min, ilat, cells, latScale)
	a.lat.Max = cellEdge(latR.Min, ilat+1, cells, latScale) // wraps at 2^32 as Redis's does
	a.long.Min = cellEdge(longR.Min, ilong, cells, longScale)
	a.long.Max = cellEdge(longR.Min, ilong+1, cells, longScale)
	return a, true
}

// cellEdge is min + i/cells*scale, rounded after each operation.
func cellEdge(min float64, i uint32, cells, scale float64) float64 {
	q := float64(i) / cells
	return min + float64(q*scale)
}

// centre is geohashDecodeAreaToLongLat: the middle of the cell, clamped to the limits.
func (a area) centre() (lon, lat float64) {
	lon = min(max((a.long.Min+a.long.Max)/2, LongMin), LongMax)
	lat = min(max((a.lat.Min+a.lat.Max)/2, LatMin), LatMax)
	return lon, lat
}

// Decode returns the position a score stands for, as GEOPOS answers it. Any score decodes, as
// in Redis: one no GEOADD wrote (a ZADD's) gives a clamped position.
func Decode(score float64) (lon, lat float64) {
	a, _ := decode(wgsLong, wgsLat, Hash{Bits: scoreBits(score), Step: StepMax})
	return a.centre()
}

// scoreBits converts a score to integer bits as Redis's (uint64_t) cast does on x86-64: in
// range it truncates; a negative score wraps through int64, NaN and scores from 2^64 on give the
// CPU's "indefinite" values.
func scoreBits(f float64) uint64 {
	const two63 = 1 << 63
	switch {
	case f != f:
		return 1 << 63
	case f < two63:
		if f <= -two63 {
			return 1 << 63
		}
		return uint64(int64(f))
	case f < 2*two63:
		return uint64(int64(f-two63)) ^ (1 << 63)
	}
	return 0
}

const base32 = "0123456789bcdefghjkmnpqrstuvwxyz"

// AppendHash appends the 11-character standard geohash GEOHASH answers for a score: the decoded
// position encoded again with latitudes from -90 to 90 (Redis stores within ±85.05), its 52 bits
// in ten characters and a last '0'.
func AppendHash(dst []byte, score float64) []byte {
	lon, lat := Decode(score)
	h, _ := encode(wgsLong, stdLat, lon, lat, StepMax)
	for i := range 10 {
		dst = append(dst, base32[(h.Bits>>(52-uint(i+1)*5))&0x1f])
	}
	return append(dst, '0')
}

// moveX moves a hash one cell east (d > 0) or west, wrapping around.
func (h *Hash) moveX(d int) {
	x, y := h.Bits&0xaaaaaaaaaaaaaaaa, h.Bits&0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - 2*uint(h.Step))
	if d > 0 {
		x += zz + 1
	} else {
		x = (x | zz) - (zz + 1)
	}
	x &= 0xaaaaaaaaaaaaaaaa >> (64 - 2*uint(h.Step))
	h.Bits = x | y
}

// moveY moves a hash one cell north (d > 0) or south, wrapping around.
func (h *Hash) moveY(d int) {
	x, y := h.Bits&0xaaaaaaaaaaaaaaaa, h.Bits&0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - 2*uint(h.Step))
	if d > 0 {
		y += zz + 1
	} else {
		y = (y | zz) - (zz + 1)
	}
	y &= 0x5555555555555555 >> (64 - 2*uint(h.Step))
	h.Bits = x | y
}

// The neighbours in Redis's search order after the centre.
const (
	north = iota
	south
	east
	west
	northEast
	northWest
	southEast
	southWest
)

// neighbours returns the eight cells around h in the order above.
func neighbours(h Hash) [8]Hash {
	moves := [8][2]int{{0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}}
	var n [8]Hash
	for i, m := range moves {
		n[i] = h
		if m[0] != 0 {
			n[i].moveX(m[0])
		}
		if m[1] != 0 {
			n[i].moveY(m[1])
		}
	}
	return n
}
