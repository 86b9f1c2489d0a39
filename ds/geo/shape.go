package geo

import "math"

// EarthRadius is the radius Redis computes distances on, in metres.
const EarthRadius = 6372797.560856

const (
	mercatorMax = 20037726.37
)

// degRad is Redis's D_R, M_PI/180.0 as a double division (not Go's exact constant quotient).
var degRad = func() float64 { pi := math.Pi; return pi / 180.0 }()

func toRad(d float64) float64 { return d * degRad }
func toDeg(r float64) float64 { return r / degRad }

// Distance is the haversine distance in metres between two points given in degrees.
func Distance(lon1, lat1, lon2, lat2 float64) float64 {
	return distanceFrom(lon1, lat1, Cos(toRad(lat1)), lon2, lat2)
}

// distanceFrom is Distance given the first point's cosine of latitude, which a search reuses.
func distanceFrom(lon1, lat1, cosLat1, lon2, lat2 float64) float64 {
	return haversine(toRad(lat1), toRad(lon1), cosLat1, toRad(lat2), toRad(lon2))
}

// Shape is a search area: a circle of Radius, or a box of Width by Height, around (Lon, Lat),
// its lengths in a unit of Conv metres. NoDist tells Within that the caller needs only
// membership (no WITHDIST, no sorting, no STOREDIST): a point clearly inside is then let in
// without its exact distance, and Within returns 0 for it.
type Shape struct {
	Lon, Lat      float64
	Box           bool
	Radius        float64
	Width, Height float64
	Conv          float64
	NoDist        bool
	bounds        [4]float64 // min lon, min lat, max lon, max lat
	// Set by prepare for Within: the centre's cosine of latitude (Cos's, and math's for the
	// rough test, with math's sine), and the rough tests' limits (see roughMargin): a circle's
	// haversine term past which a point is surely outside (roughLimit) and below which surely
	// inside (innerLimit); a box's cos(lat)*|sin(dlon/2)| likewise (lonOut, lonIn).
	prepared                   bool
	cosLat, roughCos, roughSin float64
	roughLimit, innerLimit     float64
	lonOut, lonIn              float64
}

// prepare computes what Within reuses for every point of a search.
func (s *Shape) prepare() {
	s.prepared = true
	s.cosLat, s.roughCos, s.roughSin = Cos(toRad(s.Lat)), math.Cos(toRad(s.Lat)), math.Sin(toRad(s.Lat))
	out, in := sineLimits(s.Radius * s.Conv)
	s.roughLimit, s.innerLimit = out*out, -1.0
	if in > 0 {
		s.innerLimit = in * in
	}
	s.lonOut, s.lonIn = sineLimits(s.Width * s.Conv / 2)
}

// sineLimits returns the bounds on sin(d/2R) of a distance d, from a limit of metres: past
// out a distance is surely over the limit, below in surely not (in is negative where none is
// sure).
func sineLimits(metres float64) (out, in float64) {
	half := metres / (2 * EarthRadius)
	out, in = math.Inf(1), -1
	if half < math.Pi/2 {
		h := math.Sin(half)
		out = h*(1+roughMargin) + 1e-20
		if half < math.Pi/2*(1-1e-6) {
			in = h*(1-roughMargin) - 1e-20
		}
	}
	return out, in
}

// boundingBox is geohashBoundingBox: the longitudes and latitudes the shape spans.
func (s *Shape) boundingBox() {
	h, w := s.Radius, s.Radius
	if s.Box {
		h, w = s.Height/2, s.Width/2
	}
	h, w = s.Conv*h, s.Conv*w
	latDelta := toDeg(h / EarthRadius)
	top := toDeg(w / EarthRadius / Cos(toRad(s.Lat+latDelta)))
	bottom := toDeg(w / EarthRadius / Cos(toRad(s.Lat-latDelta)))
	d := top
	if s.Lat < 0 {
		d = bottom
	}
	s.bounds = [4]float64{s.Lon - d, s.Lat - latDelta, s.Lon + d, s.Lat + latDelta}
}

