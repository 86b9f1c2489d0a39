package lualib

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// mpDecoder reads msgpack from s. top counts the Lua stack slots the C
// decoder would hold, so deep or long inputs fail where Redis's do.
type mpDecoder struct {
	L   *lua.LState
	s   string
	p   int
	top int
	err mpErr
	// scratch holds the members of the containers being decoded, so that
	// each table is created at its final size; it never holds more values
	// than the input has bytes.
	scratch []lua.LValue
}

type mpErr int

const (
	mpOK mpErr = iota
	mpEOF
	mpBadFmt
)

// mpNeed reports whether n more bytes are present, setting EOF if not.
func (d *mpDecoder) need(n uint64) bool {
	if uint64(len(d.s)-d.p) < n {
		d.err = mpEOF
		return false
	}
	return true
}

func (d *mpDecoder) u16() uint64 { return uint64(binary.BigEndian.Uint16([]byte(d.s[d.p+1 : d.p+3]))) }

func (d *mpDecoder) u32() uint64 { return uint64(binary.BigEndian.Uint32([]byte(d.s[d.p+1 : d.p+5]))) }

func (d *mpDecoder) u64() uint64 { return binary.BigEndian.Uint64([]byte(d.s[d.p+1 : d.p+9])) }

// mpFixed is the whole size of the fixed-size types, by first byte.
var mpFixed = [256]uint8{
	0xc0: 1, 0xc2: 1, 0xc3: 1, 0xcc: 2, 0xd0: 2, 0xcd: 3, 0xd1: 3,
	0xca: 5, 0xce: 5, 0xd2: 5, 0xcb: 9, 0xcf: 9, 0xd3: 9,
}

// value decodes one object (mp_decode_to_lua_type). On error it returns
// nil and leaves d.err set.
func (d *mpDecoder) value() lua.LValue {
	if !d.need(1) {
		return nil
	}
	if d.top+1 > maxCStack {
		stackOverflow(d.L, "too many return values at once; use unpack_one or unpack_limit instead.")
	}
	c := d.s[d.p]
	if n := mpFixed[c]; n > 0 {
		if !d.need(uint64(n)) {
			return nil
		}
		v := d.scalar(c)
		d.p += int(n)
		return v
	}
	switch c {
	case 0xd9:
		if !d.need(2) {
			return nil
		}
		return d.str(2, uint64(d.s[d.p+1]))
	case 0xda:
		if !d.need(3) {
			return nil
		}
		return d.str(3, d.u16())
	case 0xdb:
		if !d.need(5) {
			return nil
		}
		return d.str(5, d.u32())
	case 0xdc, 0xde:
		if !d.need(3) {
			return nil
		}
		n := d.u16()
		d.p += 3
		return d.container(c == 0xdc, n)
	case 0xdd, 0xdf:
		if !d.need(5) {
			return nil
		}
		n := d.u32()
		d.p += 5
		return d.container(c == 0xdd, n)
	}
	switch {
	case c&0x80 == 0:
		d.p++
		return lua.LNumber(c)
	case c&0xe0 == 0xe0:
		d.p++
		return lua.LNumber(int8(c))
	case c&0xe0 == 0xa0:
		return d.str(1, uint64(c&0x1f))
	case c&0xf0 == 0x90:
		d.p++
		return d.container(true, uint64(c&0xf))
	case c&0xf0 == 0x80:
		d.p++
		return d.container(false, uint64(c&0xf))
	}
	d.err = mpBadFmt
	return nil
}

// scalar decodes the fixed-size value at d.p (its bytes are present).
func (d *mpDecoder) scalar(c byte) lua.LValue {
	switch c {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xcc:
		return lua.LNumber(d.s[d.p+1])
	case 0xd0:
		return lua.LNumber(int8(d.s[d.p+1]))
	case 0xcd:
		return lua.LNumber(d.u16())
	case 0xd1:
		return lua.LNumber(int16(d.u16()))
	case 0xce:
		return lua.LNumber(d.u32())
	case 0xd2:
		return lua.LNumber(int32(d.u32()))
	case 0xca:
		return lua.LNumber(math.Float32frombits(uint32(d.u32())))
	case 0xcf, 0xd3:
		// lua_pushinteger of a uint64 wraps to int64, like int 64.
		return lua.LNumber(int64(d.u64()))
	}
	return lua.LNumber(math.Float64frombits(d.u64()))
}

