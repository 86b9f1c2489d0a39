// Package hash is the hash value: fields mapped to values, each field optionally expiring.
//
// Like Redis, a hash has two encodings. A small one is a single front-coded buffer scanned
// linearly (packed.go), which OBJECT ENCODING calls "listpack" ("listpackex" once per-field
// expiry was used on it, as Redis 7.4 does). It becomes a large one, "hashtable", when it
// exceeds the hash-max-listpack-entries or hash-max-listpack-value limits, and never goes back.
// A large hash is an open-addressing table: while it is under 1 KiB and has no field TTLs its
// slots and records share one buffer (flat.go); beyond that the slots refer to records in arena
// pages (table.go, arena.go), which grow without copying what they hold. Small hashes are one
// pointer-free buffer that fits what they hold behind a 16-byte header.
//
// Expired fields stay stored until Expire reclaims them: callers call Expire before every
// command so that no command sees one. Times are unix milliseconds.
//
// A Hash is owned by the holder of its shard's token, so it has no locks; it knows nothing of
// RESP or keys. Byte slices it returns are valid until the hash is next changed; byte slices
// passed in are copied and must not alias the hash's own memory.
package hash

import (
	"math"
	"unsafe"
)

// Limits are the conversion thresholds: hash-max-listpack-entries and -value.
type Limits struct {
	MaxEntries int
	MaxValue   int
}

// listpackSafety is Redis's LISTPACK_MAX_SAFETY_SIZE: a small hash never grows past it.
const listpackSafety = 1 << 30

// Hash is a hash value, in one of three layouts. It takes 16 bytes, as a keyspace may hold
// millions of small hashes: p is the first byte of a pointer-free buffer with its length and
// capacity, or the paged table when cap is isTable.
//
//   - empty (p nil) or a packed buffer (packed.go): the small encoding, "listpack";
//   - a flat table (flat.go), one buffer flagged flagFlat: a large hash ("hashtable") of up to
//     flatMax bytes and no field TTLs, so a hash of a few long values is one allocation;
//   - a paged table (table.go, arena.go): a large hash past flatMax, or one with field TTLs.
//
// A hash never goes back to a smaller layout, except that emptying it does not matter: the
// command layer deletes an empty hash.
type Hash struct {
	p   unsafe.Pointer
	len uint32
	cap uint32
}

const isTable = math.MaxUint32

// table returns the paged table, or nil when the hash is a buffer.
func (h *Hash) table() *table {
	if h.cap == isTable {
		return (*table)(h.p)
	}
	return nil
}

func (h *Hash) setTable(t *table) { h.p, h.len, h.cap = unsafe.Pointer(t), 0, isTable }

// buf returns the packed or flat buffer (nil when empty or a paged table).
func (h *Hash) buf() []byte {
	if h.p == nil || h.cap == isTable {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.cap)[:h.len]
}

func (h *Hash) setBuf(b []byte) {
	if cap(b) == 0 {
		h.p, h.len, h.cap = nil, 0, 0
		return
	}
	h.p, h.len, h.cap = unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)), uint32(cap(b))
}

// isFlat reports whether the hash is a flat table.
func (h *Hash) isFlat() bool {
	return h.cap != isTable && h.len > 0 && *(*byte)(h.p)&flagFlat != 0
}

// BufferCap returns the capacity of the hash's one buffer (packed or flat; 0 while empty) and
// true, or false for a paged table: what a small hash holds besides its header, exactly.
func (h *Hash) BufferCap() (int, bool) {
	if h.cap == isTable {
		return 0, false
	}
	return int(h.cap), true
}

// large reports whether the hash is in the large encoding, flat or paged.
func (h *Hash) large() bool { return h.cap == isTable || h.isFlat() }

// New returns an empty small hash.
func New() *Hash { return &Hash{} }

// NewFor returns an empty hash in the encoding that setting the field/value pairs args will need:
// a large one straight away when one of them is over the limits, sized for them, without a
// packed buffer to convert.
func NewFor(lim Limits, args [][]byte) *Hash {
	h := New()
	if exceeds(lim, args) {
		h.startLarge(args)
	}
	return h
}

// startLarge makes an empty hash large, sized for the field/value pairs args.
func (h *Hash) startLarge(args [][]byte) {
	n := len(args) / 2
	bytes := 0
	for i := 0; i+1 < len(args); i += 2 {
		bytes += recordLen(args[i], args[i+1], false)
	}
	if b, ok := newFlat(n, bytes); ok {
		h.setBuf(b)
		return
	}
	h.setTable(newTable(n))
}

