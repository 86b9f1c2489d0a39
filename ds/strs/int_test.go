package strs

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// canonicalInt is the reference for ParseInt, Redis's string2ll (redis/redis: src/util.c) written
// out: decimal digits with an optional leading '-', no '+', no spaces, no leading zeros (so no
// "-0"), within int64.
func canonicalInt(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	switch {
	case digits == "" || strings.TrimLeft(digits, "0123456789") != "":
		return 0, false // empty, a lone '-', '+', a space or another byte
	case digits[0] == '0' && s != "0":
		return 0, false // a leading zero, "-0" included
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil // ParseInt fails outside int64
}

func TestParseIntMatchesReference(t *testing.T) {
	f := func(s string) {
		t.Helper()
		v, ok := ParseInt([]byte(s))
		rv, rok := canonicalInt(s)
		if ok != rok || (ok && v != rv) {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", s, v, ok, rv, rok)
		}
	}
	for _, s := range []string{"", "0", "-0", "00", "01", "+1", " 1", "1 ", "-", "9223372036854775807",
		"9223372036854775808", "-9223372036854775808", "-9223372036854775809", "99999999999999999999",
		"123456789012345678901", "1a", "1.0"} {
		f(s)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const chars = "0123456789-+ "
	for range 100000 {
		b := make([]byte, 1+rng.IntN(21))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars)-3*rng.IntN(2))]
		}
		f(string(b))
	}
}

func TestIncrByMatchesBigInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	vals := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	pick := func() int64 {
		if rng.IntN(3) == 0 {
			return vals[rng.IntN(len(vals))]
		}
		return int64(rng.Uint64()) >> rng.IntN(64)
	}
	for range 100000 {
		cur, delta := pick(), pick()
		buf := strconv.AppendInt(make([]byte, 0, 4), cur, 10)
		got, v, err := IncrBy(buf, buf, delta)
		sum := new(big.Int).Add(big.NewInt(cur), big.NewInt(delta))
		if !sum.IsInt64() {
			if err != ErrOverflow {
				t.Fatalf("%d + %d: err %v, want overflow", cur, delta, err)
			}
			continue
		}
		if err != nil || v != sum.Int64() || string(got) != sum.String() {
			t.Fatalf("%d + %d = %q (%d, %v), want %s", cur, delta, got, v, err, sum)
		}
	}
	if _, _, err := IncrBy(nil, []byte("1.5"), 1); err != ErrNotInt {
		t.Fatalf("non-integer: %v", err)
	}
	if _, _, err := IncrBy(nil, []byte{}, 1); err != ErrNotInt {
		t.Fatalf("empty string: %v", err)
	}
}
