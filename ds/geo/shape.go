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
// its lengths in a unit of Conv metres.
type Shape struct {
	Lon, Lat      float64
	Box           bool
	Radius        float64
	Width, Height float64
	Conv          float64
	bounds        [4]float64 // min lon, min lat, max lon, max lat
	// Set by prepare for Within: the centre's cosine of latitude (Cos's, and math's for the
	// rough test), and the haversine term past which a point is surely outside a circle.
	prepared         bool
	cosLat, roughCos float64
	roughLimit       float64
}

// prepare computes what Within reuses for every point of a search.
func (s *Shape) prepare() {
	s.prepared = true
	s.cosLat, s.roughCos = Cos(toRad(s.Lat)), math.Cos(toRad(s.Lat))
	half := s.Radius * s.Conv / (2 * EarthRadius)
	s.roughLimit = math.Inf(1)
	if half < math.Pi/2 {
		h := math.Sin(half)
		s.roughLimit = h*h*(1+roughMargin) + 1e-20
	}
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
// from the centre in metres. Most points a search meets are well outside: a distance on Go's
// math library (within 1e-13 of the exact one) rules them out before the correctly rounded one
// is computed.
func (s *Shape) Within(score float64) (lon, lat, dist float64, ok bool) {
	lon, lat = Decode(score)
	if !s.prepared {
		s.prepare()
	}
	if !s.Box {
		lim := s.Radius * s.Conv
		// A great circle is at least as long as the meridian arc between the latitudes.
		if EarthRadius*math.Abs(toRad(lat)-toRad(s.Lat)) > lim*(1+roughMargin)+roughMargin ||
			s.roughHaversine(lon, lat) > s.roughLimit {
			return lon, lat, 0, false
		}
		dist = distanceFrom(s.Lon, s.Lat, s.cosLat, lon, lat)
		return lon, lat, dist, !(dist > lim)
	}
	w, h := s.Width*s.Conv, s.Height*s.Conv
	if EarthRadius*math.Abs(toRad(lat)-toRad(s.Lat)) > h/2*(1+roughMargin)+roughMargin ||
		roughDistance(lon, lat, s.Lon, lat) > w/2*(1+roughMargin)+roughMargin {
		return lon, lat, 0, false
	}
	lonDist := Distance(lon, lat, s.Lon, lat)
	latDist := Distance(lon, lat, lon, s.Lat)
	if lonDist > w/2 || latDist > h/2 {
		return lon, lat, 0, false
	}
	return lon, lat, distanceFrom(s.Lon, s.Lat, s.cosLat, lon, lat), true
}

// roughHaversine is the haversine term of the distance from the centre on Go's math library.
func (s *Shape) roughHaversine(lon, lat float64) float64 {
	u := math.Sin((toRad(lat) - toRad(s.Lat)) / 2)
	v := math.Sin((toRad(lon) - toRad(s.Lon)) / 2)
	return u*u + s.roughCos*math.Cos(toRad(lat))*v*v
}

// roughMargin is how far past an edge, relatively and in metres, a rough distance must be to
// rule a point out: far more than the 1e-13 its math library's sin, cos and asin can be off.
const roughMargin = 1e-9

// roughDistance is Distance on Go's math library: fast, and off by a few units in the last place.
func roughDistance(lon1, lat1, lon2, lat2 float64) float64 {
	lat1r, lon1r, lat2r, lon2r := toRad(lat1), toRad(lon1), toRad(lat2), toRad(lon2)
	u := math.Sin((lat2r - lat1r) / 2)
	v := math.Sin((lon2r - lon1r) / 2)
	return (2.0 * EarthRadius) * math.Asin(math.Sqrt(u*u+math.Cos(lat1r)*math.Cos(lat2r)*v*v))
}
