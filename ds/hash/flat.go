package hash

import (
	"bytes"
	"encoding/binary"
)

// A flat table is a large hash ("hashtable") in one pointer-free buffer: header, slots and
// records in a single allocation, sized to what it holds. It is what a hash of a few long values
// becomes (a value past hash-max-listpack-value converts at the first field), so a one-field
// hash of a 256-byte value costs one allocation of about 290 bytes where Redis spends a dict, a
// table, an entry and two strings. It holds no field TTLs (setting one moves the hash to a paged
// table, table.go) and at most flatMax bytes: growing copies the whole buffer, and the copy
// leaves the old one as garbage, which Go's collector lets grow up to the size of the live heap
// before it reclaims it; built one field at a time, a flat table of n fields leaves about n/2
// times its size behind. Past flatMax (three or so 256-byte values) the buffer becomes the first
// page of a paged table as it is, and later records go to pages of their own without copying.
//
//	0       flags: flagFlat (flagTTL never)
//	1       shift: the table has 1<<shift slots
//	2..3    count, uint16 little endian
//	4..5    dead: bytes of records that no slot refers to, uint16
//	6..7    unused
//	slots   4 bytes each, little endian: 0 when empty, else off<<16 | hash&0xffff: the offset of
//	        the record in the buffer, and the field's low hash bits, which give the home slot
//	records as in an arena page (arena.go), without TTLs, appended as fields are set
//
// Lookups probe linearly from the home slot and compare the 16 hash bits before the field. A
// deletion shifts the entries after it back (no tombstones), as the paged table does, and
// truncates the buffer when the record was the last one. A replaced or deleted record otherwise
// stays dead until dead bytes outweigh live ones; then a rebuild copies the live records into a
// buffer that fits them, so the buffer stays within about twice its live bytes.
type flat []byte

const (
	flagFlat   = 2
	flatHeader = 8
	flatMax    = 1 << 10 // see above; at most 64 KiB, for offsets to fit the 16 bits of a slot
	// (measured with row.sh at 2 KiB: hash 5x256 used 2374 B/key and RSS 2525, against 1863 and
	// 1935 at 1 KiB; Redis 2034 and 2062)
	flatMinShift = 1
	flatTagMask  = 0xffff
)

func (b flat) shift() uint8   { return b[1] }
func (b flat) mask() int      { return 1<<b[1] - 1 }
func (b flat) count() int     { return int(binary.LittleEndian.Uint16(b[2:])) }
func (b flat) setCount(n int) { binary.LittleEndian.PutUint16(b[2:], uint16(n)) }
func (b flat) dead() int      { return int(binary.LittleEndian.Uint16(b[4:])) }
func (b flat) setDead(n int)  { binary.LittleEndian.PutUint16(b[4:], uint16(n)) }

func (b flat) slot(i int) uint32       { return binary.LittleEndian.Uint32(b[flatHeader+4*i:]) }
func (b flat) setSlot(i int, s uint32) { binary.LittleEndian.PutUint32(b[flatHeader+4*i:], s) }

// live returns the bytes of the records slots refer to.
func (b flat) live() int { return len(b) - flatSize(b.shift(), 0) - b.dead() }

func flatSlot(off int, h uint64) uint32 { return uint32(off)<<16 | uint32(h&flatTagMask) }

// flatSize is the length of a flat table of 1<<shift slots holding bytes of records.
func flatSize(shift uint8, bytes int) int { return flatHeader + 4<<shift + bytes }

// shiftFor returns the slot count (log2) that holds n fields at most 3/4 full.
func shiftFor(n int) uint8 {
	s := uint8(flatMinShift)
	for n*4 > 3<<s {
		s++
	}
	return s
}

// newFlat returns an empty flat table with slots for n fields and room for bytes of records,
// or false when they would not fit in flatMax.
func newFlat(n, bytes int) ([]byte, bool) {
	sh := shiftFor(n)
	size := flatSize(sh, bytes)
	if size > flatMax {
		return nil, false
	}
	b := alloc(size)[:flatSize(sh, 0)] // zeroed: count 0, no dead bytes, empty slots
	b[0], b[1] = flagFlat, sh
	return b, true
}

// record decodes the record at off: its field and value, and the offset after it.
func (b flat) record(off int) (f, v []byte, end int) {
	h, pos := readUvarint(b, off)
	vl, pos := readUvarint(b, pos)
	fend := pos + int(h>>1)
	end = fend + int(vl)
	return b[pos:fend], b[fend:end], end
}

// find returns the slot holding field f (hash h), or the empty slot where it would go.
func (b flat) find(f []byte, h uint64) (int, bool) {
	m := b.mask()
	tag := uint32(h & flatTagMask)
	for i := int(h) & m; ; i = (i + 1) & m {
		s := b.slot(i)
		if s == 0 {
			return i, false
		}
		if s&flatTagMask == tag {
			if rf, _, _ := b.record(int(s >> 16)); bytes.Equal(rf, f) {
				return i, true
			}
		}
	}
}

// get returns field f's value, a view into the buffer.
func (b flat) get(f []byte) ([]byte, bool) {
	i, ok := b.find(f, hashOf(f))
	if !ok {
		return nil, false
	}
	_, v, _ := b.record(int(b.slot(i) >> 16))
	return v, true
}

// place puts slot s in the first empty slot from its home.
func (b flat) place(s uint32) {
	m := b.mask()
	i := int(s&flatTagMask) & m
	for b.slot(i) != 0 {
		i = (i + 1) & m
	}
	b.setSlot(i, s)
}

