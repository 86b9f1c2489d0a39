package vector

import (
	"math"
	"math/rand/v2"
	"unsafe"
)

func randomSeed() uint64 { return rand.Uint64() | 1 }

// query is a vector in the set's stored form: a prepared query (buffers from the scratch pool) or a
// view of a node's arena slices.
type query struct {
	f  []float32 // NoQuant (normalised under cosine)
	i  []int8    // Q8
	r  float32   // Q8 range
	sq float32   // Q8 under L2: squared norm of the dequantized vector
	b  []uint64  // Bin
	// asym: a prepared Q8 query is compared in float32 against the stored int8s (f, fsq), which
	// removes the query's own quantization error; node views compare int8 to int8.
	asym bool
	fsq  float32 // squared norm of f
}

// prepare validates vec and writes its stored form into q's buffers (grown as needed); it returns the
// norm normalisation removed (1 when the metric does not normalise).
func (s *Set) prepare(vec []float32, q *query) (float32, error) {
	d := s.cfg.Dim
	if len(vec) != d {
		return 0, ErrDim
	}
	var n2 float64
	for _, x := range vec {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return 0, ErrNaN
		}
		n2 += float64(x) * float64(x)
	}
	norm := float32(1)
	if s.cfg.Metric == Cosine {
		if n2 == 0 {
			return 0, ErrZero
		}
		norm = float32(math.Sqrt(n2))
		if norm == 0 || math.IsInf(float64(norm), 0) {
			return 0, ErrZero
		}
	}
	q.f = grow(q.f, d)
	if norm == 1 {
		copy(q.f, vec)
	} else {
		inv := 1 / float64(norm)
		for i, x := range vec {
			q.f[i] = float32(float64(x) * inv)
		}
	}
	switch s.cfg.Quant {
	case Q8:
		q.i = grow(q.i, d)
		q.r, q.sq = quantizeQ8(q.f, q.i)
		q.asym = true
		q.fsq = 0
		for _, x := range q.f {
			q.fsq += x * x
		}
	case Bin:
		q.b = grow(q.b, s.words)
		quantizeBin(q.f, q.b)
	}
	return norm, nil
}

func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// quantizeQ8 maps x to int8s scaled by the largest absolute component (the range), as Redis 8:
// q = round(x*127/range). It returns the range and the squared norm of the dequantized vector.
func quantizeQ8(x []float32, q []int8) (rng, sq float32) {
	var m float32
	for _, v := range x {
		if v > m {
			m = v
		} else if -v > m {
			m = -v
		}
	}
	if m == 0 {
		clear(q)
		return 0, 0
	}
	scale := 127 / m
	var s float64
	for i, v := range x {
		r := math.Round(float64(v * scale))
		r = max(-127, min(127, r))
		q[i] = int8(r)
		dq := r * float64(m) / 127
		s += dq * dq
	}
	return m, float32(s)
}

func quantizeBin(x []float32, b []uint64) {
	clear(b)
	for i, v := range x {
		if v > 0 {
			b[i>>6] |= 1 << (uint(i) & 63)
		}
	}
}

// prefetchN is how many cache lines of each neighbour's vector searchLayer asks for before it
// computes the first distance (0: none). BenchmarkSearchLarge on 20k 784-dim FP32 vectors, A/B in one
// process: 8 lines made searches 10-16% faster than none, more than 4 or 16 lines did, and more than
// asking for the next neighbour's only while computing one.
var prefetchN = 8

// prefetch asks for the first prefetchN cache lines of id's stored vector (fewer when it is shorter).
func (s *Set) prefetch(id uint32) {
	d := s.cfg.Dim
	o := int(id) * d
	switch s.cfg.Quant {
	case NoQuant:
		prefetchLines(unsafe.Pointer(&s.f32[o]), min(prefetchN, (4*d+63)/64))
	case Q8:
		prefetchLines(unsafe.Pointer(&s.i8[o]), min(prefetchN, (d+63)/64))
	default:
		prefetchLines(unsafe.Pointer(&s.bits[int(id)*s.words]), 1)
	}
}

// node is id's stored vector as a query view (no copy).
func (s *Set) node(id uint32) query {
	d := s.cfg.Dim
	o := int(id) * d
	switch s.cfg.Quant {
	case NoQuant:
		return query{f: s.f32[o : o+d : o+d]}
	case Q8:
		return query{i: s.i8[o : o+d : o+d], r: s.rangeQ[id], sq: s.sq[id]}
	default:
		w := int(id) * s.words
		return query{b: s.bits[w : w+s.words : w+s.words]}
	}
}

