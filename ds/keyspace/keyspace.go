// Package keyspace is one database of one shard: a chained hash table from key to value with
// expiry in nanoseconds (exact milliseconds past 2262, see farexpire.go) that grows and shrinks
// incrementally, a SCAN cursor that survives resizes, random sampling and an expiry sweep.
//
// It is touched only by the holder of its shard's token, so it has no locks. It knows nothing of
// RESP or commands.
package keyspace

import (
	"hash/maphash"
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// Kind is the type of a value, as TYPE names it.
type Kind uint8

// The kinds of value. Later families add theirs here.
const (
	KindString Kind = iota + 1
	KindList
	KindHash
	KindSet
	KindZSet
	KindStream
	KindVectorSet // a vector set (src/command/vset.go); TYPE says "vectorset", as Redis 8's
	KindIPSet     // an IP set (src/command/ipsets.go); TYPE says "ipset"
	KindLLMCache  // an LLM response cache (src/command/llmcache*.go); TYPE says "llmcache"
	KindAgentMem  // an agent memory (src/command/mem*.go); TYPE says "agentmem"
	KindBudget    // a token budget (src/command/budget*.go); TYPE says "budget"
)

// Names of the kinds as TYPE replies them.
var kindNames = [...]string{"none", "string", "list", "hash", "set", "zset", "stream", "vectorset", "ipset", "llmcache", "agentmem", "budget"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "none"
}

// Entry is one key and its value. Callers may read and change Kind, Enc and Freq in place, and
// the value through Bytes/SetBytes (strings) or Obj/SetObj (collections), while they hold the
// shard's token; the key, hash and expiry belong to the Keyspace.
//
// An Entry is 64 bytes, one size class, with a key of up to inlineKey bytes stored inside it and
// the value as one pointer: the key's hash is not stored (it is recomputed where a bucket is
// needed again: Remove, resize), a string's length and capacity are 32-bit, and a collection is
// an untyped pointer whose type Kind names. Entries are carved from slabs (slab.go), so a key
// costs no allocation of its own besides its value's (see docs/decisions.md, "Entries").
type Entry struct {
	next   *Entry
	expire int64          // unix nanoseconds; 0 = persistent; farExpire = see Keyspace.far
	val    unsafe.Pointer // a string's bytes, or a collection (Kind says which type)
	vlen   uint32         // a string's length and capacity
	vcap   uint32
	long   unsafe.Pointer // the bytes of a key longer than inlineKey; nil for an inline key

	// Access is the last access time in unix seconds (OBJECT IDLETIME). Find and Upsert set it;
	// a caller of Add sets it itself.
	Access uint32
	// Kind is the value's type.
	Kind Kind
	// Enc is a per-family encoding hint (e.g. whether a string was last written by APPEND).
	Enc uint8
	// Freq is the LFU access counter (OBJECT FREQ); it starts at LFUInitVal and belongs to the
	// eviction policy, which updates it.
	Freq uint8
	klen uint8           // the key's length when inline; longKey when the key is in long
	kin  [inlineKey]byte // an inline key's bytes; a long key's length in the first 8
}

// inlineKey is the longest key stored inside its Entry; longKey marks an Entry whose key is not.
const (
	inlineKey = 16
	longKey   = 0xff
)

// MaxString is the longest string value an Entry holds (its length is 32-bit). Redis's own limit,
// proto-max-bulk-len (512 MB by default), is far below it; string commands check both.
const MaxString = math.MaxUint32

// newEntry returns an entry for a copy of key.
func (ks *Keyspace) newEntry(key []byte) *Entry {
	e := ks.alloc()
	e.Freq = LFUInitVal
	if len(key) <= inlineKey {
		e.klen = uint8(len(key))
		copy(e.kin[:], key)
		return e
	}
	e.klen = longKey
	e.long = unsafe.Pointer(unsafe.StringData(string(key)))
	*(*uint64)(unsafe.Pointer(&e.kin)) = uint64(len(key))
	return e
}

// Key returns the entry's key. It may point into the entry itself: it stays valid while the key
// is in the keyspace and, once removed, until the owner's epoch moves (see slab.go).
func (e *Entry) Key() string {
	if e.klen != longKey {
		return unsafe.String(&e.kin[0], int(e.klen))
	}
	return unsafe.String((*byte)(e.long), int(*(*uint64)(unsafe.Pointer(&e.kin))))
}

// is reports whether the entry's key is key.
func (e *Entry) is(key []byte) bool {
	if len(key) <= inlineKey {
		return int(e.klen) == len(key) && string(e.kin[:len(key)]) == string(key)
	}
	return e.klen == longKey && e.Key() == string(key)
}

// Bytes returns a string value: the entry owns it (it never aliases a read buffer); callers may
// change its bytes in place, and must store a new slice with SetBytes. nil means no string.
func (e *Entry) Bytes() []byte {
	if e.val == nil || e.Kind > KindString {
		return nil
	}
	return unsafe.Slice((*byte)(e.val), e.vcap)[:e.vlen]
}

// SetBytes stores b as the string value (nil clears it). The caller sets Kind; b must be at most
// MaxString bytes long and belongs to the entry from now on.
func (e *Entry) SetBytes(b []byte) {
	if uint64(cap(b)) > MaxString {
		b = b[:len(b):MaxString] // the capacity beyond MaxString is not needed to keep b
	}
	if b == nil {
		e.val, e.vlen, e.vcap = nil, 0, 0
		return
	}
	e.val, e.vlen, e.vcap = unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)), uint32(cap(b))
}

