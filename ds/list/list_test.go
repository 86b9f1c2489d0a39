package list

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// check verifies the list's internal invariants: counts agree, no chunk is empty, entries parse
// to the end of each chunk inside its buffer, chunks respect the limits unless they hold a single
// entry, and free slots hold nothing but at most one spare.
func (l *List) check(t *testing.T) {
	t.Helper()
	total := 0
	ns, lo, hi := l.nodes()
	for i := lo; i < hi; i++ {
		c := ns[i]
		if c == nil {
			t.Fatalf("chunk %d is nil", i)
		}
		if c.off > c.end || c.end > c.cap {
			t.Fatalf("chunk %d: entries at %d..%d of %d bytes", i, c.off, c.end, c.cap)
		}
		d := c.data()
		n := 0
		for r := 0; r < len(d); r = skip(d, r) {
			n++
		}
		switch {
		case c.n == 0:
			t.Fatalf("chunk %d is empty", i)
		case n != int(c.n):
			t.Fatalf("chunk %d holds %d entries, counts %d", i, n, c.n)
		case l.over(c):
			t.Fatalf("chunk %d is over the limits: %d bytes, %d entries", i, c.size(), c.n)
		}
		total += n
	}
	if total != l.Len() {
		t.Fatalf("chunks hold %d entries, list counts %d", total, l.Len())
	}
	if l.d == nil {
		return
	}
	if l.one[0] != nil {
		t.Fatal("a deque list keeps a chunk in its inline slot")
	}
	spares := 0
	for i, c := range ns {
		at := int32(i)
		switch {
		case at >= lo && at < hi:
		case c != nil && (at == lo-1 || at == hi):
			spares++
		case c != nil:
			t.Fatalf("free slot %d (chunks %d..%d) is not empty: %d bytes", i, lo, hi, c.cap)
		}
	}
	if spares > 1 {
		t.Fatalf("%d spare chunks", spares)
	}
	if p := l.d.idx; p != nil && p.valid {
		sum := 0
		for j, c := range ns[lo:hi] {
			if p.sums[j] != sum {
				t.Fatalf("prefix index: %d elements before chunk %d, counted %d", p.sums[j], j, sum)
			}
			sum += int(c.n)
		}
		if len(p.sums) != int(hi-lo)+1 || p.sums[hi-lo] != sum {
			t.Fatalf("prefix index of %d sums for %d chunks", len(p.sums), hi-lo)
		}
	}
}

// chunks returns how many chunks the list has.
func (l *List) chunks() int {
	_, lo, hi := l.nodes()
	return int(hi - lo)
}

// elems returns the list's values through a forward and a backward walk, checking they agree.
func (l *List) elems(t *testing.T) []string {
	t.Helper()
	var out []string
	if l.Len() == 0 {
		return out
	}
	it := l.IterAt(0, false)
	for v, ok := it.Next(); ok; v, ok = it.Next() {
		out = append(out, string(v))
	}
	var back []string
	it = l.IterAt(l.Len()-1, true)
	for v, ok := it.Next(); ok; v, ok = it.Next() {
		back = append(back, string(v))
	}
	slices.Reverse(back)
	if !slices.Equal(out, back) {
		t.Fatalf("forward %q, backward %q", out, back)
	}
	return out
}

// randValue draws values of every entry kind, from a small set so that searches find matches.
func randValue(r *rand.Rand) string {
	switch r.IntN(10) {
	case 0:
		return strconv.Itoa(r.IntN(200) - 100)
	case 1:
		return strconv.FormatInt(r.Int64N(1<<40)-1<<39, 10)
	case 2:
		return strings.Repeat("L", 60+r.IntN(200))
	case 3:
		if r.IntN(20) == 0 {
			return strings.Repeat("H", 5000+r.IntN(70000)) // larger than any node limit
		}
		return "0" + strconv.Itoa(r.IntN(5))
	default:
		return string(rune('a' + r.IntN(6)))
	}
}

// The list behaves like a slice of strings under a random mix of every operation, for every kind
// of node limit.
func TestListAgainstModel(t *testing.T) {
	for _, fill := range []int{-5, -2, -1, 0, 1, 3, 128, 1 << 20, -100} {
		t.Run(fmt.Sprint(fill), func(t *testing.T) {
			for seed := range uint64(6) {
				runModel(t, fill, seed, 3000)
			}
		})
	}
}

