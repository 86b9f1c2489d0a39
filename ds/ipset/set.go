package ipset

import (
	"math"
	"slices"
)

// Set is an IP set. The zero value is not usable; make one with New.
//
// Plain IPv4 hosts (no label, no expiry, not NOMATCH) are kept in hosts. Every other entry is a
// record in recs, found by its range (find: the pending map, else a binary search of the
// frozen index's order), expiring from a heap, and looked up through a
// frozen index per family (index.go) built over the records present when it was built, plus the
// records added since (pending), which lookups probe by prefix length (CIDRs) or scan (other
// ranges) until a writer rebuilds the index (when the pending part passes max(64, n/8) CIDRs
// and removals, or max(32, n/64) other ranges: a rebuild is O(n log n), so the amortized cost of
// an add stays O(log n), and a lookup probes few lengths and scans few ranges). Removed records are only marked dead until then, so
// the index never points at a reused slot.
type Set struct {
	hosts  hosts
	recs   []rec
	pend   map[Range]uint32 // live records added since the index was built
	nrec   int              // live records
	free   []uint32         // slots reusable now
	dead   []uint32         // slots removed since the index was built
	idx    [2]*index
	pendC  []uint32 // CIDR records added since the index was built
	pendR  []uint32 // other records added since
	lens   [2][3]uint64
	heap   []uint32 // slots with an expiry, a min-heap on rec.expire
	labels labels
}

type rec struct {
	r      Range
	expire int64  // unix ms, 0: none
	label  uint32 // 0: none
	hpos   int32  // position in the heap, -1 when none
	flags  uint8
	plen   uint8 // prefix length when fCIDR
}

const (
	fDead    = 1 << iota
	fNoMatch // NOMATCH
	fCIDR    // the range is one prefix
)

// Meta is what an entry carries besides its range.
type Meta struct {
	Label   []byte // nil: none
	Expire  int64  // unix ms, 0: none
	NoMatch bool
}

// New returns an empty set.
func New() *Set { return &Set{} }