// Obj returns the collection value as a *T; T must be the type the entry's Kind stores (what the
// last SetObj gave), or the result is meaningless. For an inline kind (Inline) it points into e
// itself: valid while e holds the key, like e.
func Obj[T any](e *Entry) *T {
	if Inline(e.Kind) {
		return (*T)(unsafe.Pointer(&e.val))
	}
	return (*T)(e.val)
}

// SetObj stores the collection p as e's value of kind k, dropping any string value. An inline
// kind's header is copied into e: later changes must go through Obj(e), not p.
func SetObj[T any](e *Entry, k Kind, p *T) {
	if Inline(k) {
		if unsafe.Sizeof(*p) != inlineSize {
			panic("BUG: an inline collection's header is not 16 bytes")
		}
		e.Kind = k
		*(*T)(unsafe.Pointer(&e.val)) = *p
		return
	}
	e.Kind, e.val, e.vlen, e.vcap = k, unsafe.Pointer(p), 0, 0
}

// Inline reports whether values of kind k keep their 16-byte header (a pointer, a 32-bit length
// and a 32-bit capacity, like ds/hash.Hash and ds/zset.ZSet) in the Entry itself instead of
// behind its value pointer: a small hash or sorted set is then its entry and one pointer-free
// buffer, without a 16-byte object of its own for the allocator to round and the collector to
// mark (issue 14). Their accounted size is derived from the header (used.go).
func Inline(k Kind) bool { return k == KindHash || k == KindZSet }

// inlineSize is the size of an inline kind's header: the Entry's val, vlen and vcap.
const inlineSize = unsafe.Sizeof(unsafe.Pointer(nil)) + 8

// ValuePointer identifies the value: a string's bytes, a collection, or an inline kind's buffer
// or large layout. A value replaced by another has another, even in the same entry.
func (e *Entry) ValuePointer() unsafe.Pointer { return e.val }

// HasValue reports whether the entry holds a value (a string, even empty, or a collection).
func (e *Entry) HasValue() bool { return e.val != nil }

// LFUInitVal is a new key's LFU counter, as in Redis, so a new key is not evicted first.
const LFUInitVal = 5

// Cloner is implemented by collection values (Entry.Obj) so COPY can duplicate them; the clone
// shares no mutable state with the original.
type Cloner interface{ Clone() any }

// Encoder is implemented by collection values to name their encoding for OBJECT ENCODING.
type Encoder interface{ Encoding() string }

// TakeValue moves src's value (type, encoding, access data and payload) into dst, leaving src
// to be deleted; the key and expiry stay with each entry. RENAME and MOVE use it so a new value
// field is carried over in one place.
func (dst *Entry) TakeValue(src *Entry) {
	dst.Kind, dst.Enc, dst.Freq, dst.Access = src.Kind, src.Enc, src.Freq, src.Access
	dst.val, dst.vlen, dst.vcap = src.val, src.vlen, src.vcap
	src.val, src.vlen, src.vcap = nil, 0, 0
}

// ExpireAt returns the expiry time in unix nanoseconds, or 0 if the key is persistent. A time
// past the nanosecond range reads math.MaxInt64; Keyspace.ExpireMs has it exactly.
func (e *Entry) ExpireAt() int64 { return e.expire }

var seed = maphash.MakeSeed()

