package rdb

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// RecordKind says which fields of a Record are set.
type RecordKind uint8

// Record kinds.
const (
	RecAux       RecordKind = iota + 1 // AuxKey, AuxVal
	RecSelectDB                        // DB
	RecResizeDB                        // DBKeys, DBExpires
	RecFunction                        // Code
	RecKey                             // Key, ExpireMs, Idle, Freq, Value
	RecModuleAux                       // never returned: module aux data fails with ErrModuleAux
	RecEOF                             // never returned: Next returns io.EOF after the end opcode
)

// Errors for what Redis can write but HotKV cannot hold.
var (
	ErrModuleAux   = errors.New("rdb: module aux data not supported")
	ErrModuleType  = errors.New("rdb: module types not supported")
	ErrFunctionPre = errors.New("rdb: pre-release function format not supported")
)

// Record is one item of an RDB file. Its byte slices and Value are reused by
// the Decoder's next call: copy what you keep.
type Record struct {
	Kind           RecordKind
	AuxKey, AuxVal []byte
	DB             int
	DBKeys         uint64
	DBExpires      uint64
	Code           []byte // a function library's code (FUNCTION2)
	Key            []byte
	ExpireMs       int64 // absolute unix ms; -1 none
	Idle           int64 // LRU idle seconds; -1 none
	Freq           int   // LFU counter; -1 none
	Value          Value
}

// ValueType is the kind of a value, whatever its encoding.
type ValueType uint8

// Value types.
const (
	ValString ValueType = iota + 1
	ValList
	ValSet
	ValZSet
	ValHash
	ValStream
)

// Value is a decoded value. Which fields are set depends on Type.
type Value struct {
	Type         ValueType
	Str          []byte    // string
	Elems        [][]byte  // list elements in order, set members
	Fields, Vals [][]byte  // hash
	Members      [][]byte  // sorted set, in file order
	Scores       []float64 // sorted set, Scores[i] is Members[i]'s
	Stream       *Stream   // stream (freshly allocated, not reused)
	Encoding     string    // on-disk encoding: raw, int, lzf, linkedlist, hashtable, skiplist, zipmap, ziplist, intset, quicklist, listpack, stream
	RDBType      byte      // the type byte it came with
	Module       uint64    // a module value's module id (module.go)
	spans        []int     // ends of the elements in arena
	arena        []byte    // element bytes
}

// Decoder reads an RDB file one record at a time. Memory follows the bytes
// read: a length the file declares is never allocated ahead of its bytes.
type Decoder struct {
	rd      reader
	version int
	started bool
	err     error
	rec     Record
	lzf     []byte   // compressed bytes of an LZF string
	blob    []byte   // a compact encoding's string
	slots   []uint32 // scratch of unique (unique.go)
}

// NewDecoder returns a Decoder reading r; it reads ahead up to 64 KiB.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{rd: reader{r: r}}
}

// NewDecoderBytes returns a Decoder reading b in place, without a copy.
func NewDecoderBytes(b []byte) *Decoder {
	return &Decoder{rd: reader{buf: b, end: len(b)}}
}

// Version is the file's RDB version, known after the first Next.
func (d *Decoder) Version() int { return d.version }

// Offset is the number of bytes consumed so far.
func (d *Decoder) Offset() int64 { return d.rd.offset() }

// Next returns the next record, or io.EOF after the end opcode when the
// checksum matches (or is 0: saved with rdbchecksum no). Errors are sticky.
func (d *Decoder) Next() (*Record, error) {
	if d.err != nil {
		return nil, d.err
	}
	rec, err := d.next()
	if err != nil {
		d.err = err
		return nil, err
	}
	return rec, nil
}

func (d *Decoder) header() error {
	b, err := d.rd.next(9)
	if err != nil {
		return err
	}
	if string(b[:5]) != "REDIS" {
		return d.rd.corrupt(0, "wrong signature trying to load DB from file")
	}
	v, err := strconv.Atoi(string(b[5:]))
	if err != nil || v < 1 || v > MaxVersion {
		return d.rd.corrupt(5, "can't handle RDB format version %q", b[5:])
	}
	d.version = v
	d.started = true
	return nil
}

