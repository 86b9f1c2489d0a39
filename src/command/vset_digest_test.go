package command

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestVsetDigestContent: DEBUG DIGEST-VALUE of a vector set hashes its elements, attributes,
// tags and expiring marks, not its graph. Two sets given the same elements in different orders
// (so different graphs and ids), a DUMP/RESTORE copy (ids renumbered after removals) and the
// original digest alike; changing any one element's vector, attribute, tags or TTL mark, or
// removing it, changes the digest.
func TestVsetDigestContent(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("CONFIG", "SET", "enable-debug-command", "yes")
	r := rand.New(rand.NewPCG(4, 4))
	const n = 300
	vecs := make([]string, n)
	for i := range vecs {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vecs[i] = fp32(v)
	}
	digestOf := func(key string) string {
		t.Helper()
		return tc.do("DEBUG", "DIGEST-VALUE", key)
	}
	for _, q := range []string{"Q8", "NOQUANT", "BIN"} {
		a, b := "a"+q, "b"+q
		for i := range n {
			tc.do("VADD", a, "FP32", vecs[i], "e"+strconv.Itoa(i), q, "SETATTR", `{"i":`+strconv.Itoa(i)+`}`)
		}
		for _, i := range r.Perm(n) {
			tc.do("VADD", b, "FP32", vecs[i], "e"+strconv.Itoa(i), q, "SETATTR", `{"i":`+strconv.Itoa(i)+`}`)
		}
		if tc.do("VLINKS", a, "e0") == tc.do("VLINKS", b, "e0") {
			t.Logf("%s: e0's links agree in both orders (the test then proves less)", q)
		}
		if da, db := digestOf(a), digestOf(b); da != db {
			t.Fatalf("%s: same elements in another order: digest %q vs %q", q, da, db)
		}
		for i := 0; i < n; i += 7 {
			tc.do("VREM", a, "e"+strconv.Itoa(i))
			tc.do("VREM", b, "e"+strconv.Itoa(i))
		}
		want := digestOf(a)
		if got := digestOf(b); got != want {
			t.Fatalf("%s: after the same VREMs: digest %q vs %q", q, got, want)
		}
		tc.do("RESTORE", a+"r", "0", bulkBody(t, tc.do("DUMP", a)))
		tc.do("COPY", a, a+"c")
		for _, k := range []string{a + "r", a + "c"} {
			if got := digestOf(k); got != want {
				t.Fatalf("%s: %s (RESTORE of DUMP, COPY) digests %q, source %q", q, k, got, want)
			}
		}
		changes := [][]string{
			{"VSETATTR", b, "e1", `{"i":-1}`},
			{"VSETATTR", b, "e1", ""},
			{"VREM", b, "e2"},
			{"VADD", b, "FP32", vecs[0], "e3", q},
		}
		// VSIM.SET gives an element tags and an expiry; the same done to both sets keeps them equal.
		for _, k := range []string{a, b} {
			tc.do("VSIM.SET", k, "TTL", "3600000", "TAGS", "2", "x", "y", "ITEMS", "1", "e5", vecs[5])
		}
		if da, db := digestOf(a), digestOf(b); da != db || da == want {
			t.Fatalf("%s: after the same VSIM.SET: %q vs %q (before %q)", q, da, db, want)
		}
		want = digestOf(a)
		changes = append(changes,
			[]string{"VSIM.SET", b, "TTL", "3600000", "TAGS", "2", "x", "z", "ITEMS", "1", "e5", vecs[5]},
			[]string{"VSIM.SET", b, "TAGS", "2", "x", "y", "ITEMS", "1", "e5", vecs[5]}) // no TTL
		for i, ch := range changes {
			tc.do("DEL", "t")
			tc.do("COPY", a, "t")
			ch[1] = "t"
			tc.do(ch...)
			if got := digestOf("t"); got == want {
				t.Errorf("%s: change %d %q did not change the digest", q, i, ch)
			}
		}
		// The order tags were given in does not count, nor the expiry's time.
		tc.do("DEL", "t")
		tc.do("COPY", a, "t")
		tc.do("VSIM.SET", "t", "PXAT", "99999999999999", "TAGS", "2", "y", "x", "ITEMS", "1", "e5", vecs[5])
		if got := digestOf("t"); got != want {
			t.Errorf("%s: tags y x and another expiry time: digest %q, want %q", q, got, want)
		}
	}
}
