package ipset

import (
	"cmp"
	"math"
	"slices"
)

// Set is an IP set. The zero value is not usable; make one with New.
//
// Plain IPv4 hosts (no label, no expiry, not NOMATCH) are kept in hosts. Every other entry is a
// record, a slot of recs (an IPv6 record's start, and a range's end, in r6), found by its range (find: the
// pending maps, else the frozen index's covers of its start), expiring from a heap, and
// looked up through a frozen index per family (index.go) built over the records present when it
// was built, plus the records added since (pending): prefixes probed by prefix length (only the
// lengths present), other ranges through buckets of their top 16 bits. A merge (build.go) builds
// a new index off the shard's token once the pending part passes max(4096, base/8), and the next
// writer swaps it in. Removed records are only marked dead until an index that leaves them out
// is in, so no index points at a reused slot. Only records with an expiry pay for it: a heap
// entry and a position in hpos.
type Set struct {
	hosts  hosts
	recs   []rec             // by slot
	r6     []U128            // IPv6 records' starts at their rec's hi, a range's end after it
	live   []uint64          // bitmap of slots taken and not removed
	pend4  map[uint64]uint32 // live IPv4 records added since the index was built, by lo<<32 | hi
	bits4  keyBits           // a filter over pend4's keys, which decide's prefix probes pass first
	pend6  map[Range]uint32  // live IPv6 ones
	nrec   int               // live records
	free   [3][]uint32       // slots reusable now, by kind (an IPv6 slot keeps its r6 elements)
	dead   []uint32          // slots removed since the index was built
	idx    [2]*index
	pendC  []uint32            // CIDR records added since the index was built
	pendR  []uint32            // other records added since
	rbk    map[uint32][]uint32 // pendR by family and top 16 bits of each address (bucketKey), spanning <= rbkSpan buckets
	rwide  []uint32            // pendR spanning more
	lens   [2][3]uint64        // prefix lengths present in pendC, by family
	heap   []hent              // records with an expiry, a min-heap on at
	hpos   map[uint32]int32    // heap position of each slot with fExp
	labels labels
	base   int    // live records when the index was built
	job    *job   // the merge in flight, nil when none
	writes uint64 // changes made, for Settle
	quiet  uint64 // writes at Settle's last visit
}

// rec is a record's slot, 12 bytes: an IPv4 record's ends, or for an IPv6 one v6Mark | its
// prefix length (v6Span: not a prefix) in lo and the index of its start in r6 in hi (no IPv4
// range has lo > hi, and r6 stays below v6Mark), and m, its label id << lblShift | flags. An
// IPv6 prefix's end follows from its start and length; a range's end is the r6 element after
// its start. So an IPv6 prefix costs 12 + 16 bytes here, not 12 + 32. lo, hi and the r6
// elements are written only when the slot is taken, so merges read them off the token; m changes
// under the token.
type rec struct {
	lo, hi uint32
	m      uint32
}

// lblShift is where a rec's label id starts in m (id 0: none); ids stop at 1<<28.
const lblShift = 4

func (x *rec) label() uint32 { return x.m >> lblShift }

func (x *rec) setLabel(id uint32) { x.m = id<<lblShift | x.m&(1<<lblShift-1) }

// v6Mark is an IPv6 record's lo but for its low 8 bits: the prefix length, or v6Span.
const (
	v6Mark = ^uint32(0xff)
	v6Span = 0xff
)

// Slot kinds, for the free lists: a slot is reused only for a record with as many r6 elements.
const (
	kind4      = iota // IPv4
	kind6Pfx          // IPv6 prefix: one r6 element
	kind6Range        // other IPv6 range: two
)

func (x *rec) kind() int {
	switch {
	case !x.v6():
		return kind4
	case x.lo&0xff == v6Span:
		return kind6Range
	}
	return kind6Pfx
}

