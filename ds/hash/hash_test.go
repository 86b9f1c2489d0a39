package hash

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// model is the dumb reference: a map plus the insertion order a small hash keeps.
type model struct {
	order []string
	vals  map[string]string
	ttls  map[string]int64
}

func newModel() *model { return &model{vals: map[string]string{}, ttls: map[string]int64{}} }

func (m *model) set(f, v string, keepTTL bool) bool {
	_, ok := m.vals[f]
	if !ok {
		m.order = append(m.order, f)
	}
	m.vals[f] = v
	if !keepTTL {
		delete(m.ttls, f)
	}
	return !ok
}

func (m *model) del(f string) bool {
	if _, ok := m.vals[f]; !ok {
		return false
	}
	delete(m.vals, f)
	delete(m.ttls, f)
	m.order = slices.DeleteFunc(m.order, func(x string) bool { return x == f })
	return true
}

func (m *model) expire(now int64) int {
	n := 0
	for f, at := range m.ttls {
		if at <= now {
			m.del(f)
			n++
		}
	}
	return n
}

// randField draws from few fields with shared prefixes, so front coding, updates in the middle
// and repeated fields all happen.
func randField(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return fmt.Sprint("field:", r.IntN(40))
	case 1:
		return fmt.Sprint("user:1000:", []string{"name", "email", "age", "n", ""}[r.IntN(5)])
	case 2:
		return strings.Repeat("x", r.IntN(3)) + fmt.Sprint(r.IntN(10))
	}
	return string([]byte{byte(r.IntN(3)), byte(r.IntN(256))})
}

func randValue(r *rand.Rand, long bool) string {
	if long && r.IntN(10) == 0 {
		return strings.Repeat("long-value-", 1+r.IntN(20)) + fmt.Sprint(r.IntN(100))
	}
	switch r.IntN(3) {
	case 0:
		return fmt.Sprint("value:", r.IntN(1000))
	case 1:
		return fmt.Sprint(r.IntN(100000))
	}
	return ""
}

func TestHashMatchesModel(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		lim := Limits{MaxEntries: []int{0, 1, 8, 30, 512}[seed%5], MaxValue: []int{64, 16, 1000}[seed%3]}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runModel(t, r, lim, seed%2 == 0) })
	}
}

func runModel(t *testing.T, r *rand.Rand, lim Limits, long bool) {
	h, m := New(), newModel()
	now := int64(1_700_000_000_000)
	var scratch [8]byte // small on purpose: Get must grow it when needed
	for step := range 3000 {
		now += int64(r.IntN(3))
		if got, want := h.Expire(now), m.expire(now); got != want {
			t.Fatalf("step %d: Expire removed %d, want %d", step, got, want)
		}
		f := randField(r)
		switch op := r.IntN(10); op {
		case 0, 1, 2:
			v, keep := randValue(r, long), r.IntN(3) == 0
			if got, want := h.Set([]byte(f), []byte(v), keep, lim), m.set(f, v, keep); got != want {
				t.Fatalf("step %d: Set(%q) added=%v, want %v", step, f, got, want)
			}
		case 3:
			if got, want := h.Delete([]byte(f)), m.del(f); got != want {
				t.Fatalf("step %d: Delete(%q)=%v, want %v", step, f, got, want)
			}
		case 4:
			at := now + int64(r.IntN(5))
			if r.IntN(4) == 0 {
				at = 0
			}
			_, exists := m.vals[f]
			if got := h.SetTTL([]byte(f), at); got != exists {
				t.Fatalf("step %d: SetTTL(%q)=%v, want %v", step, f, got, exists)
			}
			if exists && at != 0 {
				m.ttls[f] = at
			} else {
				delete(m.ttls, f)
			}
		case 5:
			at, ok := h.TTL([]byte(f))
			_, exists := m.vals[f]
			if ok != exists || at != m.ttls[f] {
				t.Fatalf("step %d: TTL(%q)=%d,%v, want %d,%v", step, f, at, ok, m.ttls[f], exists)
			}
		default:
			v, ok := h.Get([]byte(f), scratch[:0])
			want, exists := m.vals[f]
			if ok != exists || string(v) != want || h.Has([]byte(f)) != exists {
				t.Fatalf("step %d: Get(%q)=%q,%v, want %q,%v", step, f, v, ok, want, exists)
			}
		}
		if step%50 == 0 {
			checkContents(t, h, m)
			checkContents(t, h.Clone().(*Hash), m)
		}
	}
	checkContents(t, h, m)
}

