package vector

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// centred is a random vector whose smallest component is minus its largest.
func centred(r *rand.Rand, d int) []float32 {
	v := randVec(r, d)
	var m float32
	for _, x := range v {
		m = max(m, x, -x)
	}
	v[0], v[1] = m, -m
	return v
}

// TestQ8Schemes: centred vectors are stored as Redis 8 stores them (q = round(x*127/range), RAW's
// layout), one-sided ones with an offset range whose error is at most half of (max-min)/255, and
// integer pixels 0..255 (max 255, min 0) come back exactly.
func TestQ8Schemes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const d = 37
	s, _ := New(Config{Dim: d, Metric: L2, Quant: Q8})
	for i := range 50 {
		name := []byte(fmt.Sprint("c", i))
		x := centred(r, d)
		if _, err := s.Add(name, x, 0); err != nil {
			t.Fatal(err)
		}
		var m float64
		for _, v := range x {
			m = math.Max(m, math.Abs(float64(v)))
		}
		raw, _ := s.Raw(name)
		if raw.Offset || raw.Range != float32(m) || len(raw.Data) != d {
			t.Fatalf("centred vector: RAW %+v, largest component %v", raw, m)
		}
		got, _ := s.Vector(name)
		for j, v := range x {
			want := int8(math.Round(float64(v) * 127 / m))
			if int8(raw.Data[j]) != want {
				t.Fatalf("component %d: q %d, Redis's round(x*127/range) %d", j, int8(raw.Data[j]), want)
			}
			if got[j] != float32(want)*float32(m)/127 {
				t.Fatalf("component %d: dequantized %v, q*range/127 %v", j, got[j], float32(want)*float32(m)/127)
			}
		}
	}
	for i := range 50 {
		name := []byte(fmt.Sprint("p", i))
		x := make([]float32, d)
		for j := range x {
			x[j] = float32(r.IntN(256))
		}
		x[i%d], x[(i+1)%d] = 0, 255
		s.Add(name, x, 0)
		raw, _ := s.Raw(name)
		got, _ := s.Vector(name)
		if !raw.Offset || raw.Min != 0 || raw.Max != 255 || raw.Range != 0 {
			t.Fatalf("pixels: RAW %+v", raw)
		}
		for j := range x {
			if got[j] != x[j] || float32(raw.Data[j]) != x[j] {
				t.Fatalf("pixels: component %d stored %v (level %d), was %v", j, got[j], raw.Data[j], x[j])
			}
		}
	}
	for _, shift := range []float64{0, 0.3, -5} { // non-negative, skewed, all negative
		for i := range 50 {
			name := []byte(fmt.Sprint("o", shift, i))
			x := make([]float32, d)
			lo, hi := math.Inf(1), math.Inf(-1)
			for j := range x {
				v := r.Float64()*3 - shift*r.Float64()
				if shift < 0 {
					v = -r.Float64() * 7
				}
				x[j] = float32(v)
				lo, hi = math.Min(lo, float64(x[j])), math.Max(hi, float64(x[j]))
			}
			s.Add(name, x, 0)
			raw, _ := s.Raw(name)
			got, _ := s.Vector(name)
			m := math.Max(hi, -lo)
			if wantOffset := (hi-lo)/255 <= 0.75*m/127; raw.Offset != wantOffset {
				t.Fatalf("min %v max %v: offset range %v", lo, hi, raw.Offset)
			}
			if !raw.Offset {
				continue
			}
			if raw.Min != float32(lo) || raw.Max != float32(hi) {
				t.Fatalf("RAW min/max %v %v, vector's %v %v", raw.Min, raw.Max, lo, hi)
			}
			for j := range x {
				fromRaw := lo + float64(raw.Data[j])*(hi-lo)/255
				if e := math.Abs(float64(got[j]) - float64(x[j])); e > (hi-lo)/510*(1+1e-5) || math.Abs(fromRaw-float64(got[j])) > 1e-5*m {
					t.Fatalf("component %d: %v stored as %v (RAW gives %v), step %v", j, x[j], got[j], fromRaw, (hi-lo)/255)
				}
			}
		}
	}
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
}

