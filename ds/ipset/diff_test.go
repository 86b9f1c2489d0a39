package ipset

import (
	"math/rand/v2"
	"os"
	"testing"
)

// The differential test: random nested and overlapping IPv4/IPv6 entries with NOMATCH, expiry
// and deletes against ref, a model written apart from the set: a map per prefix length searched
// from the most specific, plus a linear scan of the other ranges, then lookups of random
// addresses and of every entry's boundaries.

type refEntry struct {
	r       Range
	nomatch bool
	expire  int64
	label   string
}

type refModel struct {
	cidr   [2][129]map[U128]*refEntry // by family and prefix length, keyed by start
	ranges map[Range]*refEntry        // entries that are not a prefix
	list   []*refEntry                // ranges as a slice, made by freeze for the lookups
}

func (m *refModel) freeze() {
	m.list = m.list[:0]
	for _, e := range m.ranges {
		m.list = append(m.list, e)
	}
}

func newRef() *refModel {
	m := &refModel{ranges: map[Range]*refEntry{}}
	for f := range m.cidr {
		for l := range m.cidr[f] {
			m.cidr[f][l] = map[U128]*refEntry{}
		}
	}
	return m
}

// refPrefix: brute force, is r one prefix, and of what length.
func refPrefix(r Range) (int, bool) {
	w := width(r.V6)
	for l := 0; l <= w; l++ {
		lo, hm := mask(r.Lo, l, w)
		if lo == r.Lo && (U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}) == r.Hi {
			return l, true
		}
	}
	return 0, false
}

func (m *refModel) put(e *refEntry) {
	if l, ok := refPrefix(e.r); ok {
		m.cidr[fam(e.r.V6)][l][e.r.Lo] = e
		return
	}
	m.ranges[e.r] = e
}

func (m *refModel) get(r Range) *refEntry {
	if l, ok := refPrefix(r); ok {
		return m.cidr[fam(r.V6)][l][r.Lo]
	}
	return m.ranges[r]
}

func (m *refModel) del(r Range) bool {
	if l, ok := refPrefix(r); ok {
		mp := m.cidr[fam(r.V6)][l]
		_, had := mp[r.Lo]
		delete(mp, r.Lo)
		return had
	}
	_, had := m.ranges[r]
	delete(m.ranges, r)
	return had
}

func (m *refModel) lookup(a U128, v6 bool, now int64) *refEntry {
	var best *refEntry
	w := width(v6)
	f := fam(v6)
	for l := w; l >= 0; l-- {
		lo, _ := mask(a, l, w)
		if e := m.cidr[f][l][lo]; e != nil && (e.expire == 0 || e.expire > now) {
			best = e
			break
		}
	}
	for _, e := range m.list {
		if e.r.V6 != v6 || e.expire != 0 && e.expire <= now || a.Less(e.r.Lo) || e.r.Hi.Less(a) {
			continue
		}
		if best == nil || moreSpecific(e.r, best.r) {
			best = e
		}
	}
	return best
}

func randAddr(rng *rand.Rand, v6 bool) U128 {
	if v6 {
		// a small corner of the space, so entries nest and overlap
		return U128{0x20010db8 << 32, rng.Uint64N(1 << 20)}
	}
	return U128{0, 0x0a000000 | rng.Uint64N(1<<20)}
}

// randEntry is a random entry; with laminar6 an IPv6 one is a host or a prefix, never another
// range, so the IPv6 family is laminar (its index an n6 one).
func randEntry(rng *rand.Rand, laminar6 bool) Range {
	v6 := rng.IntN(3) == 0
	w := width(v6)
	a := randAddr(rng, v6)
	k := rng.IntN(3)
	if laminar6 && v6 && k == 2 {
		k = 1
	}
	switch k {
	case 0:
		return Range{a, a, v6}
	case 1:
		l := w - rng.IntN(21)
		lo, hm := mask(a, l, w)
		return Range{lo, U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}, v6}
	}
	b := U128{a.Hi, a.Lo + rng.Uint64N(1<<uint(rng.IntN(19)+1))}
	return Range{a, b, v6}
}