// find returns the slot of the live record of range r.
func (s *Set) find(r Range) (uint32, bool) {
	if i, ok := s.pend[r]; ok {
		return i, true
	}
	if ix := s.idx[fam(r.V6)]; ix != nil {
		o := ix.order
		lo, hi := 0, len(o)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			x := &s.recs[o[m]].r
			if x.Lo.Less(r.Lo) || x.Lo == r.Lo && x.Hi.Less(r.Hi) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < len(o) {
			x := &s.recs[o[lo]]
			if x.r == r && x.flags&fDead == 0 {
				return o[lo], true
			}
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
	exists := s.Has(r)
	if exists && nx || !exists && xx {
		return false, false
	}
	if plainHost(r, m) {
		if i, ok := s.find(r); ok {
			s.kill(i)
		}
		s.hosts.insert(uint32(r.Lo.Lo))
		return !exists, true
	}
	if !r.V6 && r.Lo == r.Hi {
		s.hosts.remove(uint32(r.Lo.Lo))
	}
	if i, ok := s.find(r); ok {
		x := &s.recs[i]
		s.labels.release(x.label)
		x.label = s.labels.intern(m.Label)
		x.flags &^= fNoMatch
		if m.NoMatch {
			x.flags |= fNoMatch
		}
		s.setExpire(i, m.Expire)
		return false, true
	}
	var i uint32
	if n := len(s.free); n > 0 {
		i = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		if len(s.recs) >= math.MaxUint32-1 {
			panic("ipset: too many entries")
		}
		s.recs = append(s.recs, rec{})
		i = uint32(len(s.recs) - 1)
	}
	x := rec{r: r, label: s.labels.intern(m.Label), hpos: -1}
	if m.NoMatch {
		x.flags |= fNoMatch
	}
	if n, ok := r.Prefix(); ok {
		x.flags |= fCIDR
		x.plen = uint8(n)
		s.pendC = append(s.pendC, i)
		f := fam(r.V6)
		s.lens[f][n/64] |= 1 << (n % 64)
	} else {
		s.pendR = append(s.pendR, i)
	}
	s.recs[i] = x
	if s.pend == nil {
		s.pend = map[Range]uint32{}
	}
	s.pend[r] = i
	s.nrec++
	s.setExpire(i, m.Expire)
	s.maybeRebuild()
	return !exists, true
}

func fam(v6 bool) int {
	if v6 {
		return 1
	}
	return 0
}

// Del removes the entry r and reports whether it was there.
func (s *Set) Del(r Range) bool {
	if !r.V6 && r.Lo == r.Hi && s.hosts.remove(uint32(r.Lo.Lo)) {
		return true
	}
	i, ok := s.find(r)
	if !ok {
		return false
	}
	s.kill(i)
	s.maybeRebuild()
	return true
}

func (s *Set) kill(i uint32) {
	x := &s.recs[i]
	s.setExpire(i, 0)
	s.labels.release(x.label)
	delete(s.pend, x.r)
	x.label = 0
	x.flags |= fDead
	s.nrec--
	s.dead = append(s.dead, i)
}

func (s *Set) maybeRebuild() {
	if len(s.pendC)+len(s.dead) > max(64, s.nrec/8) || len(s.pendR) > max(32, s.nrec/64) {
		s.Rebuild()
	}
}

// Rebuild builds the frozen index over every record and empties the pending parts. Writers
// call it (Add and Del do when the pending part is large); it changes no answer.
func (s *Set) Rebuild() {
	for _, i := range s.dead {
		s.recs[i] = rec{flags: fDead, hpos: -1}
	}
	s.free = append(s.free, s.dead...)
	s.dead = s.dead[:0]
	s.idx[0] = buildIndex(s.recs, false)
	s.idx[1] = buildIndex(s.recs, true)
	s.pendC, s.pendR, s.pend = s.pendC[:0], s.pendR[:0], nil
	s.lens = [2][3]uint64{}
}

// Compact merges every pending part (hosts' too); it changes no answer.
func (s *Set) Compact() {
	if len(s.hosts.add)+len(s.hosts.del) > 0 {
		s.hosts.merge()
	}
	if len(s.pendC)+len(s.pendR)+len(s.dead) > 0 {
		s.Rebuild()
	}
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

func (x *rec) live(now int64) bool { return x.flags&fDead == 0 && (x.expire == 0 || x.expire > now) }

// decide returns the slot of the record deciding a at now, or -1.
func (s *Set) decide(a U128, v6 bool, now int64) int64 {
	best := int64(-1)
	f := fam(v6)
	if ix := s.idx[f]; ix != nil {
		best = ix.lookup(s.recs, a, now)
	}
	consider := func(i uint32) {
		if best < 0 || moreSpecific(s.recs[i].r, s.recs[best].r) {
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
			if i, ok := s.pend[Range{lo, U128{lo.Hi | hm.Hi, lo.Lo | hm.Lo}, v6}]; ok && s.recs[i].live(now) {
				consider(i)
				break
			}
		}
	}
	for _, i := range s.pendR {
		x := &s.recs[i]
		if x.r.V6 == v6 && x.live(now) && !a.Less(x.r.Lo) && !x.r.Hi.Less(a) {
			consider(i)
		}
	}
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
	m = Match{Range: x.r, Expire: x.expire, NoMatch: x.flags&fNoMatch != 0}
	if x.label != 0 {
		m.Label, m.HasLbl = s.labels.names[x.label], true
	}
	return m, true
}

// Contains reports whether a's deciding entry exists and is not NOMATCH.
func (s *Set) Contains(a U128, v6 bool, now int64) bool {
	if !v6 && s.hosts.has(uint32(a.Lo)) {
		return true
	}
	i := s.decide(a, v6, now)
	return i >= 0 && s.recs[i].flags&fNoMatch == 0
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
		if x.flags&fDead != 0 || now != 0 && !x.live(now) {
			continue
		}
		e := Entry{Range: x.r, Expire: x.expire, NoMatch: x.flags&fNoMatch != 0}
		if x.label != 0 {
			e.Label, e.HasLbl = s.labels.names[x.label], true
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
	e = Entry{Range: x.r, Expire: x.expire, NoMatch: x.flags&fNoMatch != 0}
	if x.label != 0 {
		e.Label, e.HasLbl = s.labels.names[x.label], true
	}
	return e, true
}

// LiveLen is the number of entries not expired at now.
func (s *Set) LiveLen(now int64) int {
	n := s.Len()
	// Count heap entries expired: the heap is ordered, so visit only those at or before now.
	var walk func(p int)
	walk = func(p int) {
		for p < len(s.heap) && s.recs[s.heap[p]].expire <= now {
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
	return s.recs[s.heap[0]].expire
}

// Expire removes up to max entries (0: all) expired at now, calling fn with each; it returns
// how many it removed.
func (s *Set) Expire(now int64, max int, fn func(Range)) int {
	n := 0
	for len(s.heap) > 0 && (max == 0 || n < max) {
		i := s.heap[0]
		x := &s.recs[i]
		if x.expire > now {
			break
		}
		r := x.r
		s.kill(i)
		n++
		if fn != nil {
			fn(r)
		}
	}
	if n > 0 {
		s.maybeRebuild()
	}
	return n
}

// Clone returns a copy sharing nothing.
func (s *Set) Clone() *Set {
	c := New()
	c.hosts = s.hosts.clone()
	for i := range s.recs {
		x := &s.recs[i]
		if x.flags&fDead != 0 {
			continue
		}
		m := Meta{Expire: x.expire, NoMatch: x.flags&fNoMatch != 0}
		if x.label != 0 {
			m.Label = []byte(s.labels.names[x.label])
		}
		c.Add(x.r, m, false, false)
	}
	c.Rebuild()
	return c
}

// MemoryUsage is about the bytes the set holds.
func (s *Set) MemoryUsage() int64 {
	n := int64(64) + s.hosts.memory()
	n += int64(cap(s.recs)) * 64 // records (56 bytes) with slack
	n += int64(len(s.pend)) * 64 // a map slot: 33-byte key, 4-byte value, overhead
	n += int64(cap(s.free)+cap(s.dead)+cap(s.pendC)+cap(s.pendR)+cap(s.heap)) * 4
	for f := range s.idx {
		if ix := s.idx[f]; ix != nil {
			n += ix.memory()
		}
	}
	n += s.labels.memory()
	return n
}

// heap of slots by expiry, with each record's position in hpos.

func (s *Set) setExpire(i uint32, at int64) {
	x := &s.recs[i]
	switch {
	case x.hpos < 0 && at == 0:
		return
	case x.hpos < 0:
		x.expire = at
		x.hpos = int32(len(s.heap))
		s.heap = append(s.heap, i)
		s.up(int(x.hpos))
	case at == 0:
		p := int(x.hpos)
		last := len(s.heap) - 1
		s.swap(p, last)
		s.heap = s.heap[:last]
		x.hpos, x.expire = -1, 0
		if p < last {
			s.down(p)
			s.up(p)
		}
	default:
		x.expire = at
		s.down(int(x.hpos))
		s.up(int(x.hpos))
	}
}

func (s *Set) swap(a, b int) {
	s.heap[a], s.heap[b] = s.heap[b], s.heap[a]
	s.recs[s.heap[a]].hpos = int32(a)
	s.recs[s.heap[b]].hpos = int32(b)
}

func (s *Set) less(a, b int) bool { return s.recs[s.heap[a]].expire < s.recs[s.heap[b]].expire }

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
