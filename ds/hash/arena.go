package hash

import (
	"encoding/binary"
)

// A large hash keeps its pairs as records packed into pages, and its table holds 8-byte
// references to them: no Go object per field, so a field costs its bytes plus about 12 bytes
// where Redis's dict spends a 24-byte entry and two allocations. Pages are at most 64 KiB, so a
// reference is a page number and a 16-bit offset; a record larger than a page gets a page of
// its own. A new page is a quarter of the pages' total (at most 64 KiB), or just what the record
// needs when that quarter would not hold two of it, so the room left unused stays within about
// a quarter of the arena, and growing
// never copies records: a copy would leave the old buffer as garbage, which Go's collector lets
// grow to the size of the live heap before it reclaims it. Records are never moved in place: a
// change appends a new record and leaves the old one dead, and the table compacts its arena when
// dead bytes outweigh live ones.
//
// A record is uvarint(len(field)<<1 | hasTTL), uvarint(len(value)), with hasTTL an 8-byte
// little-endian TTL (unix ms; 0: none), then the field and the value.

const (
	pageShift    = 16
	maxPageSize  = 1 << pageShift
	compactAfter = 4096 // dead bytes below this are never worth a compaction
	smallArena   = 8 << 10
)

// arena holds records in pages.
type arena struct {
	pages [][]byte
	total int // capacity of all pages
	live  int // bytes of live records
	hint  int // bytes expected soon: sizes the next page
}

// record is a decoded record.
type record struct {
	field, value []byte
	ttlAt        int // offset of the TTL in the page, or -1
	size         int
}

func (a *arena) at(ref uint64) []byte { return a.pages[ref>>pageShift][ref&(maxPageSize-1):] }

// field returns the field of the record at ref: the hot path of a lookup.
func (a *arena) field(ref uint64) []byte {
	b := a.at(ref)
	h, pos := readUvarint(b, 0)
	_, pos = readUvarint(b, pos)
	if h&1 != 0 {
		pos += 8
	}
	return b[pos : pos+int(h>>1)]
}

func (a *arena) record(ref uint64) record {
	b := a.at(ref)
	h, pos := readUvarint(b, 0)
	vl, pos := readUvarint(b, pos)
	r := record{ttlAt: -1}
	if h&1 != 0 {
		r.ttlAt = int(ref&(maxPageSize-1)) + pos
		pos += 8
	}
	fl := int(h >> 1)
	r.field = b[pos : pos+fl]
	r.value = b[pos+fl : pos+fl+int(vl)]
	r.size = pos + fl + int(vl)
	return r
}

// ttl returns the TTL of a decoded record (0: none).
func (a *arena) ttl(ref uint64, r *record) int64 {
	if r.ttlAt < 0 {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(a.pages[ref>>pageShift][r.ttlAt:]))
}

// setTTL overwrites the TTL of a record that has room for one.
func (a *arena) setTTL(ref uint64, r *record, at int64) {
	binary.LittleEndian.PutUint64(a.pages[ref>>pageShift][r.ttlAt:], uint64(at))
}

func recordLen(f, v []byte, withTTL bool) int {
	n := uvarintLen(uint64(len(f))<<1) + uvarintLen(uint64(len(v))) + len(f) + len(v)
	if withTTL {
		n += 8
	}
	return n
}

// add stores a record and returns its reference. A TTL of 0 stores no TTL unless withTTL.
func (a *arena) add(f, v []byte, ttl int64, withTTL bool) uint64 {
	withTTL = withTTL || ttl != 0
	n := recordLen(f, v, withTTL)
	ref, b := a.alloc(n)
	putRecord(b, f, v, ttl, withTTL)
	return ref
}

// putRecord writes the record (f, v, ttl) to dst, which has room for it (recordLen).
func putRecord(dst, f, v []byte, ttl int64, withTTL bool) {
	h := uint64(len(f)) << 1
	if withTTL {
		h |= 1
	}
	pos := binary.PutUvarint(dst, h)
	pos += binary.PutUvarint(dst[pos:], uint64(len(v)))
	if withTTL {
		binary.LittleEndian.PutUint64(dst[pos:], uint64(ttl))
		pos += 8
	}
	pos += copy(dst[pos:], f)
	copy(dst[pos:], v)
}

// alloc reserves n bytes at the end of the last page, or in a new one.
func (a *arena) alloc(n int) (uint64, []byte) {
	last := len(a.pages) - 1
	if last < 0 || len(a.pages[last])+n > cap(a.pages[last]) {
		size := min(max(a.total/4, a.hint), maxPageSize)
		if size < 2*n || a.total+a.hint < smallArena {
			size = n // no room left unused: the arena is small, or a quarter holds one record
		}
		p := slices0(size)
		if len(a.pages) == cap(a.pages) { // by half, not double: small tables have a page a record
			a.pages = append(make([][]byte, 0, len(a.pages)+max(len(a.pages)/2, 2)), a.pages...)
		}
		a.pages = append(a.pages, p)
		a.total += cap(p)
		last++
	}
	p := a.pages[last]
	off := len(p)
	a.pages[last] = p[:off+n]
	a.live += n
	a.hint = max(a.hint-n, 0)
	return uint64(last)<<pageShift | uint64(off), a.pages[last][off : off+n]
}

// slices0 returns an empty buffer with room for n bytes (the allocator's size class).
func slices0(n int) []byte { return alloc(n)[:0] }

// free marks the bytes of the record at ref dead. The last record of the last page is taken
// off it, so that a field set and deleted again and again reuses its room.
func (a *arena) free(ref uint64, size int) {
	a.live -= size
	last := len(a.pages) - 1
	if p := a.pages[last]; ref>>pageShift == uint64(last) && int(ref&(maxPageSize-1))+size == len(p) {
		a.pages[last] = p[:len(p)-size]
	}
}

// wasteful reports whether dead bytes outweigh live ones enough to compact. The last page's room
// yet to be used is not dead while it is growth's slack (no more than what is live); room left
// by freeing a large last record (free gives it back to the page) is, or a hash that dropped its
// one big field would keep that field's bytes for good.
func (a *arena) wasteful() bool {
	dead := a.total - a.live
	if last := len(a.pages) - 1; last >= 0 {
		if room := cap(a.pages[last]) - len(a.pages[last]); room <= a.live {
			dead -= room
		}
	}
	return dead > compactAfter && dead > a.live
}
