package llmcache

import (
	"encoding/binary"
	"errors"
	"math"
	"sort"

	"github.com/hotkv/hotkv/ds/vector"
)

// The encoding (DUMP, RDB module value, COPY): "LLMC", a version byte, the config, the next id,
// the statistics, the entries in LRU order from the least recent, each namespace's vector index
// (ds/vector's encoding: the HNSW graph as built, so decoding does not rebuild it), and the
// FEEDBACK pairs.
var magic = []byte("LLMC")

// Version 3 stores the indexes (an entry says only whether it has a vector); versions 1 and 2,
// still decoded, stored each entry's vector and rebuilt the indexes (100,000 x 512 took 4-10
// minutes). Version 2 added the search EF after the embedder; version 1 has EF 0.
const encVersion = 3

// ErrCorrupt is Decode's error for bytes that are not a cache's encoding.
var ErrCorrupt = errors.New("llmcache: corrupt encoding")

// AppendBinary appends the cache's encoding to dst.
func (c *Cache) AppendBinary(dst []byte) []byte {
	dst = c.appendHead(dst)
	for _, e := range c.byRecency() {
		dst = c.appendEntry(dst, e)
	}
	return c.appendTail(dst)
}

// appendHead appends the magic, version, config, next id, statistics and the entry count.
func (c *Cache) appendHead(dst []byte) []byte {
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
	return binary.AppendUvarint(dst, uint64(len(c.byID)))
}

// appendTail appends what follows the entries: the namespaces' indexes and the FEEDBACK pairs.
func (c *Cache) appendTail(dst []byte) []byte {
	names := make([]string, 0, len(c.ns))
	for name, ns := range c.ns {
		if ns.set != nil && ns.set.Len() > 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	dst = binary.AppendUvarint(dst, uint64(len(names)))
	for _, name := range names {
		dst = appendBytes(dst, []byte(name))
		dst = appendBytes(dst, c.ns[name].set.AppendBinary(nil))
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
	if e.hasVec {
		return append(dst, 1)
	}
	return append(dst, 0)
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

// view is bytes without the copy: valid while the decoded buffer is.
func (d *decoder) view() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return nil
	}
	return d.fixed(int(n))
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
	if version < 1 || version > encVersion {
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
		if err := c.decodeEntry(d, version); err != nil {
			return nil, err
		}
	}
	c.cfg.MaxEntries = max
	if version >= 3 {
		if err := c.decodeIndexes(d); err != nil {
			return nil, err
		}
	}
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

func (c *Cache) decodeEntry(d *decoder, version byte) error {
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
	hasVec := false
	dim := 0
	if version >= 3 {
		switch d.fixed(1)[0] {
		case 0:
		case 1:
			hasVec = true
		default:
			return ErrCorrupt
		}
	} else {
		dim = d.count(4)
	}
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
	if version >= 3 {
		e.hasVec = hasVec // its vector is in the namespace's index, decoded after the entries
	}
	e.hits.Store(hits)
	if len(last) > 0 {
		e.lastHit.Store(&last)
	}
	return nil
}

// decodeIndexes reads version 3's namespace indexes and attaches each to its namespace: its
// config must be the cache's and its elements exactly the namespace's entries with a vector.
func (c *Cache) decodeIndexes(d *decoder) error {
	withVec := map[string]int{}
	for _, e := range c.byID {
		if e.hasVec {
			withVec[e.NS]++
		}
	}
	n := d.count(2)
	for i := 0; i < n && !d.bad; i++ {
		name := string(d.bytes())
		raw := d.view() // vector.Decode copies what it keeps
		ns := c.ns[name]
		if d.bad || ns == nil || ns.set != nil {
			return ErrCorrupt
		}
		s, err := vector.Decode(raw)
		if err != nil {
			return ErrCorrupt
		}
		cfg := s.Config()
		if cfg.Dim != c.cfg.Dim || cfg.Metric != vector.Cosine || cfg.Quant != c.cfg.Quant ||
			s.Len() != withVec[name] {
			return ErrCorrupt
		}
		for _, e := range ns.exact {
			if e.hasVec && !s.Has(idName(e.ID)) {
				return ErrCorrupt
			}
		}
		ns.set = s
		delete(withVec, name)
	}
	if d.bad || len(withVec) != 0 {
		return ErrCorrupt
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