func TestDifferential(t *testing.T) {
	seeds := 300
	lookups := 100_000
	if testing.Short() || raceEnabled {
		seeds, lookups = 40, 20_000
	}
	if os.Getenv("HOTKV_IPSET_LONG") != "" {
		seeds, lookups = 300, 100_000
	}
	mismatches, n6 := 0, 0
	defer func(m, h, b int) { pendMin, bucketMin, bucketSegs = m, h, b }(pendMin, bucketMin, bucketSegs)
	for seed := 0; seed < seeds && mismatches < 10; seed++ {
		// A third of the seeds keep everything pending (the default threshold), the others
		// merge (off the writer, build.go) every 8 or 64 changes, installed at the next write.
		// Half of them bucket every host base and IPv4 index however small (hosts.go,
		// index.go), as only sets of 64k hosts or 32k segments are otherwise.
		pendMin = []int{4096, 8, 64}[seed%3]
		bucketMin, bucketSegs = 1<<16, 1<<15
		if seed%4 >= 2 {
			bucketMin, bucketSegs = 2, 2
		}
		rng := rand.New(rand.NewPCG(uint64(seed), 21))
		s, ref := New(), newRef()
		now := int64(1_000_000)
		n := 100 + rng.IntN(900)
		var all []Range
		for i := 0; i < n; i++ {
			r := randEntry(rng, seed%5 == 4) // a fifth of the seeds have a laminar IPv6 family
			if rng.IntN(8) == 0 && len(all) > 0 {
				r = all[rng.IntN(len(all))]
				if got, want := s.Del(r), ref.del(r); got != want {
					t.Fatalf("seed %d: Del(%v) = %v, want %v", seed, r, got, want)
				}
				continue
			}
			all = append(all, r)
			e := &refEntry{r: r, nomatch: rng.IntN(5) == 0}
			var m Meta
			if rng.IntN(6) == 0 {
				e.expire = now + int64(rng.IntN(2000)) - 500
				m.Expire = e.expire
			}
			if rng.IntN(4) == 0 {
				e.label = "l" + string(rune('a'+rng.IntN(5)))
				m.Label = []byte(e.label)
			}
			m.NoMatch = e.nomatch
			had := ref.get(r) != nil
			added, _ := s.Add(r, m, false, false)
			if added != !had {
				t.Fatalf("seed %d: Add(%v) new = %v, want %v", seed, r, added, !had)
			}
			ref.put(e)
			if rng.IntN(500) == 0 {
				s.Rebuild()
			}
		}
		check := func(a U128, v6 bool) {
			want := ref.lookup(a, v6, now)
			got, ok := s.Lookup(a, v6, now)
			switch {
			case want == nil && ok, want != nil && !ok:
				mismatches++
				t.Errorf("seed %d: Lookup(%v) = %v %v, want %v", seed, Range{a, a, v6}, got.Range, ok, want)
			case want != nil && (got.Range != want.r || got.NoMatch != want.nomatch || got.Label != want.label || got.Expire != want.expire):
				mismatches++
				t.Errorf("seed %d: Lookup(%v) = %+v, want %+v", seed, Range{a, a, v6}, got, *want)
			}
			if c := s.Contains(a, v6, now); c != (want != nil && !want.nomatch) {
				mismatches++
				t.Errorf("seed %d: Contains(%v) = %v", seed, Range{a, a, v6}, c)
			}
		}
		ref.freeze()
		for i := 0; i < lookups/2; i++ {
			v6 := rng.IntN(3) == 0
			check(randAddr(rng, v6), v6)
		}
		// Half the time the rest after a rebuild and an expiry pass.
		if seed%2 == 1 {
			s.Expire(now, 0, nil)
			s.Compact()
		}
		for _, r := range all {
			for _, a := range []U128{r.Lo, r.Hi, r.Lo.Sub(U128{0, 1})} {
				check(a, r.V6)
			}
			if b, over := r.Hi.Add1(); !over {
				check(b, r.V6)
			}
		}
		for i := 0; i < lookups/2; i++ {
			v6 := rng.IntN(3) == 0
			check(randAddr(rng, v6), v6)
		}
		// the count of live entries
		live := 0
		for f := range ref.cidr {
			for _, mp := range ref.cidr[f] {
				for _, e := range mp {
					if e.expire == 0 || e.expire > now {
						live++
					}
				}
			}
		}
		for _, e := range ref.ranges {
			if e.expire == 0 || e.expire > now {
				live++
			}
		}
		if got := s.LiveLen(now); got != live {
			t.Errorf("seed %d: LiveLen = %d, want %d", seed, got, live)
		}
		s.Compact() // no merge of this seed's may read the thresholds the next one sets
		if ix := s.idx[1]; ix != nil && ix.n6 != nil {
			n6++
		}
	}
	if n6 == 0 {
		t.Errorf("no seed's IPv6 family had an n6 index")
	}
	t.Logf("%d seeds, %d with an n6 index", seeds, n6)
}