// TestQ8Distances: every Q8 distance, query (float32) against node and node against node, equals
// the reference distance of the dequantized vectors, across both schemes and mixed pairs.
func TestQ8Distances(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, metric := range []Metric{Cosine, L2, IP} {
		const d = 70
		c := Config{Dim: d, Metric: metric, Quant: Q8}
		s, _ := New(c)
		var names [][]byte
		for i := range 40 {
			x := randVec(r, d)
			if i%2 == 0 {
				for j := range x {
					x[j] = float32(math.Abs(float64(x[j]))*10 + 1)
				}
			}
			names = append(names, []byte(fmt.Sprint(i)))
			s.Add(names[i], x, 0)
		}
		deq := func(id uint32) []float32 { // the stored (normalised, dequantized) vector
			v, _ := s.Vector(s.Name(id))
			for j := range v {
				v[j] /= s.norm[id]
			}
			return v
		}
		refD := func(a, b []float32) float64 {
			switch metric {
			case L2:
				var s float64
				for j := range a {
					e := float64(a[j]) - float64(b[j])
					s += e * e
				}
				return math.Sqrt(s)
			default:
				var s float64
				for j := range a {
					s += float64(a[j]) * float64(b[j])
				}
				return 1 - s
			}
		}
		sc := getScratch(len(s.level))
		for _, a := range names {
			ia, _ := s.ID(a)
			va := deq(ia)
			x, _ := s.Vector(a)
			if _, err := s.prepare(x, &sc.q); err != nil {
				t.Fatal(err)
			}
			for _, b := range names {
				ib, _ := s.ID(b)
				vb := deq(ib)
				want := refD(va, vb)
				tol := 1e-4 * math.Max(1, math.Abs(want))
				if metric == L2 {
					tol = 1e-3 * math.Max(1, norm(va)+norm(vb))
				}
				if got := s.distNodes(ia, ib); math.Abs(float64(got)-want) > tol {
					t.Fatalf("%v: node %s to node %s: %v, reference %v", metric, a, b, got, want)
				}
				// The prepared query is a's input vector in float32, so the reference is its own.
				wq := refD(sc.q.f, vb)
				if got := s.dist(&sc.q, ib); math.Abs(float64(got)-wq) > tol {
					t.Fatalf("%v: query %s to node %s: %v, reference %v", metric, a, b, got, wq)
				}
			}
		}
		putScratch(sc)
	}
}

// TestDecodeVersion1: a version-1 encoding (Q8 with a range only, before offset ranges) still loads
// and searches as the set it was written from.
func TestDecodeVersion1(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, q := range []Quant{NoQuant, Q8, Bin} {
		s, _ := New(Config{Dim: 12, Metric: Cosine, Quant: q, M: 5, Seed: 3})
		for i := range 200 {
			s.Add([]byte(fmt.Sprint(i)), centred(r, 12), 0) // every Q8 vector symmetric
		}
		v1 := s.appendVersion(nil, 1)
		d, err := Decode(v1)
		if err != nil {
			t.Fatalf("%v: version 1: %v", q, err)
		}
		if err := d.validate(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(d.AppendBinary(nil), s.AppendBinary(nil)) {
			t.Fatalf("%v: version 1 decodes to a different set", q)
		}
		qv := randVec(r, 12)
		if !sameScores(s.Search(qv, 5, 50, nil, 0), d.Search(qv, 5, 50, nil, 0)) {
			t.Fatalf("%v: version 1 searches differently", q)
		}
	}
}

// TestFreezeIndependent: a frozen copy encodes as the set did at the freeze, however the set
// changes after, and both stay valid sets (the copy takes writes of its own too).
func TestFreezeIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range allConfigs {
		c.Dim, c.M, c.EF, c.Seed = 6, 4, 20, 5
		s, _ := New(c)
		for i := range 300 {
			s.Add([]byte(fmt.Sprint(i)), randVec(r, 6), 0)
			if i%4 == 0 {
				s.SetAttr([]byte(fmt.Sprint(i)), []byte(`{"a":1}`))
			}
		}
		for i := 0; i < 300; i += 5 {
			s.Remove([]byte(fmt.Sprint(i)))
		}
		want := s.AppendBinary(nil)
		f := s.Freeze()
		for i := range 400 {
			name := []byte(fmt.Sprint(r.IntN(350)))
			switch i % 3 {
			case 0:
				s.Add(name, randVec(r, 6), 0)
			case 1:
				s.Remove(name)
			default:
				s.SetAttr(name, []byte(`{"b":2}`))
			}
		}
		if !bytes.Equal(f.AppendBinary(nil), want) {
			t.Fatalf("%v: the frozen copy changed with the set", c)
		}
		if err := f.validate(); err != nil {
			t.Fatal(err)
		}
		if err := s.validate(); err != nil {
			t.Fatal(err)
		}
		f.Add([]byte("new"), randVec(r, 6), 0)
		f.Remove([]byte("7"))
		if err := f.validate(); err != nil {
			t.Fatal(err)
		}
	}
}