func (d *Decoder) next() (*Record, error) {
	if !d.started {
		if err := d.header(); err != nil {
			return nil, err
		}
	}
	r := &d.rec
	r.ExpireMs, r.Idle, r.Freq = -1, -1, -1
	for {
		at := d.rd.offset()
		op, err := d.rd.byte()
		if err != nil {
			return nil, err
		}
		switch op {
		case OpExpire:
			b, err := d.rd.next(4)
			if err != nil {
				return nil, err
			}
			r.ExpireMs = int64(int32(uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24)) * 1000 // rdbLoadTime: int32 seconds
		case OpExpireMs:
			if r.ExpireMs, err = d.rd.ms(); err != nil {
				return nil, err
			}
		case OpFreq:
			f, err := d.rd.byte()
			if err != nil {
				return nil, err
			}
			r.Freq = int(f)
		case OpIdle:
			n, err := d.rd.len()
			if err != nil {
				return nil, err
			}
			r.Idle = int64(n & (1<<63 - 1))
		case OpEOF:
			return nil, d.eof()
		case OpSelectDB:
			n, err := d.rd.count()
			r.Kind, r.DB = RecSelectDB, n
			return r, err
		case OpResizeDB:
			r.Kind = RecResizeDB
			if r.DBKeys, err = d.rd.len(); err != nil {
				return nil, err
			}
			r.DBExpires, err = d.rd.len()
			return r, err
		case OpAux:
			r.Kind = RecAux
			if r.AuxKey, _, err = d.rd.str(r.AuxKey[:0], &d.lzf); err != nil {
				return nil, err
			}
			r.AuxVal, _, err = d.rd.str(r.AuxVal[:0], &d.lzf)
			return r, err
		case OpModuleAux:
			return nil, fmt.Errorf("%w (offset %d)", ErrModuleAux, at)
		case OpFunctionPreGA:
			return nil, fmt.Errorf("%w (offset %d)", ErrFunctionPre, at)
		case OpFunction2:
			r.Kind = RecFunction
			r.Code, _, err = d.rd.str(r.Code[:0], &d.lzf)
			return r, err
		default:
			if !validType(op) {
				return nil, d.rd.corrupt(at, "unknown RDB type or opcode %d", op)
			}
			r.Kind = RecKey
			if r.Key, _, err = d.rd.str(r.Key[:0], &d.lzf); err != nil {
				return nil, err
			}
			return r, d.object(op, at, &r.Value)
		}
	}
}

// eof checks the checksum after the end opcode (versions 5 and later).
func (d *Decoder) eof() error {
	if d.version < 5 {
		return io.EOF
	}
	want := d.rd.sum()
	at := d.rd.offset()
	got, err := d.rd.uint64LE()
	if err != nil {
		return err
	}
	if got != 0 && got != want {
		return d.rd.corrupt(at, "checksum mismatch: file says %016x, contents are %016x", got, want)
	}
	return io.EOF
}