// Hash is the hash every keyspace uses; the pipeline uses its high bits to choose a shard so the
// low bits left to buckets stay independent of the shard choice.
func Hash(key []byte) uint64 { return maphash.Bytes(seed, key) }

// HashString is Hash for a string key.
func HashString(key string) uint64 { return maphash.String(seed, key) }

const minBuckets = 8

// Keyspace maps keys to entries. The zero value is not usable; call New.
//
// The table resizes incrementally (see startResize): during a resize old is the previous bucket
// array, whose buckets below moved have been emptied into buckets. A key of hash h is in
// old[h&(len(old)-1)] when old is set and that index is at least moved, and in
// buckets[h&mask()] otherwise (bucket).
type Keyspace struct {
	buckets  []*Entry
	old      []*Entry // the table being emptied into buckets; nil when no resize is under way
	moved    uint64   // old's buckets below moved are empty (moved into buckets)
	count    int
	volatile int              // entries with an expiry
	sweep    uint64           // expiry sweep cursor
	far      map[*Entry]int64 // exact unix ms of entries whose expire is farExpire; nil when none

	// Entry storage (slab.go): the rest of the current slab, its size, reusable entries, and
	// entries removed in epoch limboAt, not reusable before the epoch moves.
	slab    []Entry
	slabN   int
	free    *Entry
	limbo   *Entry
	limboAt uint64
	epoch   *uint64

	// used is what the entries account for (used.go); sink, when set, counts it too.
	used int64
	sink *atomic.Int64

	packed packedStats // packed strings (packed.go)

	// snap is the active snapshot's state (snapshot.go), nil when none: operations that change
	// a bucket emit it first, and the table does not resize.
	snap *Snap

	// OnExpire, when set, is called with each key removed because its time passed (lazily or by
	// the sweep), before the entry is unlinked; the write-effect feed propagates it as a DEL.
	OnExpire func(key string)
	// LFU, when set and on, makes every access update the entry's Freq (evict_lfu.go).
	LFU *LFU
	// OnNew, when set, is called with each key an insert creates (Upsert of an absent key, Add),
	// as Redis's dbAdd raises the "new" keyspace event.
	OnNew func(key string)
	// OnRemove, when set, is called with every entry leaving the keyspace (deleted, expired,
	// evicted, overwritten by a RENAME or a RESTORE), before it is unlinked; Clear calls it for
	// none. The key tag index drops the key's tags with it.
	OnRemove func(e *Entry)
	// Slots, when set (cluster mode), lists the entries by hash slot (slots.go); see Reindex.
	Slots *SlotIndex
}

// New returns an empty keyspace.
func New() *Keyspace { return &Keyspace{buckets: make([]*Entry, minBuckets)} }

// Len returns the number of keys, counting expired ones not yet reclaimed.
func (ks *Keyspace) Len() int { return ks.count }

// Volatile returns the number of keys with an expiry.
func (ks *Keyspace) Volatile() int { return ks.volatile }

func (ks *Keyspace) mask() uint64 { return uint64(len(ks.buckets) - 1) }

// bucket returns the head of the chain that holds (or would hold) a key of hash h.
func (ks *Keyspace) bucket(h uint64) **Entry {
	if ks.old != nil {
		if i := h & uint64(len(ks.old)-1); i >= ks.moved {
			return &ks.old[i]
		}
	}
	return &ks.buckets[h&ks.mask()]
}

// find returns the entry for key and the pointer that links to it, or nil.
func (ks *Keyspace) find(key []byte, h uint64) (e *Entry, link **Entry) {
	link = ks.bucket(h)
	for e = *link; e != nil; link, e = &e.next, e.next {
		if e.is(key) {
			return e, link
		}
	}
	return nil, nil
}

// Find returns the live entry for key, or nil, and records the access for OBJECT IDLETIME. An
// entry whose time has passed at now is deleted and reported missing.
func (ks *Keyspace) Find(key []byte, now int64) *Entry { return ks.FindHashed(key, Hash(key), now) }

// FindHashed is Find for a key whose Hash the caller already computed (to choose its shard).
func (ks *Keyspace) FindHashed(key []byte, h uint64, now int64) *Entry {
	e := ks.findQuiet(key, h, now)
	if e != nil {
		ks.access(e, now)
	}
	return e
}

// FindQuiet is Find without recording an access: for commands that inspect a key without using
// it (TYPE, TTL, EXISTS, OBJECT), which Redis runs with LOOKUP_NOTOUCH.
func (ks *Keyspace) FindQuiet(key []byte, now int64) *Entry {
	return ks.findQuiet(key, Hash(key), now)
}

