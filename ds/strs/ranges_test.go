package strs

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRangeMatchesRedis compares Range with GETRANGE on a real redis-server for random strings and
// indexes around the string's bounds and at the int64 extremes.
func TestRangeMatchesRedis(t *testing.T) {
	conn := startRedis(t)
	r := bufio.NewReader(conn)
	rng := rand.New(rand.NewPCG(11, 12))
	index := func(n int) int64 {
		switch rng.IntN(6) {
		case 0:
			return math.MinInt64
		case 1:
			return math.MaxInt64
		}
		return int64(rng.IntN(2*n+7) - n - 3)
	}
	type call struct {
		s          string
		start, end int64
	}
	calls := make([]call, 3000)
	var req strings.Builder
	for i := range calls {
		s := strings.Repeat("abcdefghij", 3)[:rng.IntN(12)]
		calls[i] = call{s, index(len(s)), index(len(s))}
		fmt.Fprintf(&req, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s\r\n", len(s), s)
		st, en := fmt.Sprint(calls[i].start), fmt.Sprint(calls[i].end)
		fmt.Fprintf(&req, "*4\r\n$8\r\nGETRANGE\r\n$1\r\nk\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(st), st, len(en), en)
	}
	go conn.Write([]byte(req.String()))
	for _, c := range calls {
		readReply(t, r) // +OK of SET
		want := readReply(t, r)
		if got := Range([]byte(c.s), c.start, c.end); want.Kind != '$' || string(got) != want.Str {
			t.Errorf("Range(%q, %d, %d) = %q, redis %s", c.s, c.start, c.end, got, want)
		}
	}
}

// The reference for SetRange: a byte-at-a-time write into a zero-padded copy.
func setRangeReference(b []byte, off int, v []byte) []byte {
	out := append([]byte(nil), b...)
	for len(out) < off+len(v) {
		out = append(out, 0)
	}
	for i, c := range v {
		out[off+i] = c
	}
	return out
}

func TestSetRangeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 20000 {
		// Garbage beyond len must not leak into the zero padding when capacity is reused.
		b := []byte(strings.Repeat("x", 16))[:rng.IntN(17)]
		v := []byte(strings.Repeat("v", rng.IntN(6)))
		off := rng.IntN(24)
		want := setRangeReference(b, off, v)
		if got := SetRange(b, off, v); string(got) != string(want) {
			t.Fatalf("SetRange(%q, %d, %q) = %q, want %q", b, off, v, got, want)
		}
	}
}

func TestCheckLen(t *testing.T) {
	f := func(size, add, limit int64, ok bool) {
		t.Helper()
		if err := CheckLen(size, add, limit); (err == nil) != ok {
			t.Errorf("CheckLen(%d, %d, %d) = %v", size, add, limit, err)
		}
	}
	f(10, 5, 15, true)
	f(10, 6, 15, false)
	f(math.MaxInt64, 1, math.MaxInt64, false)
	f(1, math.MaxInt64, math.MaxInt64, false)
	f(0, 0, 0, true)
}
