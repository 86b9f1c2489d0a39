package zset

import (
	"bytes"
	"slices"
	"sort"
)

// The order of a large set is a B+tree of member ids with subtree counts, so ranks, positions
// by score or by member, inserts and deletes all cost O(log n). Leaves hold ids in (score,
// member) order and are linked both ways for walks; an inner node holds, per child, the child's
// first id (the separator a descent compares with) and its member count (for ranks). Ids are 4
// bytes, so a leaf packs 128 members in 512 bytes.
//
// Appending past the last member (or before the first) splits a full edge leaf unevenly, keeping
// the full part whole, so sets built in order stay nearly 100% full instead of half.

const (
	leafCap  = 128
	innerCap = 64
	leafMin  = leafCap / 4
	innerMin = innerCap / 4
)

type node struct {
	ids   []uint32 // leaf: members in order
	kids  []*node  // inner: children (nil in a leaf)
	first []uint32 // inner: first member of each child
	cnt   []uint32 // inner: members under each child

	prev, next *node // leaves only
}

// newLeaf returns an empty leaf. Its ids grow as it fills (growIDs): most large sets are small.
func newLeaf() *node { return &node{} }

// growIDs returns ids with room for one more, doubling up to leafCap.
func growIDs(ids []uint32) []uint32 {
	if len(ids) < cap(ids) {
		return ids
	}
	n := make([]uint32, len(ids), min(max(4, 2*cap(ids)), leafCap))
	copy(n, ids)
	return n
}

func newInner() *node {
	return &node{kids: make([]*node, 0, innerCap), first: make([]uint32, 0, innerCap),
		cnt: make([]uint32, 0, innerCap)}
}

func (n *node) isLeaf() bool { return n.kids == nil }

func (n *node) firstID() uint32 {
	if n.isLeaf() {
		return n.ids[0]
	}
	return n.first[0]
}

// width is the number of entries of the node itself: ids of a leaf, children of an inner node.
func (n *node) width() int {
	if n.isLeaf() {
		return len(n.ids)
	}
	return len(n.kids)
}

// size is the number of members under n.
func (n *node) size() int {
	if n.isLeaf() {
		return len(n.ids)
	}
	s := 0
	for _, c := range n.cnt {
		s += int(c)
	}
	return s
}

// key is a position in the order: a score and a member.
type key struct {
	score  float64
	member []byte
}

func (z *big) keyOf(id uint32) key {
	it := z.item(id)
	return key{it.score, z.arena.get(it.ref)}
}

// cmpKey compares k with member id.
func (z *big) cmpKey(k *key, id uint32) int {
	it := z.item(id)
	switch {
	case k.score < it.score:
		return -1
	case k.score > it.score:
		return 1
	}
	return bytes.Compare(k.member, z.arena.get(it.ref))
}

// childFor returns the child of inner node n whose range holds k.
func (z *big) childFor(n *node, k *key) int {
	i := sort.Search(len(n.first)-1, func(i int) bool { return z.cmpKey(k, n.first[i+1]) < 0 })
	return i
}

// treeInsert adds id (whose item is set) at its place in the order.
func (z *big) treeInsert(id uint32) {
	k := z.keyOf(id)
	right := z.insertAt(z.root, &k, id, true, true)
	if right == nil {
		return
	}
	old := z.root
	r := newInner()
	r.kids = append(r.kids, old, right)
	r.first = append(r.first, old.firstID(), right.firstID())
	r.cnt = append(r.cnt, uint32(old.size()), uint32(right.size()))
	z.root = r
}

// insertAt inserts into the subtree n and returns the new right sibling when n split. The edge
// flags say whether n is the leftmost or rightmost node of its level.
func (z *big) insertAt(n *node, k *key, id uint32, leftEdge, rightEdge bool) *node {
	if n.isLeaf() {
		pos := sort.Search(len(n.ids), func(i int) bool { return z.cmpKey(k, n.ids[i]) < 0 })
		return z.leafInsert(n, pos, id)
	}
	i := z.childFor(n, k)
	kid := n.kids[i]
	split := z.insertAt(kid, k, id, leftEdge && i == 0, rightEdge && i == len(n.kids)-1)
	n.first[i] = kid.firstID()
	if split == nil {
		n.cnt[i]++
		return nil
	}
	n.cnt[i] = uint32(kid.size())
	return innerInsert(n, i+1, split, leftEdge, rightEdge)
}

// splitPoint chooses where a full node of capacity c splits before an insert at pos: at the end
// when appending to the last node, at the start when prepending to the first, else in half.
func splitPoint(c, pos int, leftEdge, rightEdge bool) int {
	switch {
	case rightEdge && pos == c:
		return c
	case leftEdge && pos <= 1:
		return pos
	}
	return c / 2
}