// dist is the internal distance, lower is nearer: 1-dot (cosine, IP), Euclidean (L2), 2*hamming/dim (Bin).
func (s *Set) dist(q *query, id uint32) float32 {
	d := s.cfg.Dim
	switch s.cfg.Quant {
	case NoQuant:
		o := int(id) * d
		v := s.f32[o : o+d : o+d]
		if s.cfg.Metric == L2 {
			return kern.l2(q.f, v)
		}
		return 1 - kern.dot(q.f, v)
	case Q8:
		o := int(id) * d
		v := s.i8[o : o+d : o+d]
		var dot, qsq float32
		if q.asym {
			dot = kern.dotF32I8(q.f, v) * (s.rangeQ[id] / 127)
			qsq = q.fsq
		} else {
			dot = float32(kern.dotI8(q.i, v)) * (q.r * s.rangeQ[id] / (127 * 127))
			qsq = q.sq
		}
		if s.cfg.Metric == L2 {
			return float32(math.Sqrt(float64(max(0, qsq+s.sq[id]-2*dot))))
		}
		return 1 - dot
	default:
		w := int(id) * s.words
		return float32(2*kern.hamming(q.b, s.bits[w:w+s.words:w+s.words])) / float32(d)
	}
}

// distNodes is the distance between two stored nodes.
func (s *Set) distNodes(a, b uint32) float32 {
	q := s.node(a)
	return s.dist(&q, b)
}

// score turns an internal distance into the documented similarity.
func (s *Set) score(d float32) float32 {
	if s.cfg.Metric == L2 && s.cfg.Quant != Bin {
		return 1 / (1 + d)
	}
	return 1 - d/2
}

// store writes a prepared vector into id's arena slots, growing the arenas to hold id.
func (s *Set) store(id uint32, q *query, norm float32) {
	d := s.cfg.Dim
	s.norm[id] = norm
	switch s.cfg.Quant {
	case NoQuant:
		copy(s.f32[int(id)*d:], q.f)
	case Q8:
		copy(s.i8[int(id)*d:], q.i)
		s.rangeQ[id] = q.r
		s.sq[id] = q.sq
	default:
		copy(s.bits[int(id)*s.words:], q.b)
	}
}

// Vector is name's vector as stored: dequantized and, under cosine, multiplied back by its norm (as
// Redis's VEMB). BIN components are -1 or 1.
func (s *Set) Vector(name []byte) ([]float32, bool) {
	id, ok := s.byName[string(name)]
	if !ok {
		return nil, false
	}
	d := s.cfg.Dim
	out := make([]float32, d)
	nq := s.node(id)
	switch s.cfg.Quant {
	case NoQuant:
		copy(out, nq.f)
	case Q8:
		for i, v := range nq.i {
			out[i] = float32(v) * nq.r / 127
		}
	default:
		for i := range out {
			out[i] = -1
			if nq.b[i>>6]&(1<<(uint(i)&63)) != 0 {
				out[i] = 1
			}
		}
		return out, true
	}
	if n := s.norm[id]; n != 1 {
		for i := range out {
			out[i] *= n
		}
	}
	return out, true
}

// Raw is name's stored vector bytes with its norm and Q8 range (VEMB RAW).
func (s *Set) Raw(name []byte) (RawVector, bool) {
	id, ok := s.byName[string(name)]
	if !ok {
		return RawVector{}, false
	}
	r := RawVector{Quant: s.cfg.Quant, Norm: s.norm[id]}
	nq := s.node(id)
	switch s.cfg.Quant {
	case NoQuant:
		r.Data = make([]byte, 0, 4*len(nq.f))
		for _, v := range nq.f {
			r.Data = appendU32(r.Data, math.Float32bits(v))
		}
	case Q8:
		r.Data = make([]byte, len(nq.i))
		for i, v := range nq.i {
			r.Data[i] = byte(v)
		}
		r.Range = nq.r
	default:
		r.Data = make([]byte, 0, 8*len(nq.b))
		for _, w := range nq.b {
			r.Data = appendU64(r.Data, w)
		}
	}
	return r, true
}

func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func appendU64(b []byte, v uint64) []byte {
	return appendU32(appendU32(b, uint32(v)), uint32(v>>32))
}