// append adds the absent field f (hash h) with value v; the buffer must have room for the
// record and a free slot within the load limit.
func (b flat) append(f, v []byte, h uint64) flat {
	off := len(b)
	b = b[:off+recordLen(f, v, false)]
	putRecord(b[off:], f, v, 0, false)
	b.place(flatSlot(off, h))
	b.setCount(b.count() + 1)
	return b
}

// removeAt empties slot i, whose record spans off..end, shifting back the entries after it that
// may move closer to home.
func (b flat) removeAt(i, off, end int) flat {
	m := b.mask()
	for j := (i + 1) & m; b.slot(j) != 0; j = (j + 1) & m {
		s := b.slot(j)
		if (j-int(s&flatTagMask))&m >= (j-i)&m {
			b.setSlot(i, s)
			i = j
		}
	}
	b.setSlot(i, 0)
	b.setCount(b.count() - 1)
	if end == len(b) {
		return b[:off]
	}
	b.setDead(b.dead() + end - off)
	return b
}

// rebuild returns a copy of the table with 1<<sh slots (enough for its fields) in a buffer of
// at least capacity bytes, without dead records.
func (b flat) rebuild(sh uint8, capacity int) flat {
	if sh == b.shift() && b.dead() == 0 { // offsets stay valid: copy the bytes as they are
		nb := flat(alloc(max(capacity, len(b))))[:len(b)]
		copy(nb, b)
		return nb
	}
	nb := flat(alloc(max(capacity, flatSize(sh, b.live())))[:flatSize(sh, 0)])
	nb[0], nb[1] = flagFlat, sh
	for i := range b.mask() + 1 {
		s := b.slot(i)
		if s == 0 {
			continue
		}
		_, _, end := b.record(int(s >> 16))
		off := len(nb)
		nb = append(nb, b[s>>16:end]...)
		nb.place(flatSlot(off, uint64(s)))
	}
	nb.setCount(b.count())
	return nb
}

// warm loads f's slot and the record it names (Hash.WarmMember).
func (b flat) warm(f []byte) uint64 {
	s := b.slot(int(hashOf(f)) & b.mask())
	return uint64(s) + uint64(b[s>>16])
}

// flatSet is Set for a flat table.
func (h *Hash) flatSet(f, v []byte) bool {
	b := flat(h.buf())
	hv := hashOf(f)
	i, found := b.find(f, hv)
	if found {
		off := int(b.slot(i) >> 16)
		_, old, end := b.record(off)
		if len(old) == len(v) {
			copy(old, v)
			return false
		}
		b = b.removeAt(i, off, end) // and add it again below
	}
	h.flatInsert(b, f, v, hv)
	return !found
}

// flatInsert adds the absent field f (hash hv) to the flat table b, making room first: a bigger
// buffer, more slots, or a paged table when the hash outgrows flatMax.
func (h *Hash) flatInsert(b flat, f, v []byte, hv uint64) {
	n := recordLen(f, v, false)
	sh := b.shift()
	if (b.count()+1)*4 > 3<<sh {
		sh++
	}
	if sh != b.shift() || len(b)+n > cap(b) {
		size := flatSize(sh, b.live()+n)
		if size > flatMax {
			h.setBuf(b)
			h.flatToTable()
			h.table().set(f, v, false)
			return
		}
		b = b.rebuild(sh, size) // the allocator rounds it up to its size class
	}
	h.setBuf(b.append(f, v, hv))
}

// flatDelete is Delete for a flat table. The table is rebuilt smaller when dead bytes outweigh
// live ones, when it is under 1/8 full, or when deletions left most of its buffer unused.
func (h *Hash) flatDelete(f []byte) bool {
	b := flat(h.buf())
	i, ok := b.find(f, hashOf(f))
	if !ok {
		return false
	}
	off := int(b.slot(i) >> 16)
	_, _, end := b.record(off)
	b = b.removeAt(i, off, end)
	sh := b.shift()
	if sh > flatMinShift && b.count()*8 < 1<<sh {
		sh = shiftFor(b.count())
	}
	if live := b.live(); sh != b.shift() || b.dead() > max(live, 64) || cap(b) > 2*len(b)+64 {
		b = b.rebuild(sh, flatSize(sh, live))
	}
	h.setBuf(b)
	return true
}

// flatToTable moves a flat table's fields to a paged table. The buffer becomes the table's first
// page as it is: its records are arena records already, at offsets under 64 KiB, so none is
// copied (a copy would leave the whole buffer as garbage); its header, slots and dead records
// count as dead bytes of that page.
func (h *Hash) flatToTable() {
	b := flat(h.buf())
	t := newTable(b.count() + 1)
	t.arena.pages = append(make([][]byte, 0, 4), b[:len(b):cap(b)])
	t.arena.total, t.arena.live = cap(b), b.live()
	for i := range b.mask() + 1 {
		if s := b.slot(i); s != 0 {
			f, _, _ := b.record(int(s >> 16))
			hv := hashOf(f)
			j, _ := t.find(f, hv)
			t.slots[j] = makeSlot(uint64(s>>16), hv) // page 0, the record's offset
			t.count++
		}
	}
	h.setTable(t)
}

// The slot walks of HSCAN and HRANDFIELD (scan.go, random.go) for a flat table.

func (b flat) slotCount() uint64 { return uint64(b.mask()) + 1 }

func (b flat) homeOf(i uint64) (uint64, bool) {
	s := b.slot(int(i))
	return uint64(s&flatTagMask) & uint64(b.mask()), s != 0
}

func (b flat) pair(i uint64) ([]byte, []byte) {
	f, v, _ := b.record(int(b.slot(int(i)) >> 16))
	return f, v
}