// kindOf is the kind of slot r takes, and for an IPv6 range its rec's lo.
func kindOf(r Range) (int, uint32) {
	if !r.V6 {
		return kind4, 0
	}
	if n, ok := r.Prefix(); ok {
		return kind6Pfx, v6Mark | uint32(n)
	}
	return kind6Range, v6Mark | v6Span
}

// hent is a heap entry: a slot with an expiry, at unix ms.
type hent struct {
	at   int64
	slot uint32
}

const (
	fDead    = 1 << iota
	fNoMatch // NOMATCH
	fCIDR    // the range is one prefix
	fExp     // has an expiry: in the heap, at hpos[slot]
)

func (x *rec) v6() bool { return x.lo > x.hi }

// view is what merges read of the slots (build.go): the records' ends, which are not rewritten
// while a slot is taken.
type view struct {
	recs []rec
	r6   []U128
}

// rng is slot i's range.
func (v view) rng(i uint32) Range {
	x := &v.recs[i]
	if x.lo > x.hi {
		lo := v.r6[x.hi]
		return Range{lo, v.hi6(x, lo), true}
	}
	return Range{U128{0, uint64(x.lo)}, U128{0, uint64(x.hi)}, false}
}

// hi6 is the end of IPv6 record x starting at lo.
func (v view) hi6(x *rec, lo U128) U128 {
	n := x.lo & 0xff
	if n == v6Span {
		return v.r6[x.hi+1]
	}
	hm := hostMask(int(n), 128)
	return U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}
}

// cmpOrder compares slots a and b byOrder.
func (v view) cmpOrder(a, b uint32) int {
	x, y := &v.recs[a], &v.recs[b]
	if x.lo <= x.hi && y.lo <= y.hi {
		switch {
		case x.lo != y.lo:
			return cmp.Compare(x.lo, y.lo)
		default:
			return cmp.Compare(y.hi, x.hi)
		}
	}
	return byOrder(v.rng(a), v.rng(b))
}

func (s *Set) view() view { return view{s.recs, s.r6} }

func (s *Set) rng(i uint32) Range { return s.view().rng(i) }

// alive reports whether slot i holds a record not removed and not expired at now.
func (s *Set) alive(i uint32, now int64) bool {
	f := s.recs[i].m
	return f&fDead == 0 && (f&fExp == 0 || s.heap[s.hpos[i]].at > now)
}

// expireOf is slot i's expiry, 0: none.
func (s *Set) expireOf(i uint32) int64 {
	if s.recs[i].m&fExp == 0 {
		return 0
	}
	return s.heap[s.hpos[i]].at
}

// Meta is what an entry carries besides its range.
type Meta struct {
	Label   []byte // nil: none
	Expire  int64  // unix ms, 0: none
	NoMatch bool
}

// New returns an empty set.
func New() *Set { return &Set{} }

// find returns the slot of the live record of range r: pending, or on the index's chain of
// covers of r.Lo (which holds every indexed record containing r.Lo).
func (s *Set) find(r Range) (uint32, bool) {
	if i, ok := s.pendGet(r); ok {
		return i, true
	}
	ix := s.idx[fam(r.V6)]
	switch {
	case ix == nil:
	case ix.n6 != nil:
		for n := ix.last6(r.Lo); n != noNode; n = ix.n6[n].parent {
			if sl := ix.n6[n].slot; s.rng(sl) == r {
				return sl, s.recs[sl].m&fDead == 0
			}
		}
	case ix.n4 != nil:
		lo, hi := uint32(r.Lo.Lo), uint32(r.Hi.Lo)
		for n := ix.last4(lo); n != noNode; n = ix.n4[n].parent {
			sl := ix.n4[n].slot
			if x := &s.recs[sl]; x.lo == lo && x.hi == hi {
				return sl, x.m&fDead == 0
			}
		}
	default:
		for n := ix.seg(r.Lo); n != noNode; {
			nd := ix.nodes[n]
			if s.rng(nd.slot) == r {
				return nd.slot, s.recs[nd.slot].m&fDead == 0
			}
			n = nd.parent
		}
	}
	return 0, false
}

