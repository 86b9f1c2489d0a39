package rdb

import (
	"encoding/binary"
	"fmt"
)

// The compact encodings a value string holds: listpack, ziplist, intset and
// zipmap. Each iterator checks every length against the blob before it reads,
// so corrupt input ends in an error, never an index out of range.

// blobErr is a problem found inside a blob: which kind, and the byte within it.
type blobErr struct {
	kind string
	pos  int
	msg  string
}

func (e *blobErr) Error() string {
	return fmt.Sprintf("bad %s: %s at byte %d of it", e.kind, e.msg, e.pos)
}

// lpIter walks a listpack's elements.
type lpIter struct {
	b     []byte
	pos   int
	count int
}

func newListpack(b []byte) (lpIter, error) {
	if len(b) < lpHeaderSize+1 {
		return lpIter{}, &blobErr{"listpack", 0, fmt.Sprintf("%d bytes is too short", len(b))}
	}
	if n := binary.LittleEndian.Uint32(b); int(n) != len(b) {
		return lpIter{}, &blobErr{"listpack", 0, fmt.Sprintf("header says %d bytes, string has %d", n, len(b))}
	}
	if b[len(b)-1] != 0xff {
		return lpIter{}, &blobErr{"listpack", len(b) - 1, "no terminator"}
	}
	return lpIter{b: b, pos: lpHeaderSize}, nil
}

func (it *lpIter) fail(at int, msg string) error { return &blobErr{"listpack", at, msg} }

// next returns the next element: a string s, or an integer v when isInt. done
// reports the end, after which the element count has been checked.
func (it *lpIter) next() (s []byte, v int64, isInt, done bool, err error) {
	b, p := it.b, it.pos
	if p >= len(b) {
		return nil, 0, false, false, it.fail(p, "entry past the end")
	}
	c := b[p]
	if c == 0xff {
		if p != len(b)-1 {
			return nil, 0, false, false, it.fail(p, "terminator before the end")
		}
		if n := binary.LittleEndian.Uint16(b[4:]); n != 65535 && int(n) != it.count {
			return nil, 0, false, false, it.fail(4, fmt.Sprintf("header says %d elements, found %d", n, it.count))
		}
		return nil, 0, false, true, nil
	}
	var hdr, dlen int // encoding bytes, data bytes
	switch {
	case c&0x80 == 0:
		hdr, v, isInt = 1, int64(c), true
	case c&0xc0 == 0x80:
		hdr, dlen = 1, int(c&0x3f)
	case c&0xe0 == 0xc0:
		hdr, isInt = 2, true
	case c&0xf0 == 0xe0:
		hdr = 2
	case c == 0xf0:
		hdr = 5
	case c >= 0xf1 && c <= 0xf4:
		hdr, isInt = 1, true
		dlen = [...]int{2, 3, 4, 8}[c-0xf1]
	default:
		return nil, 0, false, false, it.fail(p, fmt.Sprintf("unknown encoding 0x%02x", c))
	}
	if p+hdr > len(b)-1 {
		return nil, 0, false, false, it.fail(p, "entry header past the end")
	}
	switch {
	case c&0xe0 == 0xc0:
		u := int64(c&0x1f)<<8 | int64(b[p+1])
		v = u << 51 >> 51 // sign-extend 13 bits
	case c&0xf0 == 0xe0:
		dlen = int(c&0x0f)<<8 | int(b[p+1])
	case c == 0xf0:
		n := binary.LittleEndian.Uint32(b[p+1:])
		if int64(n) > int64(len(b)) {
			return nil, 0, false, false, it.fail(p, "string length past the end")
		}
		dlen = int(n)
	}
	d := p + hdr
	if d+dlen > len(b)-1 {
		return nil, 0, false, false, it.fail(p, "entry data past the end")
	}
	data := b[d : d+dlen]
	if isInt && c >= 0xf1 {
		var u uint64
		for i := len(data) - 1; i >= 0; i-- {
			u = u<<8 | uint64(data[i])
		}
		shift := 64 - 8*uint(len(data))
		v = int64(u<<shift) >> shift
	} else if !isInt {
		s = data
	}
	elen := hdr + dlen
	bs := backlenSize(elen)
	e := d + dlen
	if e+bs > len(b)-1 || decodeBacklen(b[e:e+bs]) != elen {
		return nil, 0, false, false, it.fail(e, "bad back length")
	}
	it.pos = e + bs
	it.count++
	return s, v, isInt, false, nil
}

