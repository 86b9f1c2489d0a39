package command

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"

	"github.com/hotkv/hotkv/ds/vector"
)

// vecSpec is a parsed vector argument: [REDUCE dim] FP32 blob | VALUES n v1 … vn.
type vecSpec struct {
	vec    []float32
	reduce int // REDUCE's dimension, 0 without
	n      int // arguments consumed
}

// parseVector reads a vector at args[i:] as Redis 8's parseVector does; reduceOK allows REDUCE
// (VADD). ok is false for what Redis answers "invalid vector specification". Nothing is
// allocated for a declared VALUES count before its arguments are there.
func parseVector(args [][]byte, i int, reduceOK bool) (v vecSpec, ok bool) {
	if reduceOK && len(args) > i+2 && eqFold(args[i], "reduce") {
		d, ok := ParseInt(args[i+1])
		if !ok || d <= 0 {
			return v, false
		}
		v.reduce = int(min(d, math.MaxInt32))
		i += 2
		v.n = 2
	}
	if i >= len(args) {
		return v, false
	}
	switch {
	case eqFold(args[i], "fp32"):
		if len(args) < i+2 {
			return v, false
		}
		b := args[i+1]
		if len(b)%4 != 0 || len(b) < 4 || len(b)/4 > vector.MaxDim {
			return v, false
		}
		v.vec = make([]float32, len(b)/4)
		for j := range v.vec {
			v.vec[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		}
		v.n += 2
	case eqFold(args[i], "values"):
		if len(args) < i+2 {
			return v, false
		}
		d, ok := ParseInt(args[i+1])
		if !ok || d < 1 || d > vector.MaxDim || int64(len(args)-i-2) < d {
			return v, false
		}
		v.vec = make([]float32, d)
		for j := range v.vec {
			f, ok := ParseFloat(args[i+2+j])
			if !ok {
				return v, false
			}
			v.vec[j] = float32(f)
		}
		v.n += 2 + int(d)
	default:
		return v, false
	}
	if v.reduce > 0 && (v.reduce >= len(v.vec) || len(v.vec)*v.reduce > maxProjection) {
		return v, false
	}
	return v, true
}

// maxProjection bounds REDUCE's matrix (input x output dimensions, 4 bytes each: 64 MB). The
// matrix is computed, not sent, so without a bound 65,536 values could make a 16 GB one; Redis 8
// allocates whatever is asked. REDUCE must also reduce: the output is below the input.
const maxProjection = 1 << 24

func eqFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != lower[i] && b[i] != lower[i] {
			return false
		}
	}
	return true
}

// projection is Redis 8's REDUCE matrix (createProjectionMatrix, whose description in vset.c
// this follows): out x in entries ±1/sqrt(in), the sign + when the bits of i&j number even, so a
// replica computes the same matrix.
func projection(in, out int) []float32 {
	m := make([]float32, in*out)
	scale := float32(1 / math.Sqrt(float64(in)))
	for i := 0; i < out; i++ {
		for j := 0; j < in; j++ {
			if bits.OnesCount32(uint32(i&j))%2 == 0 {
				m[i*in+j] = scale
			} else {
				m[i*in+j] = -scale
			}
		}
	}
	return m
}

// project applies v's projection to x.
func (v *vsetValue) project(x []float32) []float32 { return projectWith(v.proj, v.projIn, x) }

// projectWith applies the projection proj, whose rows are in long, to x.
func projectWith(proj []float32, in int, x []float32) []float32 {
	out := make([]float32, len(proj)/in)
	for i := range out {
		row := proj[i*in : (i+1)*in]
		var s float32
		for j, r := range row {
			s += r * x[j]
		}
		out[i] = s
	}
	return out
}

// vectorErr is the reply for an error of ds/vector's.
func vectorErr(c *Ctx, err error) {
	switch {
	case errors.Is(err, vector.ErrNaN):
		c.Err(ErrVsetNaN)
	case errors.Is(err, vector.ErrZero):
		c.Err(ErrVsetZero)
	case errors.Is(err, vector.ErrDim):
		c.Err(ErrVsetVectorSpec)
	default:
		c.Err("ERR " + err.Error())
	}
}

// checkVector refuses what ds/vector would, before anything changes: NaN or infinite
// components, and a zero vector under cosine.
func checkVector(c *Ctx, x []float32, m vector.Metric) bool {
	zero := true
	for _, f := range x {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			c.Err(ErrVsetNaN)
			return false
		}
		zero = zero && f == 0
	}
	if zero && m == vector.Cosine {
		c.Err(ErrVsetZero)
		return false
	}
	return true
}

// vaddOpts are VADD's options after the element.
type vaddOpts struct {
	cas     bool
	ef      int
	m       int
	quant   vector.Quant
	attr    []byte
	hasAttr bool
}