// stepsFor is geohashEstimateStepsByRadius: the precision at which the nine boxes cover a
// radius of metres at latitude lat.
func stepsFor(metres, lat float64) uint8 {
	if metres == 0 {
		return 26
	}
	step := 1
	for metres < mercatorMax {
		metres *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

// ScoreRange is a run of scores to scan: Min included, Max excluded.
type ScoreRange struct{ Min, Max uint64 }

// Boxes returns the score ranges of the geohash boxes that cover the shape, in Redis's scan
// order, leaving out the boxes Redis excludes as outside the area and a box equal to the one
// scanned just before it (huge radii make neighbours coincide). It writes into dst's array.
func (s *Shape) Boxes(dst *[9]ScoreRange) []ScoreRange {
	s.prepare()
	s.boundingBox()
	minLon, minLat, maxLon, maxLat := s.bounds[0], s.bounds[1], s.bounds[2], s.bounds[3]
	metres := s.Radius
	if s.Box {
		metres = math.Sqrt(float64(s.Width/2*(s.Width/2)) + float64(s.Height/2*(s.Height/2)))
	}
	metres *= s.Conv
	step := stepsFor(metres, s.Lat)
	h, _ := encode(wgsLong, wgsLat, s.Lon, s.Lat, step)
	n := neighbours(h)
	cell, _ := decode(wgsLong, wgsLat, h)
	// A search near the edge of its box may reach past the neighbours: one step coarser.
	nb := func(i int) area { a, _ := decode(wgsLong, wgsLat, n[i]); return a }
	if step > 1 && (nb(north).lat.Max < maxLat || nb(south).lat.Min > minLat ||
		nb(east).long.Max < maxLon || nb(west).long.Min > minLon) {
		step--
		h, _ = encode(wgsLong, wgsLat, s.Lon, s.Lat, step)
		n = neighbours(h)
		cell, _ = decode(wgsLong, wgsLat, h)
	}
	if step >= 2 {
		drop := func(is ...int) {
			for _, i := range is {
				n[i] = Hash{}
			}
		}
		if cell.lat.Min < minLat {
			drop(south, southWest, southEast)
		}
		if cell.lat.Max > maxLat {
			drop(north, northEast, northWest)
		}
		if cell.long.Min < minLon {
			drop(west, southWest, northWest)
		}
		if cell.long.Max > maxLon {
			drop(east, southEast, northEast)
		}
	}
	all := [9]Hash{h, n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]}
	out := dst[:0]
	last := -1
	for i, b := range all {
		if b.zero() {
			continue
		}
		// Redis compares with the last box scanned only once one other than the centre was
		// (its last_processed starts at 0 and means "none").
		if last > 0 && b == all[last] {
			continue
		}
		lo := Align52(b)
		b.Bits++
		out = append(out, ScoreRange{Min: lo, Max: Align52(b)})
		last = i
	}
	return out
}

// Within decodes a score and reports whether its position lies in the shape, with its distance
// from the centre in metres. Most points a search meets are well outside, and most of the rest
// well inside: a rough test (see roughMargin) decides them, and only points near the edge, or
// whose distance the caller needs, pay for the exact distance.
func (s *Shape) Within(score float64) (lon, lat, dist float64, ok bool) {
	lon, lat = Decode(score)
	if !s.prepared {
		s.prepare()
	}
	if !s.Box {
		lim := s.Radius * s.Conv
		// A great circle is at least as long as the meridian arc between the latitudes.
		if EarthRadius*math.Abs(toRad(lat)-toRad(s.Lat)) > lim*(1+roughMargin)+roughMargin {
			return lon, lat, 0, false
		}
		var a float64
		if u, c2, v, near := s.nearTerms(lon, lat); near {
			a = u*u + s.roughCos*c2*v*v
		} else {
			a = s.roughHaversine(lon, lat)
		}
		switch {
		case a > s.roughLimit:
			return lon, lat, 0, false
		case s.NoDist && a < s.innerLimit:
			return lon, lat, 0, true
		}
		dist = distanceFrom(s.Lon, s.Lat, s.cosLat, lon, lat)
		return lon, lat, dist, !(dist > lim)
	}
	w, h := s.Width*s.Conv, s.Height*s.Conv
	// Redis's distance between points on one meridian is the arc R*|dlat|.
	latArc := EarthRadius * math.Abs(toRad(lat)-toRad(s.Lat))
	if latArc > h/2*(1+roughMargin)+roughMargin {
		return lon, lat, 0, false
	}
	// The distance along the point's parallel is 2R*asin(cos(lat)*|sin(dlon/2)|).
	if _, c2, v, near := s.nearTerms(lon, lat); near {
		switch e := c2 * math.Abs(v); {
		case e > s.lonOut:
			return lon, lat, 0, false
		case e < s.lonIn && latArc < h/2*(1-roughMargin)-roughMargin:
			// Surely inside: the exact edge distances would only confirm it.
			if s.NoDist {
				return lon, lat, 0, true
			}
			return lon, lat, distanceFrom(s.Lon, s.Lat, s.cosLat, lon, lat), true
		}
	} else if roughDistance(lon, lat, s.Lon, lat) > w/2*(1+roughMargin)+roughMargin {
		return lon, lat, 0, false
	}
	lonDist := Distance(lon, lat, s.Lon, lat)
	latDist := Distance(lon, lat, lon, s.Lat)
	if lonDist > w/2 || latDist > h/2 {
		return lon, lat, 0, false
	}
	return lon, lat, distanceFrom(s.Lon, s.Lat, s.cosLat, lon, lat), true
}

// nearMax bounds the half-differences of latitude and longitude, in radians, that nearTerms
// takes (about 64 km of latitude): a search of up to some 60 km meets few candidates beyond.
const nearMax = 0.01

// nearTerms returns, for a point whose half-differences from the centre x = dlat/2 and
// y = dlon/2 are both within nearMax, u ~ sin(x), c2 ~ cos(lat) and v ~ sin(y) by Taylor
// polynomials instead of calls to sin and cos, and near false for other points. The errors
// (see roughMargin): sin's series alternates, so x - x^3/6 + x^5/120 is off by at most
// |x|^7/5040, a relative 2e-16 at |x| <= 0.01; cos(lat) = cos(lat0)cos(2x) - sin(lat0)sin(2x),
// with 1 - t^2/2 + t^4/24 off by at most t^6/720 = 9e-14 and the sine's by 3e-16 at
// |t| <= 0.02, which against cos(lat) >= 0.086 (a decoded latitude is within 85.06 degrees)
// is a relative 1.1e-12, plus a few units in the last place from rounding and from math's
// sin and cos of lat0.
func (s *Shape) nearTerms(lon, lat float64) (u, c2, v float64, near bool) {
	x := (toRad(lat) - toRad(s.Lat)) / 2
	y := (toRad(lon) - toRad(s.Lon)) / 2
	if !(math.Abs(x) <= nearMax && math.Abs(y) <= nearMax) {
		return 0, 0, 0, false
	}
	x2, y2 := x*x, y*y
	u = x * (1 - x2*(1.0/6-x2*(1.0/120)))
	v = y * (1 - y2*(1.0/6-y2*(1.0/120)))
	t, t2 := 2*x, 4*x2
	ct := 1 - t2*(0.5-t2*(1.0/24))
	st := t * (1 - t2*(1.0/6-t2*(1.0/120)))
	return u, s.roughCos*ct - s.roughSin*st, v, true
}

// roughHaversine is the haversine term of the distance from the centre on Go's math library.
func (s *Shape) roughHaversine(lon, lat float64) float64 {
	u := math.Sin((toRad(lat) - toRad(s.Lat)) / 2)
	v := math.Sin((toRad(lon) - toRad(s.Lon)) / 2)
	return u*u + s.roughCos*math.Cos(toRad(lat))*v*v
}

// roughMargin is how far past an edge (or short of it), relatively and in metres, a rough
// distance must be to rule a point out (or in) without the exact distance. The rough terms are
// within a relative 2e-12 of the true ones (nearTerms's polynomials) or 1e-13 (Go's math sin
// and cos, a unit or two in the last place); the exact ones, glibc's or trig.go's, within a
// unit. Every term of the haversine sum sin^2(dlat/2) + cos(lat0)cos(lat)sin^2(dlon/2) is
// non-negative, so the sum's relative error is no more than its terms'. A rough term h^2*(1+m)
// or more, h = sin(limit/2R), then means an exact term over h^2*(1+m-4e-12), and asin, convex
// on [0, 1] and 0 at 0, takes k*h (k >= 1) to at least k*asin(h): the exact distance is over
// limit*(1+m/2-3e-12), more than the limit; likewise a rough term h^2*(1-m) or less means an
// exact distance under limit*(1-m/2+3e-12). The tiny absolute terms (1e-20, and roughMargin
// metres) cover underflow and limits of 0. m = 1e-9 is 250 times the error bound; it leaves the
// exact distance to points within about a millimetre of a 1,000 km edge.
const roughMargin = 1e-9

// roughDistance is Distance on Go's math library: fast, and off by a few units in the last place.
func roughDistance(lon1, lat1, lon2, lat2 float64) float64 {
	lat1r, lon1r, lat2r, lon2r := toRad(lat1), toRad(lon1), toRad(lat2), toRad(lon2)
	u := math.Sin((lat2r - lat1r) / 2)
	v := math.Sin((lon2r - lon1r) / 2)
	return (2.0 * EarthRadius) * math.Asin(math.Sqrt(u*u+math.Cos(lat1r)*math.Cos(lat2r)*v*v))
}
