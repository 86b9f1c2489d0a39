package command

import (
	"bytes"
	"cmp"
	"slices"
	"sync"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/zset"
)

// sorter is one SORT call's working state. Elements and ALPHA weights are copied into one arena
// and referred to by offset, so the arena may grow while they are loaded; sorters are pooled so a
// steady stream of SORTs reuses the same buffers.
type sorter struct {
	sortOptions
	items   []sortItem
	arena   []byte
	pats    []sortPattern // the GET patterns, parsed
	byPat   sortPattern
	key     []byte // the key a pattern names, built per element
	scratch []byte // small hash values are rebuilt here
	badNum  bool   // a numeric weight did not parse
}

// sortItem is one element to sort and its weight.
type sortItem struct {
	elem   span
	weight span // the ALPHA weight read through BY; n < 0: none (sorts first)
	score  float64
}

// span is a slice of the sorter's arena.
type span struct{ off, n int }

var sorterPool = sync.Pool{New: func() any { return &sorter{scratch: make([]byte, 0, hashScratch)} }}

func getSorter() *sorter { return sorterPool.Get().(*sorter) }

// putSorter returns st to the pool, dropping references into the request (its patterns and keys
// are arguments) and buffers a huge SORT grew, which should not stay pinned.
func putSorter(st *sorter) {
	clear(st.gets)
	clear(st.pats)
	*st = sorter{items: st.items[:0], arena: st.arena[:0], pats: st.pats[:0],
		key: st.key[:0], scratch: st.scratch[:0], sortOptions: sortOptions{gets: st.gets[:0]}}
	if cap(st.arena) > 1<<20 || cap(st.items) > 1<<15 {
		st.arena, st.items = nil, nil
	}
	sorterPool.Put(st)
}

// run is Redis's sortCommandGeneric after parsing; the shards it reads are held.
func (st *sorter) run(c *Ctx) {
	src := c.FindRead(c.Args[1])
	if src != nil && src.Kind != keyspace.KindList && src.Kind != keyspace.KindSet && src.Kind != keyspace.KindZSet {
		c.WrongType()
		return
	}
	if src != nil && src.Kind == keyspace.KindZSet {
		toSkiplist(src)
	}
	if st.dontsort && src != nil && src.Kind == keyspace.KindSet && st.store != nil {
		// A set has no order of its own: what is stored (and so replicated) must not depend on
		// its layout, so it is sorted as binary strings after all.
		st.dontsort, st.alpha = false, true
	}
	st.byPat = parsePattern(st.by)
	for _, g := range st.gets {
		st.pats = append(st.pats, parsePattern(g))
	}
	start, end := sortRange(st.offset, st.count, sourceLen(src))
	start, end = st.load(src, start, end)
	if !st.dontsort {
		st.weigh(c)
		if st.badNum {
			c.Err(ErrSortWeight)
			return
		}
		slices.SortFunc(st.items, st.compare)
	}
	if st.store != nil {
		st.storeList(c, start, end)
		return
	}
	st.reply(c, start, end)
}

// toSkiplist converts a listpack sorted set to the skiplist encoding for good, as Redis's SORT
// and SORT_RO do to every sorted set they sort (OBJECT ENCODING shows it afterwards).
func toSkiplist(e *keyspace.Entry) {
	z := keyspace.Obj[zset.ZSet](e)
	if z.Encoding() != "listpack" {
		return
	}
	es := make([]zset.Entry, 0, z.Len())
	z.Walk(0, false, func(m []byte, s float64) bool {
		es = append(es, zset.Entry{Member: m, Score: s})
		return true
	})
	keyspace.SetObj(e, keyspace.KindZSet, zset.FromSorted(es, zset.Limits{})) // no limit fits a set that has a member
}

func sourceLen(src *keyspace.Entry) int {
	if src == nil {
		return 0
	}
	switch o := objOf(src).(type) {
	case *list.List:
		return o.Len()
	case *dset.Set:
		return o.Len()
	case *zset.ZSet:
		return o.Len()
	}
	panic("BUG: SORT source of kind " + src.Kind.String())
}

// sortRange clamps LIMIT to n elements as Redis does: the result is elements start..end, none
// when end < start.
func sortRange(offset, count int64, n int) (start, end int) {
	s := min(max(offset, 0), int64(n))
	k := min(max(count, -1), int64(n))
	e := int64(n) - 1
	if k >= 0 {
		e = s + k - 1
	}
	if s >= int64(n) {
		s, e = int64(n)-1, int64(n)-2
	}
	return int(s), int(min(e, int64(n)-1))
}

// load copies the elements to sort into items and returns the range to output. A list or
// sorted set that is not sorted loads only the range, walking backwards for DESC; a set loads
// everything in its own order, which DESC does not change.
func (st *sorter) load(src *keyspace.Entry, start, end int) (int, int) {
	if src == nil {
		return start, end
	}
	switch o := objOf(src).(type) {
	case *list.List:
		if !st.dontsort {
			st.loadList(o, 0, o.Len(), false)
			return start, end
		}
		first := start
		if st.desc {
			first = o.Len() - 1 - start
		}
		st.loadList(o, first, end-start+1, st.desc)
	case *zset.ZSet:
		if !st.dontsort {
			o.Walk(0, false, func(m []byte, _ float64) bool { st.add(m); return true })
			return start, end
		}
		first := start
		if st.desc {
			first = o.Len() - 1 - start
		}
		if n := end - start + 1; n > 0 {
			o.Walk(first, st.desc, func(m []byte, _ float64) bool { st.add(m); n--; return n > 0 })
		}
	case *dset.Set:
		o.Each(func(m []byte) bool { st.add(m); return true })
		return start, end
	}
	return 0, end - start
}