func parseVaddOpts(c *Ctx, args [][]byte) (o vaddOpts, ok bool) {
	o.ef, o.m, o.quant = vector.DefaultEF, vector.DefaultM, vector.Q8
	for j := 0; j < len(args); j++ {
		more := j+1 < len(args)
		switch a := args[j]; {
		case eqFold(a, "cas"):
			o.cas = true
		case eqFold(a, "ef") && more:
			n, ok := ParseInt(args[j+1])
			if !ok || n <= 0 || n > 1000000 {
				c.Err(ErrVsetEF)
				return o, false
			}
			o.ef = int(n)
			j++
		case eqFold(a, "m") && more:
			n, ok := ParseInt(args[j+1])
			if !ok || n < 4 || n > vector.MaxM { // Redis's HNSW_MIN_M, HNSW_MAX_M
				c.Err(ErrVsetM)
				return o, false
			}
			o.m = int(n)
			j++
		case eqFold(a, "setattr") && more:
			o.attr, o.hasAttr = args[j+1], true
			j++
		case eqFold(a, "noquant"):
			o.quant = vector.NoQuant
		case eqFold(a, "bin"):
			o.quant = vector.Bin
		case eqFold(a, "q8"):
			o.quant = vector.Q8
		default:
			c.Err(ErrVsetOptAfterElem)
			return o, false
		}
	}
	return o, true
}

// VADD key [REDUCE dim] (FP32 blob | VALUES num v …) element [CAS] [NOQUANT|Q8|BIN] [EF ef]
// [SETATTR json] [M m]: 1 (true in RESP3) when added, 0 when an existing element was updated.
// CAS (Redis's threaded neighbour search) changes nothing here: the insert is synchronous.
// Replicated verbatim. Redis 8 propagates only an add (ReplicateVerbatim when added); HotKV
// propagates an update too, so an AOF or replica holds the new vector.
func vadd(c *Ctx) {
	key := c.Args[1]
	vs, ok := parseVector(c.Args, 2, true)
	if !ok {
		c.Err(ErrVsetVectorSpec)
		return
	}
	ei := 2 + vs.n
	if ei >= len(c.Args) {
		c.ArityErr()
		return
	}
	elem := c.Args[ei]
	o, ok := parseVaddOpts(c, c.Args[ei+1:])
	if !ok {
		return
	}
	_, v, ok := writeVset(c, key)
	if !ok {
		return
	}
	vec := vs.vec
	if v == nil {
		dim := len(vec)
		var proj []float32
		if vs.reduce > 0 {
			proj, dim = projection(len(vec), vs.reduce), vs.reduce
		}
		if proj != nil {
			vec = projectWith(proj, len(vec), vec)
		}
		if !checkVector(c, vec, vector.Cosine) {
			return
		}
		nv, err := newVsetValue(c, vector.Config{Dim: dim, Metric: vector.Cosine, Quant: o.quant, M: o.m, EF: vector.DefaultEF})
		if err != nil {
			vectorErr(c, err)
			return
		}
		if proj != nil {
			nv.proj, nv.projIn = proj, len(vs.vec)
		}
		if !vaddInsert(c, nv, elem, vec, o) {
			return
		}
		addVset(c, key, nv)
		c.Changed(NotifyModule, "vadd", key)
		c.Dirty(1)
		c.Bool(true)
		return
	}
	cfg := v.set.Config()
	switch {
	case cfg.Quant != o.quant:
		c.Err(ErrVsetQuantMismatch)
		return
	case cfg.M != o.m:
		c.Err(ErrVsetMMismatch)
		return
	case v.proj == nil && cfg.Dim != len(vec) || v.proj != nil && vs.reduce != 0 && cfg.Dim != vs.reduce:
		c.Errf(ErrVsetDimMismatch, len(vec), cfg.Dim)
		return
	case vs.reduce != 0 && v.proj == nil:
		c.Err(ErrVsetNoProjection)
		return
	}
	if v.proj != nil {
		if len(vec) != v.projIn {
			c.Errf(ErrVsetProjInput, len(vec), v.projIn)
			return
		}
		vec = v.project(vec)
	}
	if !checkVector(c, vec, cfg.Metric) {
		return
	}
	existed := v.set.Has(elem)
	if !vaddInsert(c, v, elem, vec, o) {
		return
	}
	c.Changed(NotifyModule, "vadd", key)
	c.Dirty(1)
	c.Bool(!existed)
}

// vaddInsert adds or updates elem; SETATTR sets its attribute (empty: removes it). An update
// keeps the attribute when SETATTR is absent, as Redis 8's vectorSetInsert.
func vaddInsert(c *Ctx, v *vsetValue, elem []byte, vec []float32, o vaddOpts) bool {
	if _, err := v.set.Add(elem, vec, o.ef); err != nil {
		vectorErr(c, err)
		return false
	}
	if o.hasAttr {
		if len(o.attr) == 0 {
			v.setAttr(elem, nil)
		} else {
			v.setAttr(elem, o.attr)
		}
	}
	return true
}
