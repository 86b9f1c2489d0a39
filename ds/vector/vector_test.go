package vector

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"testing"
)

func randVec(r *rand.Rand, d int) []float32 {
	v := make([]float32, d)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func TestKernelsEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	simd, ref := newKernel(), kernel(goKernel{})
	for _, d := range []int{1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 128, 300, 784, 1024, 1537} {
		for range 20 {
			a, b := randVec(r, d), randVec(r, d)
			tol := func(x, y float32) bool {
				return math.Abs(float64(x-y)) <= 1e-4*math.Max(1, math.Abs(float64(y)))
			}
			if x, y := simd.dot(a, b), ref.dot(a, b); !tol(x, y) {
				t.Fatalf("dim %d: dot %v, reference %v", d, x, y)
			}
			if x, y := simd.l2(a, b), ref.l2(a, b); !tol(x, y) {
				t.Fatalf("dim %d: l2 %v, reference %v", d, x, y)
			}
			ia, ib := make([]int8, d), make([]int8, d)
			for i := range ia {
				ia[i], ib[i] = int8(r.IntN(256)-128), int8(r.IntN(256)-128)
			}
			if x, y := simd.dotI8(ia, ib), ref.dotI8(ia, ib); x != y {
				t.Fatalf("dim %d: dotI8 %v, reference %v", d, x, y)
			}
			if x, y := simd.dotF32I8(a, ia), ref.dotF32I8(a, ia); !tol(x, y) && math.Abs(float64(x-y)) > 1e-3 {
				t.Fatalf("dim %d: dotF32I8 %v, reference %v", d, x, y)
			}
			ba, bb := make([]uint64, (d+63)/64), make([]uint64, (d+63)/64)
			for i := range ba {
				ba[i], bb[i] = r.Uint64(), r.Uint64()
			}
			if x, y := simd.hamming(ba, bb), ref.hamming(ba, bb); x != y {
				t.Fatalf("dim %d: hamming %v, reference %v", d, x, y)
			}
		}
	}
	// The dumbest possible int8 loop, against the unrolled one.
	ia := []int8{-128, 127, -1, 5, 9}
	ib := []int8{-128, -128, 100, 0, 3}
	if got := ref.dotI8(ia, ib); got != 16384-16256-100+27 {
		t.Fatalf("dotI8 = %d", got)
	}
}

func TestConfigAndVectorErrors(t *testing.T) {
	for _, c := range []Config{{Dim: 0}, {Dim: MaxDim + 1}, {Dim: 4, M: 1}, {Dim: 4, M: MaxM + 1}, {Dim: 4, Metric: 9}, {Dim: 4, Quant: 9}} {
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v", c, err)
		}
	}
	s, err := New(Config{Dim: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Config(); c.M != 16 || c.EF != 200 || c.Metric != Cosine || c.Quant != Q8 {
		t.Fatalf("defaults: %+v", c)
	}
	nan := float32(math.NaN())
	inf := float32(math.Inf(-1))
	for _, tc := range []struct {
		v   []float32
		err error
	}{{[]float32{1, 2}, ErrDim}, {[]float32{1, 2, 3, 4}, ErrDim}, {[]float32{1, nan, 3}, ErrNaN},
		{[]float32{1, inf, 3}, ErrNaN}, {[]float32{0, 0, 0}, ErrZero}} {
		if _, err := s.Add([]byte("a"), tc.v, 0); !errors.Is(err, tc.err) {
			t.Errorf("Add(%v) = %v, want %v", tc.v, err, tc.err)
		}
		if err := s.Check(tc.v); !errors.Is(err, tc.err) {
			t.Errorf("Check(%v) = %v, want %v", tc.v, err, tc.err)
		}
	}
	if s.Len() != 0 || s.Has([]byte("a")) {
		t.Fatal("a failed Add changed the set")
	}
	l2, _ := New(Config{Dim: 3, Metric: L2, Seed: 1})
	if _, err := l2.Add([]byte("z"), []float32{0, 0, 0}, 0); err != nil {
		t.Fatalf("zero vector under L2: %v", err)
	}
}

// ref is the dumb reference: names to original vectors and attributes.
type ref struct {
	vec  map[string][]float32
	attr map[string][]byte
}

// refDist is an independent float64 distance on original vectors, lower is nearer, in the package
// doc's terms; BIN compares signs.
func refDist(c Config, a, b []float32) float64 {
	if c.Quant == Bin {
		n := 0
		for i := range a {
			if (a[i] > 0) != (b[i] > 0) {
				n++
			}
		}
		return 2 * float64(n) / float64(len(a))
	}
	var dot, na, nb, l2 float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
		l2 += (x - y) * (x - y)
	}
	switch c.Metric {
	case Cosine:
		return 1 - dot/math.Sqrt(na*nb)
	case L2:
		return math.Sqrt(l2)
	}
	return 1 - dot
}

