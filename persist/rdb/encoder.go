package rdb

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// RDB value types (Redis's RDB_TYPE_*): the byte before a key.
const (
	TypeString           byte = 0
	TypeList             byte = 1
	TypeSet              byte = 2
	TypeZSet             byte = 3 // scores as strings
	TypeHash             byte = 4
	TypeZSet2            byte = 5 // scores as binary doubles
	TypeModulePreGA      byte = 6
	TypeModule2          byte = 7
	TypeHashZipmap       byte = 9
	TypeListZiplist      byte = 10
	TypeSetIntset        byte = 11
	TypeZSetZiplist      byte = 12
	TypeHashZiplist      byte = 13
	TypeListQuicklist    byte = 14
	TypeStreamListpacks  byte = 15
	TypeHashListpack     byte = 16
	TypeZSetListpack     byte = 17
	TypeListQuicklist2   byte = 18
	TypeStreamListpacks2 byte = 19
	TypeSetListpack      byte = 20
	TypeStreamListpacks3 byte = 21
)

// RDB opcodes (Redis's RDB_OPCODE_*).
const (
	OpFunction2     byte = 245
	OpFunctionPreGA byte = 246
	OpModuleAux     byte = 247
	OpIdle          byte = 248
	OpFreq          byte = 249
	OpAux           byte = 250
	OpResizeDB      byte = 251
	OpExpireMs      byte = 252
	OpExpire        byte = 253
	OpSelectDB      byte = 254
	OpEOF           byte = 255
)

// Version is the RDB version HotKV writes by default: Redis 7.0's, which 7.0
// requires (it refuses 11). MaxVersion is the newest the Decoder reads (7.2).
const (
	Version    = 10
	MaxVersion = 11
)

// Limits are the encoding thresholds of Redis's configuration, which decide
// between the compact and the general form of a value. CONFIG SET changes them.
type Limits struct {
	ListMaxListpackSize    int // list-max-listpack-size: -1..-5 are 4..64 KiB a node, >0 elements a node
	SetMaxIntsetEntries    int // set-max-intset-entries
	HashMaxListpackEntries int // hash-max-listpack-entries
	HashMaxListpackValue   int // hash-max-listpack-value (bytes of a field or value)
	ZSetMaxListpackEntries int // zset-max-listpack-entries
	ZSetMaxListpackValue   int // zset-max-listpack-value
	StreamNodeMaxBytes     int // stream-node-max-bytes (0: no limit)
	StreamNodeMaxEntries   int // stream-node-max-entries (0: no limit)
}

// DefaultLimits are Redis 7.0's defaults.
var DefaultLimits = Limits{
	ListMaxListpackSize:    -2,
	SetMaxIntsetEntries:    512,
	HashMaxListpackEntries: 512, // redis-server 7.0.15 CONFIG GET says 512 (not 128 as for sorted sets)
	HashMaxListpackValue:   64,
	ZSetMaxListpackEntries: 128,
	ZSetMaxListpackValue:   64,
	StreamNodeMaxBytes:     4096,
	StreamNodeMaxEntries:   100,
}

// Encoder appends RDB records to Buf. It does no I/O and keeps no state across
// calls other than its options and scratch space, so many Encoders may encode
// parts of one file concurrently and the parts be concatenated in order.
type Encoder struct {
	Buf      []byte  // output; callers may take it and reset it (e.Buf = e.Buf[:0])
	Compress bool    // LZF-compress strings longer than 20 bytes when it saves 4 bytes or more (rdbcompression)
	Limits   *Limits // nil: DefaultLimits
	// OmitKey makes the value methods write the type byte and the value only:
	// the object of a DUMP payload (see DumpPayload).
	OmitKey bool

	lzf   *lzfTable
	lp    Listpack  // node being built
	nodes []byte    // encoded nodes of a list or stream, counted before they are written
	arena []byte    // members of a small collection, buffered until its form is known
	spans []int     // ends of the members in arena
	ints  []int64   // intset candidates
	num   [32]byte  // number formatting
	zs    []float64 // scores of a buffered sorted set
	order []int     // a buffered sorted set's members in score order
}

func (e *Encoder) limits() *Limits {
	if e.Limits == nil {
		return &DefaultLimits
	}
	return e.Limits
}

// Header appends the magic "REDIS" and the version as four digits.
func (e *Encoder) Header(version int) {
	e.Buf = fmt.Appendf(e.Buf, "REDIS%04d", version)
}

// Aux appends an auxiliary field (opcode 250). Values that are integers are
// written in the integer encoding, as rdbSaveAuxFieldStrInt does.
func (e *Encoder) Aux(key, val string) {
	e.Buf = append(e.Buf, OpAux)
	e.str(key)
	e.str(val)
}

// SelectDB appends the database selector (opcode 254).
func (e *Encoder) SelectDB(db int) {
	e.Buf = append(e.Buf, OpSelectDB)
	e.Len(uint64(db))
}

// ResizeDB appends the sizes of the selected database (opcode 251).
func (e *Encoder) ResizeDB(keys, expires uint64) {
	e.Buf = append(e.Buf, OpResizeDB)
	e.Len(keys)
	e.Len(expires)
}