func (z *big) leafInsert(n *node, pos int, id uint32) *node {
	if len(n.ids) < leafCap {
		n.ids = slices.Insert(growIDs(n.ids), pos, id)
		return nil
	}
	at := splitPoint(leafCap, pos, n.prev == nil, n.next == nil)
	r := newLeaf()
	r.ids = append(r.ids, n.ids[at:]...)
	n.ids = n.ids[:at]
	r.prev, r.next = n, n.next
	if n.next != nil {
		n.next.prev = r
	} else {
		z.tail = r
	}
	n.next = r
	if pos < at || (pos == at && len(n.ids) <= len(r.ids)) {
		n.ids = slices.Insert(growIDs(n.ids), pos, id)
	} else {
		r.ids = slices.Insert(growIDs(r.ids), pos-at, id)
	}
	return r
}

func innerInsert(n *node, pos int, kid *node, leftEdge, rightEdge bool) *node {
	if len(n.kids) < innerCap {
		putChild(n, pos, kid)
		return nil
	}
	at := splitPoint(innerCap, pos, leftEdge, rightEdge)
	r := newInner()
	r.kids = append(r.kids, n.kids[at:]...)
	r.first = append(r.first, n.first[at:]...)
	r.cnt = append(r.cnt, n.cnt[at:]...)
	clear(n.kids[at:])
	n.kids, n.first, n.cnt = n.kids[:at], n.first[:at], n.cnt[:at]
	if pos < at || (pos == at && len(n.kids) <= len(r.kids)) {
		putChild(n, pos, kid)
	} else {
		putChild(r, pos-at, kid)
	}
	return r
}

func putChild(n *node, pos int, kid *node) {
	n.kids = slices.Insert(n.kids, pos, kid)
	n.first = slices.Insert(n.first, pos, kid.firstID())
	n.cnt = slices.Insert(n.cnt, pos, uint32(kid.size()))
}

func dropChild(n *node, i int) {
	n.kids = slices.Delete(n.kids, i, i+1)
	n.first = slices.Delete(n.first, i, i+1)
	n.cnt = slices.Delete(n.cnt, i, i+1)
}

// treeDelete removes id, whose item still holds its score and member.
func (z *big) treeDelete(id uint32) {
	k := z.keyOf(id)
	z.deleteAt(z.root, &k, id)
	for !z.root.isLeaf() && len(z.root.kids) == 1 {
		z.root = z.root.kids[0]
	}
}

func (z *big) deleteAt(n *node, k *key, id uint32) {
	if n.isLeaf() {
		pos := sort.Search(len(n.ids), func(i int) bool { return z.cmpKey(k, n.ids[i]) <= 0 })
		if pos == len(n.ids) || n.ids[pos] != id {
			panic("BUG: zset tree lost a member")
		}
		n.ids = slices.Delete(n.ids, pos, pos+1)
		return
	}
	i := z.childFor(n, k)
	kid := n.kids[i]
	z.deleteAt(kid, k, id)
	n.cnt[i]--
	if underfull(kid) && len(n.kids) > 1 {
		z.rebalance(n, i)
		return
	}
	if kid.width() > 0 {
		n.first[i] = kid.firstID()
	}
}

func underfull(n *node) bool {
	if n.isLeaf() {
		return len(n.ids) < leafMin
	}
	return len(n.kids) < innerMin
}

// rebalance fixes n's underfull child i by merging it with a neighbour, or by sharing the
// neighbour's entries evenly when both do not fit in one node.
func (z *big) rebalance(n *node, i int) {
	a := i
	if a == len(n.kids)-1 {
		a--
	}
	l, r := n.kids[a], n.kids[a+1]
	c := innerCap
	if l.isLeaf() {
		c = leafCap
	}
	if l.width()+r.width() <= c {
		z.merge(l, r)
		dropChild(n, a+1)
	} else {
		share(l, r)
		n.first[a+1], n.cnt[a+1] = r.firstID(), uint32(r.size())
	}
	n.first[a], n.cnt[a] = l.firstID(), uint32(l.size())
}

// merge moves every entry of r into its left neighbour l.
func (z *big) merge(l, r *node) {
	if l.isLeaf() {
		l.ids = append(l.ids, r.ids...)
		l.next = r.next
		if r.next != nil {
			r.next.prev = l
		} else {
			z.tail = l
		}
		return
	}
	l.kids = append(l.kids, r.kids...)
	l.first = append(l.first, r.first...)
	l.cnt = append(l.cnt, r.cnt...)
}