// zlIter walks a ziplist's elements (ziplist.c): header of total bytes, tail
// offset (uint32 LE) and count (uint16 LE), entries of previous length (1 byte,
// or 0xfe and 4 bytes LE), encoding and data, and 0xff.
type zlIter struct {
	b     []byte
	pos   int
	prev  int // length of the previous entry
	last  int // offset of the last entry
	count int
}

func newZiplist(b []byte) (zlIter, error) {
	if len(b) < 11 {
		return zlIter{}, &blobErr{"ziplist", 0, fmt.Sprintf("%d bytes is too short", len(b))}
	}
	if n := binary.LittleEndian.Uint32(b); int(n) != len(b) {
		return zlIter{}, &blobErr{"ziplist", 0, fmt.Sprintf("header says %d bytes, string has %d", n, len(b))}
	}
	if b[len(b)-1] != 0xff {
		return zlIter{}, &blobErr{"ziplist", len(b) - 1, "no terminator"}
	}
	return zlIter{b: b, pos: 10, last: 10}, nil
}

func (it *zlIter) fail(at int, msg string) error { return &blobErr{"ziplist", at, msg} }

func (it *zlIter) next() (s []byte, v int64, isInt, done bool, err error) {
	b, p := it.b, it.pos
	if p >= len(b) {
		return nil, 0, false, false, it.fail(p, "entry past the end")
	}
	if b[p] == 0xff {
		if p != len(b)-1 {
			return nil, 0, false, false, it.fail(p, "terminator before the end")
		}
		if n := binary.LittleEndian.Uint16(b[8:]); n != 65535 && int(n) != it.count {
			return nil, 0, false, false, it.fail(8, fmt.Sprintf("header says %d elements, found %d", n, it.count))
		}
		if t := binary.LittleEndian.Uint32(b[4:]); int(t) != it.last {
			return nil, 0, false, false, it.fail(4, fmt.Sprintf("tail offset %d, last entry at %d", t, it.last))
		}
		return nil, 0, false, true, nil
	}
	start := p
	prev := int(b[p])
	p++
	if prev == 0xfe {
		if p+4 > len(b)-1 {
			return nil, 0, false, false, it.fail(start, "previous length past the end")
		}
		prev = int(binary.LittleEndian.Uint32(b[p:]))
		p += 4
	}
	if prev != it.prev {
		return nil, 0, false, false, it.fail(start, fmt.Sprintf("previous length %d, previous entry has %d", prev, it.prev))
	}
	if p >= len(b)-1 {
		return nil, 0, false, false, it.fail(p, "encoding past the end")
	}
	c := b[p]
	var hdr, dlen int
	switch c >> 6 {
	case 0:
		hdr, dlen = 1, int(c&0x3f)
	case 1:
		hdr = 2
	case 2:
		if c != 0x80 {
			return nil, 0, false, false, it.fail(p, fmt.Sprintf("unknown encoding 0x%02x", c))
		}
		hdr = 5
	default:
		hdr, isInt = 1, true
		switch {
		case c == 0xc0:
			dlen = 2
		case c == 0xd0:
			dlen = 4
		case c == 0xe0:
			dlen = 8
		case c == 0xf0:
			dlen = 3
		case c == 0xfe:
			dlen = 1
		case c >= 0xf1 && c <= 0xfd:
			v = int64(c&0x0f) - 1
		default:
			return nil, 0, false, false, it.fail(p, fmt.Sprintf("unknown encoding 0x%02x", c))
		}
	}
	if p+hdr > len(b)-1 {
		return nil, 0, false, false, it.fail(p, "encoding past the end")
	}
	switch hdr {
	case 2:
		dlen = int(c&0x3f)<<8 | int(b[p+1])
	case 5:
		n := binary.BigEndian.Uint32(b[p+1:])
		if int64(n) > int64(len(b)) {
			return nil, 0, false, false, it.fail(p, "string length past the end")
		}
		dlen = int(n)
	}
	d := p + hdr
	if d+dlen > len(b)-1 {
		return nil, 0, false, false, it.fail(p, "entry data past the end")
	}
	data := b[d : d+dlen]
	if isInt && dlen > 0 {
		var u uint64
		for i := len(data) - 1; i >= 0; i-- {
			u = u<<8 | uint64(data[i])
		}
		shift := 64 - 8*uint(dlen)
		v = int64(u<<shift) >> shift
	} else if !isInt {
		s = data
	}
	it.last = start
	it.prev = d + dlen - start
	it.pos = d + dlen
	it.count++
	return s, v, isInt, false, nil
}