// object reads a value of RDB type t (its type byte was at offset at) into v.
func (d *Decoder) object(t byte, at int64, v *Value) error {
	v.reset(t)
	var err error
	switch t {
	case TypeString:
		var kind int
		v.Type = ValString
		v.Str, kind, err = d.rd.str(v.Str[:0], &d.lzf)
		v.Encoding = [...]string{"raw", "int", "lzf"}[kind]
		return err
	case TypeList, TypeSet:
		v.Type, v.Encoding = ValList, "linkedlist"
		if t == TypeSet {
			v.Type, v.Encoding = ValSet, "hashtable"
		}
		if err = d.strings(v, 1); err != nil {
			return err
		}
		v.finish(&v.Elems, 0, 1)
		if t == TypeSet {
			return d.unique(at, v, v.Elems, "set members")
		}
		return nil
	case TypeHash:
		v.Type, v.Encoding = ValHash, "hashtable"
		if err = d.strings(v, 2); err != nil {
			return err
		}
		return d.finishHash(at, v)
	case TypeZSet, TypeZSet2:
		v.Type, v.Encoding = ValZSet, "skiplist"
		return d.zset(t, at, v)
	case TypeModule2:
		return d.module(at, v) // module.go: HotKV's vector sets
	case TypeModulePreGA:
		return fmt.Errorf("%w (offset %d)", ErrModuleType, at)
	case TypeStreamListpacks, TypeStreamListpacks2, TypeStreamListpacks3:
		v.Type, v.Encoding = ValStream, "stream"
		v.Stream, err = d.stream(t)
		return err
	case TypeListQuicklist, TypeListQuicklist2:
		v.Type, v.Encoding = ValList, "quicklist"
		if err = d.quicklist(t, v); err != nil {
			return err
		}
		v.finish(&v.Elems, 0, 1)
		return nil
	}
	// The rest are one string holding a compact encoding.
	blobAt := d.rd.offset()
	if d.blob, _, err = d.rd.str(d.blob[:0], &d.lzf); err != nil {
		return err
	}
	switch t {
	case TypeHashZipmap:
		v.Type, v.Encoding = ValHash, "zipmap"
		err = zipmapPairs(d.blob, func(k, x []byte) { v.push(k); v.push(x) })
	case TypeListZiplist, TypeZSetZiplist, TypeHashZiplist:
		v.Encoding = "ziplist"
		err = v.pushZiplist(d.blob)
	case TypeSetIntset:
		v.Type, v.Encoding = ValSet, "intset"
		err = intsetVals(d.blob, v.pushInt)
	case TypeHashListpack, TypeZSetListpack, TypeSetListpack:
		v.Encoding = "listpack"
		err = v.pushListpack(d.blob)
	default:
		return d.rd.corrupt(at, "unknown value type %d", t)
	}
	if err != nil {
		return d.rd.corrupt(blobAt, "%v", err)
	}
	switch t {
	case TypeListZiplist:
		v.Type = ValList
		v.finish(&v.Elems, 0, 1)
	case TypeSetIntset, TypeSetListpack:
		v.Type = ValSet
		v.finish(&v.Elems, 0, 1)
	case TypeZSetZiplist, TypeZSetListpack:
		v.Type = ValZSet
		return d.finishZSet(blobAt, v)
	default:
		v.Type = ValHash
		if len(v.spans)%2 != 0 {
			return d.rd.corrupt(blobAt, "hash with an odd number of elements")
		}
		return d.finishHash(blobAt, v)
	}
	return nil
}

func (v *Value) reset(t byte) {
	v.RDBType = t
	v.Str = v.Str[:0]
	v.Elems, v.Fields, v.Vals, v.Members = v.Elems[:0], v.Fields[:0], v.Vals[:0], v.Members[:0]
	v.Scores = v.Scores[:0]
	v.Stream = nil
	v.spans = v.spans[:0]
	v.arena = v.arena[:0]
}

// push adds an element to the arena.
func (v *Value) push(b []byte) {
	v.arena = append(v.arena, b...)
	v.spans = append(v.spans, len(v.arena))
}

func (v *Value) pushInt(i int64) {
	v.arena = strconv.AppendInt(v.arena, i, 10)
	v.spans = append(v.spans, len(v.arena))
}

// finish points *dst at every step-th element from first, once the arena no longer moves.
func (v *Value) finish(dst *[][]byte, first, step int) {
	s := *dst
	for i := first; i < len(v.spans); i += step {
		start := 0
		if i > 0 {
			start = v.spans[i-1]
		}
		s = append(s, v.arena[start:v.spans[i]:v.spans[i]])
	}
	*dst = s
}

func (v *Value) pushListpack(b []byte) error {
	it, err := newListpack(b)
	if err != nil {
		return err
	}
	for {
		s, i, isInt, done, err := it.next()
		if err != nil || done {
			return err
		}
		if isInt {
			v.pushInt(i)
		} else {
			v.push(s)
		}
	}
}

