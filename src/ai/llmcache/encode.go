package llmcache

import (
	"encoding/binary"
	"errors"
	"math"
	"sort"

	"github.com/hotkv/hotkv/ds/vector"
)

// The encoding (DUMP, RDB module value, COPY): "LLMC", a version byte, the config, the next id,
// the statistics, the entries in LRU order from the least recent (each with its vector when it
// has one), and the FEEDBACK pairs. Vector indexes are rebuilt on decode.
var magic = []byte("LLMC")

// Version 2 added the search EF after the embedder; version 1 (EF 0) still decodes.
const encVersion = 2

// ErrCorrupt is Decode's error for bytes that are not a cache's encoding.
var ErrCorrupt = errors.New("llmcache: corrupt encoding")

// AppendBinary appends the cache's encoding to dst.
func (c *Cache) AppendBinary(dst []byte) []byte {
	dst = append(dst, magic...)
	dst = append(dst, encVersion)
	cfg := c.cfg
	dst = binary.AppendUvarint(dst, uint64(cfg.Dim))
	dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(cfg.Threshold))
	dst = binary.AppendUvarint(dst, uint64(cfg.TTL))
	dst = binary.AppendUvarint(dst, uint64(cfg.MaxEntries))
	dst = append(dst, byte(cfg.Guard), byte(cfg.Quant))
	dst = appendBytes(dst, []byte(cfg.Embedder))
	dst = binary.AppendUvarint(dst, uint64(cfg.EF))
	dst = binary.AppendUvarint(dst, c.nextID)
	st := c.Stats()
	s := &st
	for _, n := range []int64{s.Lookups, s.ExactHits, s.SemanticHits, s.Misses, s.GuardRejects,
		s.TokensSaved, s.TokensInSaved, s.WrongHits, s.Evicted, s.Expired} {
		dst = binary.AppendVarint(dst, n)
	}
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(s.CostSaved))
	for i := range Buckets {
		dst = binary.AppendVarint(dst, s.HitScores[i])
		dst = binary.AppendVarint(dst, s.NearMisses[i])
	}
	dst = binary.AppendUvarint(dst, uint64(len(c.byID)))
	for _, e := range c.byRecency() {
		dst = c.appendEntry(dst, e)
	}
	bad := make([]badKey, 0, len(c.bad))
	for k := range c.bad {
		bad = append(bad, k)
	}
	sort.Slice(bad, func(i, j int) bool {
		a, b := bad[i], bad[j]
		if a.ns != b.ns {
			return a.ns < b.ns
		}
		if a.para != b.para {
			return a.para < b.para
		}
		return a.orig < b.orig
	})
	dst = binary.AppendUvarint(dst, uint64(len(bad)))
	for _, k := range bad {
		dst = appendBytes(dst, []byte(k.ns))
		dst = binary.LittleEndian.AppendUint64(dst, k.para)
		dst = binary.LittleEndian.AppendUint64(dst, k.orig)
	}
	return dst
}

func (c *Cache) appendEntry(dst []byte, e *Entry) []byte {
	dst = binary.AppendUvarint(dst, e.ID)
	dst = appendBytes(dst, []byte(e.NS))
	dst = appendBytes(dst, e.Prompt)
	dst = appendBytes(dst, e.Response)
	dst = binary.AppendVarint(dst, e.TokensIn)
	dst = binary.AppendVarint(dst, e.TokensOut)
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(e.Cost))
	dst = binary.AppendVarint(dst, e.Expire)
	dst = binary.AppendVarint(dst, e.Created)
	dst = binary.AppendVarint(dst, e.hits.Load())
	dst = binary.AppendUvarint(dst, uint64(len(e.Tags)))
	for _, t := range e.Tags {
		dst = appendBytes(dst, []byte(t))
	}
	dst = appendBytes(dst, e.Attr)
	var last []byte
	if p := e.lastHit.Load(); p != nil {
		last = *p
	}
	dst = appendBytes(dst, last)
	v := c.Vector(e.ID)
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

// decoder reads the encoding, latching the first error; lengths are checked against the bytes
// left before anything is allocated.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) fixed(n int) []byte {
	if len(d.b) < n {
		d.bad, d.b = true, nil
		return make([]byte, n)
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return nil
	}
	return append([]byte(nil), d.fixed(int(n))...)
}

// count reads a count of items of at least min bytes each.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.bad, d.b = true, nil
		return 0
	}
	return int(n)
}

