package ipset

import (
	"math/rand/v2"
	"testing"
)

// TestStartIndex: which IPv4 families get the start-ordered index (n4) and which a segment
// table, and that both answer as a brute-force scan for the most specific live cover does:
// prefixes and disjoint ranges (n4), ranges nested past maxDepth4 and overlapping ranges
// (segment table), with some entries expired or removed after the build.
func TestStartIndex(t *testing.T) {
	v4 := func(lo, hi uint64) Range { return Range{U128{0, lo}, U128{0, hi}, false} }
	for _, c := range []struct {
		name string
		n4   bool
		make func(rng *rand.Rand) []Range
	}{
		{"prefixes", true, func(rng *rand.Rand) []Range {
			var rs []Range
			for range 3000 {
				l := 8 + rng.IntN(25)
				lo, hm := mask(U128{0, 0x0a000000 | rng.Uint64N(1<<24)}, l, 32)
				rs = append(rs, Range{lo, U128{0, lo.Lo | hm.Lo}, false})
			}
			return rs
		}},
		{"disjoint", true, func(rng *rand.Rand) []Range {
			var rs []Range
			at := uint64(0)
			for range 3000 {
				n := 1 + rng.Uint64N(100)
				rs = append(rs, v4(at, at+n-1))
				at += n + rng.Uint64N(3)
			}
			return rs
		}},
		{"nested-deep", false, func(rng *rand.Rand) []Range {
			var rs []Range
			for i := range uint64(maxDepth4 + 10) {
				rs = append(rs, v4(1000+10*i, 5000-10*i), v4(1000+10*i+1, 1000+10*i+3))
			}
			return rs
		}},
		{"overlapping", false, func(rng *rand.Rand) []Range {
			var rs []Range
			for range 3000 {
				lo := rng.Uint64N(1 << 16)
				rs = append(rs, v4(lo, lo+rng.Uint64N(300)))
			}
			return rs
		}},
	} {
		rng := rand.New(rand.NewPCG(7, 7))
		s := New()
		type ent struct {
			r      Range
			expire int64
		}
		var es []ent
		seen := map[Range]bool{}
		for i, r := range c.make(rng) {
			if seen[r] {
				continue
			}
			seen[r] = true
			e := ent{r: r}
			if i%7 == 0 {
				e.expire = 100 + int64(rng.IntN(200))
			}
			s.Add(r, Meta{Label: []byte("x"), Expire: e.expire}, false, false)
			es = append(es, e)
		}
		s.Compact()
		if ix := s.idx[0]; ix == nil || (ix.n4 != nil) != c.n4 {
			t.Fatalf("%s: n4 index %v, want %v", c.name, ix != nil && ix.n4 != nil, c.n4)
		}
		for i := 0; i < len(es); i += 11 { // removed after the build: still in the index, dead
			s.Del(es[i].r)
			es[i].expire = -1
		}
		now := int64(200)
		want := func(a uint64) (Range, bool) {
			var best Range
			ok := false
			for _, e := range es {
				if e.expire < 0 || e.expire != 0 && e.expire <= now || a < e.r.Lo.Lo || a > e.r.Hi.Lo {
					continue
				}
				if !ok || moreSpecific(e.r, best) {
					best, ok = e.r, true
				}
			}
			return best, ok
		}
		check := func(a uint64) {
			w, wok := want(a)
			m, ok := s.Lookup(U128{0, a}, false, now)
			if ok != wok || ok && m.Range != w {
				t.Fatalf("%s: Lookup(%v) = %v %v, want %v %v", c.name, Addr(U128{0, a}, false), m.Range, ok, w, wok)
			}
		}
		for _, e := range es {
			for _, a := range []uint64{e.r.Lo.Lo, e.r.Hi.Lo, e.r.Lo.Lo - 1, e.r.Hi.Lo + 1} {
				check(a & 0xffffffff)
			}
		}
		for range 2000 {
			check(es[rng.IntN(len(es))].r.Lo.Lo + rng.Uint64N(50))
		}
	}
}