func (v *Value) pushZiplist(b []byte) error {
	it, err := newZiplist(b)
	if err != nil {
		return err
	}
	for {
		s, i, isInt, done, err := it.next()
		if err != nil || done {
			return err
		}
		if isInt {
			v.pushInt(i)
		} else {
			v.push(s)
		}
	}
}

// strings reads a count and count*per strings into the arena.
func (d *Decoder) strings(v *Value, per int) error {
	n, err := d.rd.count()
	if err != nil {
		return err
	}
	for range n * per {
		if v.arena, _, err = d.rd.str(v.arena, &d.lzf); err != nil {
			return err
		}
		v.spans = append(v.spans, len(v.arena))
	}
	return nil
}

func (d *Decoder) finishHash(at int64, v *Value) error {
	v.finish(&v.Fields, 0, 2)
	v.finish(&v.Vals, 1, 2)
	return d.unique(at, v, v.Fields, "hash fields")
}

// finishZSet splits member, score pairs pushed from a ziplist or listpack.
func (d *Decoder) finishZSet(at int64, v *Value) error {
	if len(v.spans)%2 != 0 {
		return d.rd.corrupt(at, "sorted set with an odd number of elements")
	}
	v.finish(&v.Members, 0, 2)
	for i := 1; i < len(v.spans); i += 2 {
		b := v.arena[v.spans[i-1]:v.spans[i]]
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return d.rd.corrupt(at, "bad score %q", b)
		}
		v.Scores = append(v.Scores, f)
	}
	return d.unique(at, v, v.Members, "sorted set members")
}

func (d *Decoder) zset(t byte, at int64, v *Value) error {
	n, err := d.rd.count()
	if err != nil {
		return err
	}
	for range n {
		if v.arena, _, err = d.rd.str(v.arena, &d.lzf); err != nil {
			return err
		}
		v.spans = append(v.spans, len(v.arena))
		var f float64
		if t == TypeZSet2 {
			u, err := d.rd.uint64LE()
			if err != nil {
				return err
			}
			f = math.Float64frombits(u)
		} else if f, err = d.asciiScore(); err != nil {
			return err
		}
		if f != f {
			return d.rd.corrupt(at, "zset with NAN score detected")
		}
		v.Scores = append(v.Scores, f)
	}
	v.finish(&v.Members, 0, 1)
	return d.unique(at, v, v.Members, "sorted set members")
}

// asciiScore reads a ZSET (type 3) score: a length byte (253 NaN, 254 +inf,
// 255 -inf) and that many characters.
func (d *Decoder) asciiScore() (float64, error) {
	at := d.rd.offset()
	n, err := d.rd.byte()
	if err != nil {
		return 0, err
	}
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := d.rd.next(int(n))
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, d.rd.corrupt(at, "bad score %q", b)
	}
	return f, nil
}

// quicklist reads LIST_QUICKLIST (ziplist nodes) or LIST_QUICKLIST_2
// (a container kind per node: 1 PLAIN, one element; 2 PACKED, a listpack).
func (d *Decoder) quicklist(t byte, v *Value) error {
	n, err := d.rd.count()
	if err != nil {
		return err
	}
	for range n {
		container := uint64(2)
		if t == TypeListQuicklist2 {
			at := d.rd.offset()
			if container, err = d.rd.len(); err != nil {
				return err
			}
			if container != 1 && container != 2 {
				return d.rd.corrupt(at, "quicklist integrity check failed: container %d", container)
			}
		}
		at := d.rd.offset()
		if container == 1 {
			if v.arena, _, err = d.rd.str(v.arena, &d.lzf); err != nil {
				return err
			}
			v.spans = append(v.spans, len(v.arena))
			continue
		}
		if d.blob, _, err = d.rd.str(d.blob[:0], &d.lzf); err != nil {
			return err
		}
		if t == TypeListQuicklist {
			err = v.pushZiplist(d.blob)
		} else {
			err = v.pushListpack(d.blob)
		}
		if err != nil {
			return d.rd.corrupt(at, "%v", err)
		}
	}
	return nil
}