func runModel(t *testing.T, fill int, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, uint64(fill+1000)))
	l := New(fill)
	var m []string
	var sc [maxIntLen]byte
	for step := range steps {
		v := randValue(r)
		op := r.IntN(14)
		if len(m) == 0 && op >= 2 && op <= 11 {
			op = r.IntN(2)
		}
		switch op {
		case 0:
			l.PushFront([]byte(v))
			m = slices.Insert(m, 0, v)
		case 1:
			l.PushBack([]byte(v))
			m = append(m, v)
		case 2:
			got, ok := l.PopFront(sc[:0])
			if !ok || string(got) != m[0] {
				t.Fatalf("step %d PopFront %q %v, want %q", step, got, ok, m[0])
			}
			m = m[1:]
		case 3:
			got, ok := l.PopBack(sc[:0])
			if !ok || string(got) != m[len(m)-1] {
				t.Fatalf("step %d PopBack %q, want %q", step, got, m[len(m)-1])
			}
			m = m[:len(m)-1]
		case 4:
			i := r.IntN(len(m))
			if got := l.Index(i, sc[:0]); string(got) != m[i] {
				t.Fatalf("step %d Index(%d) %q, want %q", step, i, got, m[i])
			}
		case 5:
			i := r.IntN(len(m))
			l.Set(i, []byte(v))
			m[i] = v
		case 6:
			i := r.IntN(len(m) + 1)
			l.Insert(i, []byte(v))
			m = slices.Insert(m, i, v)
		case 7:
			if got, want := l.Find([]byte(v)), slices.Index(m, v); got != want {
				t.Fatalf("step %d Find(%q) %d, want %d", step, v, got, want)
			}
		case 8:
			count := r.IntN(5) - 2
			got := l.Remove([]byte(v), count)
			var want int
			m, want = modelRemove(m, v, count)
			if got != want {
				t.Fatalf("step %d Remove(%q, %d) = %d, want %d", step, v, count, got, want)
			}
		case 9:
			i := r.IntN(len(m))
			n := r.IntN(len(m) - i + 1)
			l.DeleteRange(i, n)
			m = slices.Delete(m, i, i+n)
		case 10:
			q := PosQuery{Reverse: r.IntN(2) == 0, Skip: r.IntN(3), Count: r.IntN(3), MaxLen: r.IntN(len(m) + 2)}
			got, want := l.Pos([]byte(v), q, nil), modelPos(m, v, q)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d Pos(%q, %+v) = %v, want %v", step, v, q, got, want)
			}
		case 11:
			i := r.IntN(len(m))
			rev := r.IntN(2) == 0
			it := l.IterAt(i, rev)
			got, _ := it.Next()
			if string(got) != m[i] {
				t.Fatalf("step %d IterAt(%d) %q, want %q", step, i, got, m[i])
			}
		case 12:
			srcFront, dstFront := r.IntN(2) == 0, r.IntN(2) == 0
			got, ok := Move(l, l, srcFront, dstFront, sc[:0])
			if ok != (len(m) > 0) {
				t.Fatalf("step %d Move on %d elements: %v", step, len(m), ok)
			}
			if ok {
				m = modelRotate(m, srcFront, dstFront)
				if want := m[0]; dstFront && string(got) != want {
					t.Fatalf("step %d Move %q, want %q", step, got, want)
				}
			}
		case 13:
			c := l.Clone().(*List)
			c.check(t)
			if !slices.Equal(c.elems(t), m) {
				t.Fatalf("step %d clone differs", step)
			}
			c.PushBack([]byte("only in the clone"))
		}
		l.check(t)
		if l.Len() != len(m) {
			t.Fatalf("step %d: Len %d, want %d", step, l.Len(), len(m))
		}
		if step%97 == 0 || len(m) < 8 {
			if got := l.elems(t); !slices.Equal(got, m) {
				t.Fatalf("step %d: list %q, want %q", step, trim(got), trim(m))
			}
		}
	}
}

func trim(s []string) []string {
	out := slices.Clone(s)
	for i, v := range out {
		if len(v) > 20 {
			out[i] = v[:10] + "…" + strconv.Itoa(len(v))
		}
	}
	return out
}

