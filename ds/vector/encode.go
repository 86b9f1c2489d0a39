package vector

import (
	"encoding/binary"
	"math"
	"slices"
	"unsafe"
)

// Encoding (version 2), everything little-endian, u = uvarint:
//
//	"HKVS" 2 | u dim | metric | quant | u M | u EF | rng u64 | u slots | u count | u entry | maxLevel
//	per element: level | u len name | u len+1 attr (0: none) | norm f32 |
//	  vector (f32: dim f32; int8: min f32, max f32, dim bytes; bin: words u64) | per level 0..level: u n, n × u id
//
// An int8 vector whose min is -max is Redis 8's symmetric scheme, else an offset range (store.go's
// q8meta). Version 1, still read, had int8: range f32, dim bytes (always symmetric).
// The graph is stored as it is, so loading does not rebuild it; reverse links are derived. Free ids
// are not stored: live ids are renumbered densely in id order (a decoded set's ids differ from the
// encoded one's where ids were free), so every decoded slot is backed by its bytes.
const encVersion = 2

var magic = []byte("HKVS")

// AppendBinary appends the whole set: config, graph, vectors, names and attributes.
func (s *Set) AppendBinary(dst []byte) []byte { return s.appendVersion(dst, encVersion) }

// appendVersion writes version 2, or version 1 (tests of the reader; right only while every Q8
// vector is symmetric).
func (s *Set) appendVersion(dst []byte, version byte) []byte {
	dst = append(dst, magic...)
	dst = append(dst, version)
	dst = binary.AppendUvarint(dst, uint64(s.cfg.Dim))
	dst = append(dst, byte(s.cfg.Metric), byte(s.cfg.Quant))
	dst = binary.AppendUvarint(dst, uint64(s.cfg.M))
	dst = binary.AppendUvarint(dst, uint64(s.cfg.EF))
	dst = appendU64(dst, s.rng)
	remap := make([]uint32, len(s.level))
	n := uint32(0)
	for i, l := range s.level {
		if l != freeLevel {
			remap[i] = n
			n++
		}
	}
	dst = binary.AppendUvarint(dst, uint64(s.count))
	dst = binary.AppendUvarint(dst, uint64(s.count))
	entry := uint32(0)
	if s.count > 0 {
		entry = remap[s.entry]
	}
	dst = binary.AppendUvarint(dst, uint64(entry))
	dst = append(dst, byte(s.maxLevel))
	for i, l := range s.level {
		id := uint32(i)
		if l == freeLevel {
			continue
		}
		dst = append(dst, l)
		dst = binary.AppendUvarint(dst, uint64(len(s.names[id])))
		dst = append(dst, s.names[id]...)
		if a := s.attrs[id]; a == nil {
			dst = append(dst, 0)
		} else {
			dst = binary.AppendUvarint(dst, uint64(len(a))+1)
			dst = append(dst, a...)
		}
		dst = appendU32(dst, math.Float32bits(s.norm[id]))
		nq := s.node(id)
		switch s.cfg.Quant {
		case NoQuant:
			for _, v := range nq.f {
				dst = appendU32(dst, math.Float32bits(v))
			}
		case Q8:
			if version > 1 {
				dst = appendU32(dst, math.Float32bits(nq.m.lo))
			}
			dst = appendU32(dst, math.Float32bits(nq.m.hi))
			dst = append(dst, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(nq.i))), len(nq.i))...)
		default:
			for _, w := range nq.b {
				dst = appendU64(dst, w)
			}
		}
		for lv := 0; lv <= int(l); lv++ {
			ls := s.links(id, lv)
			dst = binary.AppendUvarint(dst, uint64(len(ls)))
			for _, nb := range ls {
				dst = binary.AppendUvarint(dst, uint64(remap[nb]))
			}
		}
	}
	return dst
}

type decoder struct {
	b       []byte
	bad     bool
	version byte
}

