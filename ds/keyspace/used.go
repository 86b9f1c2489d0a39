package keyspace

import (
	"math"
	"sync/atomic"
	"unsafe"
)

// Used memory. A keyspace counts the bytes its keys hold, as the eviction policy and INFO's
// used_memory read them (docs/decisions.md, "Memory budget and eviction"):
//
//	footprint(e) = EntrySize + the length of a key kept outside the entry + accounted(e)
//
// where accounted(e) is a string's capacity, exactly, and for a collection the estimate last
// accounted for it, kept in the Entry's vlen/vcap (a collection does not use them; SetObj
// zeroes them, so a new collection starts at 0). The keyspace adds an entry's footprint when it
// is inserted and takes the same off when it is unlinked, so expiry, eviction, DEL and FLUSH
// need no help. A string's capacity and a collection's estimate change under commands, which
// the keyspace does not see: the command layer measures what each write command changed and
// reports the difference with Account (and SetAccounted for a collection), so that the counter
// stays the sum of its entries' footprints.

// EntrySize is what one key costs besides its value and a long key's bytes: the Entry itself.
const EntrySize = int64(unsafe.Sizeof(Entry{}))

// accounted is the part of e's footprint that belongs to its value.
func (e *Entry) accounted() int64 {
	if e.Kind <= KindString {
		return int64(e.vcap)
	}
	if Inline(e.Kind) {
		if e.vcap != inlineLarge {
			return int64(e.vcap) // a buffer's capacity, exactly, like a string's
		}
		return int64(e.vlen) * inlineUnit // a large layout's estimate, stored in its unused length
	}
	return int64(e.vlen) | int64(e.vcap)<<32
}

// An inline kind's header (keyspace.go, Inline) holds either a pointer-free buffer, whose
// capacity is its accounted size, or, with the capacity inlineLarge, a large layout whose length
// field is unused: the estimate for it is kept there, in units of inlineUnit bytes (so up to
// 32 GiB). ds/hash's setTable and ds/zset's setLarge zero it when a value becomes large; the
// command layer stores the estimate again when the command is done, and an unlink in between
// takes off what the entry reads then, so the count stays the sum of the footprints. Whatever
// changes an inline value outside a command (a hash's field expiry) reports the change in
// Accounted itself.
const (
	inlineLarge = math.MaxUint32
	inlineUnit  = 8
)

// Accounted is the value's part of e's footprint: a string's capacity, or the estimate last
// stored for a collection with SetAccounted.
func (e *Entry) Accounted() int64 { return e.accounted() }

// SetAccounted stores n as the collection value's accounted size; the caller reports the
// difference to the keyspace with Account, of what Accounted reads afterwards. For a string it
// does nothing: a string's capacity is its accounted size; nor for an inline kind's buffer,
// whose capacity is; an inline kind's large layout keeps n rounded up to inlineUnit.
func (e *Entry) SetAccounted(n int64) {
	if e.Kind <= KindString {
		return
	}
	n = max(n, 0)
	if Inline(e.Kind) {
		if e.vcap == inlineLarge {
			e.vlen = uint32(min((n+inlineUnit-1)/inlineUnit, math.MaxUint32))
		}
		return
	}
	e.vlen, e.vcap = uint32(n), uint32(n>>32)
}

// Footprint is the bytes e counts in its keyspace's Used.
func (e *Entry) Footprint() int64 {
	n := EntrySize + e.accounted()
	if e.klen == longKey {
		n += int64(*(*uint64)(unsafe.Pointer(&e.kin)))
	}
	return n
}

// Used returns the bytes the keyspace's entries account for.
func (ks *Keyspace) Used() int64 { return ks.used }

// Account adds delta bytes to the keyspace's count (and to its shared counter, see SetUsedSink):
// what a write changed in an entry's accounted size.
func (ks *Keyspace) Account(delta int64) {
	ks.used += delta
	if ks.sink != nil {
		ks.sink.Store(ks.sink.Load() + delta) // one writer: no read-modify-write needed
	}
}

// SetUsedSink makes every change of the keyspace's count change *sink too, so that one counter
// sums the databases of a shard. Only the keyspace's owner (the shard's token holder) changes
// it; anyone may Load it.
func (ks *Keyspace) SetUsedSink(sink *atomic.Int64) {
	ks.sink = sink
	sink.Store(sink.Load() + ks.used)
}

// Recount sets the count to the sum of its entries' footprints, walking every key: for a
// keyspace filled outside the command layer's accounting (loading a file). estimate, when set,
// gives each collection its accounted size first. It returns the change.
func (ks *Keyspace) Recount(estimate func(e *Entry) int64) int64 {
	var n int64
	ks.each(func(e *Entry) {
		if estimate != nil && e.Kind > KindString {
			e.SetAccounted(estimate(e))
		}
		n += e.Footprint()
	})
	d := n - ks.used
	ks.Account(d)
	return d
}