func modelRemove(m []string, v string, count int) ([]string, int) {
	removed := 0
	if count < 0 {
		for i := len(m) - 1; i >= 0 && removed < -count; i-- {
			if m[i] == v {
				m = slices.Delete(m, i, i+1)
				removed++
			}
		}
		return m, removed
	}
	out := m[:0]
	for _, x := range m {
		if x == v && (count == 0 || removed < count) {
			removed++
			continue
		}
		out = append(out, x)
	}
	return out, removed
}

func modelPos(m []string, v string, q PosQuery) []int {
	var out []int
	skip := q.Skip
	for seen := 0; seen < len(m) && (q.MaxLen == 0 || seen < q.MaxLen); seen++ {
		i := seen
		if q.Reverse {
			i = len(m) - 1 - seen
		}
		if m[i] != v {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, i)
		if q.Count > 0 && len(out) == q.Count {
			break
		}
	}
	return out
}

func modelRotate(m []string, srcFront, dstFront bool) []string {
	var v string
	if srcFront {
		v, m = m[0], m[1:]
	} else {
		v, m = m[len(m)-1], m[:len(m)-1]
	}
	if dstFront {
		return slices.Insert(slices.Clone(m), 0, v)
	}
	return append(slices.Clone(m), v)
}

// A long list built at both ends keeps its nodes full: beyond the packed entries (which have
// the sizes of Redis's listpack entries), buffers and node slots cost less than Redis's own
// minimum per 8 KB node (a 32-byte node and a 7-byte listpack header), and the middle is
// reachable.
func TestLongListStaysPacked(t *testing.T) {
	l := New(-2)
	const n = 200000
	for i := range n {
		v := []byte("member:" + strconv.Itoa(i))
		if i%2 == 0 {
			l.PushBack(v)
		} else {
			l.PushFront(v)
		}
	}
	l.check(t)
	ns, lo, hi := l.nodes()
	data, used := 0, len(ns)*int(unsafe.Sizeof(ns[0]))+int(unsafe.Sizeof(*l.d))
	for _, c := range ns[lo:hi] {
		data += c.size()
		used += hdrSize + int(c.cap)
	}
	if overhead, redis := float64(used-data)/float64(data), 39.0/8192; overhead > redis {
		t.Errorf("%d bytes hold %d bytes of entries: %.2f%% overhead, Redis has %.2f%%", used, data,
			100*overhead, 100*redis)
	}
	var sc [maxIntLen]byte
	mid := l.Index(n/2, sc[:0])
	if !bytes.HasPrefix(mid, []byte("member:")) {
		t.Errorf("middle element %q", mid)
	}
	l.Set(n/2, []byte("changed"))
	l.Insert(n/2, []byte("inserted"))
	if got := string(l.Index(n/2+1, sc[:0])); got != "changed" {
		t.Errorf("after Set and Insert: %q", got)
	}
	l.check(t)
}

// Popped values and iterator values that are integers go to the caller's scratch space; string
// values alias the list and stay intact until it changes.
func TestPopValueValidUntilChange(t *testing.T) {
	l := New(-2)
	l.PushBack([]byte("12345"))
	l.PushBack([]byte("hello"))
	var sc [maxIntLen]byte
	v, _ := l.PopFront(sc[:0])
	if string(v) != "12345" || &v[0] != &sc[0] {
		t.Fatalf("integer pop %q not in scratch", v)
	}
	v, _ = l.PopBack(sc[:0])
	if string(v) != "hello" {
		t.Fatalf("string pop %q", v)
	}
	if l.Len() != 0 || l.chunks() != 0 {
		t.Fatalf("empty list keeps %d chunks", l.chunks())
	}
	if _, ok := l.PopFront(nil); ok {
		t.Fatal("pop from an empty list")
	}
}

func TestEncodingAndFill(t *testing.T) {
	if New(-2).Encoding() != "quicklist" {
		t.Fatal("Redis 7.0 names every list quicklist")
	}
	l := New(2)
	for range 5 {
		l.PushBack([]byte("x"))
	}
	if nodes := l.chunks(); nodes != 3 {
		t.Errorf("fill 2: %d nodes for 5 entries", nodes)
	}
	if l := New(-1000); l.byteLimit() != sizeLimits[4]-hdrSize {
		t.Errorf("fill below -5 is -5: limit %d", l.byteLimit())
	}
}