// Len returns the number of fields, counting expired ones not reclaimed yet.
func (h *Hash) Len() int {
	switch t := h.table(); {
	case t != nil:
		return t.count
	case h.isFlat():
		return flat(h.buf()).count()
	}
	return readHeader(h.buf()).count
}

// Get returns field's value and whether it exists. A small hash rebuilds the value into
// scratch[:0] (growing it when it is too small), so a caller's stack buffer avoids allocating.
func (h *Hash) Get(field, scratch []byte) ([]byte, bool) {
	switch t := h.table(); {
	case t != nil:
		r, _, ok := t.lookup(field)
		return r.value, ok
	case h.isFlat():
		return flat(h.buf()).get(field)
	}
	v, _, ok := packedLookup(h.buf(), field, scratch, true)
	return v, ok
}

// Has reports whether field exists.
func (h *Hash) Has(field []byte) bool {
	switch t := h.table(); {
	case t != nil:
		_, _, ok := t.lookup(field)
		return ok
	case h.isFlat():
		_, ok := flat(h.buf()).get(field)
		return ok
	}
	_, _, ok := packedLookup(h.buf(), field, nil, false)
	return ok
}

// Set sets field to value and reports whether the field was added. An existing field keeps its
// TTL only with keepTTL (HINCRBY keeps it; HSET, which replaces the field, does not). A small
// hash becomes large when the field or value is longer than lim.MaxValue or the hash then has
// more than lim.MaxEntries fields, as Redis's hashTypeSet converts.
func (h *Hash) Set(field, value []byte, keepTTL bool, lim Limits) bool {
	if !h.large() && (len(field) > lim.MaxValue || len(value) > lim.MaxValue) {
		h.convert(1, recordLen(field, value, false))
	}
	switch t := h.table(); {
	case t != nil:
		return t.set(field, value, keepTTL)
	case h.isFlat():
		return h.flatSet(field, value)
	}
	b, added := packedSet(h.buf(), field, value, keepTTL)
	h.setBuf(b)
	if added && h.Len() > lim.MaxEntries {
		h.convert(0, 0)
	}
	return added
}

// ConvertFor makes a small hash large when one of args (the fields and values a command is
// about to set) is longer than lim.MaxValue, or when together they could grow it past the
// listpack safety limit: Redis's hashTypeTryConversion, which runs before anything is set.
func (h *Hash) ConvertFor(lim Limits, args [][]byte) {
	if h.large() {
		return
	}
	if h.Len() == 0 && exceeds(lim, args) {
		h.startLarge(args) // nothing to move: skip the listpack's rebuild
		return
	}
	sum := int(h.len)
	for _, a := range args {
		sum += len(a)
	}
	if exceeds(lim, args) || sum > listpackSafety {
		room := 0
		for i := 0; i+1 < len(args); i += 2 {
			room += recordLen(args[i], args[i+1], false)
		}
		h.convert(len(args)/2, room)
	}
}

// Reserve makes room in a small hash or a flat table for about extra more bytes of pairs, so
// that a command setting many fields grows the buffer once instead of once per field; Trim
// gives back what was not used.
func (h *Hash) Reserve(extra int) {
	b := h.buf()
	if h.table() != nil || cap(b)-len(b) >= extra {
		return
	}
	if h.isFlat() {
		if len(b)+extra <= flatMax {
			h.setBuf(flat(b).rebuild(flat(b).shift(), len(b)+extra))
		}
		return
	}
	nb := alloc(len(b) + extra)[:len(b)]
	copy(nb, b)
	h.setBuf(nb)
}

// Trim releases the unused capacity Reserve left in a small hash or a flat table.
func (h *Hash) Trim() {
	b := h.buf()
	if n := len(b); n > 0 && cap(b) > n+n/4+32 {
		nb := alloc(n)
		copy(nb, b)
		h.setBuf(nb)
	}
}

// exceeds reports whether one of args is longer than the listpack allows.
func exceeds(lim Limits, args [][]byte) bool {
	for _, a := range args {
		if len(a) > lim.MaxValue {
			return true
		}
	}
	return false
}

// Delete removes field and reports whether it existed.
func (h *Hash) Delete(field []byte) bool {
	switch t := h.table(); {
	case t != nil:
		return t.del(field)
	case h.isFlat():
		return h.flatDelete(field)
	}
	b, ok := packedDelete(h.buf(), field)
	h.setBuf(b)
	return ok
}

// TTL returns field's expiry time (0: none) and whether the field exists.
func (h *Hash) TTL(field []byte) (int64, bool) {
	switch t := h.table(); {
	case t != nil:
		return t.ttlOf(field)
	case h.isFlat():
		return 0, h.Has(field)
	}
	_, ttl, ok := packedLookup(h.buf(), field, nil, false)
	return ttl, ok
}

