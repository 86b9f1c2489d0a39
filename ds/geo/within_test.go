package geo

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWithinNoDistAtEdges: Within decides clear insiders and outsiders on a rough distance, and
// with NoDist lets insiders in without the exact one, so it must find exactly the points the
// exact distances put inside, and return those distances when asked. The shapes here have their edge at a candidate's own exact distance, or one or a
// few units in the last place either side of it, where only the exact test can tell; random
// other points around the centre check the clear cases.
func TestWithinNoDistAtEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	var decided, shapes int
	for round := range 20000 {
		lon, lat := randomLonLat(r)
		if r.IntN(3) == 0 {
			lat = LatMax * (2*r.Float64() - 1) * 0.99
		}
		conv := []float64{1, 1000, 0.3048, 1609.34}[r.IntN(4)]
		span := math.Pow(10, 1+r.Float64()*5.5) // 10 m to 3,000 km
		// A candidate near the centre, and the shape whose edge passes through it.
		plon := lon + (2*r.Float64()-1)*span/111e3/math.Max(0.05, math.Cos(lat*math.Pi/180))
		plat := math.Max(-LatMax, math.Min(LatMax, lat+(2*r.Float64()-1)*span/111e3))
		if plon > 180 || plon < -180 {
			continue
		}
		score, ok := Encode(plon, plat)
		if !ok {
			continue
		}
		dlon, dlat := Decode(float64(score))
		ulps := []int{0, 1, -1, 2, -2, 40, -40}[r.IntN(7)]
		s := Shape{Lon: lon, Lat: lat, Conv: conv}
		if r.IntN(2) == 0 {
			s.Radius = nudge(Distance(lon, lat, dlon, dlat)/conv, ulps)
		} else {
			s.Box = true
			w, h := 2*Distance(dlon, dlat, lon, dlat)/conv, 2*Distance(dlon, dlat, dlon, lat)/conv
			if r.IntN(2) == 0 {
				w, h = nudge(w, ulps), h*(1+r.Float64())
			} else {
				w, h = w*(1+r.Float64()), nudge(h, ulps)
			}
			s.Width, s.Height = w, h
		}
		shapes++
		exact, fast := s, s
		fast.NoDist = true
		scores := []float64{float64(score)}
		for range 20 {
			qlon := lon + (2*r.Float64()-1)*span/111e3
			qlat := math.Max(-LatMax, math.Min(LatMax, lat+(2*r.Float64()-1)*span/111e3))
			if q, ok := Encode(qlon, qlat); ok && qlon <= 180 && qlon >= -180 {
				scores = append(scores, float64(q))
			}
		}
		for _, sc := range scores {
			qlon, qlat := Decode(sc)
			d := Distance(lon, lat, qlon, qlat)
			want := !(d > s.Radius*conv)
			if s.Box {
				want = !(Distance(qlon, qlat, lon, qlat) > s.Width*conv/2) && !(Distance(qlon, qlat, qlon, lat) > s.Height*conv/2)
			}
			_, _, ed, in := exact.Within(sc)
			_, _, fd, got := fast.Within(sc)
			if got != want || in != want {
				t.Fatalf("round %d %+v: score %v inside %v with NoDist, %v without, %v by the exact distances (%v)", round, s, sc, got, in, want, d)
			}
			if in && ed != d {
				t.Fatalf("round %d %+v: score %v at distance %v, exactly %v", round, s, sc, ed, d)
			}
			if got && fd == 0 && d != 0 {
				decided++
			}
		}
	}
	// The test is only worth its name if the rough test decides many points.
	if decided < shapes {
		t.Fatalf("only %d points decided without the exact distance over %d shapes", decided, shapes)
	}
	t.Logf("%d shapes, %d points let in without the exact distance", shapes, decided)
}

// nudge moves x by n units in the last place.
func nudge(x float64, n int) float64 {
	for ; n > 0; n-- {
		x = math.Nextafter(x, math.Inf(1))
	}
	for ; n < 0; n++ {
		x = math.Nextafter(x, math.Inf(-1))
	}
	return x
}
