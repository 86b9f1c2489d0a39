package tags

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
)

// model is the dumb reference: each key's tags in the order first added.
type model map[string][]string

func (m model) add(key string, tags []string) int {
	n := 0
	for _, t := range tags {
		if !slices.Contains(m[key], t) {
			m[key] = append(m[key], t)
			n++
		}
	}
	return n
}

func (m model) remove(key string, tags []string) int {
	n := 0
	for _, t := range tags {
		if i := slices.Index(m[key], t); i >= 0 {
			m[key] = slices.Delete(m[key], i, i+1)
			n++
		}
	}
	if len(m[key]) == 0 {
		delete(m, key)
	}
	return n
}

func (m model) members(tag string) []string {
	var out []string
	for k, ts := range m {
		if slices.Contains(ts, tag) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func bytesOf(ss []string) [][]byte {
	b := make([][]byte, len(ss))
	for i, s := range ss {
		b[i] = []byte(s)
	}
	return b
}

// walk collects Members of tags in slices of step, as the commands do.
func walk(x *Index, tags []string, step int) []string {
	var out []string
	var from uint32
	for {
		next, done := x.Members(bytesOf(tags), from, step, func(k string) { out = append(out, k) })
		if done {
			break
		}
		from = next
	}
	return out
}

func TestIndexAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x, m := New(), model{}
	ops := modelOps
	if testing.Short() {
		ops /= 10
	}
	pick := func(n int, prefix string) string { return fmt.Sprintf("%s%d", prefix, r.IntN(n)) }
	var sink atomic.Int64
	sink.Store(1000) // what the shard's keyspaces hold: the index adds to it
	x.SetSink(&sink)
	for i := range ops {
		key := pick(500, "k")
		var tags []string
		for range 1 + r.IntN(3) {
			tags = append(tags, pick(20, "t"))
		}
		switch op := r.IntN(10); {
		case op < 5:
			if got, want := x.Add(key, bytesOf(tags)), m.add(key, tags); got != want {
				t.Fatalf("op %d: Add(%s, %v) = %d, model %d", i, key, tags, got, want)
			}
		case op < 7:
			if got, want := x.Remove(key, bytesOf(tags)), m.remove(key, tags); got != want {
				t.Fatalf("op %d: Remove(%s, %v) = %d, model %d", i, key, tags, got, want)
			}
		case op < 8:
			want := len(m[key])
			delete(m, key)
			if got := x.Drop(key); got != want {
				t.Fatalf("op %d: Drop(%s) = %d, model %d", i, key, got, want)
			}
		case op < 9:
			if got, want := x.Tags(key), m[key]; !slices.Equal(got, want) {
				t.Fatalf("op %d: Tags(%s) = %v, model %v", i, key, got, want)
			}
		default:
			tag := tags[0]
			want := m.members(tag)
			got := walk(x, []string{tag}, 1+r.IntN(40))
			slices.Sort(got)
			if !slices.Equal(got, want) || x.Count([]byte(tag)) != len(want) {
				t.Fatalf("op %d: Members(%s) = %v (count %d), model %v", i, tag, got, x.Count([]byte(tag)), want)
			}
		}
		if x.Len() != len(m) {
			t.Fatalf("op %d: Len %d, model %d", i, x.Len(), len(m))
		}
		if got, want := x.Bytes(), m.bytes(); got != want || x.Recount() != want || sink.Load() != 1000+want {
			t.Fatalf("op %d: Bytes %d, Recount %d, sink %d-1000; the model's %d", i, got, x.Recount(), sink.Load(), want)
		}
	}
	checkInvariants(t, x, m)
	x.SetSink(nil)
	if sink.Load() != 1000 {
		t.Fatalf("detached, the sink holds %d, not its own 1000", sink.Load())
	}
}

// bytes is Bytes's cost model applied to the model's keys and tags.
func (m model) bytes() int64 {
	var n int64
	seen := map[string]bool{}
	for k, ts := range m {
		n += keyCost + int64(len(k)) + memberCost*int64(len(ts))
		for _, t := range ts {
			if !seen[t] {
				seen[t] = true
				n += tagCost + int64(len(t))
			}
		}
	}
	return n
}

// checkInvariants checks the package doc's invariants against the model.
func checkInvariants(t *testing.T, x *Index, m model) {
	t.Helper()
	tagsInModel := map[string]int{}
	for k, ts := range m {
		if !slices.Equal(x.Tags(k), ts) {
			t.Fatalf("Tags(%s) = %v, model %v", k, x.Tags(k), ts)
		}
		for _, tg := range ts {
			tagsInModel[tg]++
		}
	}
	if x.TagCount() != len(tagsInModel) {
		t.Fatalf("TagCount %d, model %d", x.TagCount(), len(tagsInModel))
	}
	for tg, n := range tagsInModel {
		if x.Count([]byte(tg)) != n {
			t.Fatalf("Count(%s) = %d, model %d", tg, x.Count([]byte(tg)), n)
		}
	}
	seen := 0
	x.Each(func(k string, ts []string) {
		seen++
		if !slices.Equal(ts, m[k]) {
			t.Fatalf("Each: %s has %v, model %v", k, ts, m[k])
		}
	})
	if seen != len(m) {
		t.Fatalf("Each saw %d keys, model %d", seen, len(m))
	}
}

func TestMembersUnion(t *testing.T) {
	x := New()
	x.Add("a", bytesOf([]string{"red", "blue"}))
	x.Add("b", bytesOf([]string{"blue"}))
	x.Add("c", bytesOf([]string{"green"}))
	got := walk(x, []string{"red", "blue", "none"}, 1)
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("union of red, blue = %v, want [a b]", got)
	}
	if got := walk(x, []string{"none"}, 10); got != nil {
		t.Fatalf("members of an absent tag = %v", got)
	}
}