func (ks *Keyspace) findQuiet(key []byte, h uint64, now int64) *Entry {
	e, link := ks.find(key, h)
	if e == nil {
		return nil
	}
	if ks.snap != nil {
		ks.snap.cow(h)
	}
	if e.expire != 0 && e.expire <= now {
		ks.expireLinked(e, link)
		return nil
	}
	return e
}

// touch records an access at now (unix ns). The store is skipped when the second is unchanged
// so a hot key's cache line is not dirtied on every read.
func (e *Entry) touch(now int64) {
	// Atomic (plain moves on amd64): shared readers on two cores may touch one entry at once.
	if s := uint32(now / 1e9); atomic.LoadUint32(&e.Access) != s {
		atomic.StoreUint32(&e.Access, s)
	}
}

// FindShared is Find for readers that run without the shard's token, beside each other but
// never beside a writer: it changes nothing but the access time, and reports an expired entry
// (which Find would delete) as expired, for the caller to look it up again holding the token.
// With LFU on an access changes the entry's counter, which only the token holder may, so a
// found entry is reported as expired too (the caller looks it up again holding the token).
func (ks *Keyspace) FindShared(key []byte, h uint64, now int64) (e *Entry, expired bool) {
	e, _ = ks.find(key, h)
	switch {
	case e == nil:
		return nil, false
	case e.expire != 0 && e.expire <= now, ks.LFU != nil && ks.LFU.On.Load():
		return nil, true
	}
	e.touch(now)
	return e, false
}

// Peek is Find without reclaiming an expired entry: for read paths that must not write.
func (ks *Keyspace) Peek(key []byte, now int64) *Entry {
	e, _ := ks.find(key, Hash(key))
	if e == nil || (e.expire != 0 && e.expire <= now) {
		return nil
	}
	return e
}

// Upsert returns the live entry for key, creating an empty one (Kind 0, persistent) when absent
// or expired. The key is copied only when an entry is created.
func (ks *Keyspace) Upsert(key []byte, now int64) (e *Entry, created bool) {
	return ks.UpsertHashed(key, Hash(key), now)
}

// UpsertHashed is Upsert for a key whose Hash the caller already computed.
func (ks *Keyspace) UpsertHashed(key []byte, h uint64, now int64) (e *Entry, created bool) {
	if ks.snap != nil {
		ks.snap.cow(h)
	}
	e, link := ks.find(key, h)
	if e != nil {
		if e.expire == 0 || e.expire > now {
			ks.access(e, now)
			return e, false
		}
		ks.expireLinked(e, link)
	}
	e = ks.newEntry(key)
	e.touch(now)
	ks.insert(e, h)
	return e, true
}

// Add inserts a new persistent entry for key; the caller must know key is absent (no live or
// expired entry) and sets Access.
func (ks *Keyspace) Add(key []byte) *Entry {
	e := ks.newEntry(key)
	ks.insert(e, Hash(key))
	return e
}

func (ks *Keyspace) insert(e *Entry, h uint64) {
	if ks.snap != nil {
		ks.snap.cow(h)
	}
	b := ks.bucket(h)
	e.next = *b
	*b = e
	ks.count++
	ks.rebalance()
	ks.Account(e.Footprint())
	if ks.Slots != nil {
		ks.Slots.add(e)
	}
	if ks.OnNew != nil {
		ks.OnNew(e.Key())
	}
}

// Delete removes key if present (expired or not) and reports whether it was live.
func (ks *Keyspace) Delete(key []byte, now int64) bool {
	h := Hash(key)
	e, link := ks.find(key, h)
	if e == nil {
		return false
	}
	if ks.snap != nil {
		ks.snap.cow(h)
	}
	live := e.expire == 0 || e.expire > now
	if !live {
		ks.expireLinked(e, link)
		return false
	}
	ks.unlink(e, link)
	return true
}

// Remove deletes the entry e, which must be in ks.
func (ks *Keyspace) Remove(e *Entry) {
	h := HashString(e.Key())
	if ks.snap != nil {
		ks.snap.cow(h)
	}
	link := ks.bucket(h)
	for *link != e {
		link = &(*link).next
	}
	ks.unlink(e, link)
}

func (ks *Keyspace) expireLinked(e *Entry, link **Entry) {
	if ks.OnExpire != nil {
		ks.OnExpire(e.Key())
	}
	ks.unlink(e, link)
}

