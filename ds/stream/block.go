package stream

import (
	"bytes"
	"encoding/binary"
)

// A block is one node of the stream, as Redis's listpack node: entries in ID order, each with
// its ID as deltas from the block's master ID and its fields omitted when they equal the master
// fields (those of the block's first entry). Deleted entries keep their place, flagged, until
// the whole block goes. data is pointer-free: the collector never scans it.
//
// Entry layout in data: flags byte, uvarint ms delta, zigzag varint seq delta, then
// (unless flagSame) uvarint field count and the fields, each field and value as uvarint length
// and bytes (values only when flagSame).
type block struct {
	master  ID
	last    ID     // the last entry's ID, deleted or not
	fields  []byte // master fields: uvarint count, then uvarint length and bytes each
	data    []byte
	live    int32
	dead    int32
	lpRest  int32 // Redis listpack bytes except the count and deleted elements
	lastOff int32 // offset of the last entry's flags byte
}

const (
	flagDeleted = 1
	flagSame    = 2
)

// lpBytes is the size Redis's listpack for b would have.
func (b *block) lpBytes() int {
	return int(b.lpRest) + lpIntLen(int64(b.live)) + lpIntLen(int64(b.dead))
}

func newBlock(id ID, fv [][]byte) *block {
	b := &block{master: id}
	b.fields = binary.AppendUvarint(b.fields, uint64(len(fv)/2))
	for i := 0; i < len(fv); i += 2 {
		b.fields = appendBytes(b.fields, fv[i])
	}
	b.lpRest = int32(lpMasterLen(fv) - lpIntLen(1) - lpIntLen(0))
	return b
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// sameFields reports whether fv's fields are the block's master fields, in order.
func (b *block) sameFields(fv [][]byte) bool {
	n, p := binary.Uvarint(b.fields)
	if int(n) != len(fv)/2 {
		return false
	}
	off := p
	for i := 0; i < len(fv); i += 2 {
		l, p := binary.Uvarint(b.fields[off:])
		off += p
		if !bytes.Equal(b.fields[off:off+int(l)], fv[i]) {
			return false
		}
		off += int(l)
	}
	return true
}

// append adds an entry at the end of the block.
func (b *block) append(id ID, fv [][]byte) {
	same := b.sameFields(fv)
	flags := byte(0)
	if same {
		flags = flagSame
	}
	dms, dseq := id.Ms-b.master.Ms, int64(id.Seq-b.master.Seq)
	b.lastOff = int32(len(b.data))
	b.data = append(b.data, flags)
	b.data = binary.AppendUvarint(b.data, dms)
	b.data = binary.AppendVarint(b.data, dseq)
	if !same {
		b.data = binary.AppendUvarint(b.data, uint64(len(fv)/2))
	}
	for i := 0; i < len(fv); i += 2 {
		if !same {
			b.data = appendBytes(b.data, fv[i])
		}
		b.data = appendBytes(b.data, fv[i+1])
	}
	b.lpRest += int32(lpEntryLen(int64(flags), int64(dms), dseq, fv, same))
	b.live++
	b.last = id
}

// cursor reads a block's entries in order.
type cursor struct {
	b   *block
	off int
}

// entry is one decoded entry; fv is valid until the next decode into the same slice.
type entry struct {
	off   int // offset of its flags byte
	flags byte
	id    ID
}

// next decodes the entry at c.off into e, appending its fields and values to fv (reset first),
// and advances; false at the end of the block.
func (c *cursor) next(e *entry, fv [][]byte) ([][]byte, bool) {
	d := c.b.data
	if c.off >= len(d) {
		return fv, false
	}
	e.off = c.off
	e.flags = d[c.off]
	off := c.off + 1
	dms, n := binary.Uvarint(d[off:])
	off += n
	dseq, n := binary.Varint(d[off:])
	off += n
	e.id = ID{c.b.master.Ms + dms, c.b.master.Seq + uint64(dseq)}
	fv = fv[:0]
	if e.flags&flagSame != 0 {
		mf := c.b.fields
		cnt, p := binary.Uvarint(mf)
		for ; cnt > 0; cnt-- {
			l, q := binary.Uvarint(mf[p:])
			p += q
			fv = append(fv, mf[p:p+int(l)])
			p += int(l)
			l, q = binary.Uvarint(d[off:])
			off += q
			fv = append(fv, d[off:off+int(l)])
			off += int(l)
		}
	} else {
		cnt, q := binary.Uvarint(d[off:])
		off += q
		for k := uint64(0); k < 2*cnt; k++ {
			l, q := binary.Uvarint(d[off:])
			off += q
			fv = append(fv, d[off:off+int(l)])
			off += int(l)
		}
	}
	c.off = off
	return fv, true
}

// offsets returns the offsets of the block's entries, in order, appended to dst.
func (b *block) offsets(dst []int) []int {
	c := cursor{b: b}
	for {
		off, ok := c.skip()
		if !ok {
			return dst
		}
		dst = append(dst, off)
	}
}

// id decodes the ID of the entry at c.off; false at the end of the block.
func (c *cursor) id() (ID, bool) {
	d := c.b.data
	if c.off >= len(d) {
		return ID{}, false
	}
	off := c.off + 1
	dms, n := binary.Uvarint(d[off:])
	dseq, _ := binary.Varint(d[off+n:])
	return ID{c.b.master.Ms + dms, c.b.master.Seq + uint64(dseq)}, true
}

// seek advances to the first entry at or after id (without decoding the fields of those it
// passes).
func (c *cursor) seek(id ID) {
	for {
		at, ok := c.id()
		if !ok || !at.Less(id) {
			return
		}
		c.skip()
	}
}

// skip advances past the entry at c.off without decoding it, returning its offset; false at
// the end of the block.
func (c *cursor) skip() (int, bool) {
	d := c.b.data
	if c.off >= len(d) {
		return 0, false
	}
	at := c.off
	off := at + 1
	_, n := binary.Uvarint(d[off:])
	off += n
	_, n = binary.Varint(d[off:])
	off += n
	var items uint64 // lengths and bytes to pass
	if d[at]&flagSame != 0 {
		items, _ = binary.Uvarint(c.b.fields)
	} else {
		cnt, q := binary.Uvarint(d[off:])
		off += q
		items = 2 * cnt
	}
	for ; items > 0; items-- {
		l, q := binary.Uvarint(d[off:])
		off += q + int(l)
	}
	c.off = off
	return at, true
}

// memBytes is what MemoryBytes counts for the block.
func (b *block) memBytes() int { return 96 + cap(b.data) + cap(b.fields) }

// lastLive reports whether the block's last entry is live.
func (b *block) lastLive() bool { return b.data[b.lastOff]&flagDeleted == 0 }

// markDeleted flags the entry at off deleted.
func (b *block) markDeleted(off int) {
	b.data[off] |= flagDeleted
	b.live--
	b.dead++
}

// shrink drops the spare capacity append left in data.
func (b *block) shrink() {
	if cap(b.data) > len(b.data)+len(b.data)/16 {
		b.data = bytes.Clone(b.data)
	}
}

func (b *block) clone() *block {
	nb := *b
	nb.fields = bytes.Clone(b.fields)
	nb.data = bytes.Clone(b.data)
	return &nb
}