func refScore(c Config, d float64) float64 {
	if c.Metric == L2 && c.Quant != Bin {
		return 1 / (1 + d)
	}
	return 1 - d/2
}

var allConfigs = func() []Config {
	var cs []Config
	for _, m := range []Metric{Cosine, L2, IP} {
		for _, q := range []Quant{NoQuant, Q8, Bin} {
			cs = append(cs, Config{Metric: m, Quant: q})
		}
	}
	return cs
}()

// TestPropertyAgainstReference drives random adds, replacements, removals and attributes on small sets
// of every metric and quantization, checking the set's answers against the reference after each step.
func TestPropertyAgainstReference(t *testing.T) {
	for _, base := range allConfigs {
		t.Run(base.Metric.String()+"-"+base.Quant.String(), func(t *testing.T) {
			recallHits, recallTotal = 0, 0
			for seed := uint64(1); seed <= 4; seed++ {
				c := base
				c.Dim, c.M, c.EF, c.Seed = 1+int(seed*5)%13, 4+int(seed), []int{1, 3, 40, 200}[seed%4], seed
				propertyRun(t, c, seed)
			}
			rc := float64(recallHits) / float64(recallTotal)
			t.Logf("rank-wise score recall with EF above the size: %.3f", rc)
			if rc < 0.8 {
				t.Errorf("rank-wise score recall %.3f", rc)
			}
		})
	}
}

func propertyRun(t *testing.T, c Config, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 99))
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	rf := ref{vec: map[string][]float32{}, attr: map[string][]byte{}}
	// Integer components keep the reference's sign tests and Q8's tolerance meaningful. Even seeds
	// use non-negative components, which Q8 stores with an offset range (store.go's q8meta).
	lo := -10
	if seed%2 == 0 {
		lo = 0
	}
	vec := func() []float32 {
		for {
			v := make([]float32, c.Dim)
			nz := false
			for i := range v {
				v[i] = float32(r.IntN(21) + lo)
				nz = nz || v[i] != 0
			}
			if nz {
				return v
			}
		}
	}
	for step := range 600 {
		name := fmt.Sprintf("e%d", r.IntN(150))
		switch op := r.IntN(10); {
		case op < 6:
			v := vec()
			added, err := s.Add([]byte(name), v, 0)
			_, had := rf.vec[name]
			if err != nil || added == had {
				t.Fatalf("step %d: Add(%s) = %v, %v; had %v", step, name, added, err, had)
			}
			rf.vec[name] = v
		case op < 8:
			_, had := rf.vec[name]
			if got := s.Remove([]byte(name)); got != had {
				t.Fatalf("step %d: Remove(%s) = %v", step, name, got)
			}
			delete(rf.vec, name)
			delete(rf.attr, name)
		default:
			a := []byte(fmt.Sprintf(`{"n":%d}`, step))
			if r.IntN(3) == 0 {
				a = nil
			}
			_, had := rf.vec[name]
			if got := s.SetAttr([]byte(name), a); got != had {
				t.Fatalf("step %d: SetAttr = %v", step, got)
			}
			if had {
				if a == nil {
					delete(rf.attr, name)
				} else {
					rf.attr[name] = a
				}
			}
		}
		if step%20 == 0 || step == 599 {
			checkAgainst(t, s, rf, r)
		}
	}
	for name := range rf.vec {
		s.Remove([]byte(name))
	}
	if s.Len() != 0 {
		t.Fatalf("Len %d after removing everything", s.Len())
	}
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add([]byte("again"), vec(), 0); err != nil || len(s.Search(vec(), 3, 0, nil, 0)) != 1 {
		t.Fatalf("a set emptied by Remove does not take a new element: %v", err)
	}
}

