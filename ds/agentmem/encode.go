package agentmem

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/hotkv/hotkv/ds/vector"
)

// The encoding (DUMP, RDB as a module value): the HNSW index as ds/vector encodes it, so loading
// does not rebuild the graph, then the records and the windows. The bitmaps are rebuilt.
//
//	byte    format version (1)
//	uvarint dim; byte quant; byte flags (1: require user); uvarint window budget; byte encoding;
//	string embedder
//	uvarint next generated id
//	uvarint index length, index
//	uvarint records, each: id, text, dim float32 (LE), user, session, ns, byte type,
//	        uvarint topics + each, uvarint entities + each, float64 importance (LE bits),
//	        varint event time, created, updated, expire-at, byte pinned, superseded-by,
//	        supersedes, varint valid-to
//	uvarint windows, each: session, uvarint budget, uvarint messages, each: role, text, uvarint tokens
//
// Strings are a uvarint length and the bytes. Records are in index-id order, windows by session.
const format = 1

// ErrCorrupt is Decode's error for input it cannot read.
var ErrCorrupt = errors.New("corrupt agent memory payload")

func appendStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendBinary appends the store's encoding to dst.
func (s *Store) AppendBinary(dst []byte) []byte {
	flags := byte(0)
	if s.cfg.RequireUser {
		flags |= 1
	}
	dst = append(dst, format)
	dst = binary.AppendUvarint(dst, uint64(s.cfg.Dim))
	dst = append(dst, byte(s.cfg.Quant), flags)
	dst = binary.AppendUvarint(dst, uint64(s.cfg.Window))
	dst = append(dst, s.cfg.Encoding)
	dst = appendStr(dst, s.cfg.Embedder)
	dst = binary.AppendUvarint(dst, s.next)
	idx := s.idx.AppendBinary(nil)
	dst = binary.AppendUvarint(dst, uint64(len(idx)))
	dst = append(dst, idx...)
	dst = binary.AppendUvarint(dst, uint64(len(s.byID)))
	s.ForEach(func(r *Record) bool {
		dst = appendRecord(dst, r)
		return true
	})
	dst = binary.AppendUvarint(dst, uint64(len(s.windows)))
	for _, sess := range s.Sessions() {
		w := s.windows[sess]
		dst = appendStr(dst, sess)
		dst = binary.AppendUvarint(dst, uint64(w.Budget))
		dst = binary.AppendUvarint(dst, uint64(len(w.Msgs)))
		for _, m := range w.Msgs {
			dst = appendStr(dst, m.Role)
			dst = appendStr(dst, string(m.Text))
			dst = binary.AppendUvarint(dst, uint64(m.Tokens))
		}
	}
	return dst
}

func appendRecord(dst []byte, r *Record) []byte {
	dst = appendStr(dst, r.ID)
	dst = appendStr(dst, string(r.Text))
	for _, f := range r.Vec {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
	}
	dst = appendStr(dst, r.User)
	dst = appendStr(dst, r.Session)
	dst = appendStr(dst, r.NS)
	dst = append(dst, byte(r.Type))
	for _, l := range [][]string{r.Topics, r.Entities} {
		dst = binary.AppendUvarint(dst, uint64(len(l)))
		for _, t := range l {
			dst = appendStr(dst, t)
		}
	}
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(r.Importance))
	for _, t := range []int64{r.EventTime, r.Created, r.Updated, r.ExpireAt} {
		dst = binary.AppendVarint(dst, t)
	}
	pinned := byte(0)
	if r.Pinned {
		pinned = 1
	}
	dst = append(dst, pinned)
	dst = appendStr(dst, r.SupersededBy)
	dst = appendStr(dst, r.Supersedes)
	return binary.AppendVarint(dst, r.ValidTo)
}

// reader reads the encoding; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (d *reader) fail() { d.err = ErrCorrupt }