// FunctionLib appends a function library's code (opcode 245, FUNCTION2).
func (e *Encoder) FunctionLib(code []byte) {
	e.Buf = append(e.Buf, OpFunction2)
	e.String(code)
}

// ExpireMs appends the absolute expiry in unix milliseconds of the next key (opcode 252).
func (e *Encoder) ExpireMs(ms int64) {
	e.Buf = append(e.Buf, OpExpireMs)
	e.Buf = binary.LittleEndian.AppendUint64(e.Buf, uint64(ms))
}

// Idle appends the LRU idle time in seconds of the next key (opcode 248).
func (e *Encoder) Idle(seconds uint64) {
	e.Buf = append(e.Buf, OpIdle)
	e.Len(seconds)
}

// Freq appends the LFU counter of the next key (opcode 249).
func (e *Encoder) Freq(f uint8) {
	e.Buf = append(e.Buf, OpFreq, f)
}

// Type appends a value type byte (one of the Type constants).
func (e *Encoder) Type(t byte) { e.Buf = append(e.Buf, t) }

// typeKey starts a value: its type byte and, unless OmitKey, its key.
func (e *Encoder) typeKey(t byte, key []byte) {
	e.Buf = append(e.Buf, t)
	if !e.OmitKey {
		e.String(key)
	}
}

// Len appends n in RDB's length encoding: 6 bits, 14 bits, 32 or 64 bits big-endian.
func (e *Encoder) Len(n uint64) {
	switch {
	case n < 1<<6:
		e.Buf = append(e.Buf, byte(n))
	case n < 1<<14:
		e.Buf = append(e.Buf, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		e.Buf = append(e.Buf, 0x80)
		e.Buf = binary.BigEndian.AppendUint32(e.Buf, uint32(n))
	default:
		e.Buf = append(e.Buf, 0x81)
		e.Buf = binary.BigEndian.AppendUint64(e.Buf, n)
	}
}

// String appends b as rdbSaveRawString does: up to 11 bytes that are a
// canonical integer within 32 bits in the integer encoding, else (with
// Compress, over 20 bytes) LZF when that saves 4 bytes, else length and bytes.
func (e *Encoder) String(b []byte) {
	if len(b) <= 11 {
		if v, ok := parseInt(b); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			e.intString(v)
			return
		}
	}
	if e.Compress && len(b) > 20 && e.lzfString(b) {
		return
	}
	e.Len(uint64(len(b)))
	e.Buf = append(e.Buf, b...)
}

// str is String for a Go string without converting it.
func (e *Encoder) str(s string) {
	if len(s) <= 11 {
		e.String([]byte(s)) // does not escape: small copy on the stack
		return
	}
	if e.Compress && len(s) > 20 {
		e.String([]byte(s))
		return
	}
	e.Len(uint64(len(s)))
	e.Buf = append(e.Buf, s...)
}

func (e *Encoder) intString(v int64) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		e.Buf = append(e.Buf, 0xc0, byte(v))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		e.Buf = append(e.Buf, 0xc1)
		e.Buf = binary.LittleEndian.AppendUint16(e.Buf, uint16(v))
	default:
		e.Buf = append(e.Buf, 0xc2)
		e.Buf = binary.LittleEndian.AppendUint32(e.Buf, uint32(v))
	}
}

// lzfString writes b LZF-compressed (0xc3, compressed length, length, data)
// if that is at least 4 bytes shorter, as rdbSaveLzfStringObject requires.
func (e *Encoder) lzfString(b []byte) bool {
	if e.lzf == nil {
		e.lzf = new(lzfTable)
	}
	mark := len(e.Buf)
	// Reserve room for the header
	// by compressing after it, then move the data down once its length is known.
	hdr := 19 // 0xc3 and two lengths of up to 9 bytes
	e.Buf = append(e.Buf, make([]byte, hdr)...)
	out, ok := e.lzf.compress(e.Buf, b, len(b)-4)
	if !ok {
		e.Buf = out[:mark]
		return false
	}
	clen := len(out) - mark - hdr
	e.Buf = out[:mark]
	e.Buf = append(e.Buf, 0xc3)
	e.Len(uint64(clen))
	e.Len(uint64(len(b)))
	n := copy(out[len(e.Buf):], out[mark+hdr:mark+hdr+clen])
	e.Buf = out[:len(e.Buf)+n]
	return true
}

// Double appends f as 8 bytes little-endian (ZSET_2 scores).
func (e *Encoder) Double(f float64) {
	e.Buf = binary.LittleEndian.AppendUint64(e.Buf, math.Float64bits(f))
}

// EOF appends the end opcode and the checksum (0 when rdbchecksum is no).
func (e *Encoder) EOF(checksum uint64) {
	e.Buf = append(e.Buf, OpEOF)
	e.Buf = binary.LittleEndian.AppendUint64(e.Buf, checksum)
}

// parseInt is Redis's string2ll: the canonical decimal form of an int64 only
// (no sign but '-', no leading zeros, no "-0", no spaces).
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	d := b
	if neg {
		d = b[1:]
	}
	if len(d) == 0 || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	var u uint64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// formatScore is Redis 7.0's d2string, the form a sorted set listpack keeps a
// score in: integers in decimal, inf, -inf, otherwise %.17g.
func formatScore(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	if f > -4503599627370495 && f < 4503599627370496 && f == math.Trunc(f) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}
