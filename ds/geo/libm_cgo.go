//go:build cgo

package geo

// Redis computes distances with the C library's sin, cos and asin; so does HotKV when built with
// cgo, through the same libm redis-server loads, so that every digit of a distance and every
// point on a search's edge agree with Redis's (glibc is not correctly rounded for about 0.03% of
// arguments, which no pure-Go function reproduces). The whole haversine is one C call, a search
// pays the cgo transition once per candidate. The pragma keeps the compiler from fusing a
// multiply-add (were FMA enabled) that Redis's build, and Go's conversions in libm_nocgo.go, do
// not.

/*
#cgo LDFLAGS: -lm
#include <math.h>

#pragma GCC optimize ("fp-contract=off")

static double hotkv_haversine(double lat1r, double lon1r, double cos1, double lat2r, double lon2r) {
	double u = sin((lat2r - lat1r) / 2);
	double v = sin((lon2r - lon1r) / 2);
	double a = u * u + cos1 * cos(lat2r) * v * v;
	return 2.0 * 6372797.560856 * asin(sqrt(a));
}
*/
import "C"

// LibmTrig reports whether distances use the C library (true) or the pure-Go correctly rounded
// functions.
const LibmTrig = true

// Sin is the C library's sin.
func Sin(x float64) float64 { return float64(C.sin(C.double(x))) }

// Cos is the C library's cos.
func Cos(x float64) float64 { return float64(C.cos(C.double(x))) }

// Asin is the C library's asin.
func Asin(x float64) float64 { return float64(C.asin(C.double(x))) }

// haversine is Redis's distance formula in metres for radians, given cos(lat1r).
func haversine(lat1r, lon1r, cos1, lat2r, lon2r float64) float64 {
	return float64(C.hotkv_haversine(C.double(lat1r), C.double(lon1r), C.double(cos1), C.double(lat2r), C.double(lon2r)))
}
