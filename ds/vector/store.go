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
	f []float32 // NoQuant (normalised under cosine)
	i []int8    // Q8
	m q8meta    // Q8: i's range and distance terms
	b []uint64  // Bin
	// asym: a prepared Q8 query is compared in float32 against the stored int8s (f, fsq, fsum),
	// which removes the query's own quantization error; node views compare int8 to int8.
	asym bool
	fsq  float32 // squared norm of f
	fsum float32 // sum of f's components: the offset term of an offset-range vector's dot product
}

// q8meta is one Q8 vector's range and what its distances need. Component i is off + sc*q[i]:
//   - symmetric (Redis 8's scheme, lo == -hi): q = round(x*127/hi), sc = hi/127, off = 0;
//   - offset range (lo != -hi): level u = round((x-lo)*255/(hi-lo)) in 0..255, q = u-128,
//     sc = (hi-lo)/255, off = lo + 128*sc.
//
// quantizeQ8 picks the offset range only when it makes the steps at least 4/3 finer (a vector whose
// components do not reach below zero by more than about half its largest, as pixels or counts), so
// Redis's layout is kept for centred data. qsum is the sum of q, sq the squared norm of the
// dequantized vector.
type q8meta struct {
	lo, hi, sc, off, sq float32
	qsum                int32
}

func (m *q8meta) symmetric() bool { return m.lo == -m.hi }

// setRange fills sc and off from lo and hi, and qsum and sq from the int8s.
func (m *q8meta) setRange(q []int8) {
	if m.symmetric() {
		m.sc, m.off = m.hi/127, 0
	} else {
		m.sc = (m.hi - m.lo) / 255
		m.off = m.lo + 128*m.sc
	}
	var qs int32
	var s float64
	for _, v := range q {
		qs += int32(v)
		dq := float64(m.off) + float64(m.sc)*float64(v)
		s += dq * dq
	}
	m.qsum, m.sq = qs, float32(s)
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
		q.m = quantizeQ8(q.f, q.i)
		q.asym = true
		q.fsq, q.fsum = 0, 0
		for _, x := range q.f {
			q.fsq += x * x
			q.fsum += x
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

// quantizeQ8 maps x to int8s (see q8meta): Redis 8's symmetric q = round(x*127/range), range the
// largest absolute component, unless an offset range [min, max] with 255 levels makes the steps at
// least 4/3 finer, that is (max-min)/255 <= 0.75*range/127.
func quantizeQ8(x []float32, q []int8) q8meta {
	var lo, hi float32
	if len(x) > 0 {
		lo, hi = x[0], x[0]
	}
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	m := max(hi, -lo)
	var qm q8meta
	switch {
	case m == 0:
		clear(q)
	case float64(hi-lo)*127 > 0.75*255*float64(m):
		qm.lo, qm.hi = -m, m
		scale := 127 / float64(m)
		for i, v := range x {
			q[i] = int8(max(-127, min(127, math.Round(float64(v)*scale))))
		}
	default:
		qm.lo, qm.hi = lo, hi
		scale := 0.0
		if hi > lo {
			scale = 255 / (float64(hi) - float64(lo))
		}
		for i, v := range x {
			q[i] = int8(max(0, min(255, math.Round((float64(v)-float64(lo))*scale))) - 128)
		}
	}
	qm.setRange(q)
	return qm
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

// prefetch asks for the first prefetchN cache lines of id's stored vector (fewer when it is
// shorter), and for a Q8 vector the line of its range too.
func (s *Set) prefetch(id uint32) {
	d := s.cfg.Dim
	o := int(id) * d
	switch s.cfg.Quant {
	case NoQuant:
		prefetchLines(unsafe.Pointer(&s.f32[o]), min(prefetchN, (4*d+63)/64))
	case Q8:
		prefetchLines(unsafe.Pointer(&s.i8[o]), min(prefetchN, (d+63)/64))
		// The range a distance scales by is in another array: unasked for, its miss came after
		// each dot product (on 100,000 x 512 random vectors, as long as the dot product itself).
		prefetchLines(unsafe.Pointer(&s.q8[id].sc), 1)
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
		return query{i: s.i8[o : o+d : o+d], m: s.q8[id]}
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
		m := &s.q8[id]
		var dot, qsq float32
		if q.asym {
			dot = m.sc*kern.dotF32I8(q.f, v) + m.off*q.fsum
			qsq = q.fsq
		} else {
			dot = dotQ8(&q.m, m, kern.dotI8(q.i, v), d)
			qsq = q.m.sq
		}
		if s.cfg.Metric == L2 {
			return float32(math.Sqrt(float64(max(0, qsq+m.sq-2*dot))))
		}
		return 1 - dot
	default:
		w := int(id) * s.words
		return float32(2*kern.hamming(q.b, s.bits[w:w+s.words:w+s.words])) / float32(d)
	}
}

// dotQ8 is the dot product of two dequantized Q8 vectors from their int8 dot product:
// sum (oa + sa*qa)(ob + sb*qb), in float64 since the offset terms nearly cancel.
func dotQ8(a, b *q8meta, qdot int32, d int) float32 {
	if a.off == 0 && b.off == 0 {
		return float32(qdot) * (a.sc * b.sc)
	}
	oa, ob, sa, sb := float64(a.off), float64(b.off), float64(a.sc), float64(b.sc)
	return float32(oa*ob*float64(d) + oa*sb*float64(b.qsum) + ob*sa*float64(a.qsum) + sa*sb*float64(qdot))
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
		s.q8[id] = q.m
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
		if nq.m.symmetric() {
			for i, v := range nq.i {
				out[i] = float32(v) * nq.m.hi / 127 // as Redis 8 dequantizes
			}
		} else {
			lo, w := float64(nq.m.lo), float64(nq.m.hi)-float64(nq.m.lo)
			for i, v := range nq.i { // min + u*(max-min)/255: levels 0 and 255 give min and max exactly
				out[i] = float32(lo + w*float64(int(v)+128)/255)
			}
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
		if nq.m.symmetric() {
			for i, v := range nq.i {
				r.Data[i] = byte(v)
			}
			r.Range = nq.m.hi
		} else {
			for i, v := range nq.i {
				r.Data[i] = byte(int(v) + 128)
			}
			r.Offset, r.Min, r.Max = true, nq.m.lo, nq.m.hi
		}
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