// checkContents compares everything a walk sees, and the order for a small hash.
func checkContents(t *testing.T, h *Hash, m *model) {
	t.Helper()
	if h.Len() != len(m.vals) {
		t.Fatalf("Len=%d, want %d", h.Len(), len(m.vals))
	}
	var order []string
	for it := h.Iter(); it.Next(); {
		f := string(it.Field())
		order = append(order, f)
		if v, ok := m.vals[f]; !ok || v != string(it.Value()) || it.TTL() != m.ttls[f] {
			t.Fatalf("walk: %q=%q ttl %d, want %q ttl %d", f, it.Value(), it.TTL(), v, m.ttls[f])
		}
	}
	if h.Encoding() != "hashtable" && !slices.Equal(order, m.order) {
		t.Fatalf("small hash order %q, want insertion order %q", order, m.order)
	}
	if len(order) != len(m.vals) {
		t.Fatalf("walk saw %d fields, want %d", len(order), len(m.vals))
	}
	if next := h.NextExpiry(); len(m.ttls) > 0 {
		earliest := slices.Min(mapValues(m.ttls))
		if next == 0 || next > earliest {
			t.Fatalf("NextExpiry=%d, earliest TTL %d", next, earliest)
		}
	}
}

func mapValues(m map[string]int64) []int64 {
	var out []int64
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// Conversions follow Redis's thresholds and never go back.
func TestEncodingThresholds(t *testing.T) {
	lim := Limits{MaxEntries: 4, MaxValue: 8}
	h := New()
	for i := range 4 {
		h.Set(fmt.Appendf(nil, "f%d", i), []byte("v"), false, lim)
	}
	if h.Encoding() != "listpack" {
		t.Fatalf("4 fields: %s", h.Encoding())
	}
	h.Set([]byte("f4"), []byte("v"), false, lim)
	if h.Encoding() != "hashtable" {
		t.Fatalf("5 fields over a limit of 4: %s", h.Encoding())
	}
	for i := range 5 {
		h.Delete(fmt.Appendf(nil, "f%d", i))
	}
	if h.Encoding() != "hashtable" || h.Len() != 0 {
		t.Fatalf("emptied: %s %d", h.Encoding(), h.Len())
	}
	h = New()
	h.Set([]byte("f"), []byte("12345678"), false, lim)
	if h.Encoding() != "listpack" {
		t.Fatal("a value at the limit converted")
	}
	h.Set([]byte("f"), []byte("123456789"), false, lim)
	if h.Encoding() != "hashtable" {
		t.Fatal("a value over the limit did not convert")
	}
	h = New()
	h.ConvertFor(lim, [][]byte{[]byte("a"), []byte("123456789")})
	if h.Encoding() != "hashtable" {
		t.Fatal("ConvertFor ignored a long argument")
	}
	h = New()
	h.EnableTTL()
	if h.Encoding() != "listpackex" {
		t.Fatalf("after EnableTTL: %s", h.Encoding())
	}
}

// Every field present for a whole HSCAN is returned, however the table grows or shrinks between
// steps, and a small hash comes back whole.
func TestScanCoversStableFields(t *testing.T) {
	lim := Limits{MaxEntries: 16, MaxValue: 64}
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		h := New()
		stable := map[string]bool{}
		for i := range 300 {
			f := fmt.Sprint("stable:", i)
			stable[f] = true
			h.Set([]byte(f), []byte("v"), false, lim)
		}
		seen := map[string]bool{}
		cursor, churn := uint64(0), 0
		for {
			cursor = h.Scan(cursor, 1+r.IntN(20), func(f, v []byte) { seen[string(f)] = true })
			if cursor == 0 {
				break
			}
			// Grow or shrink the table a lot between steps with fields that come and go.
			if churn < 3000*(1+round%3) {
				for range r.IntN(2000) {
					h.Set(fmt.Appendf(nil, "churn:%d", churn), []byte("x"), false, lim)
					churn++
				}
			} else {
				for i := range churn {
					h.Delete(fmt.Appendf(nil, "churn:%d", i))
				}
				churn = 0
			}
		}
		for f := range stable {
			if !seen[f] {
				t.Fatalf("round %d: HSCAN missed %q", round, f)
			}
		}
	}
	h := New()
	h.Set([]byte("a"), []byte("1"), false, lim)
	h.Set([]byte("b"), []byte("2"), false, lim)
	var got []string
	if c := h.Scan(0, 1, func(f, v []byte) { got = append(got, string(f)+"="+string(v)) }); c != 0 || !slices.Equal(got, []string{"a=1", "b=2"}) {
		t.Fatalf("small hash scan: cursor %d, %q", c, got)
	}
}

func TestRandomPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rnd := func() uint64 { return r.Uint64() }
	for _, n := range []int{1, 5, 100, 200, 3000} { // packed, packed, packed, flat, paged
		h := New()
		for i := range n {
			h.Set(fmt.Appendf(nil, "f%d", i), fmt.Appendf(nil, "v%d", i), false, Limits{128, 64})
		}
		for _, count := range []int{1, n / 3, n / 2, n} {
			if count == 0 {
				continue
			}
			seen := map[string]bool{}
			h.RandomPairs(count, true, rnd, func(f, v []byte) {
				if seen[string(f)] || "v"+string(f[1:]) != string(v) {
					t.Fatalf("n=%d count=%d: duplicate or wrong pair %q=%q", n, count, f, v)
				}
				seen[string(f)] = true
			})
			if len(seen) != count {
				t.Fatalf("n=%d: %d distinct pairs, want %d", n, len(seen), count)
			}
		}
		hits := map[string]int{}
		h.RandomPairs(20*n, false, rnd, func(f, v []byte) { hits[string(f)]++ })
		if n <= 100 && len(hits) != n {
			t.Fatalf("n=%d: 20n picks with repetition reached only %d fields", n, len(hits))
		}
	}
}

// Fields and values longer than a column's inline buffer, and a small hash past 127 pairs (its
// count takes a second header byte), still round-trip.
func TestPackedLongAndMany(t *testing.T) {
	lim := Limits{MaxEntries: 1000, MaxValue: 1000}
	h, m := New(), newModel()
	for i := range 300 {
		f := fmt.Sprint(strings.Repeat("p", i%150), i)
		v := strings.Repeat(fmt.Sprint(i%7), i%200)
		h.Set([]byte(f), []byte(v), false, lim)
		m.set(f, v, false)
	}
	checkContents(t, h, m)
	for i := 0; i < 300; i += 3 {
		f := fmt.Sprint(strings.Repeat("p", i%150), i)
		h.Delete([]byte(f))
		m.del(f)
	}
	checkContents(t, h, m)
	if h.Encoding() != "listpack" {
		t.Fatalf("encoding %s", h.Encoding())
	}
}

// Front coding: fields and values that share prefixes cost a few bytes each.
func TestPackedFrontCoding(t *testing.T) {
	h := New()
	for j := range 10 {
		h.Set(fmt.Appendf(nil, "field:%d", j), fmt.Appendf(nil, "value:12345:%d", j), false, Limits{512, 64})
	}
	// first pair: 1+7 + 1+13; the others: (1+1+1)*2; header 2.
	if want := 2 + 22 + 9*6; len(h.buf()) != want {
		t.Fatalf("packed size %d, want %d", len(h.buf()), want)
	}
}

func TestTableHomeMatchesHash(t *testing.T) {
	h := New()
	for i := range 5000 {
		h.Set(fmt.Appendf(nil, "f%d", i), nil, false, Limits{0, 64})
	}
	tb := h.table()
	m := tb.mask()
	for _, s := range tb.slots {
		if s != 0 && tb.home(s) != hashOf(tb.arena.field(slotRef(s)))&m {
			t.Fatal("a slot's tag disagrees with its field's hash")
		}
	}
}

// A paged table's arena is compacted as values are overwritten and fields deleted, so dead
// records do not pile up.
func TestArenaCompaction(t *testing.T) {
	h := New()
	lim := Limits{0, 64}
	const n = 5000 // past a flat table's size
	for i := range n {
		h.Set(fmt.Appendf(nil, "f%d", i), bytes.Repeat([]byte("a"), 10), false, lim)
	}
	for round := range 50 {
		for i := range n {
			h.Set(fmt.Appendf(nil, "f%d", i), bytes.Repeat([]byte("b"), 10+round%2), false, lim)
		}
	}
	a := &h.table().arena
	if a.total > 3*a.live+maxPageSize {
		t.Fatalf("arena holds %d bytes for %d live", a.total, a.live)
	}
	for i := range n {
		v, ok := h.Get(fmt.Appendf(nil, "f%d", i), nil)
		if !ok || string(v) != strings.Repeat("b", 11) {
			t.Fatalf("f%d = %q", i, v)
		}
	}
}