func (ks *Keyspace) unlink(e *Entry, link **Entry) {
	if ks.OnRemove != nil {
		ks.OnRemove(e)
	}
	if ks.Slots != nil {
		ks.Slots.remove(e)
	}
	*link = e.next
	e.next = nil
	if e.expire != 0 {
		ks.volatile--
		if e.expire == farExpire {
			ks.dropFar(e)
		}
	}
	ks.count--
	ks.Account(-e.Footprint())
	ks.dropPacked(e)
	ks.rebalance()
	ks.retire(e)
}

// SetExpire sets e's expiry (unix ns; 0 = persist). Redis's commands use SetExpireMs, which
// also takes times past the nanosecond range.
func (ks *Keyspace) SetExpire(e *Entry, at int64) {
	if ks.snap != nil {
		ks.snap.cow(HashString(e.Key()))
	}
	if e.expire == farExpire {
		ks.dropFar(e)
	}
	switch {
	case e.expire == 0 && at != 0:
		ks.volatile++
	case e.expire != 0 && at == 0:
		ks.volatile--
	}
	e.expire = at
}

// Incremental resizing. startResize allocates the new bucket array and keeps the current one
// as old; from then on every insert and every removal (outside a snapshot) moves a few of old's
// buckets over (migrate), so no single command pays for rehashing the whole table: growing from
// n to 2n buckets starts at n keys and ends within n/migrateEntries inserts, long before the
// next growth is due. Lookups go to the one bucket that holds the key (bucket); Scan walks
// both arrays (see Scan); a snapshot freezes the move (snapshot.go). No new resize starts while
// one is under way.

// migrateEntries and migrateBuckets bound one step of the move: it stops once it moved at least
// migrateEntries entries or visited migrateBuckets buckets.
const (
	migrateEntries = 4
	migrateBuckets = 32
)

// rebalance runs after every insert and removal: outside a snapshot it moves the next buckets
// of a resize under way, or else starts one when the load is past 1 or under 1/10.
func (ks *Keyspace) rebalance() {
	if ks.snap != nil {
		return
	}
	if ks.old != nil {
		if ks.migrate(); ks.old != nil {
			return
		}
	}
	switch n := len(ks.buckets); {
	case ks.count > n:
		for n < ks.count { // a table that could not grow during a snapshot catches up
			n *= 2
		}
		ks.startResize(n)
	case n > minBuckets && ks.count*10 < n:
		ks.startResize(n / 2)
	}
}

// startResize begins moving the table into n buckets (a power of two).
func (ks *Keyspace) startResize(n int) {
	if n < minBuckets {
		n = minBuckets
	}
	ks.old, ks.moved = ks.buckets, 0
	ks.buckets = make([]*Entry, n)
	ks.migrate()
}

// migrate moves the next buckets of old into buckets, ending the resize when old is empty.
func (ks *Keyspace) migrate() {
	m := ks.mask()
	for n, visited := 0, 0; n < migrateEntries && visited < migrateBuckets; visited++ {
		i := ks.moved
		for e := ks.old[i]; e != nil; n++ {
			next := e.next
			b := &ks.buckets[HashString(e.Key())&m]
			e.next = *b
			*b = e
			e = next
		}
		ks.old[i] = nil
		if ks.moved++; ks.moved == uint64(len(ks.old)) {
			ks.old, ks.moved = nil, 0
			return
		}
	}
}

// Rehash finishes a resize under way at once: for tests and for callers about to walk the
// table with the move frozen for long.
func (ks *Keyspace) Rehash() {
	for ks.old != nil {
		ks.migrate()
	}
}

// each calls fn for every entry of the table (both arrays during a resize); fn must not add or
// delete entries.
func (ks *Keyspace) each(fn func(e *Entry)) {
	for _, t := range [2][]*Entry{ks.old, ks.buckets} {
		for _, b := range t {
			for e := b; e != nil; e = e.next {
				fn(e)
			}
		}
	}
}

// Clear removes every key. An active snapshot keeps the old table (snapshot.go).
func (ks *Keyspace) Clear() {
	if ks.snap != nil {
		ks.detachSnapshot()
	}
	ks.buckets, ks.old, ks.moved = make([]*Entry, minBuckets), nil, 0
	ks.count, ks.volatile, ks.sweep = 0, 0, 0
	ks.Account(-ks.used)
	ks.packed = packedStats{}
	ks.far = nil
	ks.slab, ks.slabN, ks.free, ks.limbo = nil, 0, nil, nil
	if ks.Slots != nil {
		ks.Slots.clear()
	}
}