// Len is the number of entries, expired ones not yet removed included.
func (s *Set) Len() int { return s.hosts.len() + s.nrec }

// HostLen is the number of plain IPv4 hosts.
func (s *Set) HostLen() int { return s.hosts.len() }

func plainHost(r Range, m Meta) bool {
	return !r.V6 && r.Lo == r.Hi && m.Label == nil && m.Expire == 0 && !m.NoMatch
}

// Has reports whether r is an entry (expired or not).
func (s *Set) Has(r Range) bool {
	if !r.V6 && r.Lo == r.Hi && s.hosts.has(uint32(r.Lo.Lo)) {
		return true
	}
	_, ok := s.find(r)
	return ok
}

// Add stores r with m. With nx an existing entry is left as it is; with xx a missing one is not
// added. It reports whether r was new and whether anything changed.
func (s *Set) Add(r Range, m Meta, nx, xx bool) (added, changed bool) {
	s.poll()
	i, found := s.find(r)
	if !nx && !xx && plainHost(r, m) {
		// one probe of the host index, not has and then insert (a bulk load of hosts is this)
		s.writes++
		if found {
			s.kill(i)
		}
		isNew := s.hosts.insert(uint32(r.Lo.Lo))
		s.maybeMerge()
		return !found && isNew, true
	}
	exists := found || !r.V6 && r.Lo == r.Hi && s.hosts.has(uint32(r.Lo.Lo))
	if exists && nx || !exists && xx {
		return false, false
	}
	s.writes++
	if plainHost(r, m) {
		if found {
			s.kill(i)
		}
		s.hosts.insert(uint32(r.Lo.Lo))
		s.maybeMerge()
		return !exists, true
	}
	if !r.V6 && r.Lo == r.Hi {
		s.hosts.remove(uint32(r.Lo.Lo))
	}
	if found {
		x := &s.recs[i]
		s.labels.release(x.label())
		x.setLabel(s.labels.intern(m.Label))
		x.m &^= fNoMatch
		if m.NoMatch {
			x.m |= fNoMatch
		}
		s.setExpire(i, m.Expire)
		return false, true
	}
	i = s.take(r)
	s.live[i/64] |= 1 << (i % 64)
	x := &s.recs[i]
	x.m = s.labels.intern(m.Label) << lblShift
	if m.NoMatch {
		x.m |= fNoMatch
	}
	if _, ok := r.Prefix(); ok {
		x.m |= fCIDR
	}
	s.addPending(i)
	s.nrec++
	s.setExpire(i, m.Expire)
	s.maybeMerge()
	return !exists, true
}

// take returns a slot holding r's ends: a free one of r's kind, else a new one.
func (s *Set) take(r Range) uint32 {
	k, lo6 := kindOf(r)
	free := &s.free[k]
	if n := len(*free); n > 0 {
		i := (*free)[n-1]
		*free = (*free)[:n-1]
		x := &s.recs[i]
		switch k {
		case kind4:
			x.lo, x.hi = uint32(r.Lo.Lo), uint32(r.Hi.Lo)
		case kind6Range:
			s.r6[x.hi+1] = r.Hi
			fallthrough
		default:
			x.lo = lo6
			s.r6[x.hi] = r.Lo
		}
		return i
	}
	if len(s.recs) >= math.MaxUint32-1 || len(s.r6) >= int(v6Mark)-2 {
		panic("ipset: too many entries")
	}
	x := rec{lo: uint32(r.Lo.Lo), hi: uint32(r.Hi.Lo), m: fDead}
	if r.V6 {
		x.lo, x.hi = lo6, uint32(len(s.r6))
		s.r6 = append(s.r6, r.Lo)
		if k == kind6Range {
			s.r6 = append(s.r6, r.Hi)
		}
	}
	s.recs = append(s.recs, x)
	i := uint32(len(s.recs) - 1)
	if int(i/64) >= len(s.live) {
		s.live = append(s.live, 0)
	}
	return i
}