func (d *reader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	n, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *reader) varint() int64 {
	if d.err != nil {
		return 0
	}
	n, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *reader) byte1() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *reader) raw(n uint64) []byte {
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

func (d *reader) str() string { return string(d.raw(d.uvarint())) }

// count reads a count of items of at least min bytes each, refusing more than the input holds.
func (d *reader) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.fail()
		return 0
	}
	return int(n)
}

// Decode rebuilds a store from its encoding. Bad input is an error, never a panic; nothing is
// allocated beyond what the input's length can fill.
func Decode(b []byte) (*Store, error) {
	d := &reader{b: b}
	if d.byte1() != format {
		return nil, ErrCorrupt
	}
	var cfg Config
	dim := d.uvarint()
	cfg.Quant = vector.Quant(d.byte1())
	cfg.RequireUser = d.byte1()&1 != 0
	cfg.Window = int(min(d.uvarint(), math.MaxInt32))
	cfg.Encoding = d.byte1()
	cfg.Embedder = d.str()
	next := d.uvarint()
	idxBytes := d.raw(d.uvarint())
	if d.err != nil || dim < 1 || dim > vector.MaxDim {
		return nil, ErrCorrupt
	}
	cfg.Dim = int(dim)
	idx, err := vector.Decode(idxBytes)
	if err != nil {
		return nil, fmt.Errorf("cannot decode an agent memory's index: %w", err)
	}
	if idx.Config().Dim != cfg.Dim {
		return nil, ErrCorrupt
	}
	s := newWith(cfg, idx)
	s.next = next
	n := d.count(4*cfg.Dim + 20)
	for ; n > 0 && d.err == nil; n-- {
		r := d.record(cfg.Dim)
		if d.err != nil {
			break
		}
		if _, ok := idx.ID([]byte(r.ID)); !ok || s.byID[r.ID] != nil {
			return nil, ErrCorrupt
		}
		s.insert(r)
	}
	if d.err == nil && idx.Len() != len(s.byID) {
		return nil, ErrCorrupt
	}
	for nw := d.count(3); nw > 0 && d.err == nil; nw-- {
		sess := d.str()
		w := &Window{Budget: int(min(d.uvarint(), math.MaxInt32))}
		for nm := d.count(3); nm > 0 && d.err == nil; nm-- {
			m := Msg{Role: d.str(), Text: []byte(d.str()), Tokens: int(min(d.uvarint(), math.MaxInt32))}
			w.Msgs = append(w.Msgs, m)
			w.Tokens += m.Tokens
			w.bytes += int64(48 + len(m.Role) + len(m.Text))
		}
		s.windows[sess] = w
		s.winBytes += w.bytes + int64(len(sess)) + 64
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, ErrCorrupt
	}
	return s, nil
}

func (d *reader) record(dim int) *Record {
	r := &Record{ID: d.str(), Text: []byte(d.str())}
	vb := d.raw(uint64(4 * dim))
	if d.err != nil {
		return nil
	}
	r.Vec = make([]float32, dim)
	for i := range r.Vec {
		r.Vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(vb[4*i:]))
	}
	r.User, r.Session, r.NS = d.str(), d.str(), d.str()
	if t := d.byte1(); t < byte(numTypes) {
		r.Type = Type(t)
	} else {
		d.fail()
	}
	for _, l := range []*[]string{&r.Topics, &r.Entities} {
		for k := d.count(1); k > 0 && d.err == nil; k-- {
			*l = append(*l, d.str())
		}
	}
	if b := d.raw(8); b != nil {
		r.Importance = math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	r.EventTime, r.Created, r.Updated, r.ExpireAt = d.varint(), d.varint(), d.varint(), d.varint()
	r.Pinned = d.byte1() == 1
	r.SupersededBy, r.Supersedes = d.str(), d.str()
	r.ValidTo = d.varint()
	return r
}

// Clone returns an independent copy of the store (COPY).
func (s *Store) Clone() *Store {
	c, err := Decode(s.AppendBinary(nil))
	if err != nil {
		panic("BUG: an agent memory does not decode its own encoding: " + err.Error())
	}
	return c
}