// Decode rebuilds a cache from AppendBinary's bytes.
func Decode(b []byte) (*Cache, error) {
	d := &decoder{b: b}
	if string(d.fixed(4)) != string(magic) {
		return nil, ErrCorrupt
	}
	version := d.fixed(1)[0]
	if version != 1 && version != encVersion {
		return nil, ErrCorrupt
	}
	var cfg Config
	cfg.Dim = int(d.uvarint())
	cfg.Threshold = math.Float32frombits(binary.LittleEndian.Uint32(d.fixed(4)))
	cfg.TTL = int64(d.uvarint())
	cfg.MaxEntries = int(d.uvarint())
	g := d.fixed(2)
	cfg.Guard, cfg.Quant = Guard(g[0]), vector.Quant(g[1])
	cfg.Embedder = string(d.bytes())
	if version >= 2 {
		cfg.EF = int(min(d.uvarint(), MaxEF+1))
	}
	if d.bad || cfg.Dim > vector.MaxDim || cfg.MaxEntries < 0 || cfg.TTL < 0 {
		return nil, ErrCorrupt
	}
	c, err := New(cfg)
	if err != nil {
		return nil, ErrCorrupt
	}
	next := d.uvarint()
	var st Stats
	s := &st
	for _, p := range []*int64{&s.Lookups, &s.ExactHits, &s.SemanticHits, &s.Misses, &s.GuardRejects,
		&s.TokensSaved, &s.TokensInSaved, &s.WrongHits, &s.Evicted, &s.Expired} {
		*p = d.varint()
	}
	s.CostSaved = math.Float64frombits(binary.LittleEndian.Uint64(d.fixed(8)))
	for i := range Buckets {
		s.HitScores[i], s.NearMisses[i] = d.varint(), d.varint()
	}
	c.setStats(st)
	n := d.count(20)
	max := c.cfg.MaxEntries
	c.cfg.MaxEntries = 0 // the entries were within it when encoded
	for i := 0; i < n && !d.bad; i++ {
		if err := c.decodeEntry(d); err != nil {
			return nil, err
		}
	}
	c.cfg.MaxEntries = max
	nb := d.count(17)
	for i := 0; i < nb && !d.bad; i++ {
		if c.bad == nil {
			c.bad = map[badKey]struct{}{}
		}
		ns := string(d.bytes())
		k := badKey{ns: ns}
		k.para = binary.LittleEndian.Uint64(d.fixed(8))
		k.orig = binary.LittleEndian.Uint64(d.fixed(8))
		c.bad[k] = struct{}{}
	}
	if d.bad || len(d.b) != 0 {
		return nil, ErrCorrupt
	}
	c.nextID = max64(c.nextID, next)
	return c, nil
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

func (c *Cache) decodeEntry(d *decoder) error {
	var a SetArgs
	a.ID = d.uvarint()
	a.NS, a.Prompt, a.Response = d.bytes(), d.bytes(), d.bytes()
	a.TokensIn, a.TokensOut = d.varint(), d.varint()
	a.Cost = math.Float64frombits(binary.LittleEndian.Uint64(d.fixed(8)))
	a.Expire = d.varint()
	a.NoExpire = true
	created, hits := d.varint(), d.varint()
	nt := d.count(1)
	for j := 0; j < nt && !d.bad; j++ {
		a.Tags = append(a.Tags, d.bytes())
	}
	a.Attr = d.bytes()
	last := d.bytes()
	dim := d.count(4)
	if dim > 0 {
		a.Vector = make([]float32, dim)
		raw := d.fixed(4 * dim)
		for k := range a.Vector {
			a.Vector[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
		}
	}
	if d.bad || a.ID == 0 || c.byID[a.ID] != nil {
		return ErrCorrupt
	}
	if _, _, err := c.Set(a, created); err != nil {
		return ErrCorrupt
	}
	e := c.byID[a.ID]
	if e == nil {
		return ErrCorrupt
	}
	e.hits.Store(hits)
	if len(last) > 0 {
		e.lastHit.Store(&last)
	}
	return nil
}

// Clone returns an independent copy (COPY).
func (c *Cache) Clone() *Cache {
	cp, err := Decode(c.AppendBinary(nil))
	if err != nil {
		panic("BUG: an LLM cache does not decode its own encoding: " + err.Error())
	}
	return cp
}