// addPending puts slot i, a live record not in the index, in the pending part.
func (s *Set) addPending(i uint32) {
	r := s.rng(i)
	x := &s.recs[i]
	if x.m&fCIDR != 0 {
		s.pendC = append(s.pendC, i)
		n, _ := r.Prefix()
		s.lens[fam(r.V6)][n/64] |= 1 << (n % 64)
	} else {
		s.pendR = append(s.pendR, i)
		lo, hi := bucketKey(r.Lo, r.V6), bucketKey(r.Hi, r.V6)
		if hi-lo >= rbkSpan {
			s.rwide = append(s.rwide, i)
		} else {
			if s.rbk == nil {
				s.rbk = map[uint32][]uint32{}
			}
			for k := lo; k <= hi; k++ {
				s.rbk[k] = append(s.rbk[k], i)
			}
		}
	}
	if r.V6 {
		if s.pend6 == nil {
			s.pend6 = map[Range]uint32{}
		}
		s.pend6[r] = i
		return
	}
	if s.pend4 == nil {
		s.pend4 = map[uint64]uint32{}
	}
	s.pend4[key4(r)] = i
	s.bits4.add(key4(r), s.pend4)
}

// keyBits is a one-hash filter over a map's keys: may is false for most keys that are not in the
// map, so a lookup skips most probes of prefixes that are not pending (decide probes one per
// prefix length present, and most miss). A removed key's bit stays set, which costs only a probe;
// the filter is dropped with the map when the index is rebuilt. It is built once the map holds
// keyBitsFrom keys (a small set's few pending records do not pay 512 bytes for it), has at least
// 8 bits a key (under 12% false positives) and is rebuilt larger when the map outgrows it.
type keyBits struct {
	w     []uint64
	shift uint8 // 64 - log2(bits)
}

// keyBitsMin is the log2 of the smallest filter (512 bytes), built at keyBitsFrom keys.
const (
	keyBitsMin  = 12
	keyBitsFrom = 64
)

func (b *keyBits) slot(k uint64) uint64 { return (k * 0x9e3779b97f4a7c15) >> b.shift }

// add sets k's bit; m is the map k was just added to, from which a grown filter is rebuilt.
func (b *keyBits) add(k uint64, m map[uint64]uint32) {
	if b.w == nil && len(m) < keyBitsFrom {
		return // no filter yet; once built it takes every key, however far the map shrinks
	}
	if bits := len(b.w) * 64; len(m)*8 > bits {
		logb := keyBitsMin
		for 1<<logb < len(m)*8 {
			logb++
		}
		b.w, b.shift = make([]uint64, 1<<logb/64), uint8(64-logb)
		for k := range m {
			h := b.slot(k)
			b.w[h/64] |= 1 << (h % 64)
		}
		return
	}
	h := b.slot(k)
	b.w[h/64] |= 1 << (h % 64)
}

// may reports whether k may be in the map: false means it is not.
func (b *keyBits) may(k uint64) bool {
	if b.w == nil {
		return true // no filter yet
	}
	h := b.slot(k)
	return b.w[h/64]&(1<<(h%64)) != 0
}

// key4 is IPv4 range r's key in pend4. (A map keyed by Range costs 74-118 bytes an entry, this
// one 24-38: what a bulk load leaves pending while a merge runs counts.)
func key4(r Range) uint64 { return r.Lo.Lo<<32 | r.Hi.Lo }

// pendGet is the slot of the pending record of range r.
func (s *Set) pendGet(r Range) (uint32, bool) {
	if r.V6 {
		i, ok := s.pend6[r]
		return i, ok
	}
	if !s.bits4.may(key4(r)) {
		return 0, false
	}
	i, ok := s.pend4[key4(r)]
	return i, ok
}

// rbkSpan is the most buckets of 2^16 (IPv4) or 2^112 (IPv6) addresses a pending range is
// listed in; a wider one is in rwide, which every lookup scans.
const rbkSpan = 16

