// Package hash is the hash value: fields mapped to values, each field optionally expiring.
//
// Like Redis, a hash has two encodings. A small one is a single front-coded buffer scanned
// linearly (packed.go), which OBJECT ENCODING calls "listpack" ("listpackex" once per-field
// expiry was used on it, as Redis 7.4 does). It becomes a large one, an open-addressing table
// over a record arena (table.go, arena.go) called "hashtable", when it exceeds the
// hash-max-listpack-entries or hash-max-listpack-value limits, and never goes back.
//
// Expired fields stay stored until Expire reclaims them: callers call Expire before every
// command so that no command sees one. Times are unix milliseconds.
//
// A Hash is owned by the holder of its shard's token, so it has no locks; it knows nothing of
// RESP or keys. Byte slices it returns are valid until the hash is next changed; byte slices
// passed in are copied and must not alias the hash's own memory.
package hash

import "math"

// Limits are the conversion thresholds: hash-max-listpack-entries and -value.
type Limits struct {
	MaxEntries int
	MaxValue   int
}

// listpackSafety is Redis's LISTPACK_MAX_SAFETY_SIZE: a small hash never grows past it.
const listpackSafety = 1 << 30

// Hash is a hash value. Exactly one of its encodings is in use.
type Hash struct {
	lp []byte // small encoding (packed.go); nil once t is set
	t  *table
}

// New returns an empty small hash.
func New() *Hash { return &Hash{lp: newPacked()} }

// NewFor returns an empty hash in the encoding that setting the field/value pairs args will need:
// a table straight away when one of them is over the limits, without a packed buffer to convert.
func NewFor(lim Limits, args [][]byte) *Hash {
	if exceeds(lim, args) {
		return &Hash{t: newTable(len(args) / 2)}
	}
	return New()
}

// Len returns the number of fields, counting expired ones not reclaimed yet.
func (h *Hash) Len() int {
	if h.t != nil {
		return h.t.count
	}
	return readHeader(h.lp).count
}

// Get returns field's value and whether it exists. A small hash rebuilds the value into
// scratch[:0] (growing it when it is too small), so a caller's stack buffer avoids allocating.
func (h *Hash) Get(field, scratch []byte) ([]byte, bool) {
	if h.t != nil {
		r, _, ok := h.t.lookup(field)
		return r.value, ok
	}
	v, _, ok := packedLookup(h.lp, field, scratch, true)
	return v, ok
}

// Has reports whether field exists.
func (h *Hash) Has(field []byte) bool {
	if h.t != nil {
		_, _, ok := h.t.lookup(field)
		return ok
	}
	_, _, ok := packedLookup(h.lp, field, nil, false)
	return ok
}

// Set sets field to value and reports whether the field was added. An existing field keeps its
// TTL only with keepTTL (HINCRBY keeps it; HSET, which replaces the field, does not). A small
// hash becomes large when the field or value is longer than lim.MaxValue or the hash then has
// more than lim.MaxEntries fields, as Redis's hashTypeSet converts.
func (h *Hash) Set(field, value []byte, keepTTL bool, lim Limits) bool {
	if h.t == nil && (len(field) > lim.MaxValue || len(value) > lim.MaxValue) {
		h.convert()
	}
	if h.t != nil {
		return h.t.set(field, value, keepTTL)
	}
	var added bool
	h.lp, added = packedSet(h.lp, field, value, keepTTL)
	if added && h.Len() > lim.MaxEntries {
		h.convert()
	}
	return added
}

// ConvertFor makes a small hash large when one of args (the fields and values a command is
// about to set) is longer than lim.MaxValue, or when together they could grow it past the
// listpack safety limit: Redis's hashTypeTryConversion, which runs before anything is set.
func (h *Hash) ConvertFor(lim Limits, args [][]byte) {
	if h.t != nil {
		return
	}
	if h.Len() == 0 && exceeds(lim, args) {
		h.lp, h.t = nil, newTable(len(args)/2) // nothing to move: skip the listpack's rebuild
		return
	}
	sum := len(h.lp)
	for _, a := range args {
		if len(a) > lim.MaxValue {
			h.convert()
			return
		}
		sum += len(a)
	}
	if sum > listpackSafety {
		h.convert()
	}
}

