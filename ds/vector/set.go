package vector

import (
	"errors"
	"math"
	"unsafe"
)

// Metric is how two vectors are compared.
type Metric uint8

const (
	Cosine Metric = iota // default, as Redis 8
	L2
	IP
)

func (m Metric) String() string {
	switch m {
	case Cosine:
		return "cosine"
	case L2:
		return "l2"
	case IP:
		return "ip"
	}
	return "unknown"
}

// Quant is how a vector is stored.
type Quant uint8

const (
	Q8      Quant = iota // int8 with a per-vector range; default, as Redis 8
	NoQuant              // float32
	Bin                  // one sign bit a dimension
)

// String is the name Redis 8's VINFO and VEMB RAW print.
func (q Quant) String() string {
	switch q {
	case Q8:
		return "int8"
	case NoQuant:
		return "f32"
	case Bin:
		return "bin"
	}
	return "unknown"
}

// Limits and defaults.
const (
	MaxDim     = 65536
	DefaultM   = 16
	MaxM       = 4096 // Redis's HNSW_MAX_M
	DefaultEF  = 200  // build EF, Redis's HNSW_EF_C
	SearchEF   = 100  // search EF when a caller passes 0
	MaxLevel   = 16   // Redis's HNSW_MAX_LEVEL
	MaxNodes   = 1 << 27
	levelShift = 27 // reverse-link entries: level<<27 | id
	freeLevel  = 0xFF
)

var (
	ErrDim     = errors.New("vector: wrong dimension")
	ErrNaN     = errors.New("vector: NaN or infinite component")
	ErrZero    = errors.New("vector: zero vector under cosine")
	ErrConfig  = errors.New("vector: bad configuration")
	ErrFull    = errors.New("vector: too many elements")
	ErrCorrupt = errors.New("vector: corrupt encoding")
)

// Config fixes a set's shape at creation.
type Config struct {
	Dim    int // 1..65536
	Metric Metric
	Quant  Quant
	M      int    // links a node keeps above level 0 (2M at level 0); default 16
	EF     int    // build EF; default 200
	Seed   uint64 // level generator seed; 0 = random
}

// Result is one search hit: Score is a similarity, higher is better (see the package doc's scale).
type Result struct {
	ID    uint32
	Score float32
}

// RawVector is an element's vector as stored, for VEMB RAW.
type RawVector struct {
	Quant Quant
	Data  []byte  // f32: 4 bytes a component little-endian; int8: 1 a component; bin: 8-byte words little-endian
	Norm  float32 // L2 norm removed by normalisation (cosine); 1 otherwise
	Range float32 // Q8, symmetric: the largest absolute component the int8s scale to (Redis 8's layout)
	// Offset: Q8 with an offset range (docs/decisions.md): Data holds uint8 levels u, component
	// Min + u*(Max-Min)/255. Range is then 0.
	Offset   bool
	Min, Max float32
}

// Info is what VINFO and VSIM.INFO print.
type Info struct {
	Dim, M, EF  int
	Metric      Metric
	Quant       Quant
	Len         int
	MaxLevel    int    // highest level any node reaches (0 when empty)
	Entry       uint32 // entry point id; meaningless when Len is 0
	Slots       int    // ids handed out, live or free (Redis's hnsw-max-node-uid analogue)
	Attrs       int    // elements with an attribute
	LevelCounts []int  // nodes reaching each level
}

// Set is a vector set. The zero value is not usable: call New or Decode.
type Set struct {
	cfg   Config
	words int // uint64 words a BIN vector
	s0    int // level-0 block stride: 1 + 2M
	s1    int // upper-level block stride: 1 + M
	mL    float64
	rng   uint64

	byName map[string]uint32
	names  []string
	attrs  [][]byte
	level  []uint8   // freeLevel for a free slot
	norm   []float32 // norm removed by normalisation (cosine), else 1
	q8     []q8meta  // Q8: each vector's range and the terms its distances need (store.go)
	f32    []float32 // NoQuant arena, stride Dim
	i8     []int8    // Q8 arena, stride Dim
	bits   []uint64  // Bin arena, stride words
	links0 []uint32  // stride s0
	upper  [][]uint32
	rev    [][]uint32 // in-links: level<<27 | source id
	free   []uint32
	// orphans: level<<27|id of nodes a write left without in-links, adopted before it returns
	orphans []uint32

	count    int
	heap     int // bytes of per-element allocations: names, attributes, upper blocks, reverse links
	nattrs   int
	entry    uint32
	maxLevel int
}