// bucketKey is the bucket of address a: its family and top 16 bits.
func bucketKey(a U128, v6 bool) uint32 {
	if v6 {
		return 1<<16 | uint32(a.Hi>>48)
	}
	return uint32(a.Lo >> 16)
}

func fam(v6 bool) int {
	if v6 {
		return 1
	}
	return 0
}

// Del removes the entry r and reports whether it was there.
func (s *Set) Del(r Range) bool {
	s.poll()
	if !r.V6 && r.Lo == r.Hi && s.hosts.remove(uint32(r.Lo.Lo)) {
		s.writes++
		s.maybeMerge()
		return true
	}
	i, ok := s.find(r)
	if !ok {
		return false
	}
	s.writes++
	s.kill(i)
	s.maybeMerge()
	return true
}

func (s *Set) kill(i uint32) {
	x := &s.recs[i]
	s.setExpire(i, 0)
	s.labels.release(x.label())
	if r := s.rng(i); r.V6 {
		if j, ok := s.pend6[r]; ok && j == i {
			delete(s.pend6, r)
		}
	} else if j, ok := s.pend4[key4(r)]; ok && j == i {
		delete(s.pend4, key4(r))
	}
	x.m = fDead
	s.live[i/64] &^= 1 << (i % 64)
	s.nrec--
	s.dead = append(s.dead, i)
}

// Match is the deciding entry of an address.
type Match struct {
	Range   Range
	Label   string // "" with HasLabel false: none
	HasLbl  bool
	Expire  int64
	NoMatch bool
}

// moreSpecific reports whether a decides over b: fewer addresses, tie: greater start.
func moreSpecific(a, b Range) bool {
	sa, sb := a.Hi.Sub(a.Lo), b.Hi.Sub(b.Lo)
	if c := sa.Cmp(sb); c != 0 {
		return c < 0
	}
	return b.Lo.Less(a.Lo)
}

// decide returns the slot of the record deciding a at now, or -1.
func (s *Set) decide(a U128, v6 bool, now int64) int64 {
	best := int64(-1)
	f := fam(v6)
	if ix := s.idx[f]; ix != nil {
		best = ix.lookup(s, a, now)
	}
	consider := func(i uint32) {
		if best < 0 || moreSpecific(s.rng(i), s.rng(uint32(best))) {
			best = int64(i)
		}
	}
	if l := s.lens[f]; l != [3]uint64{} {
		w := width(v6)
		for n := w; n >= 0; n-- {
			if l[n/64]&(1<<(n%64)) == 0 {
				continue
			}
			lo, hm := mask(a, n, w)
			if i, ok := s.pendGet(Range{lo, U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}, v6}); ok && s.alive(i, now) {
				consider(i)
				break
			}
		}
	}
	if len(s.pendR) == 0 {
		return best
	}
	scan := func(slots []uint32) {
		for _, i := range slots {
			r := s.rng(i)
			if r.V6 == v6 && !a.Less(r.Lo) && !r.Hi.Less(a) && s.alive(i, now) {
				consider(i)
			}
		}
	}
	if len(s.rbk) > 0 {
		scan(s.rbk[bucketKey(a, v6)])
	}
	scan(s.rwide)
	return best
}

// Lookup returns the entry deciding address a (of family v6) at now (unix ms).
func (s *Set) Lookup(a U128, v6 bool, now int64) (m Match, ok bool) {
	if !v6 && s.hosts.has(uint32(a.Lo)) {
		return Match{Range: Range{a, a, false}}, true
	}
	i := s.decide(a, v6, now)
	if i < 0 {
		return m, false
	}
	x := &s.recs[i]
	m = Match{Range: s.rng(uint32(i)), Expire: s.expireOf(uint32(i)), NoMatch: x.m&fNoMatch != 0}
	if id := x.label(); id != 0 {
		m.Label, m.HasLbl = s.labels.names[id], true
	}
	return m, true
}

// Contains reports whether a's deciding entry exists and is not NOMATCH.
func (s *Set) Contains(a U128, v6 bool, now int64) bool {
	if !v6 && s.hosts.has(uint32(a.Lo)) {
		return true
	}
	i := s.decide(a, v6, now)
	return i >= 0 && s.recs[i].m&fNoMatch == 0
}