// Reserve makes room in a small hash for about extra more bytes of pairs, so that a command setting
// many fields grows the buffer once instead of once per field; Trim gives back what was not used.
func (h *Hash) Reserve(extra int) {
	if h.t == nil && cap(h.lp)-len(h.lp) < extra {
		nb := alloc(len(h.lp) + extra)[:len(h.lp)]
		copy(nb, h.lp)
		h.lp = nb
	}
}

// Trim releases the unused capacity Reserve left in a small hash.
func (h *Hash) Trim() {
	if n := len(h.lp); h.t == nil && cap(h.lp) > n+n/4+32 {
		nb := alloc(n)
		copy(nb, h.lp)
		h.lp = nb
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
	if h.t != nil {
		return h.t.del(field)
	}
	var ok bool
	h.lp, ok = packedDelete(h.lp, field)
	return ok
}

// TTL returns field's expiry time (0: none) and whether the field exists.
func (h *Hash) TTL(field []byte) (int64, bool) {
	if h.t != nil {
		return h.t.ttlOf(field)
	}
	_, ttl, ok := packedLookup(h.lp, field, nil, false)
	return ttl, ok
}

// SetTTL sets field's expiry time (0 makes it persistent) and reports whether it exists.
func (h *Hash) SetTTL(field []byte, at int64) bool {
	if h.t != nil {
		return h.t.setTTL(field, at)
	}
	if at != 0 {
		h.EnableTTL()
	} else if readHeader(h.lp).flags&flagTTL == 0 {
		return h.Has(field)
	}
	var ok bool
	h.lp, ok = packedSetTTL(h.lp, field, at)
	return ok
}

// EnableTTL prepares a small hash for per-field expiry: its pairs get room for a TTL and OBJECT
// ENCODING says "listpackex" from now on, as in Redis once HEXPIRE touched the hash.
func (h *Hash) EnableTTL() {
	if h.t == nil && readHeader(h.lp).flags&flagTTL == 0 {
		h.lp = packedRebuild(h.lp, 0, true)
	}
}

// Expire removes the fields whose expiry time is at or before now and returns how many.
func (h *Hash) Expire(now int64) int { return h.ExpireSome(now, math.MaxInt) }

// ExpireSome is Expire that stops after about max fields of a large hash, to bound the work of
// one step of active expiry; NextExpiry then still reports a time at or before now.
func (h *Hash) ExpireSome(now int64, max int) int {
	if h.t != nil {
		return h.t.expire(now, max)
	}
	var n int
	h.lp, n = packedExpire(h.lp, now)
	return n
}

// NextExpiry returns a time at or before the earliest field expiry, or 0 when no field has one.
func (h *Hash) NextExpiry() int64 {
	if h.t != nil {
		return h.t.nextExpiry()
	}
	return readHeader(h.lp).minTTL
}

// Encoding names the encoding as Redis's OBJECT ENCODING does.
func (h *Hash) Encoding() string {
	switch {
	case h.t != nil:
		return "hashtable"
	case readHeader(h.lp).flags&flagTTL != 0:
		return "listpackex"
	}
	return "listpack"
}

// Clone returns a deep copy (keyspace.Cloner, for COPY).
func (h *Hash) Clone() any {
	if h.t != nil {
		return &Hash{t: h.t.clone()}
	}
	lp := alloc(len(h.lp))
	copy(lp, h.lp)
	return &Hash{lp: lp}
}

// convert turns a small hash into a large one.
func (h *Hash) convert() {
	t := newTable(h.Len())
	var it packedIter
	for it.init(h.lp); it.next(); {
		f := it.f.bytes()
		h := hashOf(f)
		i, _ := t.find(f, h)
		t.insertAt(i, f, it.v.bytes(), it.ttl, h)
	}
	h.lp, h.t = nil, t
}

// WarmMember loads what a lookup of field f reads first: the table's header and f's slot and the
// record it names, or the start of the packed encoding. A batch that looks up many fields calls
// it for all of them before running any, so that their cache misses overlap (command's warm.go);
// the result depends on every byte loaded so that the loads are not optimized away.
func (h *Hash) WarmMember(f []byte) uint64 {
	t := h.t
	if t == nil {
		if len(h.lp) == 0 {
			return 0
		}
		return uint64(h.lp[0])
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
