package lualib

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// NewStruct returns a struct table: Roberto Ierusalimschy's struct library
// as Redis 7.0 carries it (64-bit Linux sizes: l, L and T are 8 bytes, i
// and I 4 by default; native order little-endian; integers of up to 32
// bytes, computed in 64 bits as C's unsigned long is).
func NewStruct(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
)

// structFormat walks a format string as the C library does: it ends at the
// first NUL, as a C string would.
type structFormat struct {
	s      string
	i      int
	little bool
	align  int
}

func newStructFormat(s string) *structFormat {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return &structFormat{s: s, little: true, align: 1}
}

func (f *structFormat) more() bool { return f.i < len(f.s) }

func (f *structFormat) next() byte {
	c := f.s[f.i]
	f.i++
	return c
}

// num reads a decimal count, df if there is none; a count past INT_MAX is
// Redis's "integral size overflow" error, before anything is allocated.
func (f *structFormat) num(L *lua.LState, df int) int {
	if !f.more() || !isDigit(f.s[f.i]) {
		return df
	}
	a := 0
	for f.more() && isDigit(f.s[f.i]) {
		d := int(f.s[f.i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			raise(L, "integral size overflow")
		}
		a = a*10 + d
		f.i++
	}
	return a
}

// size is optsize: the size of option opt, reading its count.
func (f *structFormat) size(L *lua.LState, opt byte) uint64 {
	switch opt {
	case 'B', 'b', 'x':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'c':
		return uint64(f.num(L, 1))
	case 'i', 'I':
		sz := f.num(L, 4)
		if sz > structMaxIntSize {
			raise(L, "integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return uint64(sz)
	}
	return 0
}

// toAlign is gettoalign: the padding before an item of size at offset
// pos. Like the C code it assumes sizes are powers of two.
func (f *structFormat) toAlign(pos uint64, opt byte, size uint64) uint64 {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > uint64(f.align) {
		size = uint64(f.align)
	}
	return (size - (pos & (size - 1))) & (size - 1)
}

// control is controloptions: endianness, alignment, space, or the error
// for an unknown option.
func (f *structFormat) control(L *lua.LState, opt byte) {
	switch opt {
	case ' ':
	case '>':
		f.little = false
	case '<':
		f.little = true
	case '!':
		a := f.num(L, structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			raise(L, "alignment %d is not a power of 2", a)
		}
		f.align = a
	default:
		argError(L, 1, "invalid format option '"+string([]byte{opt})+"'")
	}
}

// pack(fmt, v1, v2, ...)
func structPack(L *lua.LState) int {
	f := newStructFormat(checkString(L, 1))
	// The C code pushes a nil to mark where its buffer starts: a value
	// missing right after the last argument is that nil, not "no value".
	L.Push(lua.LNil)
	arg := 2
	var out []byte
	for f.more() {
		opt := f.next()
		size := f.size(L, opt)
		pad := f.toAlign(uint64(len(out)), opt, size)
		for ; pad > 0; pad-- {
			out = append(out, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			out = appendStructInt(out, checkNumber(L, arg), f.little, int(size))
			arg++
		case 'x':
			out = append(out, 0)
		case 'f':
			v := math.Float32bits(float32(checkNumber(L, arg)))
			arg++
			out = appendOrder(out, uint64(v), 4, f.little)
		case 'd':
			v := math.Float64bits(checkNumber(L, arg))
			arg++
			out = appendOrder(out, v, 8, f.little)
		case 'c', 's':
			s := checkString(L, arg)
			arg++
			if size == 0 {
				size = uint64(len(s))
			}
			if uint64(len(s)) < size {
				argError(L, arg, "string too short")
			}
			out = append(out, s[:size]...)
			if opt == 's' {
				out = append(out, 0)
			}
		default:
			f.control(L, opt)
		}
	}
	L.Push(lua.LString(out))
	return 1
}

// appendStructInt is putinteger: the number as C's unsigned long, then
// size bytes of it (zeros past the eighth).
func appendStructInt(out []byte, n float64, little bool, size int) []byte {
	var v uint64
	if n < 0 {
		v = uint64(toInteger(n))
	} else {
		v = toUint64(n)
	}
	start := len(out)
	for i := 0; i < size; i++ {
		out = append(out, 0)
	}
	for i := 0; i < size; i++ {
		at := start + i
		if !little {
			at = start + size - 1 - i
		}
		out[at] = byte(v)
		v >>= 8
	}
	return out
}

// appendOrder appends the low size bytes of v in the given order.
func appendOrder(out []byte, v uint64, size int, little bool) []byte {
	var b [8]byte
	if little {
		binary.LittleEndian.PutUint64(b[:], v)
		return append(out, b[:size]...)
	}
	binary.BigEndian.PutUint64(b[:], v<<(64-8*uint(size)))
	return append(out, b[:size]...)
}

// structInt is getinteger: size bytes read into 64 bits (earlier bytes
// shifted out), sign-extended from the item's top bit with x86's shift
// count masking, as the C code computes it.
func structInt(b string, little, signed bool) float64 {
	var l uint64
	size := len(b)
	for i := 0; i < size; i++ {
		c := b[i]
		if little {
			c = b[size-1-i]
		}
		l = l<<8 | uint64(c)
	}
	if !signed {
		return float64(l)
	}
	mask := ^uint64(0) << (uint(size*8-1) & 63)
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

// unpack(fmt, s [, pos]): the values, then the position after them.
func structUnpack(L *lua.LState) int {
	u := &structUnpacker{f: newStructFormat(checkString(L, 1)), data: checkString(L, 2)}
	ld := uint64(len(u.data))
	pos := uint64(optInteger(L, 3, 1))
	if pos == 0 {
		argError(L, 3, "offset must be 1 or greater")
	}
	pos--
	for u.f.more() {
		opt := u.f.next()
		size := u.f.size(L, opt)
		pos += u.f.toAlign(pos, opt, size)
		if size > ld || pos > ld-size {
			argError(L, 2, "data string too short")
		}
		if 2+len(u.res)+2 > maxCStack {
			stackOverflow(L, "too many results")
		}
		pos += u.item(L, opt, pos, size)
	}
	for _, v := range u.res {
		L.Push(v)
	}
	L.Push(lua.LNumber(float64(int64(pos + 1))))
	return len(u.res) + 1
}

// structUnpacker holds an unpack's input and the values read so far.
type structUnpacker struct {
	f    *structFormat
	data string
	res  []lua.LValue
}

// item reads option opt at pos (size bytes are present) and returns the
// bytes it took.
func (u *structUnpacker) item(L *lua.LState, opt byte, pos, size uint64) uint64 {
	switch opt {
	case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
		v := structInt(u.data[pos:pos+size], u.f.little, opt >= 'a')
		u.res = append(u.res, lua.LNumber(v))
	case 'x':
	case 'f':
		v := uint32(readOrder(u.data[pos:pos+4], u.f.little))
		u.res = append(u.res, lua.LNumber(math.Float32frombits(v)))
	case 'd':
		v := readOrder(u.data[pos:pos+8], u.f.little)
		u.res = append(u.res, lua.LNumber(math.Float64frombits(v)))
	case 'c':
		if size == 0 {
			size = u.previousSize(L, pos)
		}
		u.res = append(u.res, lua.LString(u.data[pos:pos+size]))
	case 's':
		e := strings.IndexByte(u.data[pos:], 0)
		if e < 0 {
			raise(L, "unfinished string in data")
		}
		size = uint64(e) + 1
		u.res = append(u.res, lua.LString(u.data[pos:pos+size-1]))
	default:
		u.f.control(L, opt)
	}
	return size
}

// previousSize is c0's length: the value read last, which it consumes;
// it must be a number (or a string that converts) and fit the data.
func (u *structUnpacker) previousSize(L *lua.LState, pos uint64) uint64 {
	var prev float64
	ok := false
	if len(u.res) > 0 {
		prev, ok = toNumber(u.res[len(u.res)-1])
	}
	if !ok {
		raise(L, "format 'c0' needs a previous size")
	}
	size := toUint64(prev)
	u.res = u.res[:len(u.res)-1]
	if ld := uint64(len(u.data)); size > ld || pos > ld-size {
		argError(L, 2, "data string too short")
	}
	return size
}

func readOrder(b string, little bool) uint64 {
	var v uint64
	for i := 0; i < len(b); i++ {
		c := b[i]
		if little {
			c = b[len(b)-1-i]
		}
		v = v<<8 | uint64(c)
	}
	return v
}

// size(fmt): the bytes pack would produce; 's' and 'c0' have none fixed.
// Letters and digits the library does not know count as nothing.
func structSize(L *lua.LState) int {
	f := newStructFormat(checkString(L, 1))
	var pos uint64
	for f.more() {
		opt := f.next()
		size := f.size(L, opt)
		pos += f.toAlign(pos, opt, size)
		if opt == 's' {
			argError(L, 1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			argError(L, 1, "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			f.control(L, opt)
		}
		pos += size
	}
	L.Push(lua.LNumber(float64(int64(pos))))
	return 1
}

func isAlnum(c byte) bool {
	return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
}
