package resp

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestEncoders(t *testing.T) {
	f := func(got []byte, want string) {
		t.Helper()
		if string(got) != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	pre := []byte("x") // every encoder appends after what dst holds
	f(AppendSimple(pre, "OK"), "x+OK\r\n")
	f(AppendSimple(nil, "a\r\nb"), "+a  b\r\n")
	f(AppendError(nil, "ERR bad"), "-ERR bad\r\n")
	f(AppendError(nil, "\r\nERR a\nb\r\n"), "-ERR a b\r\n")
	f(AppendInt(pre, 0), "x:0\r\n")
	f(AppendInt(nil, math.MinInt64), ":-9223372036854775808\r\n")
	f(AppendBulk(pre, []byte("a\r\nb")), "x$4\r\na\r\nb\r\n")
	f(AppendBulk(nil, nil), "$0\r\n\r\n")
	f(AppendBulkString(nil, "hello"), "$5\r\nhello\r\n")
	f(AppendBulkInt(nil, -12345), "$6\r\n-12345\r\n")
	f(AppendBulkInt(nil, math.MaxInt64), "$19\r\n9223372036854775807\r\n")
	f(AppendNull(nil, 2), "$-1\r\n")
	f(AppendNull(nil, 3), "_\r\n")
	f(AppendNullArray(nil, 2), "*-1\r\n")
	f(AppendNullArray(nil, 3), "_\r\n")
	f(AppendArrayLen(nil, 3), "*3\r\n")
	f(AppendArrayLen(nil, 0), "*0\r\n")
	f(AppendMapLen(nil, 2, 3), "*6\r\n")
	f(AppendMapLen(nil, 3, 3), "%3\r\n")
	f(AppendSetLen(nil, 2, 3), "*3\r\n")
	f(AppendSetLen(nil, 3, 3), "~3\r\n")
	f(AppendPushLen(nil, 2, 3), "*3\r\n")
	f(AppendPushLen(nil, 3, 3), ">3\r\n")
	f(AppendAttrLen(nil, 1), "|1\r\n")
	f(AppendBool(nil, 2, true), ":1\r\n")
	f(AppendBool(nil, 2, false), ":0\r\n")
	f(AppendBool(nil, 3, true), "#t\r\n")
	f(AppendBool(nil, 3, false), "#f\r\n")
	f(AppendBigNumber(nil, 2, "-12345678901234567890"), "$21\r\n-12345678901234567890\r\n")
	f(AppendBigNumber(nil, 3, "-12345678901234567890"), "(-12345678901234567890\r\n")
	f(AppendVerbatim(nil, 2, "txt", []byte("a\nb")), "$3\r\na\nb\r\n")
	f(AppendVerbatim(nil, 3, "txt", []byte("a\nb")), "=7\r\ntxt:a\nb\r\n")
	f(AppendVerbatim(nil, 3, "m", nil), "=4\r\nm  :\r\n")
	f(AppendVerbatim(nil, 3, "markdown", []byte("x")), "=5\r\nmar:x\r\n")
}

func TestAppendDouble(t *testing.T) {
	f := func(v float64, want string) {
		t.Helper()
		if got := string(AppendDouble(nil, 3, v)); got != ","+want+"\r\n" {
			t.Fatalf("RESP3 %v: got %q, want %q", v, got, ","+want+"\r\n")
		}
		want2 := "$" + strconv.Itoa(len(want)) + "\r\n" + want + "\r\n"
		if got := string(AppendDouble(nil, 2, v)); got != want2 {
			t.Fatalf("RESP2 %v: got %q, want %q", v, got, want2)
		}
	}
	// %.17g as glibc prints it.
	f(0.1, "0.10000000000000001")
	f(3, "3")
	f(-1.5, "-1.5")
	f(math.Copysign(0, -1), "-0")
	f(1e16, "10000000000000000")
	f(1e17, "1e+17")
	f(1e-4, "0.0001")
	f(1e-5, "1.0000000000000001e-05")
	f(1e300, "1.0000000000000001e+300")
	f(5e-324, "4.9406564584124654e-324")
	f(math.MaxFloat64, "1.7976931348623157e+308")
	f(math.Inf(1), "inf")
	f(math.Inf(-1), "-inf")
	f(math.NaN(), "nan")
	f(math.Copysign(math.NaN(), -1), "-nan")
}

func TestInsertLen(t *testing.T) {
	f := func(got []byte, want string) {
		t.Helper()
		if string(got) != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	elems := func(prefix string, n int) ([]byte, int) {
		dst := []byte(prefix)
		at := len(dst)
		for i := range n {
			dst = AppendInt(dst, int64(i))
		}
		return dst, at
	}
	// want is computed before the Insert call, which may shift dst's bytes in place.
	dst, at := elems("+OK\r\n", 12)
	want := "+OK\r\n*12\r\n" + string(dst[at:])
	f(InsertArrayLen(dst, at, 12), want)
	dst, at = elems("", 0)
	f(InsertArrayLen(dst, at, 0), "*0\r\n")
	for _, tc := range []struct {
		insert func([]byte, int, int, int) []byte
		proto  int
		header string
	}{
		{InsertMapLen, 2, "*8\r\n"}, {InsertMapLen, 3, "%4\r\n"}, {InsertSetLen, 2, "*4\r\n"}, {InsertSetLen, 3, "~4\r\n"},
	} {
		dst, at = elems("", 8)
		dst = append(make([]byte, 0, 100), dst...) // room to insert without reallocating
		want := tc.header + string(dst)
		f(tc.insert(dst, at, tc.proto, 4), want)
	}
}

// TestDoubleMatchesRedis stores doubles in a sorted set (skiplist encoding, which keeps the double
// as is) and compares ZSCORE's replies, RESP2 and RESP3, with AppendDouble.
func TestDoubleMatchesRedis(t *testing.T) {
	addr := redisAddr(t, false)
	values := []float64{0.1, 3, -1.5, math.Copysign(0, -1), 1e16, 1e17, 1e-4, 1e-5, 1e300, 5e-324,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3, 9007199254740993,
		math.Inf(1), math.Inf(-1)}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 300 {
		values = append(values, math.Float64frombits(rng.Uint64()))
	}
	key := "resp-test-doubles"
	var cmds []byte
	cmds = append(cmds, command("CONFIG", "SET", "zset-max-listpack-entries", "0")...)
	cmds = append(cmds, command("DEL", key)...)
	var kept []float64
	for _, v := range values {
		if math.IsNaN(v) {
			continue // a sorted set cannot hold NaN
		}
		kept = append(kept, v)
		member := strconv.Itoa(len(kept))
		cmds = append(cmds, command("ZADD", key, strconv.FormatFloat(v, 'g', -1, 64), member)...)
	}
	for i := range kept {
		cmds = append(cmds, command("ZSCORE", key, strconv.Itoa(i+1))...)
	}
	cmds = append(cmds, command("HELLO", "3")...)
	for i := range kept {
		cmds = append(cmds, command("ZSCORE", key, strconv.Itoa(i+1))...)
	}
	replies := roundTrip(t, addr, cmds, 2+len(kept)*3+1)
	resp2 := replies[2+len(kept) : 2+2*len(kept)]
	resp3 := replies[2+2*len(kept)+1:]
	for i, v := range kept {
		if got := string(AppendDouble(nil, 2, v)); got != string(resp2[i]) {
			t.Errorf("RESP2 %v (%x): redis %q, AppendDouble %q", v, math.Float64bits(v), resp2[i], got)
		}
		if got := string(AppendDouble(nil, 3, v)); got != string(resp3[i]) {
			t.Errorf("RESP3 %v: redis %q, AppendDouble %q", v, resp3[i], got)
		}
	}
}

// TestTypesMatchRedis rebuilds the replies of DEBUG PROTOCOL, which exercises every reply type, with
// the encoders, in both protocols.
func TestTypesMatchRedis(t *testing.T) {
	addr := redisAddr(t, false)
	kinds := []string{"string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib",
		"push", "verbatim", "true", "false"}
	build := func(proto int, kind string) []byte {
		var b []byte
		switch kind {
		case "string":
			return AppendBulkString(b, "Hello World")
		case "integer":
			return AppendInt(b, 12345)
		case "double":
			return AppendDouble(b, proto, 3.141)
		case "bignum":
			return AppendBigNumber(b, proto, "1234567999999999999999999999999999999")
		case "null":
			return AppendNull(b, proto)
		case "array", "set":
			if kind == "set" {
				b = AppendSetLen(b, proto, 3)
			} else {
				b = AppendArrayLen(b, 3)
			}
			for i := range 3 {
				b = AppendInt(b, int64(i))
			}
			return b
		case "map":
			b = AppendMapLen(b, proto, 3)
			for i := range 3 {
				b = AppendBool(AppendInt(b, int64(i)), proto, i == 1)
			}
			return b
		case "attrib":
			if proto < 3 { // Redis leaves the attribute out
				return AppendBulkString(b, "Some real reply following the attribute")
			}
			b = AppendAttrLen(b, 1)
			b = AppendBulkString(b, "key-popularity")
			b = AppendArrayLen(b, 2)
			b = AppendBulkString(b, "key:123")
			b = AppendInt(b, 90)
			return AppendBulkString(b, "Some real reply following the attribute")
		case "push":
			if proto < 3 {
				return AppendError(b, "ERR RESP2 is not supported by this command")
			}
			b = AppendPushLen(b, proto, 2)
			b = AppendBulkString(b, "server-cpu-usage")
			b = AppendInt(b, 42)
			return AppendBulkString(b, "Some real reply following the push reply")
		case "verbatim":
			return AppendVerbatim(b, proto, "txt", []byte("This is a verbatim\nstring"))
		}
		return AppendBool(b, proto, kind == "true")
	}
	var cmds []byte
	for _, k := range kinds {
		cmds = append(cmds, command("DEBUG", "PROTOCOL", k)...)
	}
	cmds = append(cmds, command("HELLO", "3")...)
	for _, k := range kinds {
		cmds = append(cmds, command("DEBUG", "PROTOCOL", k)...)
	}
	// In RESP3 the push is followed by a reply of its own, so one more reply is read.
	replies := roundTrip(t, addr, cmds, 2*len(kinds)+2)
	for i, k := range kinds {
		if got := string(build(2, k)); got != string(replies[i]) {
			t.Errorf("RESP2 %s: redis %q, encoders %q", k, replies[i], got)
		}
	}
	replies = replies[len(kinds)+1:]
	for i, k := range kinds {
		want := string(replies[i])
		if k == "push" {
			want += string(replies[i+1])
			replies = append(replies[:i+1], replies[i+2:]...)
		}
		if got := string(build(3, k)); got != want {
			t.Errorf("RESP3 %s: redis %q, encoders %q", k, want, got)
		}
	}
}