func (d *decoder) u() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		d.b = nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte1() byte {
	if v := d.bytes(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if v := d.bytes(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (d *decoder) f32() float32 {
	f := math.Float32frombits(d.u32())
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		d.bad = true
	}
	return f
}

// Decode rebuilds a set from AppendBinary's bytes, checking every field and link; bad input is
// ErrCorrupt, never a panic. Memory grows with the bytes read, not with declared counts.
func Decode(b []byte) (*Set, error) {
	d := &decoder{b: b}
	if string(d.bytes(4)) != string(magic) {
		return nil, ErrCorrupt
	}
	if d.version = d.byte1(); d.version != 1 && d.version != encVersion {
		return nil, ErrCorrupt
	}
	var c Config
	c.Dim = int(min(d.u(), MaxDim+1))
	c.Metric, c.Quant = Metric(d.byte1()), Quant(d.byte1())
	c.M = int(min(d.u(), MaxM+1))
	c.EF = int(min(d.u(), 1<<21))
	if d.bad || c.M == 0 || c.EF == 0 {
		return nil, ErrCorrupt
	}
	s, err := New(c)
	if err != nil {
		return nil, ErrCorrupt
	}
	s.rng = uint64(d.u32()) | uint64(d.u32())<<32
	slots, count, entry := d.u(), d.u(), d.u()
	s.maxLevel = int(d.byte1())
	if d.bad || slots != count || slots > uint64(len(d.b)) || slots > MaxNodes || count > slots || entry >= max(slots, 1) ||
		s.maxLevel > MaxLevel || s.rng == 0 {
		return nil, ErrCorrupt
	}
	s.entry = uint32(entry)
	vb := 4 * c.Dim // the fewest bytes an element's vector takes
	switch c.Quant {
	case Q8:
		vb = 8 + c.Dim
		if d.version == 1 {
			vb = 4 + c.Dim
		}
	case Bin:
		vb = 8 * s.words
	}
	for i := uint64(0); i < slots && !d.bad; i++ {
		if len(d.b) < 8+vb { // level, name, attribute, norm, vector, link count: before allocating
			return nil, ErrCorrupt
		}
		d.slot(s, s.slot(), slots)
	}
	if d.bad || len(d.b) != 0 || s.check(int(count)) != nil {
		return nil, ErrCorrupt
	}
	return s, nil
}

func (d *decoder) slot(s *Set, id uint32, slots uint64) {
	l := d.byte1()
	if d.bad || int(l) > MaxLevel {
		d.bad = true
		return
	}
	name := string(d.bytes(d.u()))
	if _, dup := s.byName[name]; dup || d.bad {
		d.bad = true
		return
	}
	s.byName[name] = id
	s.names[id] = name
	s.heap += len(name)
	if n := d.u(); n > 0 {
		s.setAttrID(id, d.bytes(n-1))
	}
	s.norm[id] = d.f32()
	dim := s.cfg.Dim
	switch s.cfg.Quant {
	case NoQuant:
		v := d.bytes(uint64(4 * dim))
		for j := 0; j < len(v)/4; j++ {
			f := math.Float32frombits(binary.LittleEndian.Uint32(v[4*j:]))
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				d.bad = true
			}
			s.f32[int(id)*dim+j] = f
		}
	case Q8:
		var m q8meta
		m.hi = d.f32()
		m.lo = -m.hi
		if d.version > 1 {
			m.lo, m.hi = m.hi, d.f32()
		}
		v := d.bytes(uint64(dim))
		if m.lo > m.hi {
			d.bad = true
		}
		q := s.i8[int(id)*dim : int(id)*dim+len(v)]
		for j, x := range v {
			q[j] = int8(x)
			if x == 0x80 && m.symmetric() { // -128: symmetric levels are -127..127
				d.bad = true
			}
		}
		m.setRange(q)
		s.q8[id] = m
	default:
		v := d.bytes(uint64(8 * s.words))
		for j := 0; j < len(v)/8; j++ {
			s.bits[int(id)*s.words+j] = binary.LittleEndian.Uint64(v[8*j:])
		}
	}
	if d.bad {
		return
	}
	s.level[id] = l
	if l > 0 {
		s.upper[id] = make([]uint32, int(l)*s.s1)
		s.heap += 4 * cap(s.upper[id])
	}
	for lv := 0; lv <= int(l) && !d.bad; lv++ {
		n := d.u()
		if n > uint64(s.capAt(lv)) {
			d.bad = true
			return
		}
		blk := s.block(id, lv)
		for j := uint64(0); j < n; j++ {
			nb := d.u()
			if nb >= slots || nb == uint64(id) {
				d.bad = true
				return
			}
			blk[1+j] = uint32(nb)
		}
		blk[0] = uint32(n)
	}
	s.count++
}

// check verifies the decoded graph (links to live nodes reaching the level, no duplicates, the entry
// the highest node) and derives the reverse links.
func (s *Set) check(count int) error {
	if s.count != count {
		return ErrCorrupt
	}
	top := -1
	for i, l := range s.level {
		if l == freeLevel {
			continue
		}
		top = max(top, int(l))
		for lv := 0; lv <= int(l); lv++ {
			ls := s.links(uint32(i), lv)
			for j, nb := range ls {
				if !s.live(nb) || int(s.level[nb]) < lv || slices.Contains(ls[:j], nb) {
					return ErrCorrupt
				}
				s.revAdd(nb, lv, uint32(i))
			}
		}
	}
	if s.count == 0 {
		if s.maxLevel != 0 {
			return ErrCorrupt
		}
		s.entry = 0
		return nil
	}
	if !s.live(s.entry) || int(s.level[s.entry]) != s.maxLevel || top != s.maxLevel {
		return ErrCorrupt
	}
	s.repairReach()
	return nil
}

// repairReach adopts every node that has no in-link or no out-link at a level it shares with
// another node: a well-formed encoding may still hold a graph searches cannot fully walk.
func (s *Set) repairReach() {
	perLevel := make([]int, MaxLevel+1)
	for _, l := range s.level {
		for lv := 0; l != freeLevel && lv <= int(l); lv++ {
			perLevel[lv]++
		}
	}
	for i, l := range s.level {
		for lv := 0; l != freeLevel && lv <= int(l); lv++ {
			if perLevel[lv] > 1 && (!s.hasIn(uint32(i), lv) || len(s.links(uint32(i), lv)) == 0) {
				s.orphans = append(s.orphans, revEntry(lv, uint32(i)))
			}
		}
	}
	if len(s.orphans) > 0 {
		sc := getScratch(len(s.level))
		s.fixOrphans(sc)
		putScratch(sc)
	}
}
