package command

import "testing"

// TestGeoDistanceDigits checks the four decimals of GEODIST and WITHDIST where C's "%.4f" and
// Redis's fixed-point conversion disagree: each distance lies within a rounding of a half-unit in
// its fourth decimal (14576551.806850001 m, 15230205.281549999 m, 10951827.31435 m, 13710775.22065
// ft). The points are set by score, so both servers decode the same coordinates. Replies recorded
// from redis-server 7.0.15.
func TestGeoDistanceDigits(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	tc.do("ZADD", "g", "3648653103751976", "a", "3020351852132467", "b", "3578823242740570", "c",
		"1384900725744000", "d", "3734479215732343", "e", "4131284065165203", "f", "980117270894521", "h",
		"702862064313481", "i")
	f := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Errorf("%q: got %q, Redis %q", args, got, want)
		}
	}
	bulk := func(s string) string { return "$" + itoa(len(s)) + "\r\n" + s + "\r\n" }
	f(bulk("14576551.8068"), "GEODIST", "g", "a", "b")
	f(bulk("14576551.8068"), "GEODIST", "g", "b", "a", "M")
	f(bulk("15230205.2816"), "GEODIST", "g", "c", "d")
	f(bulk("10951827.3144"), "GEODIST", "g", "e", "f", "m")
	f(bulk("13710775.2206"), "GEODIST", "g", "h", "i", "ft")
	f("*1\r\n*2\r\n"+bulk("d")+bulk("15230205.2816"),
		"GEORADIUSBYMEMBER", "g", "c", "1.6e7", "m", "WITHDIST", "DESC", "COUNT", "1")
	f("*3\r\n*2\r\n"+bulk("h")+bulk("0.0000")+"*2\r\n"+bulk("i")+bulk("13710775.2206")+"*2\r\n"+bulk("d")+bulk("19043379.5556"),
		"GEOSEARCH", "g", "FROMMEMBER", "h", "BYBOX", "3e7", "3e7", "ft", "WITHDIST", "ASC")
	f("*1\r\n*2\r\n"+bulk("b")+bulk("14576551.8068"),
		"GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", "14576551.81", "m", "WITHDIST", "DESC", "COUNT", "1")
	lon, lat := "75.59464126825332642", "38.95444771039111487" // a's position
	f("*1\r\n*2\r\n"+bulk("b")+bulk("14576551.8068"),
		"GEORADIUS_RO", "g", lon, lat, "14576551.81", "m", "WITHDIST", "DESC", "COUNT", "1")
}
