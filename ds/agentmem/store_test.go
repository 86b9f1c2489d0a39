package agentmem

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/hotkv/hotkv/ds/vector"
)

// ref is the dumb reference: a map of records, every search a scan of all of them with the
// filter written out field by field.
type ref struct {
	recs map[string]*Record
}

func (r *ref) match(x *Record, f *Filter, now int64) bool {
	if x.ExpireAt != 0 && x.ExpireAt <= now {
		return false
	}
	if f.HasUser && x.User != f.User || f.HasSession && x.Session != f.Session || f.HasNS && x.NS != f.NS {
		return false
	}
	if f.Types != 0 && f.Types&(1<<x.Type) == 0 {
		return false
	}
	anyOf := func(want, have []string) bool {
		if len(want) == 0 {
			return true
		}
		for _, w := range want {
			if slices.Contains(have, w) {
				return true
			}
		}
		return false
	}
	if !anyOf(f.Topics, x.Topics) || !anyOf(f.Entities, x.Entities) {
		return false
	}
	if f.Since != 0 && x.EventTime < f.Since || f.Until != 0 && x.EventTime > f.Until {
		return false
	}
	switch {
	case f.AsOf != 0:
		return x.Created <= f.AsOf && (x.ValidTo == 0 || x.ValidTo > f.AsOf)
	case f.Superseded:
		return true
	}
	return x.ValidTo == 0
}

