package zset

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"testing"
)

// model is the dumb reference: a map, sorted on demand.
type model map[string]float64

// sorted returns the entries in Redis's set order (modelOrder).
func (m model) sorted() []Entry {
	es := make([]Entry, 0, len(m))
	for k, v := range m {
		es = append(es, Entry{[]byte(k), v})
	}
	slices.SortFunc(es, modelOrder)
	return es
}

// modelOrder is Redis's set order written out rather than taken from the package (compare,
// SortEntries): by score, then by the member's bytes; -0 and 0 are the same score.
func modelOrder(a, b Entry) int {
	switch {
	case a.Score < b.Score:
		return -1
	case a.Score > b.Score:
		return 1
	}
	return bytes.Compare(a.Member, b.Member)
}

// inScore is the model's score range test: Min and Max are inclusive unless marked exclusive.
func inScore(r ScoreRange, s float64) bool {
	aboveMin := s > r.Min || (!r.MinEx && s == r.Min)
	belowMax := s < r.Max || (!r.MaxEx && s == r.Max)
	return aboveMin && belowMax
}

// inLex is the model's lex range test on the bound strings ZRANGEBYLEX takes: "-" and "+" are
// the infinite ends, "[m" includes m, "(m" excludes it.
func inLex(lo, hi, m string) bool {
	aboveMin := lo == "-" || (lo != "+" && (m > lo[1:] || (lo[0] == '[' && m == lo[1:])))
	belowMax := hi == "+" || (hi != "-" && (m < hi[1:] || (hi[0] == '[' && m == hi[1:])))
	return aboveMin && belowMax
}

// add is Redis's zsetAdd over the model.
func (m model) add(member string, score float64, f Flags) (Outcome, float64, error) {
	cur, ok := m[member]
	if !ok {
		if f&XX != 0 {
			return Nop, 0, nil
		}
		m[member] = score
		return Added, score, nil
	}
	if f&NX != 0 {
		return Nop, cur, nil
	}
	if f&Incr != 0 {
		score += cur
		if math.IsNaN(score) {
			return None, 0, ErrNaN
		}
	}
	if (f&LT != 0 && score >= cur) || (f&GT != 0 && score <= cur) {
		return Nop, cur, nil
	}
	if score == cur {
		return None, score, nil
	}
	m[member] = score
	return Updated, score, nil
}

func contents(z *ZSet) []Entry {
	var out []Entry
	if z.Len() == 0 {
		return out
	}
	z.Walk(0, false, func(m []byte, s float64) bool {
		out = append(out, Entry{bytes.Clone(m), s})
		return true
	})
	return out
}

func sameEntries(a, b []Entry) bool {
	return slices.EqualFunc(a, b, func(x, y Entry) bool {
		return bytes.Equal(x.Member, y.Member) && sameScore(x.Score, y.Score)
	})
}

// sameScore compares scores, treating -0 and 0 as equal: a packed set stores -0 as 0.
func sameScore(a, b float64) bool { return a == b }

var scorePool = []float64{0, math.Copysign(0, -1), 1, -1, 1.5, 2, 3, 1e300, -1e300,
	math.Inf(1), math.Inf(-1), 0.1, 1e-310}

func randScore(rng *rand.Rand) float64 {
	if rng.Intn(3) == 0 {
		return scorePool[rng.Intn(len(scorePool))]
	}
	return math.Round(rng.NormFloat64()*100) / 4
}

func randMember(rng *rand.Rand, space int) string {
	n := rng.Intn(space)
	if n%17 == 0 {
		return fmt.Sprintf("long-member-%d-%s", n, bytes.Repeat([]byte{'x'}, n%90))
	}
	return fmt.Sprintf("m%d", n)
}

func randFlags(rng *rand.Rand) Flags {
	switch rng.Intn(8) {
	case 0:
		return NX
	case 1:
		return XX
	case 2:
		return GT
	case 3:
		return LT | XX
	case 4:
		return Incr
	}
	return 0
}

