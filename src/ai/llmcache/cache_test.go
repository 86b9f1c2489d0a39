package llmcache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hotkv/hotkv/src/ai/embed"
)

func TestGuards(t *testing.T) {
	both := GuardNumbers | GuardNegation
	f := func(a, b string, g Guard, want bool) {
		t.Helper()
		fa := Extract(embed.Normalize([]byte(a), nil))
		fb := Extract(embed.Normalize([]byte(b), nil))
		if got := Pass(g, &fa, &fb); got != want {
			t.Errorf("Pass(%q, %q) = %v, want %v (numbers %v / %v)", a, b, got, want, fa.Numbers, fb.Numbers)
		}
	}
	f("What is 1+1?", "What is 21+1?", GuardNumbers, false)
	f("What is 1+1?", "what is 1 + 1", GuardNumbers, true)
	f("What is 2+3?", "What is 3+2?", GuardNumbers, true) // a multiset: order is not compared
	f("costs 1,000 dollars", "costs 1000 dollars", GuardNumbers, true)
	f("version 3.14", "version 3.15", GuardNumbers, false)
	f("route 007", "route 7", GuardNumbers, true)
	f("two apples", "three apples", GuardNumbers, false)
	f("two apples", "2 apples", GuardNumbers, false) // words and digits are not unified
	f("one plus one", "one plus two", GuardNumbers, false)
	f("one of the best films", "among the best films", GuardNumbers, true)
	f("What is 1+1?", "What is 21+1?", GuardNegation, true)
	f("How do I enable 2FA?", "How do I disable 2FA?", both, false)
	f("How do I enable 2FA?", "how can i enable 2fa", both, true)
	f("enabling dark mode", "enabled dark mode", GuardNegation, true)
	f("Is it safe to eat raw eggs?", "Is it not safe to eat raw eggs?", GuardNegation, false)
	f("I don't like tea", "I do not like tea", GuardNegation, true)
	f("I don't like tea", "I like tea", GuardNegation, false)
	f("I don’t like tea", "I do not like tea", GuardNegation, true) // U+2019
	f("No, it doesn't exist in 2.10", "It does not exist in 2.10", GuardNegation, true)
	f("no tea for me", "tea for me", GuardNegation, false)
	f("add a user to the group", "remove a user from the group", GuardNegation, false)
	f("how to start the service", "how to stop the service", GuardNegation, false)
	f("how to start the service", "how to stop the service", GuardNumbers, true)
	f("how to start the service", "how to stop the service", 0, true)
	f("how to add a column quickly", "how to insert a column fast", GuardNegation, true) // one side only
	f("turn the light on", "switch the light off", GuardNegation, false)
}

// TestNoCrossNamespace is the property test: random SETs and GETs over few prompts, vectors and
// namespaces, against a dumb reference (a list of entries): every hit's entry is in the query's
// namespace, an exact hit has the query's normalized prompt, and a semantic hit is at least the
// threshold.
func TestNoCrossNamespace(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c, err := New(Config{Threshold: 0.8, MaxEntries: 50, Guard: GuardNumbers})
	if err != nil {
		t.Fatal(err)
	}
	type ref struct{ ns, norm string }
	live := map[uint64]ref{}
	prompts := []string{"What is 1+1?", "what is 1+1", "Tell me a joke", "tell  me a JOKE", "weather in Paris", "weather in paris today"}
	nss := []string{"a", "b", "c", ""}
	vec := func(i int) []float32 {
		v := make([]float32, 8)
		v[i%8] = 1
		v[(i+1)%8] = float32(r.Float64() * 0.3)
		return v
	}
	hits := 0
	for step := range 5000 {
		ns, p := nss[r.IntN(len(nss))], r.IntN(len(prompts))
		if r.IntN(3) == 0 {
			id, ev, err := c.Set(SetArgs{NS: []byte(ns), Prompt: []byte(prompts[p]), Vector: vec(p), Response: []byte("r")}, int64(step))
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range ev {
				delete(live, x)
			}
			norm := string(embed.Normalize([]byte(prompts[p]), nil))
			for x, rf := range live {
				if rf.ns == ns && rf.norm == norm {
					delete(live, x)
				}
			}
			live[id] = ref{ns, norm}
			continue
		}
		h, ok, err := c.Get(Query{NS: []byte(ns), Prompt: []byte(prompts[p]), Vector: vec(p), NowMS: int64(step)})
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		hits++
		rf, in := live[h.Entry.ID]
		if !in || rf.ns != ns || h.Entry.NS != ns {
			t.Fatalf("step %d: hit entry %d of namespace %q (ref %v) for a query in %q", step, h.Entry.ID, h.Entry.NS, rf, ns)
		}
		if !h.Semantic && rf.norm != string(embed.Normalize([]byte(prompts[p]), nil)) {
			t.Fatalf("exact hit of another prompt")
		}
		if h.Semantic && h.Score < 0.8 {
			t.Fatalf("semantic hit under the threshold: %v", h.Score)
		}
	}
	if len(live) != c.Len() {
		t.Fatalf("reference has %d entries, cache %d", len(live), c.Len())
	}
	if hits < 1000 {
		t.Fatalf("only %d hits: the test exercises too little", hits)
	}
	s := c.Stats()
	if s.ExactHits+s.SemanticHits+s.Misses != s.Lookups || s.ExactHits+s.SemanticHits != int64(hits) {
		t.Fatalf("stats %+v, hits %d", s, hits)
	}
}