// A key tagged for the whole walk is passed exactly once even when keys die and ids are reused
// between the slices.
func TestMembersStableUnderChurn(t *testing.T) {
	x := New()
	for i := range 1000 {
		x.Add(fmt.Sprint("stay", i), [][]byte{[]byte("t")})
		x.Add(fmt.Sprint("go", i), [][]byte{[]byte("t")})
	}
	seen := map[string]int{}
	var from uint32
	round := 0
	for {
		next, done := x.Members([][]byte{[]byte("t")}, from, 50, func(k string) { seen[k]++ })
		if done {
			break
		}
		from = next
		for j := range 20 { // churn: drop some, add new ones that reuse their ids
			x.Drop(fmt.Sprint("go", round*20+j))
			x.Add(fmt.Sprint("new", round*20+j), [][]byte{[]byte("t")})
		}
		round++
	}
	for i := range 1000 {
		if n := seen[fmt.Sprint("stay", i)]; n != 1 {
			t.Fatalf("stay%d passed %d times", i, n)
		}
	}
}

func TestIDReuse(t *testing.T) {
	x := New()
	x.Add("a", [][]byte{[]byte("t")})
	x.Add("b", [][]byte{[]byte("t")})
	x.Drop("a")
	x.Add("c", [][]byte{[]byte("u")})
	if len(x.keys) != 2 {
		t.Fatalf("ids in use %d after one freed and one reused, want 2", len(x.keys))
	}
	x.Drop("b")
	x.Drop("c")
	if x.keys != nil || x.Len() != 0 || x.TagCount() != 0 {
		t.Fatalf("empty index keeps %d ids, %d keys, %d tags", len(x.keys), x.Len(), x.TagCount())
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	type rec struct {
		db   int
		key  string
		tags []string
	}
	var want []rec
	b := AppendHeader(nil)
	bounds := map[int]bool{len(b): true}
	for i := range 500 {
		rc := rec{db: r.IntN(16), key: fmt.Sprint("key", i, string(rune(r.IntN(300))))}
		for range r.IntN(4) {
			rc.tags = append(rc.tags, fmt.Sprint("tag\x00", r.IntN(1000)))
		}
		want = append(want, rc)
		b = AppendRecord(b, rc.db, rc.key, rc.tags)
		bounds[len(b)] = true
	}
	var got []rec
	err := Decode(b, func(db int, key []byte, tags [][]byte) {
		rc := rec{db: db, key: string(key)}
		for _, t := range tags {
			rc.tags = append(rc.tags, string(t))
		}
		got = append(got, rc)
	})
	if err != nil || len(got) != len(want) {
		t.Fatalf("Decode: %v, %d records, want %d", err, len(got), len(want))
	}
	for i := range want {
		if got[i].db != want[i].db || got[i].key != want[i].key || !slices.Equal(got[i].tags, want[i].tags) {
			t.Fatalf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// A cut on a record boundary decodes the records before it; any other cut is ErrFormat.
	for cut := 0; cut < 400; cut++ {
		err := Decode(b[:cut], func(int, []byte, [][]byte) {})
		if (err == nil) != bounds[cut] {
			t.Fatalf("Decode of the first %d bytes: %v (record boundary: %v)", cut, err, bounds[cut])
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(AppendRecord(AppendHeader(nil), 3, "k", []string{"a", "b"}))
	f.Add([]byte{1, 0, 1, 'k', 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		// What decodes re-encodes to bytes that decode to the same records.
		var first []string
		out := AppendHeader(nil)
		err := Decode(b, func(db int, key []byte, tags [][]byte) {
			ts := make([]string, len(tags))
			for i, t := range tags {
				ts[i] = string(t)
			}
			first = append(first, fmt.Sprint(db, string(key), ts))
			out = AppendRecord(out, db, string(key), ts)
		})
		var again []string
		err2 := Decode(out, func(db int, key []byte, tags [][]byte) {
			ts := make([]string, len(tags))
			for i, t := range tags {
				ts[i] = string(t)
			}
			again = append(again, fmt.Sprint(db, string(key), ts))
		})
		if err2 != nil || !slices.Equal(first, again) {
			t.Fatalf("re-encoding %d records (first error %v) decodes to %d (%v)", len(first), err, len(again), err2)
		}
	})
}