// TestMatchesModel runs random operations on a set and on the model under several encoding
// limits (packed throughout, converting early, always large) and compares everything the API
// exposes after each step.
func TestMatchesModel(t *testing.T) {
	limits := []Limits{{MaxEntries: 4, MaxValue: 8}, {MaxEntries: 128, MaxValue: 64},
		{MaxEntries: 0, MaxValue: 0}, {MaxEntries: 1 << 20, MaxValue: 1 << 20}}
	for li, lim := range limits {
		for seed := range 6 {
			rng := rand.New(rand.NewSource(int64(seed*100 + li)))
			space := []int{8, 60, 400, 3000}[seed%4]
			if lim.MaxEntries > 1000 {
				space = min(space, 400) // a huge listpack is O(n) an operation
			}
			z, m := New(), model{}
			for step := range 4000 {
				randomOp(t, rng, z, m, lim, space)
				if step%97 == 0 || step == 3999 {
					checkAgainst(t, z, m)
				}
			}
		}
	}
}

func randomOp(t *testing.T, rng *rand.Rand, z *ZSet, m model, lim Limits, space int) {
	t.Helper()
	member := randMember(rng, space)
	switch op := rng.Intn(10); {
	case op < 6:
		s, f := randScore(rng), randFlags(rng)
		o1, s1, e1 := z.Add([]byte(member), s, f, lim)
		o2, s2, e2 := m.add(member, s, f)
		if o1 != o2 || !sameScore(s1, s2) || (e1 == nil) != (e2 == nil) {
			t.Fatalf("Add(%q, %v, %v) = %v %v %v, model %v %v %v", member, s, f, o1, s1, e1, o2, s2, e2)
		}
	case op < 8:
		_, had := m[member]
		delete(m, member)
		if got := z.Remove([]byte(member)); got != had {
			t.Fatalf("Remove(%q) = %v, want %v", member, got, had)
		}
	case op == 8 && z.Len() > 0:
		a, b := rng.Intn(z.Len()), rng.Intn(z.Len())
		a, b = min(a, b), max(a, b)
		b = min(b, a+rng.Intn(5))
		es := m.sorted()
		for _, e := range es[a : b+1] {
			delete(m, string(e.Member))
		}
		if got := z.RemoveRange(a, b); got != b-a+1 {
			t.Fatalf("RemoveRange(%d, %d) = %d", a, b, got)
		}
	default:
		checkRanges(t, rng, z, m)
	}
}

func checkAgainst(t *testing.T, z *ZSet, m model) {
	t.Helper()
	checkInvariants(t, z)
	want := m.sorted()
	if z.Len() != len(want) {
		t.Fatalf("Len %d, model %d", z.Len(), len(want))
	}
	if got := contents(z); !sameEntries(got, want) {
		t.Fatalf("contents differ:\n got %v\nwant %v", got, want)
	}
	for r, e := range want {
		rank, s, ok := z.Rank(e.Member)
		if !ok || rank != r || !sameScore(s, e.Score) {
			t.Fatalf("Rank(%q) = %d %v %v, want %d", e.Member, rank, s, ok, r)
		}
		if s, ok := z.Score(e.Member); !ok || !sameScore(s, e.Score) {
			t.Fatalf("Score(%q) = %v %v", e.Member, s, ok)
		}
		if mem, s := z.At(r); !bytes.Equal(mem, e.Member) || !sameScore(s, e.Score) {
			t.Fatalf("At(%d) = %q %v", r, mem, s)
		}
	}
	if _, ok := z.Score([]byte("absent")); ok {
		t.Fatal("Score of an absent member")
	}
	checkWalks(t, z, want)
	checkScanAndRandom(t, z, want)
	c := z.Clone().(*ZSet)
	if c.Encoding() != z.Encoding() || !sameEntries(contents(c), want) {
		t.Fatalf("Clone differs: %s vs %s", c.Encoding(), z.Encoding())
	}
	checkInvariants(t, c)
}