// New makes an empty set, filling defaults for M and EF.
func New(c Config) (*Set, error) {
	if c.M == 0 {
		c.M = DefaultM
	}
	if c.EF == 0 {
		c.EF = DefaultEF
	}
	if c.Dim < 1 || c.Dim > MaxDim || c.M < 2 || c.M > MaxM || c.EF < 1 || c.EF > 1<<20 ||
		c.Metric > IP || c.Quant > Bin {
		return nil, ErrConfig
	}
	s := &Set{cfg: c, byName: map[string]uint32{}}
	s.words = (c.Dim + 63) / 64
	s.s0 = 1 + 2*c.M
	s.s1 = 1 + c.M
	s.mL = 1 / math.Log(float64(c.M))
	s.rng = c.Seed
	if s.rng == 0 {
		s.rng = randomSeed()
	}
	return s, nil
}

func (s *Set) Config() Config { return s.cfg }
func (s *Set) Len() int       { return s.count }

func (s *Set) Has(name []byte) bool {
	_, ok := s.byName[string(name)]
	return ok
}

func (s *Set) ID(name []byte) (uint32, bool) {
	id, ok := s.byName[string(name)]
	return id, ok
}

// Name is id's element name, nil for a free id. The bytes belong to the set: never modify them; they
// stay valid until the element is removed.
func (s *Set) Name(id uint32) []byte {
	if !s.live(id) {
		return nil
	}
	n := s.names[id]
	return unsafe.Slice(unsafe.StringData(n), len(n))
}

func (s *Set) live(id uint32) bool { return int(id) < len(s.level) && s.level[id] != freeLevel }

// ForEach calls f for each element in id order until f returns false. The name follows Name's rules.
func (s *Set) ForEach(f func(id uint32, name []byte) bool) {
	for id := range s.level {
		if s.level[id] != freeLevel && !f(uint32(id), s.Name(uint32(id))) {
			return
		}
	}
}

// SetAttr sets (attr nil: deletes) name's attribute, copying it; false if name is absent.
func (s *Set) SetAttr(name, attr []byte) bool {
	id, ok := s.byName[string(name)]
	if !ok {
		return false
	}
	s.setAttrID(id, attr)
	return true
}

func (s *Set) setAttrID(id uint32, attr []byte) {
	if s.attrs[id] != nil {
		s.nattrs--
		s.heap -= cap(s.attrs[id])
	}
	if attr == nil {
		s.attrs[id] = nil
		return
	}
	s.attrs[id] = append(make([]byte, 0, len(attr)), attr...)
	s.nattrs++
	s.heap += cap(s.attrs[id])
}

// Attr is name's attribute (the set's bytes: never modify them).
func (s *Set) Attr(name []byte) ([]byte, bool) {
	id, ok := s.byName[string(name)]
	if !ok || s.attrs[id] == nil {
		return nil, false
	}
	return s.attrs[id], true
}

// AttrID is id's attribute, nil when it has none (for FILTER callbacks that hold an id).
func (s *Set) AttrID(id uint32) []byte {
	if !s.live(id) {
		return nil
	}
	return s.attrs[id]
}

// Info describes the set.
func (s *Set) Info() Info {
	in := Info{Dim: s.cfg.Dim, M: s.cfg.M, EF: s.cfg.EF, Metric: s.cfg.Metric, Quant: s.cfg.Quant,
		Len: s.count, MaxLevel: s.maxLevel, Entry: s.entry, Slots: len(s.level), Attrs: s.nattrs}
	if s.count > 0 {
		in.LevelCounts = make([]int, s.maxLevel+1)
		for _, l := range s.level {
			if l == freeLevel {
				continue
			}
			for i := 0; i <= int(l) && i <= s.maxLevel; i++ {
				in.LevelCounts[i]++
			}
		}
	}
	return in
}

// MemoryUsage is the bytes the set holds: arenas by capacity, names, attributes, link blocks and an
// estimate of the name map's buckets. O(1): per-element allocations are counted as they change.
func (s *Set) MemoryUsage() int {
	n := int(unsafe.Sizeof(*s))
	n += cap(s.level) + 4*(cap(s.norm)+cap(s.f32)+cap(s.links0)+cap(s.free)) + int(unsafe.Sizeof(q8meta{}))*cap(s.q8)
	n += cap(s.i8) + 8*cap(s.bits)
	n += 16*cap(s.names) + 24*(cap(s.attrs)+cap(s.upper)+cap(s.rev)) + 4*cap(s.orphans)
	n += s.heap
	n += len(s.byName) * 40 // map slot: string header, uint32, control byte, load factor
	return n
}

// nextLevel draws a node level: floor(-ln(u)*mL), capped at MaxLevel.
func (s *Set) nextLevel() int {
	s.rng ^= s.rng << 13
	s.rng ^= s.rng >> 7
	s.rng ^= s.rng << 17
	u := (float64(s.rng>>11) + 0.5) / (1 << 53)
	l := int(-math.Log(u) * s.mL)
	if l > MaxLevel {
		l = MaxLevel
	}
	return l
}