// share moves entries between neighbours l and r until they hold about as many each.
func share(l, r *node) {
	want := (l.width() + r.width()) / 2
	if l.isLeaf() {
		if len(l.ids) < want {
			m := want - len(l.ids)
			l.ids = append(l.ids, r.ids[:m]...)
			r.ids = slices.Delete(r.ids, 0, m)
		} else {
			r.ids = slices.Insert(r.ids, 0, l.ids[want:]...)
			l.ids = l.ids[:want]
		}
		return
	}
	if len(l.kids) < want {
		m := want - len(l.kids)
		l.kids = append(l.kids, r.kids[:m]...)
		l.first = append(l.first, r.first[:m]...)
		l.cnt = append(l.cnt, r.cnt[:m]...)
		r.kids = slices.Delete(r.kids, 0, m)
		r.first = slices.Delete(r.first, 0, m)
		r.cnt = slices.Delete(r.cnt, 0, m)
		return
	}
	r.kids = slices.Insert(r.kids, 0, l.kids[want:]...)
	r.first = slices.Insert(r.first, 0, l.first[want:]...)
	r.cnt = slices.Insert(r.cnt, 0, l.cnt[want:]...)
	clear(l.kids[want:])
	l.kids, l.first, l.cnt = l.kids[:want], l.first[:want], l.cnt[:want]
}

// treeRename replaces id old by id new in the tree; new's item already holds old's score and
// member, and old's item still does.
func (z *big) treeRename(old, new uint32) {
	k := z.keyOf(new)
	n := z.root
	for !n.isLeaf() {
		i := z.childFor(n, &k)
		if n.first[i] == old {
			n.first[i] = new
		}
		n = n.kids[i]
	}
	pos := sort.Search(len(n.ids), func(i int) bool { return z.cmpKey(&k, n.ids[i]) <= 0 })
	if pos == len(n.ids) || n.ids[pos] != old {
		panic("BUG: zset tree lost a moved member")
	}
	n.ids[pos] = new
}

// rankOf returns the 0-based rank of id.
func (z *big) rankOf(id uint32) int {
	k := z.keyOf(id)
	n, r := z.root, 0
	for !n.isLeaf() {
		i := z.childFor(n, &k)
		for _, c := range n.cnt[:i] {
			r += int(c)
		}
		n = n.kids[i]
	}
	return r + sort.Search(len(n.ids), func(i int) bool { return z.cmpKey(&k, n.ids[i]) <= 0 })
}

// at returns the leaf holding rank r (0 <= r < n) and r's position in it.
func (z *big) at(r int) (*node, int) {
	// The ends are where most range reads start (ZRANGE 0 9, ZREVRANGE 0 9): their leaves are
	// at hand, without the root-to-leaf path's dependent misses.
	switch {
	case r == 0 && len(z.head.ids) > 0:
		return z.head, 0
	case r == z.n-1 && len(z.tail.ids) > 0:
		return z.tail, len(z.tail.ids) - 1
	}
	n := z.root
	for !n.isLeaf() {
		i := 0
		for ; i < len(n.cnt)-1 && r >= int(n.cnt[i]); i++ {
			r -= int(n.cnt[i])
		}
		n = n.kids[i]
	}
	return n, r
}

// seek returns the rank of the first member for which pred holds (n when none does); pred
// must be false on a prefix of the order and true on the rest.
func (z *big) seek(pred func(id uint32) bool) int {
	n, r := z.root, 0
	for !n.isLeaf() {
		i := sort.Search(len(n.first), func(i int) bool { return pred(n.first[i]) })
		i = max(i-1, 0)
		for _, c := range n.cnt[:i] {
			r += int(c)
		}
		n = n.kids[i]
	}
	return r + sort.Search(len(n.ids), func(i int) bool { return pred(n.ids[i]) })
}

// buildTree builds the tree over ids 0..n-1, which must already be in order.
func (z *big) buildTree() {
	if z.n == 0 {
		l := &z.leaf0
		z.root, z.head, z.tail = l, l, l
		return
	}
	level := make([]*node, 0, (z.n+leafCap-1)/leafCap)
	var prev *node
	id := uint32(0)
	for _, size := range evenSplit(z.n, leafCap) {
		l := newLeaf()
		if prev == nil {
			l = &z.leaf0
		}
		l.ids = sized[uint32](size)
		for range size {
			l.ids = append(l.ids, id)
			id++
		}
		l.prev = prev
		if prev != nil {
			prev.next = l
		}
		prev = l
		level = append(level, l)
	}
	z.head, z.tail = level[0], prev
	for len(level) > 1 {
		next := make([]*node, 0, (len(level)+innerCap-1)/innerCap)
		i := 0
		for _, size := range evenSplit(len(level), innerCap) {
			p := newInner()
			for _, kid := range level[i : i+size] {
				putChild(p, len(p.kids), kid)
			}
			i += size
			next = append(next, p)
		}
		level = next
	}
	z.root = level[0]
}

// evenSplit divides n entries into the fewest nodes of capacity c, sized within one of each
// other.
func evenSplit(n, c int) []int {
	k := (n + c - 1) / c
	sizes := make([]int, k)
	for i := range sizes {
		sizes[i] = n / k
		if i < n%k {
			sizes[i]++
		}
	}
	return sizes
}
