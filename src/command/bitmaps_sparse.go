package command

// Sparse bitmaps (ds/sparsebits). A bit write (SETBIT, BITFIELD) that creates a key whose string
// would be at least sparsebits.MinLen (64 KiB) long stores it as the offsets of its set bits
// instead of its bytes, and the bit writes keep it so while sparsebits.Fits holds (at most 16,384
// set bits, their offsets at most a sixteenth of the dense bytes); the write that breaks the rule
// converts it to the dense string, which then stays dense like any string. A dense string never
// becomes sparse.
//
// Nothing else sees the form: it rides the packed-string seam (strings_packed.go). The entry is
// packed (keyspace.EncPacked, Enc EncRaw under it, so OBJECT ENCODING says raw as Redis does for
// a bitmap), its first four bytes are the string's length (STRLEN, RawLen), and unpackOrPanic,
// through which every reader of a packed value's bytes goes (strBytes, strCopy, unpackForEdit,
// the RDB writer, DEBUG DIGEST), returns the dense bytes. COPY, the script undo log and the
// snapshot's frozen copies copy the packed bytes as they are. GETBIT, BITCOUNT, BITPOS, BITFIELD,
// BITFIELD_RO, GETRANGE and STRLEN answer from the form itself; APPEND, SETRANGE, BITOP, GET and
// the rest see (or write) the dense bytes. Memory accounting counts the form's buffer, and INFO's
// value_compressed_keys counts a sparse bitmap as a packed value.

import (
	"github.com/hotkv/hotkv/ds/bitmap"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/sparsebits"
	"github.com/hotkv/hotkv/ds/strs"
)

// sparseOf returns the sparse form e holds, or nil when e holds anything else.
func sparseOf(e *keyspace.Entry) []byte {
	if !e.Packed() {
		return nil
	}
	if p := e.Bytes(); sparsebits.Is(p) {
		return p
	}
	return nil
}

// bitDest is the string a bit command works on: dense bytes, or a sparse form. For a write
// (bitString) the bytes are e's, grown to hold every bit written, and a sparse form is uncounted
// by the keyspace while it is edited; done stores the result. A read sets dense or sparse only.
type bitDest struct {
	ks     *keyspace.Keyspace
	e      *keyspace.Entry
	grew   bool   // the key was created or lengthened
	packed bool   // a compressed value was unpacked for the edit (repack)
	dense  []byte // the string's bytes, when not sparse
	sparse []byte // the sparse form, or nil
}

// setBit sets one bit of the destination and returns its previous value.
func (d *bitDest) setBit(off uint64, on int) int {
	if d.sparse == nil {
		return bitmap.SetBit(d.dense, off, on)
	}
	var old int
	d.sparse, old = sparsebits.SetBit(d.sparse, off, on)
	return old
}

// getSparseField reads a BITFIELD integer from the sparse form p.
func getSparseField(p []byte, f bitmap.Field, off uint64) int64 {
	var buf [16]byte
	from := off >> 3
	n := int((off+uint64(f.Bits)-1)>>3-from) + 1
	w := sparsebits.Window(buf[:0], p, int(from), n)
	return f.Get(w, off-from<<3)
}

// setField writes a BITFIELD integer into the destination.
func (d *bitDest) setField(f bitmap.Field, off uint64, v int64) {
	if d.sparse == nil {
		f.Set(d.dense, off, v)
		return
	}
	var buf [16]byte
	from := off >> 3
	n := int((off+uint64(f.Bits)-1)>>3-from) + 1
	w := sparsebits.Window(buf[:0], d.sparse, int(from), n)
	f.Set(w, off-from<<3, v)
	for i := range uint64(f.Bits) {
		d.sparse, _ = sparsebits.SetBit(d.sparse, off+i, bitmap.Bit(w, off-from<<3+i))
	}
}

// getField reads a BITFIELD integer from the destination.
func (d *bitDest) getField(f bitmap.Field, off uint64) int64 {
	if d.sparse == nil {
		return f.Get(d.dense, off)
	}
	return getSparseField(d.sparse, f, off)
}

// done stores the edited value: a sparse form that still fits stays sparse, else it becomes
// the dense string; a compressed value that was unpacked is packed again (repack).
func (d *bitDest) done(c *Ctx) {
	p := d.sparse
	if p == nil {
		repack(c, d.ks, d.e, d.packed)
		return
	}
	d.sparse = nil
	if sparsebits.Fits(int64(sparsebits.Len(p)), sparsebits.Count(p)) && !spellsHLL(p) {
		d.ks.SetPacked(d.e, p)
		return
	}
	d.e.SetBytes(sparsebits.Dense(nil, p)) // the conversion (BenchmarkSparseBits/densify)
}

// spellsHLL reports whether the string starts with "HYLL": such a value is left dense, as HLLs
// are never packed (strings_packed.go), so the HLL commands judge its bytes as Redis does.
func spellsHLL(p []byte) bool {
	var buf [4]byte
	return string(sparsebits.Window(buf[:0], p, 0, 4)) == "HYLL"
}

// sparseRange is GETRANGE (strs.Range) over the sparse form p: the bytes are built for the
// range only.
func sparseRange(p []byte, start, end int64) []byte {
	lo, hi, ok := strs.Bounds(int64(sparsebits.Len(p)), start, end)
	if !ok {
		return []byte{}
	}
	return sparsebits.Window(make([]byte, 0, hi-lo+1), p, int(lo), int(hi-lo+1))
}
