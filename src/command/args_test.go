package command

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// floatInputs are the spellings where C's strtod/strtold, Redis's wrappers around them and Go's
// strconv disagree: spaces, hex, inf/nan words, overflow, underflow, partial numbers, Go-only
// syntax and a NUL byte (which ends a C string but not a Redis argument).
var floatInputs = []string{
	"1e400", "-1e400", " 1", "1 ", "\t1", "0x10", "0X1p-2", "0x", "0x.8", "1.5e", "1e+", ".5",
	"5.", "+5", "-.5", ".", "+", "-", "", "e5", "inf", "-INF", "+inf", "infinity", "-Infinity",
	"infinit", "nan", "-nan", "NaN(1)", "1e-400", "-1e-400", "4.9e-324", "2e-308", "00012",
	"1_000", "1,5", "0b1", "1.7976931348623157e308", "1.7976931348623159e308", "-0", "0.0",
	"1E5", "3.0000000000000001", "0.1", "1\x00", "1\x00x", "9223372036854775808",
}

// TestParseFloatMatchesRedis checks ParseFloat against ZADD, whose scores Redis parses with
// getDoubleFromObject: the same inputs are accepted, and to the same value (ZSCORE prints it
// with 17 significant digits, enough to round-trip).
func TestParseFloatMatchesRedis(t *testing.T) {
	rs := newRedisSession(t)
	for _, in := range floatInputs {
		got, ok := ParseFloat([]byte(in))
		rs.do("DEL", "z")
		accepted := rs.do("ZADD", "z", in, "m") == ":1\r\n"
		if ok != accepted {
			t.Errorf("ParseFloat(%q) ok=%v, Redis ZADD accepted=%v", in, ok, accepted)
			continue
		}
		if !ok {
			continue
		}
		want := redisScore(t, rs.do("ZSCORE", "z", "m"))
		if got != want || math.Signbit(got) != math.Signbit(want) && got != 0 {
			t.Errorf("ParseFloat(%q) = %v, Redis stored %v", in, got, want)
		}
	}
}

// redisScore decodes a RESP2 bulk score reply ("inf" and "-inf" included).
func redisScore(t *testing.T, reply string) float64 {
	t.Helper()
	_, body, _ := strings.Cut(strings.TrimSuffix(reply, "\r\n"), "\r\n")
	f, err := strconv.ParseFloat(body, 64)
	if err != nil {
		t.Fatalf("bad ZSCORE reply %q", reply)
	}
	return f
}

// TestFloatArgumentsMatchRedis runs every command family that reads a float, with each of its
// Redis parsers (string2ld for INCRBYFLOAT, HINCRBYFLOAT and timeouts, string2d for scores and
// weights, strtod for score ranges), on the tricky inputs, and compares the replies byte for
// byte. Values stored as strings are parsed again when incremented, so those are checked too.
func TestFloatArgumentsMatchRedis(t *testing.T) {
	rs := newRedisSession(t)
	tc := newTestConn(t, newTestEngine())
	steps := [][]string{
		{"DEL", "f", "h", "z", "l"},
		{"INCRBYFLOAT", "f", "@"},
		{"SET", "f", "@"},
		{"INCRBYFLOAT", "f", "1"},
		{"HINCRBYFLOAT", "h", "x", "@"},
		{"HSET", "h", "y", "@"},
		{"HINCRBYFLOAT", "h", "y", "1"},
		{"ZADD", "z", "@", "m"},
		{"ZSCORE", "z", "m"},
		{"ZINCRBY", "z", "@", "n"},
		{"ZINCRBY", "z", "@", "m"},
		{"ZADD", "z", "INCR", "@", "m"},
		{"ZADD", "w", "1", "a", "2.5", "b"},
		{"ZUNION", "1", "w", "WEIGHTS", "@", "WITHSCORES"},
		{"ZRANGEBYSCORE", "w", "@", "+inf"},
		{"ZRANGEBYSCORE", "w", "-inf", "@"},
		{"ZREVRANGEBYSCORE", "w", "(@", "-inf"},
		{"ZCOUNT", "w", "(@", "@"},
		{"ZRANGE", "w", "@", "(3", "BYSCORE"},
		{"RPUSH", "l", "x", "y"},
		{"BLPOP", "l", "@"}, // one element is left for BRPOPLPUSH: a valid timeout never blocks
		{"BRPOPLPUSH", "l", "l", "@"},
	}
	for _, in := range floatInputs {
		for _, s := range steps {
			cmd := make([]string, len(s))
			for i, a := range s {
				cmd[i] = strings.ReplaceAll(a, "@", in)
			}
			if got, want := tc.do(cmd...), rs.do(cmd...); got != want {
				t.Errorf("%q\n got: %q\nwant: %q", cmd, got, want)
			}
		}
	}
}

// TestArgsFloatLatches checks that Args.Float uses ParseFloat and latches the float error.
func TestArgsFloatLatches(t *testing.T) {
	a := NewArgs([][]byte{[]byte("0x10"), []byte("nan"), []byte("2")}, 0)
	if f := a.Float(); f != 16 || a.Err() != "" {
		t.Fatalf("Float(0x10) = %v, err %q", f, a.Err())
	}
	if a.Float(); a.Err() != ErrNotFloat {
		t.Fatalf("Float(nan) err = %q, want %q", a.Err(), ErrNotFloat)
	}
	if f := a.Float(); f != 0 || a.Err() != ErrNotFloat {
		t.Fatalf("after an error Float = %v, err %q: the first error must stay", f, a.Err())
	}
}