// Entry is one entry as Each reports it.
type Entry struct {
	Range   Range
	Label   string
	HasLbl  bool
	Expire  int64
	NoMatch bool
}

// Entries returns every entry not expired at now (now 0: all), in order of family (IPv4
// first), start and end.
func (s *Set) Entries(now int64) []Entry {
	out := make([]Entry, 0, s.Len())
	for _, a := range s.hosts.sorted() {
		out = append(out, Entry{Range: Range{U128{0, uint64(a)}, U128{0, uint64(a)}, false}})
	}
	for i := range s.recs {
		x := &s.recs[i]
		if x.m&fDead != 0 || now != 0 && !s.alive(uint32(i), now) {
			continue
		}
		e := Entry{Range: s.rng(uint32(i)), Expire: s.expireOf(uint32(i)), NoMatch: x.m&fNoMatch != 0}
		if id := x.label(); id != 0 {
			e.Label, e.HasLbl = s.labels.names[id], true
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if a.Range.V6 != b.Range.V6 {
			if a.Range.V6 {
				return 1
			}
			return -1
		}
		if c := a.Range.Lo.Cmp(b.Range.Lo); c != 0 {
			return c
		}
		return a.Range.Hi.Cmp(b.Range.Hi)
	})
	return out
}

// Get returns entry r's meta.
func (s *Set) Get(r Range) (e Entry, ok bool) {
	if !r.V6 && r.Lo == r.Hi && s.hosts.has(uint32(r.Lo.Lo)) {
		return Entry{Range: r}, true
	}
	i, ok := s.find(r)
	if !ok {
		return e, false
	}
	x := &s.recs[i]
	e = Entry{Range: s.rng(i), Expire: s.expireOf(i), NoMatch: x.m&fNoMatch != 0}
	if id := x.label(); id != 0 {
		e.Label, e.HasLbl = s.labels.names[id], true
	}
	return e, true
}

// LiveLen is the number of entries not expired at now.
func (s *Set) LiveLen(now int64) int {
	n := s.Len()
	// Count heap entries expired: the heap is ordered, so visit only those at or before now.
	var walk func(p int)
	walk = func(p int) {
		for p < len(s.heap) && s.heap[p].at <= now {
			n--
			walk(2*p + 1)
			p = 2*p + 2
		}
	}
	walk(0)
	return n
}

// NextExpiry is the earliest expiry (unix ms), 0 when no entry has one.
func (s *Set) NextExpiry() int64 {
	if len(s.heap) == 0 {
		return 0
	}
	return s.heap[0].at
}

// Expire removes up to max entries (0: all) expired at now, calling fn with each; it returns
// how many it removed.
func (s *Set) Expire(now int64, max int, fn func(Range)) int {
	s.poll()
	n := 0
	for len(s.heap) > 0 && (max == 0 || n < max) {
		i := s.heap[0].slot
		if s.heap[0].at > now {
			break
		}
		r := s.rng(i)
		s.kill(i)
		n++
		if fn != nil {
			fn(r)
		}
	}
	if n > 0 {
		s.writes++
		s.maybeMerge()
	}
	return n
}

// Clone returns a copy sharing nothing.
func (s *Set) Clone() *Set {
	c := New()
	c.hosts = s.hosts.clone()
	for i := range s.recs {
		x := &s.recs[i]
		if x.m&fDead != 0 {
			continue
		}
		m := Meta{Expire: s.expireOf(uint32(i)), NoMatch: x.m&fNoMatch != 0}
		if id := x.label(); id != 0 {
			m.Label = []byte(s.labels.names[id])
		}
		c.Add(s.rng(uint32(i)), m, false, false)
	}
	c.Compact()
	return c
}