// loadList loads n elements of l from index first, towards the tail or towards the head.
func (st *sorter) loadList(l *list.List, first, n int, rev bool) {
	if n <= 0 {
		return
	}
	for it := l.IterAt(first, rev); n > 0; n-- {
		v, ok := it.Next()
		if !ok {
			return
		}
		st.add(v)
	}
}

// add appends an element to sort.
func (st *sorter) add(elem []byte) {
	st.items = append(st.items, sortItem{elem: st.keep(elem), weight: span{n: -1}})
}

// keep copies b into the arena.
func (st *sorter) keep(b []byte) span {
	sp := span{off: len(st.arena), n: len(b)}
	st.arena = append(st.arena, b...)
	return sp
}

func (st *sorter) bytes(sp span) []byte { return st.arena[sp.off : sp.off+sp.n] }

// weigh loads each element's weight: its score for a numeric sort (0 when BY names no value),
// its BY value for ALPHA (an ALPHA sort without BY compares the elements themselves).
func (st *sorter) weigh(c *Ctx) {
	if st.alpha && st.by == nil {
		return
	}
	for i := range st.items {
		it := &st.items[i]
		w := st.bytes(it.elem)
		if st.by != nil {
			v, ok := st.lookup(c, &st.byPat, w)
			if !ok {
				continue
			}
			w = v
		}
		if st.alpha {
			it.weight = st.keep(w)
			continue
		}
		f, ok := sortWeight(w)
		it.score = f
		st.badNum = st.badNum || !ok
	}
}

// compare is Redis's sortCompare, made total: items it finds equal keep the order they loaded
// in (their arena offsets grow in that order), as glibc's qsort, a merge sort, keeps them. This
// lets an unstable sort, which moves items far fewer times, give the stable result.
func (st *sorter) compare(a, b sortItem) int {
	r := st.order(a, b)
	if st.desc {
		r = -r
	}
	if r == 0 {
		r = cmp.Compare(a.elem.off, b.elem.off)
	}
	return r
}

// order is sortCompare before DESC. Numeric weights tie-break on the elements' bytes. ALPHA
// compares with strcoll, except when storing, where it compares bytes (HotKV's collation is the C
// locale's: bytes up to the first NUL); a missing BY value sorts before any other and ties with
// another missing one.
func (st *sorter) order(a, b sortItem) int {
	switch {
	case !st.alpha:
		if r := cmp.Compare(a.score, b.score); r != 0 {
			return r
		}
		return bytes.Compare(st.bytes(a.elem), st.bytes(b.elem))
	case st.by == nil:
		return st.collate(st.bytes(a.elem), st.bytes(b.elem))
	case a.weight.n < 0 || b.weight.n < 0:
		return missingFirst(a.weight.n < 0, b.weight.n < 0)
	}
	return st.collate(st.bytes(a.weight), st.bytes(b.weight))
}

// missingFirst orders weights of which at least one is missing.
func missingFirst(aMissing, bMissing bool) int {
	switch {
	case aMissing == bMissing:
		return 0
	case aMissing:
		return -1
	}
	return 1
}

func (st *sorter) collate(a, b []byte) int {
	if st.store != nil {
		return bytes.Compare(a, b)
	}
	return bytes.Compare(cstr(a), cstr(b))
}

// outputLen is the number of replies (or list elements) for elements start..end.
func (st *sorter) outputLen(start, end int) int {
	return max(end-start+1, 0) * max(len(st.pats), 1)
}

// reply sends elements start..end, or for each the values of the GET patterns (null for none).
func (st *sorter) reply(c *Ctx, start, end int) {
	c.ArrayLen(st.outputLen(start, end))
	for j := start; j <= end; j++ {
		elem := st.bytes(st.items[j].elem)
		if len(st.pats) == 0 {
			c.Bulk(elem)
			continue
		}
		for i := range st.pats {
			if v, ok := st.lookup(c, &st.pats[i], elem); ok {
				c.Bulk(v)
			} else {
				c.Null()
			}
		}
	}
}

// storeList replaces the destination with the result as a list (a GET that names no value
// stores an empty string), deleting it when the result is empty, and replies the length. The
// list is complete before the destination changes, since GET patterns may read it. As in Redis,
// storing counts one change per element and raises "sortstore"; deleting counts one and raises
// "del" (see deleteStored).
func (st *sorter) storeList(c *Ctx, start, end int) {
	n := st.outputLen(start, end)
	if n == 0 {
		deleteStored(c, st.store)
		c.Int(0)
		return
	}
	l := list.New(int(c.E.Settings().ListMaxListpackSize))
	for j := start; j <= end; j++ {
		elem := st.bytes(st.items[j].elem)
		if len(st.pats) == 0 {
			l.PushBack(elem)
			continue
		}
		for i := range st.pats {
			v, _ := st.lookup(c, &st.pats[i], elem)
			l.PushBack(v)
		}
	}
	ks, e, created := c.UpsertIn(st.store)
	ks.Unpacked(e)
	keyspace.SetObj(e, keyspace.KindList, l)
	e.Enc = 0
	ks.SetExpire(e, 0)
	untagOverwritten(c, st.store)
	if created { // Redis 7.0 signals a key its setKey creates, not one it overwrites
		c.SignalReady(st.store)
	}
	c.Changed(NotifyList, "sortstore", st.store)
	c.Dirty(n)
	c.Int(int64(n))
}