// TTLs survive the conversion to a large hash, and a large hash's expiry heap stays bounded
// when TTLs keep changing (stale entries are dropped by rebuilding it).
func TestTTLAcrossConversionAndChurn(t *testing.T) {
	lim := Limits{MaxEntries: 8, MaxValue: 64}
	h, m := New(), newModel()
	for i := range 8 {
		f := fmt.Sprint("f", i)
		h.Set([]byte(f), []byte("v"), false, lim)
		m.set(f, "v", false)
		h.SetTTL([]byte(f), int64(100+i))
		m.ttls[f] = int64(100 + i)
	}
	if h.Encoding() != "listpackex" {
		t.Fatalf("encoding %s", h.Encoding())
	}
	h.Set([]byte("f8"), []byte("v"), false, lim)
	m.set("f8", "v", false)
	if h.Encoding() != "hashtable" {
		t.Fatalf("encoding %s", h.Encoding())
	}
	checkContents(t, h, m)
	for round := range 200 {
		for i := range 9 {
			at := int64(1000 + round*10 + i)
			h.SetTTL(fmt.Appendf(nil, "f%d", i), at)
			m.ttls[fmt.Sprint("f", i)] = at
		}
	}
	if n := len(h.table().ttl.heap); n > 2*9+33 {
		t.Fatalf("expiry heap holds %d entries for 9 TTLs", n)
	}
	checkContents(t, h, m)
	if got, want := h.Expire(2995), m.expire(2995); got != want || got != 6 {
		t.Fatalf("Expire removed %d, model %d", got, want)
	}
	checkContents(t, h, m)
}

// WarmMember reads only: for present and absent fields of both encodings, an empty table and an
// emptied one, it returns without changing what a lookup then finds.
func TestWarmMemberReadsOnly(t *testing.T) {
	lim := Limits{MaxEntries: 4, MaxValue: 64}
	for _, n := range []int{0, 3, 50} {
		h := New()
		for i := range n {
			h.Set(fmt.Appendf(nil, "f%d", i), fmt.Appendf(nil, "v%d", i), false, lim)
		}
		for i := range n + 5 {
			h.WarmMember(fmt.Appendf(nil, "f%d", i))
		}
		for i := range n {
			if v, ok := h.Get(fmt.Appendf(nil, "f%d", i), nil); !ok || string(v) != fmt.Sprintf("v%d", i) {
				t.Fatalf("n=%d: f%d = %q %v after warming", n, i, v, ok)
			}
		}
		for i := range n {
			h.Delete(fmt.Appendf(nil, "f%d", i))
		}
		h.WarmMember([]byte("f0"))
		if h.Len() != 0 {
			t.Fatalf("n=%d: %d fields left", n, h.Len())
		}
	}
}

// A table whose arena has a single page compacts correctly: a clone packs every record into one
// page, and deleting a big one leaves that page mostly dead.
func TestCompactSinglePage(t *testing.T) {
	lim := Limits{MaxEntries: 128, MaxValue: 64}
	big := bytes.Repeat([]byte{'x'}, 40000) // past a flat table's size
	h := NewFor(lim, [][]byte{[]byte("big"), big})
	h.Set([]byte("big"), big, false, lim)
	for i := range 20 {
		h.Set(fmt.Appendf(nil, "f%d", i), fmt.Appendf(nil, "v%d", i), false, lim)
	}
	c := h.Clone().(*Hash)
	if n := len(c.table().arena.pages); n != 1 {
		t.Fatalf("clone has %d pages, want 1", n)
	}
	c.Delete([]byte("big"))
	if c.table().arena.total-c.table().arena.live > compactAfter {
		t.Fatalf("no compaction: %d dead bytes", c.table().arena.total-c.table().arena.live)
	}
	for i := range 20 {
		if v, ok := c.Get(fmt.Appendf(nil, "f%d", i), nil); !ok || string(v) != fmt.Sprintf("v%d", i) {
			t.Fatalf("after compaction f%d = %q %v", i, v, ok)
		}
	}
	if v, ok := h.Get([]byte("big"), nil); !ok || !bytes.Equal(v, big) || h.Len() != 21 {
		t.Fatal("the original changed")
	}
}