func checkAgainst(t *testing.T, s *Set, rf ref, r *rand.Rand) {
	t.Helper()
	c := s.Config()
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
	if s.Len() != len(rf.vec) {
		t.Fatalf("Len %d, reference %d", s.Len(), len(rf.vec))
	}
	tol := map[Quant]float64{NoQuant: 1e-4, Q8: 0.03, Bin: 1e-6}[c.Quant]
	for name, v := range rf.vec {
		got, ok := s.Vector([]byte(name))
		if !ok {
			t.Fatalf("Vector(%s) missing", name)
		}
		for i := range v {
			want := float64(v[i])
			if c.Quant == Bin {
				want = -1
				if v[i] > 0 {
					want = 1
				}
			}
			if math.Abs(float64(got[i])-want) > 0.02*math.Abs(want)+0.1*map[bool]float64{true: 1}[c.Quant == Q8]+1e-4 {
				t.Fatalf("Vector(%s) = %v, stored %v", name, got, v)
			}
		}
		a, ok := s.Attr([]byte(name))
		if wa, wok := rf.attr[name]; ok != wok || !bytes.Equal(a, wa) {
			t.Fatalf("Attr(%s) = %q %v, reference %q", name, a, ok, wa)
		}
		id, _ := s.ID([]byte(name))
		if string(s.Name(id)) != name {
			t.Fatalf("Name(ID(%s)) = %s", name, s.Name(id))
		}
	}
	if len(rf.vec) == 0 {
		return
	}
	names := make([]string, 0, len(rf.vec))
	for n := range rf.vec {
		names = append(names, n)
	}
	q := rf.vec[names[r.IntN(len(names))]]
	q = slices.Clone(q)
	q[0] += 0.5
	k := 1 + r.IntN(8)
	refScores := make([]float64, len(names))
	for i, n := range names {
		refScores[i] = refScore(c, refDist(c, q, rf.vec[n]))
	}
	sorted := slices.Clone(refScores)
	sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
	kth := sorted[min(k, len(sorted))-1]
	exact := s.SearchExact(q, k, nil)
	if b := s.SearchExactBatch([][]float32{q, rf.vec[names[0]], make([]float32, c.Dim+1)}, k, nil); !sameScores(b[0], exact) ||
		!sameScores(b[1], s.SearchExact(rf.vec[names[0]], k, nil)) || b[2] != nil {
		t.Fatalf("SearchExactBatch %v, SearchExact %v", b, exact)
	}
	if len(exact) != min(k, len(names)) {
		t.Fatalf("SearchExact returned %d, want %d", len(exact), min(k, len(names)))
	}
	for i, res := range exact {
		n := string(s.Name(res.ID))
		want := refScore(c, refDist(c, q, rf.vec[n]))
		tl := tol * math.Max(1, math.Abs(want))
		if c.Metric == IP { // Q8's error scales with the norms, not with the inner product
			tl = tol * math.Max(1, norm(q)*norm(rf.vec[n])/2)
		}
		if math.Abs(float64(res.Score)-want) > tl || want < kth-2*tl {
			t.Fatalf("SearchExact[%d] = %s score %v; reference score %v, k-th best %v", i, n, res.Score, want, kth)
		}
		if i > 0 && res.Score > exact[i-1].Score {
			t.Fatalf("SearchExact not best first: %v", exact)
		}
	}
	// With ef above the set's size the beam covers the graph: in a metric space (cosine, L2 over
	// float or int8) built with a real EF, HNSW must find the exact answer. Inner product is not a
	// metric, BIN's few distinct points tie everywhere and a build EF of 1 or 3 keeps one or two
	// links a node, so those graphs may split: there only recall is counted.
	metric := c.Metric != IP && c.Quant != Bin && c.EF >= 40
	got := s.Search(q, k, 4*len(names), nil, 0)
	odd := func(id uint32) bool { return id%2 == 1 }
	fe := s.SearchExact(q, k, odd)
	fs := s.Search(q, k, 4*len(names), odd, 1<<20)
	for _, x := range fs {
		if !odd(x.ID) {
			t.Fatalf("filtered Search returned %d", x.ID)
		}
	}
	if metric && !sameScores(got, exact) {
		t.Fatalf("Search %v, exact %v", got, exact)
	}
	if metric && !sameScores(fs, fe) {
		t.Fatalf("filtered Search %v, exact %v", fs, fe)
	}
	recallHits += scoreHits(got, exact) + scoreHits(fs, fe)
	recallTotal += len(exact) + len(fe)
	ids := []uint32{}
	for _, n := range names[:len(names)/2+1] {
		id, _ := s.ID([]byte(n))
		ids = append(ids, id, id)
	}
	among := s.SearchAmong(q, k, ids)
	inList := func(id uint32) bool { return slices.Contains(ids, id) }
	if !sameScores(among, s.SearchExact(q, k, inList)) || len(among) > len(ids)/2 {
		t.Fatalf("SearchAmong %v", among)
	}
	for _, n := range names[:min(3, len(names))] {
		ls := s.Links([]byte(n))
		id, _ := s.ID([]byte(n))
		if len(ls) != int(s.level[id])+1 {
			t.Fatalf("Links(%s): %d levels", n, len(ls))
		}
	}
}

