package rdb

import (
	"bytes"
	"cmp"
	"slices"
)

// listPackedThreshold is Redis 7.0's quicklist packed_threshold: an element of
// this many bytes or more goes into a PLAIN node of its own.
const listPackedThreshold = 1 << 30

// listSafetyLimit is quicklist's SIZE_SAFETY_LIMIT: the most bytes a node may
// hold when list-max-listpack-size counts elements.
const listSafetyLimit = 8192

// StringValue appends a string key: type 0, key, value.
func (e *Encoder) StringValue(key, val []byte) {
	e.typeKey(TypeString, key)
	e.String(val)
}

// ListValue appends a list of n elements, which next returns in order, as Redis
// 7.0 writes lists: QUICKLIST_2 with PACKED listpack nodes filled to
// list-max-listpack-size (8 KiB by default), and a PLAIN node for each element
// of 1 GiB or more.
func (e *Encoder) ListValue(key []byte, n int, next func() []byte) {
	e.typeKey(TypeListQuicklist2, key)
	fill := e.limits().ListMaxListpackSize
	out := e.Buf
	e.Buf = e.nodes[:0]
	count := 0
	e.lp.Reset()
	for range n {
		el := next()
		if len(el) >= listPackedThreshold {
			count += e.flushListNode()
			e.Len(1) // QUICKLIST_NODE_CONTAINER_PLAIN
			e.String(el)
			count++
			continue
		}
		if e.lp.Len() > 0 && !listNodeFits(&e.lp, len(el), fill) {
			count += e.flushListNode()
		}
		e.lp.Append(el)
	}
	count += e.flushListNode()
	nodes := e.Buf
	e.Buf = out
	e.Len(uint64(count))
	e.Buf = append(e.Buf, nodes...)
	e.nodes = nodes[:0]
}

func (e *Encoder) flushListNode() int {
	if e.lp.Len() == 0 {
		return 0
	}
	e.Len(2) // QUICKLIST_NODE_CONTAINER_PACKED
	e.String(e.lp.Bytes())
	e.lp.Reset()
	return 1
}

// listNodeFits reports whether an element of size bytes may join node under
// list-max-listpack-size fill: negative fills are a byte budget of 4 KiB << (-fill-1),
// positive ones a count within the 8 KiB safety limit.
func listNodeFits(node *Listpack, size, fill int) bool {
	newSize := node.Size() + size + 11 // worst case encoding and backlen
	if fill < 0 {
		return newSize <= 4096<<min(-fill-1, 4)
	}
	return newSize <= listSafetyLimit && node.Len() < fill
}

// SetValue appends a set of n members: an intset (11) when every member is a
// canonical integer and n <= set-max-intset-entries, else SET (2). Redis 7.0
// has no set listpack.
func (e *Encoder) SetValue(key []byte, n int, next func() []byte) {
	if n > e.limits().SetMaxIntsetEntries || n == 0 {
		e.typeKey(TypeSet, key)
		e.Len(uint64(n))
		for range n {
			e.String(next())
		}
		return
	}
	e.buffer(n, false, func() ([]byte, []byte) { return next(), nil })
	e.ints = e.ints[:0]
	for i := range n {
		v, ok := parseInt(e.member(i))
		if !ok {
			break
		}
		e.ints = append(e.ints, v)
	}
	if len(e.ints) == n {
		e.typeKey(TypeSetIntset, key)
		blob := appendIntset(e.nodes[:0], e.ints)
		e.String(blob)
		e.nodes = blob[:0]
		return
	}
	e.typeKey(TypeSet, key)
	e.Len(uint64(n))
	for i := range n {
		e.String(e.member(i))
	}
}

// HashValue appends a hash of n field-value pairs: HASH_LISTPACK (16) when n
// <= hash-max-listpack-entries and no field or value is longer than
// hash-max-listpack-value, else HASH (4).
func (e *Encoder) HashValue(key []byte, n int, next func() (f, v []byte)) {
	lim := e.limits()
	if n > lim.HashMaxListpackEntries || n == 0 {
		e.typeKey(TypeHash, key)
		e.Len(uint64(n))
		for range n {
			f, v := next()
			e.String(f)
			e.String(v)
		}
		return
	}
	longest := e.buffer(n, true, next)
	if longest <= lim.HashMaxListpackValue {
		e.typeKey(TypeHashListpack, key)
		e.lp.Reset()
		for i := range 2 * n {
			e.lp.Append(e.member(i))
		}
		e.String(e.lp.Bytes())
		e.lp.Reset()
		return
	}
	e.typeKey(TypeHash, key)
	e.Len(uint64(n))
	for i := range 2 * n {
		e.String(e.member(i))
	}
}

// ZSetValue appends a sorted set of n members: ZSET_LISTPACK (17) when n <=
// zset-max-listpack-entries and no member is longer than
// zset-max-listpack-value, else ZSET_2 (5). next may return the members in
// any order: the listpack form is sorted here (by score, then member), as
// Redis keeps it.
func (e *Encoder) ZSetValue(key []byte, n int, next func() (m []byte, score float64)) {
	lim := e.limits()
	if n > lim.ZSetMaxListpackEntries || n == 0 {
		e.typeKey(TypeZSet2, key)
		e.Len(uint64(n))
		for range n {
			m, s := next()
			e.String(m)
			e.Double(s)
		}
		return
	}
	e.zs = e.zs[:0]
	longest := e.buffer(n, false, func() ([]byte, []byte) {
		m, s := next()
		e.zs = append(e.zs, s)
		return m, nil
	})
	if longest <= lim.ZSetMaxListpackValue {
		e.typeKey(TypeZSetListpack, key)
		e.lp.Reset()
		e.order = e.order[:0]
		for i := range n {
			e.order = append(e.order, i)
		}
		slices.SortFunc(e.order, func(a, b int) int {
			if c := cmp.Compare(e.zs[a], e.zs[b]); c != 0 {
				return c
			}
			return bytes.Compare(e.member(a), e.member(b))
		})
		for _, i := range e.order {
			e.lp.Append(e.member(i))
			e.lp.Append(formatScore(e.num[:0], e.zs[i]))
		}
		e.String(e.lp.Bytes())
		e.lp.Reset()
		return
	}
	e.typeKey(TypeZSet2, key)
	e.Len(uint64(n))
	for i := range n {
		e.String(e.member(i))
		e.Double(e.zs[i])
	}
}

// buffer copies n elements from next into the arena, both of each pair when
// pairs is set (hashes), the first only otherwise, and returns the longest
// element's length.
func (e *Encoder) buffer(n int, pairs bool, next func() ([]byte, []byte)) int {
	e.arena = e.arena[:0]
	e.spans = e.spans[:0]
	longest := 0
	for range n {
		a, b := next()
		e.arena = append(e.arena, a...)
		e.spans = append(e.spans, len(e.arena))
		longest = max(longest, len(a))
		if pairs {
			e.arena = append(e.arena, b...)
			e.spans = append(e.spans, len(e.arena))
			longest = max(longest, len(b))
		}
	}
	return longest
}

// member is the i-th buffered element.
func (e *Encoder) member(i int) []byte {
	start := 0
	if i > 0 {
		start = e.spans[i-1]
	}
	return e.arena[start:e.spans[i]]
}