// SetTTL sets field's expiry time (0 makes it persistent) and reports whether it exists. A flat
// table holds no TTLs: it becomes a paged one first.
func (h *Hash) SetTTL(field []byte, at int64) bool {
	if h.isFlat() {
		if at == 0 || !h.Has(field) {
			return h.Has(field)
		}
		h.flatToTable()
	}
	if t := h.table(); t != nil {
		return t.setTTL(field, at)
	}
	if at != 0 {
		h.EnableTTL()
	} else if readHeader(h.buf()).flags&flagTTL == 0 {
		return h.Has(field)
	}
	b, ok := packedSetTTL(h.buf(), field, at)
	h.setBuf(b)
	return ok
}

// EnableTTL prepares a small hash for per-field expiry: its pairs get room for a TTL and OBJECT
// ENCODING says "listpackex" from now on, as in Redis once HEXPIRE touched the hash.
func (h *Hash) EnableTTL() {
	if !h.large() && readHeader(h.buf()).flags&flagTTL == 0 {
		h.setBuf(packedRebuild(h.buf(), 0, true))
	}
}

// Expire removes the fields whose expiry time is at or before now and returns how many.
func (h *Hash) Expire(now int64) int { return h.ExpireSome(now, math.MaxInt) }

// ExpireSome is Expire that stops after about max fields of a large hash, to bound the work of
// one step of active expiry; NextExpiry then still reports a time at or before now.
func (h *Hash) ExpireSome(now int64, max int) int {
	switch t := h.table(); {
	case t != nil:
		return t.expire(now, max)
	case h.isFlat():
		return 0
	}
	b, n := packedExpire(h.buf(), now)
	h.setBuf(b)
	return n
}

// NextExpiry returns a time at or before the earliest field expiry, or 0 when no field has one.
func (h *Hash) NextExpiry() int64 {
	switch t := h.table(); {
	case t != nil:
		return t.nextExpiry()
	case h.isFlat():
		return 0
	}
	return readHeader(h.buf()).minTTL
}

// Encoding names the encoding as Redis's OBJECT ENCODING does.
func (h *Hash) Encoding() string {
	switch {
	case h.large():
		return "hashtable"
	case readHeader(h.buf()).flags&flagTTL != 0:
		return "listpackex"
	}
	return "listpack"
}

// Clone returns a deep copy (keyspace.Cloner, for COPY).
func (h *Hash) Clone() any {
	c := &Hash{}
	if t := h.table(); t != nil {
		c.setTable(t.clone())
		return c
	}
	if b := h.buf(); len(b) > 0 {
		nb := alloc(len(b))
		copy(nb, b)
		c.setBuf(nb)
	}
	return c
}

// convert turns a small hash into a large one: flat when it fits and has no TTLs, with room for
// fields more fields of room bytes.
func (h *Hash) convert(fields, room int) {
	b := h.buf()
	hd := readHeader(b)
	if !hd.ttl() {
		size := 0
		var it packedIter
		for it.init(b); it.next(); {
			size += recordLen(it.f.bytes(), it.v.bytes(), false)
		}
		if fb, ok := newFlat(hd.count+fields, size+room); ok {
			for it.init(b); it.next(); {
				fb = flat(fb).append(it.f.bytes(), it.v.bytes(), hashOf(it.f.bytes()))
			}
			h.setBuf(fb)
			return
		}
	}
	t := newTable(hd.count)
	var it packedIter
	for it.init(b); it.next(); {
		f := it.f.bytes()
		h := hashOf(f)
		i, _ := t.find(f, h)
		t.insertAt(i, f, it.v.bytes(), it.ttl, h)
	}
	h.setTable(t)
}

// WarmMember loads what a lookup of field f reads first: the table's header and f's slot and the
// record it names, or the start of the packed encoding. A batch that looks up many fields calls
// it for all of them before running any, so that their cache misses overlap (command's warm.go);
// the result depends on every byte loaded so that the loads are not optimized away.
func (h *Hash) WarmMember(f []byte) uint64 {
	t := h.table()
	if t == nil {
		b := h.buf()
		switch {
		case len(b) == 0:
			return 0
		case h.isFlat():
			return flat(b).warm(f)
		}
		return uint64(b[0])
	}
	if len(t.slots) == 0 {
		return uint64(t.ttl.n)
	}
	s := t.slots[hashOf(f)&t.mask()]
	if s == 0 {
		return uint64(t.ttl.n)
	}
	return uint64(t.ttl.n) + uint64(t.arena.at(slotRef(s))[0])
}