func (r *ref) search(q *Query, now int64) []Hit {
	var out []Hit
	for _, x := range r.recs {
		if !r.match(x, &q.Filter, now) {
			continue
		}
		var dot float64
		for i := range x.Vec {
			dot += float64(x.Vec[i]) * float64(q.Vec[i])
		}
		if dot < q.MinSim {
			continue
		}
		score := q.Weights.Sim * dot
		if q.Weights.Recency != 0 {
			rec := 0.0
			if x.Pinned {
				rec = 1
			} else if q.Weights.HalfLife > 0 {
				rec = math.Pow(0.5, float64(max(now-x.EventTime, 0))/float64(q.Weights.HalfLife))
			}
			score += q.Weights.Recency * rec
		}
		score += q.Weights.Importance * x.Importance
		out = append(out, Hit{Rec: x, Score: score, Sim: dot})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > q.K {
		out = out[:q.K]
	}
	return out
}

func randVec(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

var (
	users    = []string{"u0", "u1", "u2", "u3", "u4"}
	sessions = []string{"", "s0", "s1", "s2"}
	nss      = []string{"", "a", "b"}
	words    = []string{"food", "travel", "work", "music", "health", "Oslo", "Bob"}
)

func pick(rng *rand.Rand, from []string, n int) []string {
	var out []string
	for range n {
		w := from[rng.IntN(len(from))]
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func randRecord(rng *rand.Rand, s *Store, id string, now int64) *Record {
	norm, err := s.Normalize(randVec(rng, s.cfg.Dim))
	if err != nil {
		panic(err)
	}
	r := &Record{ID: id, Text: []byte("t" + id), Vec: norm, User: users[rng.IntN(len(users))],
		Session: sessions[rng.IntN(len(sessions))], NS: nss[rng.IntN(len(nss))], Type: Type(rng.IntN(3)),
		Topics: pick(rng, words[:5], rng.IntN(3)), Entities: pick(rng, words[5:], rng.IntN(2)),
		Importance: rng.Float64(), EventTime: now - rng.Int64N(1e7), Created: now, Updated: now,
		Pinned: rng.IntN(10) == 0}
	if rng.IntN(5) == 0 {
		r.ExpireAt = now + rng.Int64N(2e5)
	}
	return r
}

func randQuery(rng *rand.Rand, s *Store, now int64) *Query {
	q := &Query{Vec: must(s.Normalize(randVec(rng, s.cfg.Dim))), K: 1 + rng.IntN(20), MinSim: -2,
		Weights: Weights{Sim: 1}}
	f := &q.Filter
	if rng.IntN(2) == 0 {
		f.User, f.HasUser = users[rng.IntN(len(users))], true
	}
	if rng.IntN(3) == 0 {
		f.Session, f.HasSession = sessions[rng.IntN(len(sessions))], true
	}
	if rng.IntN(3) == 0 {
		f.NS, f.HasNS = nss[rng.IntN(len(nss))], true
	}
	if rng.IntN(3) == 0 {
		f.Types = uint8(1 + rng.IntN(7))
	}
	if rng.IntN(3) == 0 {
		f.Topics = pick(rng, words[:5], 1+rng.IntN(2))
	}
	if rng.IntN(4) == 0 {
		f.Entities = pick(rng, words[5:], 1)
	}
	if rng.IntN(4) == 0 {
		f.Since = now - rng.Int64N(1e7)
	}
	if rng.IntN(4) == 0 {
		f.Until = now - rng.Int64N(1e7)
	}
	if rng.IntN(4) == 0 {
		f.AsOf = now - rng.Int64N(1e6)
	}
	if rng.IntN(3) == 0 {
		q.MinSim = rng.Float64()*0.6 - 0.3
	}
	if rng.IntN(2) == 0 {
		q.Weights = Weights{Sim: rng.Float64(), Recency: rng.Float64(), Importance: rng.Float64(),
			HalfLife: 1 + rng.Int64N(1e7)}
	}
	return q
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSearchAgainstReference: random puts (new and upserts), deletes, supersedes and expiries,
// each followed by random searches on the exact path; every result list equals the reference's
// (scores within 1e-5; order compared by score).
func TestSearchAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := must(New(Config{Dim: 16, Quant: vector.Q8, Window: 100}))
	rf := &ref{recs: map[string]*Record{}}
	now := int64(1e12)
	var ids []string
	for step := range 3000 {
		now += rng.Int64N(1000)
		switch op := rng.IntN(10); {
		case op < 5 || len(ids) < 5:
			id := s.NextID()
			if len(ids) > 0 && rng.IntN(4) == 0 {
				id = ids[rng.IntN(len(ids))] // upsert
			}
			r := randRecord(rng, s, id, now)
			cp := *r // the reference's own copy, with an upsert's kept fields its own way
			if old := rf.recs[id]; old != nil {
				cp.Created, cp.SupersededBy, cp.Supersedes, cp.ValidTo = old.Created, old.SupersededBy, old.Supersedes, old.ValidTo
			}
			if _, err := s.Put(r); err != nil {
				t.Fatal(err)
			}
			rf.recs[id] = &cp
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		case op == 5:
			i := rng.IntN(len(ids))
			id := ids[i]
			if s.Delete(id) != (rf.recs[id] != nil) {
				t.Fatalf("step %d: Delete(%s) disagrees", step, id)
			}
			delete(rf.recs, id)
			ids = slices.Delete(ids, i, i+1)
		case op == 6:
			a, b := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
			err := s.Supersede(a, b, now)
			want := a != b && rf.recs[a].ValidTo == 0
			if (err == nil) != want {
				t.Fatalf("step %d: Supersede(%s, %s) = %v", step, a, b, err)
			}
			if want {
				rf.recs[a].ValidTo, rf.recs[a].SupersededBy = now, b
			}
		case op == 7:
			for _, id := range s.Expired(now, 0) {
				if r := rf.recs[id]; r == nil || r.ExpireAt > now {
					t.Fatalf("step %d: %s expired early", step, id)
				}
				delete(rf.recs, id)
				ids = slices.DeleteFunc(ids, func(x string) bool { return x == id })
			}
			for id, r := range rf.recs {
				if r.ExpireAt != 0 && r.ExpireAt <= now {
					t.Fatalf("step %d: %s not expired", step, id)
				}
			}
		default:
			q := randQuery(rng, s, now)
			got, want := s.Search(q, now), rf.search(q, now)
			compareHits(t, step, got, want)
		}
		if s.Len() != len(rf.recs) {
			t.Fatalf("step %d: Len %d, reference %d", step, s.Len(), len(rf.recs))
		}
	}
	// The encoding round-trips to a store that answers the same.
	d, err := Decode(s.AppendBinary(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.AppendBinary(nil), s.AppendBinary(nil)) {
		t.Fatal("decoded store encodes differently")
	}
	for range 300 {
		q := randQuery(rng, s, now)
		compareHits(t, -1, d.Search(q, now), rf.search(q, now))
	}
}

func compareHits(t *testing.T, step int, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("step %d: %d hits, reference %d", step, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i].Score-want[i].Score) > 1e-5 || math.Abs(got[i].Sim-want[i].Sim) > 1e-5 {
			t.Fatalf("step %d: hit %d: %s %.6f, reference %s %.6f", step, i, got[i].Rec.ID, got[i].Score, want[i].Rec.ID, want[i].Score)
		}
	}
}

// TestDecodeRejectsTruncation: every prefix of an encoding is refused, never a panic.
func TestDecodeRejectsTruncation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := must(New(Config{Dim: 4, Window: 10}))
	for range 20 {
		if _, err := s.Put(randRecord(rng, s, s.NextID(), 1e12)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Append("sess", "user", []byte("hello"), 3, 0); err != nil {
		t.Fatal(err)
	}
	b := s.AppendBinary(nil)
	for n := range len(b) {
		if _, err := Decode(b[:n]); err == nil {
			t.Fatalf("a %d-byte prefix of %d decoded", n, len(b))
		}
	}
	if _, err := Decode(append(b, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

// TestNoCrossUserResults: 10,000 random searches with a user filter, over users of every size
// (so both the exact path and the HNSW path run), return only that user's memories.
func TestNoCrossUserResults(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s := must(New(Config{Dim: 16, EF: 40}))
	now := int64(1e12)
	sizes := map[string]int{"big": ExactLimit + 500, "mid": 1000}
	for i := range 100 {
		sizes[fmt.Sprint("small", i)] = 10 + i/2
	}
	names := make([]string, 0, len(sizes))
	for u, n := range sizes {
		names = append(names, u)
		for range n {
			r := randRecord(rng, s, s.NextID(), now)
			r.User, r.ExpireAt = u, 0
			if _, err := s.Put(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	slices.Sort(names)
	rf := &ref{recs: map[string]*Record{}}
	s.ForEach(func(r *Record) bool { rf.recs[r.ID] = r; return true })
	hnsw, results := 0, 0
	var found, wanted [2]int
	for i := range 10000 {
		q := randQuery(rng, s, now)
		q.AsOf, q.Session, q.HasSession = 0, "", false
		q.User, q.HasUser = names[rng.IntN(len(names))], true
		if i%10 == 0 {
			q.User = "big"
			q.Filter = Filter{User: "big", HasUser: true} // > ExactLimit: the graph (exact when weighted)
			hnsw++
		}
		got := s.Search(q, now)
		for _, h := range got {
			results++
			if h.Rec.User != q.User {
				t.Fatalf("search %d for user %s returned %s's memory %s", i, q.User, h.Rec.User, h.Rec.ID)
			}
		}
		if i%10 == 0 && i%50 == 0 { // the graph path's recall@K against the brute-force reference
			weighted := q.Weights.Recency != 0 || q.Weights.Importance != 0
			for _, w := range rf.search(q, now) {
				hit := slices.ContainsFunc(got, func(h Hit) bool { return h.Rec == w.Rec })
				if weighted {
					wanted[1]++
					found[1] += b2i(hit)
				} else {
					wanted[0]++
					found[0] += b2i(hit)
				}
			}
		}
	}
	recall := float64(found[0]) / float64(wanted[0])
	t.Logf("10000 searches (%d above ExactLimit), %d results, 0 from another user; graph recall@K %.3f by similarity, %.3f with recency/importance weights (%d and %d expected results)",
		hnsw, results, recall, float64(found[1])/float64(wanted[1]), wanted[0], wanted[1])
	if recall < 0.9 {
		t.Errorf("filtered graph search recall %.3f < 0.9", recall)
	}
}

// TestSupersedeChains: 300 memories superseded three times each (four versions, among
// distractors): a search finds the current version first every time, never an older one, and
// ASOF a time inside each version's validity finds that version first.
func TestSupersedeChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := must(New(Config{Dim: 32, EF: 40}))
	const chains = 300
	t0 := int64(1e12)
	type chain struct {
		ids   [4]string
		times [4]int64 // version i valid from times[i]
		vec   []float32
	}
	cs := make([]chain, chains)
	for c := range cs {
		cs[c].vec = randVec(rng, 32)
	}
	for range 800 {
		r := randRecord(rng, s, s.NextID(), t0)
		r.User, r.ExpireAt = "u", 0
		must(s.Put(r))
	}
	for v := range 4 {
		for c := range cs {
			at := t0 + int64(v)*1000 + int64(c)
			x := slices.Clone(cs[c].vec)
			for i := range x {
				x[i] += float32(rng.NormFloat64() * 0.05)
			}
			id := s.NextID()
			r := &Record{ID: id, Text: []byte("v"), Vec: must(s.Normalize(x)), User: "u", Created: at, EventTime: at}
			must(s.Put(r))
			if v > 0 {
				if err := s.Supersede(cs[c].ids[v-1], id, at); err != nil {
					t.Fatal(err)
				}
			}
			cs[c].ids[v], cs[c].times[v] = id, at
		}
	}
	now := t0 + 10000
	inChain := func(c *chain, id string) int { return slices.Index(c.ids[:], id) }
	for c := range cs {
		ch := &cs[c]
		for v := range 4 {
			q := &Query{Vec: must(s.Normalize(ch.vec)), K: 5, MinSim: -2, Weights: DefaultWeights,
				Filter: Filter{User: "u", HasUser: true}}
			if v < 3 {
				q.AsOf = ch.times[v] + 500 // after version v, before v+1 (1000 ms later)
			}
			hits := s.Search(q, now)
			if len(hits) == 0 || hits[0].Rec.ID != ch.ids[v] {
				t.Fatalf("chain %d, version %d (asof %d): top is %v, want %s", c, v, q.AsOf, hits, ch.ids[v])
			}
			for _, h := range hits[1:] {
				if k := inChain(ch, h.Rec.ID); k >= 0 {
					t.Fatalf("chain %d: version %d visible beside version %d", c, k, v)
				}
			}
		}
	}
}

// TestWindow: the budget drops the oldest messages; Latest takes the newest that fit.
func TestWindow(t *testing.T) {
	s := must(New(Config{Dim: 2, Window: 10}))
	for i, n := range []int{4, 4, 4, 1} {
		w, err := s.Append("s", "user", []byte(fmt.Sprint(i)), n, 0)
		if err != nil {
			t.Fatal(err)
		}
		if w.Tokens > 10 {
			t.Fatalf("window at %d tokens", w.Tokens)
		}
	}
	w := s.Window("s")
	if len(w.Msgs) != 3 || string(w.Msgs[0].Text) != "1" || w.Tokens != 9 {
		t.Fatalf("window %+v", w)
	}
	if l := w.Latest(5); len(l) != 2 || string(l[0].Text) != "2" {
		t.Fatalf("Latest(5) %+v", l)
	}
	if _, err := s.Append("s", "user", nil, 11, 0); err != ErrWindowLarge {
		t.Fatalf("oversized message: %v", err)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