// MemoryUsage is about the bytes the set holds.
func (s *Set) MemoryUsage() int64 {
	n := int64(64) + s.hosts.memory()
	n += int64(cap(s.recs))*12 + int64(cap(s.r6))*16 + int64(cap(s.live))*8
	n += int64(len(s.pend4))*32 + int64(len(s.pend6))*96 // measured: 24-38 and 74-118 bytes an entry
	n += int64(len(s.bits4.w)) * 8
	n += int64(cap(s.free[0])+cap(s.free[1])+cap(s.free[2])+cap(s.dead)+cap(s.pendC)+cap(s.pendR)+cap(s.rwide)) * 4
	n += int64(cap(s.heap))*16 + int64(len(s.hpos))*16
	n += int64(len(s.rbk)) * 48
	for f := range s.idx {
		if ix := s.idx[f]; ix != nil {
			n += ix.memory()
		}
	}
	n += s.labels.memory()
	return n
}

// heap of slots by expiry, with each one's position in hpos.

func (s *Set) setExpire(i uint32, at int64) {
	x := &s.recs[i]
	switch has := x.m&fExp != 0; {
	case !has && at == 0:
		return
	case !has:
		x.m |= fExp
		if s.hpos == nil {
			s.hpos = map[uint32]int32{}
		}
		p := len(s.heap)
		s.heap = append(s.heap, hent{at, i})
		s.hpos[i] = int32(p)
		s.up(p)
	case at == 0:
		p := int(s.hpos[i])
		last := len(s.heap) - 1
		s.swap(p, last)
		s.heap = s.heap[:last]
		delete(s.hpos, i)
		x.m &^= fExp
		if p < last {
			s.down(p)
			s.up(p)
		}
	default:
		p := int(s.hpos[i])
		s.heap[p].at = at
		s.down(p)
		s.up(int(s.hpos[i]))
	}
}

func (s *Set) swap(a, b int) {
	s.heap[a], s.heap[b] = s.heap[b], s.heap[a]
	s.hpos[s.heap[a].slot] = int32(a)
	s.hpos[s.heap[b].slot] = int32(b)
}

func (s *Set) less(a, b int) bool { return s.heap[a].at < s.heap[b].at }

func (s *Set) up(p int) {
	for p > 0 {
		q := (p - 1) / 2
		if !s.less(p, q) {
			return
		}
		s.swap(p, q)
		p = q
	}
}

func (s *Set) down(p int) {
	for {
		l := 2*p + 1
		if l >= len(s.heap) {
			return
		}
		m := l
		if r := l + 1; r < len(s.heap) && s.less(r, l) {
			m = r
		}
		if !s.less(m, p) {
			return
		}
		s.swap(p, m)
		p = m
	}
}

// labels interns label strings; id 0 is none.
type labels struct {
	names []string
	refs  []uint32
	ids   map[string]uint32
	free  []uint32
	bytes int64
}

func (l *labels) intern(b []byte) uint32 {
	if b == nil {
		return 0
	}
	if id, ok := l.ids[string(b)]; ok {
		l.refs[id]++
		return id
	}
	if l.ids == nil {
		l.ids = map[string]uint32{}
		l.names, l.refs = []string{""}, []uint32{0}
	}
	name := string(b)
	var id uint32
	if n := len(l.free); n > 0 {
		id = l.free[n-1]
		l.free = l.free[:n-1]
		l.names[id], l.refs[id] = name, 1
	} else {
		id = uint32(len(l.names))
		if id >= 1<<(32-lblShift) {
			panic("ipset: too many labels")
		}
		l.names = append(l.names, name)
		l.refs = append(l.refs, 1)
	}
	l.ids[name] = id
	l.bytes += int64(len(name))
	return id
}

func (l *labels) release(id uint32) {
	if id == 0 {
		return
	}
	if l.refs[id]--; l.refs[id] == 0 {
		delete(l.ids, l.names[id])
		l.bytes -= int64(len(l.names[id]))
		l.names[id] = ""
		l.free = append(l.free, id)
	}
}

func (l *labels) memory() int64 {
	return l.bytes + int64(len(l.names))*(16+4+48)
}