func TestExactSemanticFeedback(t *testing.T) {
	c, _ := New(Config{Threshold: 0.9, Guard: GuardNumbers | GuardNegation})
	v := []float32{1, 0, 0, 0}
	near := []float32{0.99, 0.1, 0, 0}
	id, _, _ := c.Set(SetArgs{NS: []byte("m"), Prompt: []byte("How do I enable 2FA?"), Vector: v, Response: []byte("Settings"), TokensIn: 10, TokensOut: 30, Cost: 0.5}, 1000)
	g := func(p string, vec []float32, mode Mode) (Hit, bool) {
		h, ok, err := c.Get(Query{NS: []byte("m"), Prompt: []byte(p), Vector: vec, Mode: mode, NowMS: 2000})
		if err != nil {
			t.Fatal(err)
		}
		return h, ok
	}
	if h, ok := g("  how do i ENABLE 2fa? ", nil, ModeBoth); !ok || h.Semantic || h.Entry.ID != id {
		t.Fatalf("exact: %v %v", h, ok)
	}
	if _, ok := g("how do i enable 2fa", nil, ModeBoth); ok {
		t.Fatal("exact hit without the question mark")
	}
	if h, ok := g("how can I enable 2FA", near, ModeBoth); !ok || !h.Semantic {
		t.Fatalf("semantic: %v %v", h, ok)
	}
	if _, ok := g("How do I disable 2FA?", near, ModeBoth); ok {
		t.Fatal("negation guard let disable hit enable")
	}
	if _, ok := g("how can I enable 2FA", near, ModeExact); ok {
		t.Fatal("exact mode hit semantically")
	}
	if _, _, err := c.Get(Query{NS: []byte("m"), Prompt: []byte("x"), Mode: ModeSemantic}); err != ErrNoVector {
		t.Fatal(err)
	}
	s := c.Stats()
	if s.ExactHits != 1 || s.SemanticHits != 1 || s.Misses != 3 || s.TokensSaved != 80 || s.CostSaved != 1 || s.GuardRejects != 1 {
		t.Fatalf("%+v", s)
	}
	// FEEDBACK BAD on the semantic hit: the entry goes; set again, the paraphrase never hits it.
	if !c.Feedback(id, nil) || c.Len() != 0 {
		t.Fatal("feedback")
	}
	c.Set(SetArgs{NS: []byte("m"), Prompt: []byte("How do I enable 2FA?"), Vector: v, Response: []byte("Settings")}, 3000)
	if _, ok := g("how can I enable 2FA", near, ModeBoth); ok {
		t.Fatal("the paraphrase marked bad hit the re-cached prompt")
	}
	if _, ok := g("how could I enable 2FA", near, ModeBoth); !ok {
		t.Fatal("another paraphrase should still hit")
	}
	// The encoding round-trips, FEEDBACK pairs and stats included.
	d, err := Decode(c.AppendBinary(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.AppendBinary(nil), c.AppendBinary(nil)) || d.Stats() != c.Stats() {
		t.Fatal("encoding does not round-trip")
	}
	if _, ok, _ := d.Get(Query{NS: []byte("m"), Prompt: []byte("how can I enable 2FA"), Vector: near, NowMS: 4000}); ok {
		t.Fatal("decoded cache forgot the FEEDBACK pair")
	}
	for i := range len(c.AppendBinary(nil)) {
		if _, err := Decode(c.AppendBinary(nil)[:i]); err == nil {
			t.Fatalf("truncated at %d decodes", i)
		}
	}
}

func TestExpiryEviction(t *testing.T) {
	c, _ := New(Config{Threshold: 0.5, TTL: 100, MaxEntries: 3})
	for i := range 5 {
		c.Set(SetArgs{NS: []byte("n"), Prompt: []byte(fmt.Sprint("p", i)), Vector: []float32{1, float32(i)}}, int64(i))
	}
	if c.Len() != 3 || c.Stats().Evicted != 2 || c.Entry(1) != nil || c.Entry(3) == nil {
		t.Fatalf("len %d evicted %d", c.Len(), c.Stats().Evicted)
	}
	if _, ok, _ := c.Get(Query{NS: []byte("n"), Prompt: []byte("p4"), NowMS: 50}); !ok {
		t.Fatal("live entry missed")
	}
	if _, ok, _ := c.Get(Query{NS: []byte("n"), Prompt: []byte("zz"), Vector: []float32{1, 3}, NowMS: 500}); ok {
		t.Fatal("expired entry hit")
	}
	if c.Sweep(500, 10); c.Len() != 0 {
		t.Fatalf("sweep left %d", c.Len())
	}
}