var recallHits, recallTotal int

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// scoreHits counts results of got whose score reaches the exact answer's at the same rank.
func scoreHits(got, exact []Result) int {
	n := 0
	for i := range min(len(got), len(exact)) {
		if got[i].Score >= exact[i].Score-1e-6 {
			n++
		}
	}
	return n
}

func sameScores(a, b []Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i].Score-b[i].Score)) > 1e-6 {
			return false
		}
	}
	return true
}

func TestRandomIDs(t *testing.T) {
	s, _ := New(Config{Dim: 2, Seed: 3})
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 50 {
		s.Add([]byte(fmt.Sprint(i)), []float32{float32(i + 1), 1}, 0)
	}
	for i := range 40 {
		s.Remove([]byte(fmt.Sprint(i)))
	}
	got := s.RandomIDs(5, r.Uint64)
	seen := map[uint32]bool{}
	for _, id := range got {
		if seen[id] || !s.live(id) {
			t.Fatalf("RandomIDs(5) = %v", got)
		}
		seen[id] = true
	}
	if len(got) != 5 || len(s.RandomIDs(100, r.Uint64)) != 10 {
		t.Fatal("RandomIDs counts")
	}
	rep := s.RandomIDs(-30, r.Uint64)
	if len(rep) != 30 {
		t.Fatal("RandomIDs(-30)")
	}
	for _, id := range rep {
		if !s.live(id) {
			t.Fatalf("RandomIDs(-30) gave free id %d", id)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, base := range allConfigs {
		c := base
		c.Dim, c.M, c.Seed = 9, 6, 7
		s, _ := New(c)
		r := rand.New(rand.NewPCG(8, 9))
		for i := range 300 {
			s.Add([]byte(fmt.Sprint(i)), randVec(r, c.Dim), 0)
			if i%3 == 0 {
				s.SetAttr([]byte(fmt.Sprint(i)), []byte(`{"a":1}`))
			}
		}
		for i := 0; i < 300; i += 4 {
			s.Remove([]byte(fmt.Sprint(i)))
		}
		enc := s.AppendBinary(nil)
		d, err := Decode(enc)
		if err != nil {
			t.Fatalf("%v: Decode: %v", c, err)
		}
		if err := d.validate(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(d.AppendBinary(nil), enc) {
			t.Fatalf("%v: re-encoding differs", c)
		}
		if d.Len() != s.Len() || d.Info().MaxLevel != s.Info().MaxLevel {
			t.Fatal("decoded set differs")
		}
		for i := 1; i < 300; i += 7 {
			name := []byte(fmt.Sprint(i))
			v1, ok1 := s.Vector(name)
			v2, ok2 := d.Vector(name)
			a1, _ := s.Attr(name)
			a2, _ := d.Attr(name)
			if ok1 != ok2 || !slices.Equal(v1, v2) || !bytes.Equal(a1, a2) {
				t.Fatalf("%s differs after Decode", name)
			}
			q := randVec(r, c.Dim)
			if !sameScores(s.Search(q, 5, 50, nil, 0), d.Search(q, 5, 50, nil, 0)) {
				t.Fatal("decoded graph searches differently")
			}
		}
		for cut := 0; cut < len(enc); cut += 1 + len(enc)/200 {
			if _, err := Decode(enc[:cut]); err == nil {
				t.Fatalf("Decode of %d of %d bytes succeeded", cut, len(enc))
			}
		}
	}
	empty, _ := New(Config{Dim: 4})
	if d, err := Decode(empty.AppendBinary(nil)); err != nil || d.Len() != 0 {
		t.Fatalf("empty set: %v", err)
	}
}

// TestDecodeAllocatesByBytes: a header declaring the largest dimension and a million elements, over
// a few kilobytes, is refused having allocated no more than about one element's arena.
func TestDecodeAllocatesByBytes(t *testing.T) {
	for _, q := range []Quant{NoQuant, Q8, Bin} {
		b := append([]byte("HKVS"), encVersion)
		b = binary.AppendUvarint(b, MaxDim)
		b = append(b, byte(L2), byte(q))
		b = binary.AppendUvarint(b, 16)
		b = binary.AppendUvarint(b, 200)
		b = appendU64(b, 12345)
		b = binary.AppendUvarint(b, 1<<20) // slots
		b = binary.AppendUvarint(b, 1<<20) // count
		b = append(b, 0, 0)                // entry, maxLevel
		b = append(b, make([]byte, 1<<20+4096)...)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if _, err := Decode(b); err == nil {
			t.Fatalf("%v: a truncated million-element claim decoded", q)
		}
		runtime.ReadMemStats(&m1)
		if got := m1.TotalAlloc - m0.TotalAlloc; got > 4*uint64(len(b))+1<<20 {
			t.Fatalf("%v: decoding %d bytes allocated %d", q, len(b), got)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, c := range allConfigs[:4] {
		c.Dim, c.M, c.Seed = 5, 3, 1
		s, _ := New(c)
		for i := range 12 {
			s.Add([]byte{byte(i)}, []float32{float32(i), 1, -2, 3, float32(i % 3)}, 0)
		}
		f.Add(s.AppendBinary(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(b)
		if err != nil {
			return
		}
		if err := s.validate(); err != nil {
			t.Fatal(err)
		}
		q := make([]float32, s.Config().Dim)
		q[0] = 1
		s.Search(q, 3, 10, nil, 0)
		s.Remove(s.Name(s.entry))
		if err := s.validate(); err != nil {
			t.Fatal(err)
		}
	})
}

// clustered makes n vectors around 20 centres, a harder and more realistic shape than uniform noise.
func clustered(r *rand.Rand, n, d int) [][]float32 {
	centres := make([][]float32, 20)
	for i := range centres {
		centres[i] = randVec(r, d)
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(len(centres))]
		v := randVec(r, d)
		for j := range v {
			v[j] = c[j] + 0.6*v[j]
		}
		out[i] = v
	}
	return out
}

func recallAt(s *Set, qs [][]float32, k, ef int) float64 {
	hit, total := 0, 0
	for _, q := range qs {
		truth := s.SearchExact(q, k, nil)
		got := s.Search(q, k, ef, nil, 0)
		for _, g := range got {
			for _, tr := range truth {
				if g.ID == tr.ID {
					hit++
					break
				}
			}
		}
		total += len(truth)
	}
	return float64(hit) / float64(total)
}

// TestRecallAndDeletion: recall@10 against the exact scan at EF 100 on generated clustered data, then
// again on the survivors after deleting 30% (the graph relinked, slots reused by new inserts).
func TestRecallAndDeletion(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 1500
	}
	for _, c := range []Config{{Metric: Cosine, Quant: NoQuant}, {Metric: L2, Quant: NoQuant}, {Metric: Cosine, Quant: Q8}, {Metric: IP, Quant: Q8}} {
		c.Dim, c.Seed = 32, 11
		t.Run(c.Metric.String()+"-"+c.Quant.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(12, 13))
			data := clustered(r, n+100, c.Dim)
			s, _ := New(c)
			for i, v := range data[:n] {
				if _, err := s.Add([]byte(fmt.Sprint(i)), v, 0); err != nil {
					t.Fatal(err)
				}
			}
			qs := data[n:]
			if rc := recallAt(s, qs, 10, 100); rc < 0.95 {
				t.Errorf("recall@10 at EF 100: %.3f", rc)
			}
			for i := 0; i < n; i++ {
				if r.IntN(10) < 3 {
					s.Remove([]byte(fmt.Sprint(i)))
				}
			}
			if err := s.validate(); err != nil {
				t.Fatal(err)
			}
			rc := recallAt(s, qs, 10, 100)
			t.Logf("n %d, survivors %d: recall@10 at EF 100 %.3f", n, s.Len(), rc)
			if rc < 0.95 {
				t.Errorf("recall@10 at EF 100 after deleting 30%%: %.3f", rc)
			}
		})
	}
}

// TestConcurrentSearches runs searches from several goroutines on one set (shared reads) and checks
// each against the single-threaded answer; run it under -race.
func TestConcurrentSearches(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	c := Config{Dim: 16, Seed: 5}
	s, _ := New(c)
	data := clustered(r, 1200, c.Dim)
	for i, v := range data[:1000] {
		s.Add([]byte(fmt.Sprint(i)), v, 0)
	}
	qs := data[1000:]
	even := func(id uint32) bool { return id%2 == 0 }
	batch := s.SearchExactBatch(qs, 7, even) // 200 queries: several blocks
	for i, q := range qs {
		if !sameScores(batch[i], s.SearchExact(q, 7, even)) {
			t.Fatalf("SearchExactBatch query %d: %v", i, batch[i])
		}
	}
	want := make([][]Result, len(qs))
	for i, q := range qs {
		want[i] = s.Search(q, 10, 64, nil, 0)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 5 {
				for i := range qs {
					j := (i + g*17 + round) % len(qs)
					var got []Result
					if g%3 == 2 {
						got = s.Search(qs[j], 10, 64, func(id uint32) bool { return true }, 1<<20)
					} else {
						got = s.Search(qs[j], 10, 64, nil, 0)
					}
					if !sameScores(got, want[j]) {
						errs <- fmt.Sprintf("goroutine %d query %d: %v, want %v", g, j, got, want[j])
						return
					}
					_ = s.SearchExact(qs[j], 3, nil)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestMemoryUsageFollowsSize(t *testing.T) {
	small, _ := New(Config{Dim: 100})
	small.Add([]byte("a"), randVec(rand.New(rand.NewPCG(1, 1)), 100), 0)
	if m := small.MemoryUsage(); m > 4096 {
		t.Fatalf("one Q8 element of 100 dims costs %d bytes", m)
	}
}

// TestSearchesBetweenWrites is the shard's protocol: writes under a write lock, searches (HNSW,
// filtered, exact, among) as shared reads from several goroutines between them. Under -race it
// shows searches share no mutable state with each other or with the writes' scratch.
func TestSearchesBetweenWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	c := Config{Dim: 8, M: 6, EF: 30, Seed: 9}
	s, _ := New(c)
	data := clustered(r, 400, c.Dim)
	var mu sync.RWMutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := rand.New(rand.NewPCG(uint64(g), 7))
			for {
				select {
				case <-stop:
					return
				default:
				}
				q := data[rr.IntN(len(data))]
				mu.RLock()
				n := s.Len()
				got := s.Search(q, 5, 20, nil, 0)
				s.Search(q, 5, 20, func(id uint32) bool { return s.AttrID(id) != nil }, 100)
				s.SearchExact(q, 3, nil)
				s.SearchAmong(q, 3, s.RandomIDs(4, rr.Uint64))
				mu.RUnlock()
				if len(got) != min(5, n) {
					t.Errorf("Search returned %d of %d", len(got), n)
					return
				}
			}
		}()
	}
	for i := range 1500 {
		name := []byte(fmt.Sprint(r.IntN(150)))
		mu.Lock()
		switch r.IntN(4) {
		case 0:
			s.Remove(name)
		case 1:
			s.SetAttr(name, []byte("{}"))
		default:
			s.Add(name, data[i%len(data)], 0)
		}
		mu.Unlock()
	}
	close(stop)
	wg.Wait()
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
}