// str decodes a string with a header of hdr bytes and n bytes of body;
// the body must be present before anything is allocated for it.
func (d *mpDecoder) str(hdr int, n uint64) lua.LValue {
	if !d.need(uint64(hdr) + n) {
		return nil
	}
	v := lua.LString(d.s[d.p+hdr : d.p+hdr+int(n)])
	d.p += hdr + int(n)
	return v
}

// container decodes n array elements or map pairs. Nothing is reserved
// for n: a count larger than the input runs out of bytes first.
func (d *mpDecoder) container(array bool, n uint64) lua.LValue {
	d.top++
	mark := len(d.scratch)
	defer func() {
		d.top--
		clear(d.scratch[mark:])
		d.scratch = d.scratch[:mark]
	}()
	if array {
		return d.array(n, mark)
	}
	return d.hash(n, mark)
}

func (d *mpDecoder) array(n uint64, mark int) lua.LValue {
	if d.top+1 > maxCStack {
		stackOverflow(d.L, "in function mp_decode_to_lua_array")
	}
	for i := uint64(1); i <= n; i++ {
		d.top++ // the index, pushed before the value
		v := d.value()
		d.top--
		if d.err != mpOK {
			return nil
		}
		d.scratch = append(d.scratch, v)
	}
	elems := d.scratch[mark:]
	t := d.L.CreateTable(len(elems), 0)
	for i, v := range elems {
		t.RawSetInt(i+1, v)
	}
	return t
}

// hash decodes map pairs; a nil or NaN key fails as lua_settable does,
// before the pairs after it are read.
func (d *mpDecoder) hash(n uint64, mark int) lua.LValue {
	for ; n > 0; n-- {
		k := d.value()
		if d.err != mpOK {
			return nil
		}
		d.top++
		v := d.value()
		d.top--
		if d.err != mpOK {
			return nil
		}
		switch kk := k.(type) {
		case *lua.LNilType:
			d.L.Error(lua.LString("table index is nil"), 0)
		case lua.LNumber:
			if kk != kk {
				d.L.Error(lua.LString("table index is NaN"), 0)
			}
		}
		d.scratch = append(d.scratch, k, v)
	}
	members := d.scratch[mark:]
	t := d.L.CreateTable(0, len(members)/2)
	for i := 0; i < len(members); i += 2 {
		t.RawSet(members[i], members[i+1])
	}
	return t
}

// unpack(s): every object in s.
func mpUnpack(L *lua.LState) int { return mpUnpackFull(L, 0, 0) }

// unpack_one(s [, offset]): the next offset (-1 at the end), then one object.
func mpUnpackOne(L *lua.LState) int {
	offset := optInteger(L, 2, 0)
	keepFirst(L)
	return mpUnpackFull(L, 1, offset)
}

// unpack_limit(s, limit [, offset]): the next offset, then up to limit
// objects. A limit and offset both 0 decode everything, offset not returned.
func mpUnpackLimit(L *lua.LState) int {
	limit := checkInteger(L, 2)
	offset := optInteger(L, 3, 0)
	keepFirst(L)
	return mpUnpackFull(L, limit, offset)
}

func mpUnpackFull(L *lua.LState, limit, offset int64) int {
	s := checkString(L, 1)
	all := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		// The C code prints the length where it means the limit.
		raise(L, "Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(s)))
	} else if uint64(offset) > uint64(len(s)) {
		raise(L, "Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	if all {
		limit = math.MaxInt32
	}
	d := &mpDecoder{L: L, s: s, p: int(offset), top: 1}
	var res []lua.LValue
	for int64(len(res)) < limit && d.p < len(s) {
		v := d.value()
		switch d.err {
		case mpEOF:
			raise(L, "Missing bytes in input.")
		case mpBadFmt:
			raise(L, "Bad data format in input.")
		}
		res = append(res, v)
		d.top++
	}
	if !all {
		next := int64(d.p)
		if d.p == len(s) {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range res {
		L.Push(v)
	}
	return len(res) + boolInt(!all)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keepFirst drops every argument after the first (lua_pop(L, top-1)).
func keepFirst(L *lua.LState) {
	if L.GetTop() > 1 {
		L.SetTop(1)
	}
}