func checkWalks(t *testing.T, z *ZSet, want []Entry) {
	t.Helper()
	if len(want) == 0 {
		return
	}
	for _, start := range []int{0, len(want) / 2, len(want) - 1} {
		var got []Entry
		z.Walk(start, true, func(m []byte, s float64) bool {
			got = append(got, Entry{bytes.Clone(m), s})
			return true
		})
		rev := slices.Clone(want[:start+1])
		slices.Reverse(rev)
		if !sameEntries(got, rev) {
			t.Fatalf("reverse walk from %d differs", start)
		}
		got = got[:0]
		z.Walk(start, false, func(m []byte, s float64) bool {
			got = append(got, Entry{bytes.Clone(m), s})
			return true
		})
		if !sameEntries(got, want[start:]) {
			t.Fatalf("walk from %d differs", start)
		}
	}
}

func checkScanAndRandom(t *testing.T, z *ZSet, want []Entry) {
	t.Helper()
	seen := map[string]float64{}
	cursor := uint64(0)
	for i := 0; ; i++ {
		cursor = z.Scan(cursor, 7, func(m []byte, s float64) { seen[string(m)] = s })
		if cursor == 0 {
			break
		}
		if i > 1<<20 {
			t.Fatal("scan does not end")
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("scan saw %d members, want %d", len(seen), len(want))
	}
	for i := range want {
		if s, ok := seen[string(want[i].Member)]; !ok || !sameScore(s, want[i].Score) {
			t.Fatalf("scan missed %q", want[i].Member)
		}
	}
	got := map[string]bool{}
	for i := range z.Len() {
		m, s := z.RandomAt(i)
		if ws, ok := seen[string(m)]; !ok || !sameScore(ws, s) {
			t.Fatalf("RandomAt(%d) = %q %v", i, m, s)
		}
		got[string(m)] = true
	}
	if len(got) != len(want) {
		t.Fatalf("RandomAt covers %d of %d members", len(got), len(want))
	}
}

// checkRanges compares score-range queries with the model on random ranges.
func checkRanges(t *testing.T, rng *rand.Rand, z *ZSet, m model) {
	t.Helper()
	es := m.sorted()
	r := ScoreRange{Min: randScore(rng), Max: randScore(rng), MinEx: rng.Intn(2) == 0, MaxEx: rng.Intn(2) == 0}
	first, last, count := -1, -1, 0
	for i, e := range es {
		if inScore(r, e.Score) {
			if first < 0 {
				first = i
			}
			last = i
			count++
		}
	}
	if got := z.FirstInScore(&r); got != first {
		t.Fatalf("FirstInScore(%+v) = %d, want %d", r, got, first)
	}
	if got := z.LastInScore(&r); got != last {
		t.Fatalf("LastInScore(%+v) = %d, want %d", r, got, last)
	}
	if got := z.CountInScore(&r); got != count {
		t.Fatalf("CountInScore(%+v) = %d, want %d", r, got, count)
	}
}

// TestLexRanges checks lex queries on sets whose members all share one score, the only case
// where lex ranges are defined.
func TestLexRanges(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, lim := range []Limits{{128, 64}, {0, 0}} {
		z := New()
		var members []string
		for i := range 500 {
			mem := fmt.Sprintf("%c%d", 'a'+rng.Intn(26), i%37)
			if _, ok := z.Score([]byte(mem)); !ok {
				members = append(members, mem)
			}
			z.Add([]byte(mem), 0, 0, lim)
		}
		sort.Strings(members)
		bounds := []string{"-", "+", "[a", "(a", "[m5", "(m5", "[z", "(zz", "[", "(", "[b10"}
		for _, lo := range bounds {
			for _, hi := range bounds {
				r, ok := ParseLexRange([]byte(lo), []byte(hi))
				if !ok {
					t.Fatalf("ParseLexRange(%q, %q) failed", lo, hi)
				}
				first, last, count := -1, -1, 0
				for i, mem := range members {
					if inLex(lo, hi, mem) {
						if first < 0 {
							first = i
						}
						last = i
						count++
					}
				}
				if z.FirstInLex(&r) != first || z.LastInLex(&r) != last || z.CountInLex(&r) != count {
					t.Fatalf("%s %s %s: got %d %d %d, want %d %d %d", z.Encoding(), lo, hi,
						z.FirstInLex(&r), z.LastInLex(&r), z.CountInLex(&r), first, last, count)
				}
			}
		}
	}
}

func TestParseLexRange(t *testing.T) {
	f := func(lo, hi string, ok, empty bool) {
		t.Helper()
		r, got := ParseLexRange([]byte(lo), []byte(hi))
		if got != ok || (ok && r.empty() != empty) {
			t.Errorf("ParseLexRange(%q, %q) = %v (empty %v), want %v %v", lo, hi, got, r.empty(), ok, empty)
		}
	}
	f("-", "+", true, false)
	f("-", "-", true, true)
	f("+", "+", true, true)
	f("+", "-", true, true)
	f("[a", "[a", true, false)
	f("(a", "[a", true, true)
	f("[b", "[a", true, true)
	f("[a", "-", true, true)
	f("+", "[a", true, true)
	f("a", "+", false, false)
	f("-a", "+", false, false)
	f("", "+", false, false)
	f("-\x00x", "+", true, false)
}

// TestEncodingThresholds checks when a set converts, following Redis's zsetAdd.
func TestEncodingThresholds(t *testing.T) {
	lim := Limits{MaxEntries: 3, MaxValue: 4}
	z := New()
	for i, m := range []string{"a", "b", "c"} {
		z.Add([]byte(m), float64(i), 0, lim)
	}
	if z.Encoding() != "listpack" {
		t.Fatalf("3 members: %s", z.Encoding())
	}
	z.Add([]byte("a"), 9, 0, lim) // an update never converts
	z.Add([]byte("d"), 0, XX, lim)
	if z.Encoding() != "listpack" {
		t.Fatalf("after update: %s", z.Encoding())
	}
	z.Add([]byte("d"), 1, 0, lim)
	if z.Encoding() != "skiplist" {
		t.Fatalf("4 members: %s", z.Encoding())
	}
	z.Remove([]byte("d"))
	if z.Encoding() != "skiplist" {
		t.Fatal("a large set never converts back")
	}
	z = New()
	z.Add([]byte("12345"), 0, 0, lim)
	if z.Encoding() != "skiplist" {
		t.Fatalf("long member: %s", z.Encoding())
	}
	if got := FromSorted([]Entry{{[]byte("a"), 1}, {[]byte("b"), 2}}, lim).Encoding(); got != "listpack" {
		t.Fatalf("FromSorted small: %s", got)
	}
	if got := FromSorted([]Entry{{[]byte("abcde"), 1}}, lim).Encoding(); got != "skiplist" {
		t.Fatalf("FromSorted long: %s", got)
	}
}

// TestNegativeZero: the packed encoding stores -0 as 0 (as Redis's listpack does), the large
// one keeps it.
func TestNegativeZero(t *testing.T) {
	negZero := math.Copysign(0, -1)
	z := New()
	z.Add([]byte("a"), negZero, 0, Limits{128, 64})
	if s, _ := z.Score([]byte("a")); math.Signbit(s) {
		t.Error("listpack kept -0")
	}
	z = New()
	z.Add([]byte("a"), negZero, 0, Limits{0, 0})
	if s, _ := z.Score([]byte("a")); !math.Signbit(s) {
		t.Error("skiplist lost -0")
	}
}

func TestNaN(t *testing.T) {
	z := New()
	lim := Limits{128, 64}
	if _, _, err := z.Add([]byte("a"), math.NaN(), 0, lim); err != ErrNaN {
		t.Fatalf("NaN score: %v", err)
	}
	z.Add([]byte("a"), math.Inf(1), 0, lim)
	if _, _, err := z.Add([]byte("a"), math.Inf(-1), Incr, lim); err != ErrNaN {
		t.Fatalf("inf + -inf: %v", err)
	}
	if s, _ := z.Score([]byte("a")); !math.IsInf(s, 1) {
		t.Fatalf("score changed to %v", s)
	}
}

// TestScanGuarantee: members present for a whole scan are returned although others are added
// and removed between calls, growing and shrinking the index.
func TestScanGuarantee(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	lim := Limits{0, 0}
	for round := range 20 {
		z := New()
		stable := map[string]bool{}
		for i := range 3000 { // just under a resize of the index
			m := fmt.Sprintf("s%d", i)
			z.Add([]byte(m), float64(i), 0, lim)
			stable[m] = true
		}
		seen := map[string]bool{}
		cursor := uint64(0)
		churn := 0
		for {
			cursor = z.Scan(cursor, 1+rng.Intn(50), func(m []byte, _ float64) { seen[string(m)] = true })
			if cursor == 0 {
				break
			}
			// Grow in even rounds (slower than the scan advances, or it never ends), shrink hard
			// in odd ones.
			for range 200 {
				if round%2 == 0 && churn%20 != 0 {
					churn++
					continue
				}
				if round%2 == 0 {
					z.Add([]byte(fmt.Sprintf("t%d", churn)), 0, 0, lim)
				} else if z.Len() > 0 {
					m, _ := z.RandomAt(rng.Intn(z.Len()))
					if !stable[string(m)] || rng.Intn(2) == 0 {
						delete(stable, string(m))
						z.Remove(bytes.Clone(m))
					}
				}
				churn++
			}
		}
		for m := range stable {
			if !seen[m] {
				t.Fatalf("round %d: scan missed %q", round, m)
			}
		}
		if n := len(z.large().slots); (round%2 == 0 && n <= 4096) || (round%2 == 1 && n >= 4096) {
			t.Fatalf("round %d: the index did not resize (%d slots)", round, n)
		}
	}
}

// A listpack past 65534 members keeps counting right: its stored count saturates, as Redis's
// listpack header does, and the records are counted instead.
func TestHugeListpackCount(t *testing.T) {
	lim := Limits{1 << 20, 1 << 20}
	es := make([]Entry, 70000)
	for i := range es {
		es[i] = Entry{[]byte(fmt.Sprintf("m%06d", i)), float64(i)}
	}
	z := FromSorted(es, lim)
	if z.Encoding() != "listpack" || z.Len() != 70000 {
		t.Fatalf("%s with %d members", z.Encoding(), z.Len())
	}
	z.Add([]byte("extra"), -1, 0, lim)
	z.Remove([]byte("m000005"))
	z.RemoveRange(0, 9)
	if z.Len() != 69990 {
		t.Fatalf("Len %d, want 69990", z.Len())
	}
	if m, _ := z.At(0); string(m) != "m000010" {
		t.Fatalf("At(0) = %q", m)
	}
	z.RemoveRange(0, z.Len()-65534)
	if z.Len() != 65533 || lpLen(z.buf()) != 65533 {
		t.Fatalf("Len %d after shrinking below the saturated count", z.Len())
	}
}

// WarmMember and WarmRank read only: for present and absent members and every rank of both
// encodings, and for a set emptied of all of them, they return without changing what Score finds.
func TestWarmMemberReadsOnly(t *testing.T) {
	lim := Limits{MaxEntries: 8, MaxValue: 64}
	for _, n := range []int{0, 5, 300} {
		z := New()
		for i := range n {
			z.Add(fmt.Appendf(nil, "m%d", i), float64(i), 0, lim)
		}
		for i := range n + 5 {
			z.WarmMember(fmt.Appendf(nil, "m%d", i))
		}
		for r := -n - 2; r <= n+2; r++ {
			z.WarmRank(r)
		}
		for i := range n {
			if s, ok := z.Score(fmt.Appendf(nil, "m%d", i)); !ok || s != float64(i) {
				t.Fatalf("n=%d: m%d = %v %v after warming", n, i, s, ok)
			}
		}
		for i := range n {
			z.Remove(fmt.Appendf(nil, "m%d", i))
		}
		z.WarmMember([]byte("m0"))
		z.WarmRank(0)
		if z.Len() != 0 {
			t.Fatalf("n=%d: %d members left", n, z.Len())
		}
	}
}