// intsetVals checks an intset and calls f with each member.
func intsetVals(b []byte, f func(int64)) error {
	if len(b) < 8 {
		return &blobErr{"intset", 0, "too short"}
	}
	w := binary.LittleEndian.Uint32(b)
	n := binary.LittleEndian.Uint32(b[4:])
	if w != 2 && w != 4 && w != 8 {
		return &blobErr{"intset", 0, fmt.Sprintf("width %d", w)}
	}
	if uint64(len(b)-8) != uint64(w)*uint64(n) {
		return &blobErr{"intset", 4, fmt.Sprintf("%d members of %d bytes in %d bytes", n, w, len(b)-8)}
	}
	var prev int64
	for i := 0; i < int(n); i++ {
		p := b[8+i*int(w):]
		var v int64
		switch w {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			v = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && v <= prev {
			return &blobErr{"intset", 8 + i*int(w), "members out of order"}
		}
		prev = v
		f(v)
	}
	return nil
}

// zipmapPairs checks a zipmap (zipmap.c: count byte, then entries of key
// length, key, value length, free byte, value and free bytes, and 0xff) and
// calls f with each field and value.
func zipmapPairs(b []byte, f func(k, v []byte)) error {
	fail := func(at int, msg string) error { return &blobErr{"zipmap", at, msg} }
	if len(b) < 2 || b[len(b)-1] != 0xff {
		return fail(0, "too short or no terminator")
	}
	p, count := 1, 0
	str := func(free bool) ([]byte, error) {
		if p >= len(b)-1 {
			return nil, fail(p, "length past the end")
		}
		n := int(b[p])
		p++
		switch n {
		case 254:
			if p+4 > len(b)-1 {
				return nil, fail(p, "length past the end")
			}
			u := binary.LittleEndian.Uint32(b[p:])
			if int64(u) > int64(len(b)) {
				return nil, fail(p, "length past the end")
			}
			n = int(u)
			p += 4
		case 255:
			return nil, fail(p-1, "terminator inside an entry")
		}
		skip := 0
		if free {
			if p >= len(b)-1 {
				return nil, fail(p, "free byte past the end")
			}
			skip = int(b[p])
			p++
		}
		if p+n+skip > len(b)-1 {
			return nil, fail(p, "entry past the end")
		}
		s := b[p : p+n]
		p += n + skip
		return s, nil
	}
	for b[p] != 0xff {
		k, err := str(false)
		if err != nil {
			return err
		}
		v, err := str(true)
		if err != nil {
			return err
		}
		f(k, v)
		count++
		if p >= len(b) {
			return fail(p, "entry past the end")
		}
	}
	if p != len(b)-1 {
		return fail(p, "terminator before the end")
	}
	if b[0] < 254 && int(b[0]) != count {
		return fail(0, fmt.Sprintf("header says %d pairs, found %d", b[0], count))
	}
	return nil
}

// backlenSize is how many bytes appendBacklen takes for n.
func backlenSize(n int) int {
	switch {
	case n <= 127:
		return 1
	case n < 16383:
		return 2
	case n < 2097151:
		return 3
	case n < 268435455:
		return 4
	}
	return 5
}

// decodeBacklen reads what appendBacklen wrote, or -1 if the flags are wrong.
func decodeBacklen(b []byte) int {
	if b[0]&0x80 != 0 {
		return -1
	}
	n := int(b[0])
	for _, c := range b[1:] {
		if c&0x80 == 0 {
			return -1
		}
		n = n<<7 | int(c&0x7f)
	}
	return n
}
