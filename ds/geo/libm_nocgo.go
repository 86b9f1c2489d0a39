//go:build !cgo

package geo

import "math"

// Without cgo the C library cannot be called: distances use the correctly rounded functions of
// trig.go, which differ from glibc's (so from Redis's) in the last bit for about 0.03% of
// arguments.

// LibmTrig reports whether distances use the C library (true) or the pure-Go correctly rounded
// functions.
const LibmTrig = false

// Sin is sin(x) correctly rounded.
func Sin(x float64) float64 { return sinCR(x) }

// Cos is cos(x) correctly rounded.
func Cos(x float64) float64 { return cosCR(x) }

// Asin is asin(x) correctly rounded.
func Asin(x float64) float64 { return asinCR(x) }

// haversine is Redis's distance formula in metres for radians, given cos(lat1r), operation for
// operation (the conversions keep Go from fusing a multiply-add).
func haversine(lat1r, lon1r, cos1, lat2r, lon2r float64) float64 {
	u := Sin((lat2r - lat1r) / 2)
	v := Sin((lon2r - lon1r) / 2)
	a := float64(u*u) + float64(float64(float64(cos1*Cos(lat2r))*v)*v)
	return (2.0 * EarthRadius) * Asin(math.Sqrt(a))
}
