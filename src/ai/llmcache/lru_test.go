package llmcache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestLRUExact: MAXENTRIES evicts exactly the least recently used entry, against a reference list
// ordered by last use (a SET or a hit), over random SETs, exact and semantic GETs, DELs and
// FEEDBACKs.
func TestLRUExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const max = 20
	c, _ := New(Config{Threshold: 0.99, MaxEntries: max})
	var order []uint64 // least recently used first
	use := func(id uint64) {
		order = slices.DeleteFunc(order, func(x uint64) bool { return x == id })
		order = append(order, id)
	}
	drop := func(id uint64) { order = slices.DeleteFunc(order, func(x uint64) bool { return x == id }) }
	vec := func(p int) []float32 { return []float32{1, float32(p), float32(p * p % 7)} }
	for step := range 20000 {
		p := r.IntN(60)
		prompt := []byte(fmt.Sprint("prompt ", p))
		switch k := r.IntN(10); {
		case k < 4:
			old := c.nsOf([]byte("n"), false)
			if old != nil {
				if e := old.exact[string(prompt)]; e != nil {
					drop(e.ID)
				}
			}
			want := []uint64(nil)
			if len(order) >= max {
				want = []uint64{order[0]}
			}
			id, ev, err := c.Set(SetArgs{NS: []byte("n"), Prompt: prompt, Vector: vec(p), Response: []byte("r")}, int64(step))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ev, want) {
				t.Fatalf("step %d: evicted %v, the reference's least recently used is %v", step, ev, want)
			}
			for _, x := range ev {
				drop(x)
			}
			use(id)
		case k < 9:
			q := Query{NS: []byte("n"), Prompt: prompt, NowMS: int64(step)}
			if k >= 7 {
				q.Prompt, q.Vector = []byte("other"), vec(p)
			}
			h, ok, err := c.Get(q)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				use(h.Entry.ID)
			}
		default:
			if len(order) > 0 {
				id := order[r.IntN(len(order))]
				if r.IntN(2) == 0 {
					c.Del(id)
				} else {
					c.Feedback(id, nil)
				}
				drop(id)
			}
		}
		if c.Len() != len(order) {
			t.Fatalf("step %d: %d entries, reference %d", step, c.Len(), len(order))
		}
	}
	// The encoding keeps the order: a decoded copy evicts the same entries.
	d, err := Decode(c.AppendBinary(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i := range order {
		if o, want := d.oldest(), order[i]; o == nil || o.ID != want {
			t.Fatalf("decoded copy: %d-th oldest %v, want %d", i, o, want)
		}
		d.remove(d.oldest())
	}
}

// TestConcurrentGets: Gets of one cache on several goroutines at once (the shared-read path),
// under -race: the counters add up and every hit is its query's entry.
func TestConcurrentGets(t *testing.T) {
	c, _ := New(Config{Threshold: 0.9, Guard: GuardNumbers | GuardNegation})
	const n = 200
	vec := func(i int) []float32 {
		v := make([]float32, 16)
		v[i%16], v[(i/16)%16] = 1, 0.5
		v[(i*7+3)%16] += 0.25
		return v
	}
	for i := range n {
		c.Set(SetArgs{NS: []byte("n"), Prompt: []byte(fmt.Sprint("p", i)), Vector: vec(i), Response: []byte("r"), TokensIn: 1, TokensOut: 2, Cost: 0.5}, 1)
	}
	var wg sync.WaitGroup
	const workers, per = 4, 500
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range per {
				i := r.IntN(n)
				h, ok, err := c.Get(Query{NS: []byte("n"), Prompt: []byte(fmt.Sprint("p", i)), NowMS: 2})
				if err != nil || !ok || h.Entry.ID != uint64(i+1) {
					t.Errorf("exact get of p%d: %v %v %v", i, h.Entry, ok, err)
					return
				}
				c.Get(Query{NS: []byte("n"), Prompt: []byte("q"), Vector: vec(i), NowMS: 2})
			}
		}()
	}
	wg.Wait()
	s := c.Stats()
	if s.Lookups != 2*workers*per || s.ExactHits != workers*per || s.ExactHits+s.SemanticHits+s.Misses != s.Lookups ||
		s.TokensSaved != 3*(s.ExactHits+s.SemanticHits) || s.CostSaved != 0.5*float64(s.ExactHits+s.SemanticHits) {
		t.Fatalf("stats %+v", s)
	}
	var hits int64
	for _, e := range c.byID {
		hits += e.Hits()
	}
	if hits != s.ExactHits+s.SemanticHits {
		t.Fatalf("entries count %d hits, stats %d", hits, s.ExactHits+s.SemanticHits)
	}
}
