package keyspace

import "encoding/binary"

// Packed strings (value-compression): a family may hold a string value in a compressed form.
// Such an entry has EncPacked set in Enc, its bytes (Bytes) are the packed form, and their first
// four bytes are the raw length, little-endian (the rest is ds/compress's). The keyspace counts
// its packed values and the bytes they save, so INFO reads two numbers instead of scanning:
// SetPacked and Unpacked change them, and a removed or cleared packed entry leaves them.
//
// The rule for callers: an entry that may hold a packed string must go through Unpacked before
// its value is replaced any other way (SetBytes, SetObj), or the counts keep it.

// EncPacked is the bit of Entry.Enc marking a packed string; the family's own encoding hint is
// in the other bits.
const EncPacked uint8 = 0x80

// packedStats are a keyspace's packed values: how many, and raw minus packed bytes.
type packedStats struct {
	keys  int
	saved int64
}

// Packed reports whether e holds a packed string.
func (e *Entry) Packed() bool { return e.Enc&EncPacked != 0 && e.Kind == KindString && e.val != nil }

// RawLen returns the length of e's string as stored or, when packed, as it was before packing.
func (e *Entry) RawLen() int {
	if e.Packed() {
		return int(binary.LittleEndian.Uint32(e.Bytes()))
	}
	return len(e.Bytes())
}

// savedBy is what e's packed value saves.
func (e *Entry) savedBy() int64 { return int64(e.RawLen()) - int64(e.vlen) }

// SetPacked stores p, a packed form (see above), as e's string value and counts it; e's other
// Enc bits are kept. e must be in ks.
func (ks *Keyspace) SetPacked(e *Entry, p []byte) {
	ks.Unpacked(e)
	e.Kind = KindString
	e.SetBytes(p)
	e.Enc |= EncPacked
	ks.packed.keys++
	ks.packed.saved += e.savedBy()
}

// Unpacked forgets that e holds a packed value: the counts drop it and EncPacked is cleared. The
// bytes are left as they are for the caller to replace. A no-op for any other entry.
func (ks *Keyspace) Unpacked(e *Entry) {
	if !e.Packed() {
		e.Enc &^= EncPacked
		return
	}
	ks.packed.keys--
	ks.packed.saved -= e.savedBy()
	e.Enc &^= EncPacked
}

// AdoptPacked moves the count of e, which TakeValue just moved from an entry of from to this
// keyspace (MOVE), to ks.
func (ks *Keyspace) AdoptPacked(from *Keyspace, e *Entry) {
	if ks == from || !e.Packed() {
		return
	}
	s := e.savedBy()
	from.packed.keys--
	from.packed.saved -= s
	ks.packed.keys++
	ks.packed.saved += s
}

// PackedStats returns the number of packed values and the bytes they save.
func (ks *Keyspace) PackedStats() (keys int, saved int64) { return ks.packed.keys, ks.packed.saved }

// dropPacked uncounts e, which is leaving the keyspace.
func (ks *Keyspace) dropPacked(e *Entry) {
	if e.Packed() {
		ks.packed.keys--
		ks.packed.saved -= e.savedBy()
	}
}