// Scan calls fn for every entry of the bucket at cursor and returns the next cursor (0 when the
// scan is complete). Cursors walk bucket indexes in reverse-binary order, so an entry present
// for the whole scan is returned at least once even when the table grows or shrinks between
// calls (it may be returned more than once). Expired entries are passed to fn too; fn must not
// add or delete entries.
//
// During a resize the cursor counts in the smaller array: a call visits its bucket there and
// every bucket of the larger array whose low bits are the cursor's (those the small bucket
// splits into), from the cursor's own high bits on in reverse-binary order (a cursor returned
// while the larger array was the only one already covered the earlier ones); the next cursor
// is the small array's. Entries moved between the arrays are thus met wherever they are.
func (ks *Keyspace) Scan(cursor uint64, fn func(e *Entry)) uint64 {
	if ks.old == nil {
		m := ks.mask()
		for e := ks.buckets[cursor&m]; e != nil; e = e.next {
			fn(e)
		}
		return nextCursor(cursor, m)
	}
	small, large := ks.old, ks.buckets
	if len(small) > len(large) {
		small, large = large, small
	}
	ms, ml := uint64(len(small)-1), uint64(len(large)-1)
	for e := small[cursor&ms]; e != nil; e = e.next {
		fn(e)
	}
	for {
		for e := large[cursor&ml]; e != nil; e = e.next {
			fn(e)
		}
		// The reverse-binary increment under ml moves the bits large has beyond small first;
		// once they wrap to zero it has advanced the small cursor.
		if cursor = nextCursor(cursor, ml); cursor&(ml^ms) == 0 {
			return cursor
		}
	}
}

// nextCursor increments the high bits of cursor under mask m (reverse-binary increment).
func nextCursor(cursor, m uint64) uint64 {
	cursor |= ^m
	cursor = bits.Reverse64(cursor)
	cursor++
	return bits.Reverse64(cursor)
}

// Random returns a random live entry, or nil if there is none. r supplies random numbers.
func (ks *Keyspace) Random(now int64, r func() uint64) *Entry {
	for tries := 0; ks.count > 0 && tries < 100; tries++ {
		var b *Entry
		for b == nil {
			b = ks.randomBucket(r)
		}
		e := pickInChain(b, r)
		if e.expire == 0 || e.expire > now {
			return e
		}
		if ks.OnExpire != nil {
			ks.OnExpire(e.Key())
		}
		ks.Remove(e)
	}
	return nil
}

// randomBucket returns the head of a random bucket, nil when that bucket is empty. During a
// resize every bucket of either array not yet emptied is as likely.
func (ks *Keyspace) randomBucket(r func() uint64) *Entry {
	if ks.old == nil {
		return ks.buckets[r()&ks.mask()]
	}
	rest := uint64(len(ks.old)) - ks.moved
	i := r() % (rest + uint64(len(ks.buckets)))
	if i < rest {
		return ks.old[ks.moved+i]
	}
	return ks.buckets[i-rest]
}

// ExpireCycle reclaims expired keys, visiting at most budget entries from where the last cycle
// stopped. It returns how many keys it reclaimed.
func (ks *Keyspace) ExpireCycle(now int64, budget int) (reclaimed int) {
	reclaimed, _ = ks.Sweep(now, budget)
	return reclaimed
}

// Sweep is ExpireCycle that also returns how many entries with an expiry it met, so the caller
// can tell from the share that had expired whether another round is worth it. It stops early at
// the end of a full pass over the table.
func (ks *Keyspace) Sweep(now int64, budget int) (reclaimed, sampled int) {
	if ks.volatile == 0 {
		return 0, 0
	}
	var dead []*Entry
	var stack [32]*Entry
	for visited := 0; visited < budget; {
		dead = stack[:0]
		ks.sweep = ks.Scan(ks.sweep, func(e *Entry) {
			visited++
			if e.expire == 0 {
				return
			}
			sampled++
			if e.expire <= now && len(dead) < cap(dead) {
				dead = append(dead, e)
			}
		})
		for _, e := range dead {
			if ks.OnExpire != nil {
				ks.OnExpire(e.Key())
			}
			ks.Remove(e)
			reclaimed++
		}
		if ks.sweep == 0 || ks.volatile == 0 {
			break
		}
	}
	return reclaimed, sampled
}