// A flat table matches the model through growth, values that change size, deletions that
// leave dead records, shrinking, and its move to a paged table once it outgrows flatMax; its
// header agrees with its slots and records all along.
func TestFlatMatchesModel(t *testing.T) {
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 11))
		lim := Limits{MaxEntries: 128, MaxValue: 64}
		h, m := New(), newModel()
		maxLen := []int{80, 300, 3000}[seed%3]
		for step := range 4000 {
			f := fmt.Sprint("f", r.IntN(60))
			switch r.IntN(8) {
			case 0, 1, 2, 3:
				v := strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(maxLen))
				if got, want := h.Set([]byte(f), []byte(v), false, lim), m.set(f, v, false); got != want {
					t.Fatalf("seed %d step %d: Set(%q) added=%v, want %v", seed, step, f, got, want)
				}
			case 4, 5:
				if got, want := h.Delete([]byte(f)), m.del(f); got != want {
					t.Fatalf("seed %d step %d: Delete(%q)=%v, want %v", seed, step, f, got, want)
				}
			default:
				v, ok := h.Get([]byte(f), nil)
				if want, exists := m.vals[f]; ok != exists || string(v) != want {
					t.Fatalf("seed %d step %d: Get(%q)=%q,%v, want %q,%v", seed, step, f, v, ok, want, exists)
				}
			}
			if h.isFlat() {
				checkFlat(t, flat(h.buf()))
			}
			if step%100 == 0 {
				checkContents(t, h, m)
				checkContents(t, h.Clone().(*Hash), m)
			}
		}
		checkContents(t, h, m)
	}
}

// checkFlat checks a flat table's header against its slots and records: the count, the dead
// bytes, the load limit, and that every entry is reachable from its home slot.
func checkFlat(t *testing.T, b flat) {
	t.Helper()
	n, live := 0, 0
	for i := range b.mask() + 1 {
		s := b.slot(i)
		if s == 0 {
			continue
		}
		n++
		f, _, end := b.record(int(s >> 16))
		live += end - int(s>>16)
		if j, ok := b.find(f, hashOf(f)); !ok || j != i {
			t.Fatalf("field %q in slot %d is found at %d, %v", f, i, j, ok)
		}
	}
	if n != b.count() || live != b.live() || n*4 > 3<<b.shift() || len(b) > flatMax {
		t.Fatalf("flat table: %d entries (count %d), %d live bytes (%d by the header), %d slots, %d bytes",
			n, b.count(), live, b.live(), b.mask()+1, len(b))
	}
}

// Memory of the large encodings: a hash of one long value is one allocation that fits it, a flat
// table stays within about twice its live bytes under churn, a hash past flatMax keeps the flat
// buffer as its first page, and a field TTL makes the hash paged.
func TestFlatSizes(t *testing.T) {
	lim := Limits{MaxEntries: 128, MaxValue: 64}
	v := bytes.Repeat([]byte("v"), 256)
	h := NewFor(lim, [][]byte{[]byte("f:0"), v})
	h.Set([]byte("f:0"), v, false, lim)
	if b := h.buf(); !h.isFlat() || len(b) != flatHeader+2*4+262 || cap(b) > 288 {
		t.Fatalf("one 256-byte field: flat %v, %d bytes in %d", h.isFlat(), len(h.buf()), cap(h.buf()))
	}
	for round := range 200 {
		for i := range 3 {
			h.Set(fmt.Appendf(nil, "f:%d", i), v[:200+(i+round)%50], false, lim)
		}
		h.Delete(fmt.Appendf(nil, "f:%d", round%3))
		b := flat(h.buf())
		if !h.isFlat() {
			t.Fatalf("round %d: no longer flat", round)
		}
		if cap(b) > 2*b.live()+flatSize(b.shift(), 0)+256 {
			t.Fatalf("round %d: %d bytes of capacity for %d live", round, cap(b), b.live())
		}
	}
	for i := range 3 {
		h.Set(fmt.Appendf(nil, "f:%d", i), v, false, lim)
	}
	first := &h.buf()[0]
	for i := range 20 {
		h.Set(fmt.Appendf(nil, "g:%d", i), v, false, lim)
	}
	tb := h.table()
	if tb == nil || h.Encoding() != "hashtable" || &tb.arena.pages[0][0] != first {
		t.Fatal("a hash past flatMax is not paged over its flat buffer")
	}
	if held := tb.arena.total; held > 23*288+1024 {
		t.Fatalf("23 fields of 256 bytes hold %d bytes of pages", held)
	}
	h = NewFor(lim, [][]byte{[]byte("f"), v})
	h.Set([]byte("f"), v, false, lim)
	h.SetTTL([]byte("f"), 12345)
	if h.table() == nil {
		t.Fatal("a field TTL left the hash flat")
	}
	if at, ok := h.TTL([]byte("f")); !ok || at != 12345 {
		t.Fatalf("TTL %d %v", at, ok)
	}
}
