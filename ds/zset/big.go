package zset

import "encoding/binary"

// big is the "skiplist" encoding (Redis's name; the structure is not a skiplist): members live
// in a dense slab of items indexed by id 0..n-1, each item holding the score and the arena ref
// of the member's bytes. The hash index maps members to ids and the tree orders ids. Removing a
// member moves the last item into its id, so ids stay dense: the slab never has holes, a random
// member is a random id, and no rebuild is ever needed.
type big struct {
	items [][]item // chunks of itemChunk items; item id is items[id>>itemShift][id&itemMask]
	n     int
	arena arena
	slots []uint64 // the hash index, see index.go

	root, head, tail *node
	sink             uint64 // keeps warm's loads from being optimised away

	// The first slab chunk's slice, the first arena chunk's slice and live count, and the first
	// leaf (which stays the head leaf: splits add leaves to its right, merges drop the right one
	// of two) live inside big, so a small large set is six allocations rather than ten.
	items0  [1][]item
	chunks0 [1][]byte
	live0   [1]int
	leaf0   node
}

type item struct {
	score float64
	ref   ref
}

const (
	itemShift = 10
	itemChunk = 1 << itemShift
	itemMask  = itemChunk - 1
)

// newBig returns an empty set sized for about capHint members, without its tree (callers
// either build it from sorted items or start an empty one).
func newBig(capHint int) *big {
	z := &big{arena: newArena(), slots: make([]uint64, idxSlotsFor(capHint))}
	z.items = z.items0[:0]
	z.arena.chunks, z.arena.live = z.chunks0[:0], z.live0[:0]
	if capHint > 0 {
		z.items = append(z.items, sized[item](min(capHint, itemChunk)))
	}
	return z
}

func newEmptyBig(capHint int) *big {
	z := newBig(capHint)
	z.buildTree()
	return z
}

func (z *big) item(id uint32) *item { return &z.items[id>>itemShift][id&itemMask] }

func (z *big) member(id uint32) []byte { return z.arena.get(z.item(id).ref) }

// find returns member's id.
func (z *big) find(member []byte) (uint32, bool) {
	s := z.idxFind(member, hashOf(member))
	if s < 0 {
		return 0, false
	}
	return slotID(z.slots[s]), true
}

// push appends an item for member (absent) to the slab and the index, not to the tree.
func (z *big) push(member []byte, score float64, h uint32) uint32 {
	id := uint32(z.n)
	c := int(id >> itemShift)
	if c == len(z.items) {
		z.items = append(z.items, nil)
		if c > 0 { // the first chunk grows as the set does; the later ones are full from the start
			z.items[c] = sized[item](itemChunk)
		}
	}
	z.items[c] = append(grow(z.items[c], 1, itemChunk), item{score: score})
	z.n++
	z.item(id).ref = z.arena.alloc(id, member)
	z.idxInsert(id, h)
	return id
}

// insert adds member (absent) with score.
func (z *big) insert(member []byte, score float64) {
	id := z.push(member, score, hashOf(member))
	z.treeInsert(id)
}

// setScore moves member id to its place for a new score.
func (z *big) setScore(id uint32, score float64) {
	z.treeDelete(id)
	z.item(id).score = score
	z.treeInsert(id)
}

// remove deletes member id and moves the last item into its place.
func (z *big) remove(id uint32) {
	z.treeDelete(id)
	it := z.item(id)
	z.idxDelete(z.idxSlotOf(id, hashOf(z.arena.get(it.ref))))
	r := it.ref
	it.ref = deadRef // so evacuation does not take the freed record for a live one
	z.freeRecord(r)
	if last := uint32(z.n - 1); id != last {
		moved := *z.item(last)
		*z.item(id) = moved
		z.arena.setOwner(moved.ref, id)
		h := hashOf(z.arena.get(moved.ref))
		z.slots[z.idxSlotOf(last, h)] = uint64(h)<<32 | uint64(id) + 1
		z.treeRename(last, id)
	}
	z.pop()
	z.idxShrink()
}

// pop drops the last item, and slab chunks left more than half a chunk behind.
func (z *big) pop() {
	z.n--
	c := z.n >> itemShift
	z.items[c] = z.items[c][:len(z.items[c])-1]
	for len(z.items) > 1 && (len(z.items)-1)*itemChunk > z.n+itemChunk/2 {
		z.items[len(z.items)-1] = nil
		z.items = z.items[:len(z.items)-1]
	}
}

// freeRecord frees the arena record at r, releasing or evacuating its chunk when it empties
// or falls below half live.
func (z *big) freeRecord(r ref) {
	a := &z.arena
	c := r.chunk()
	size := recordSize(len(a.get(r)))
	a.live[c] -= size
	a.total -= size
	switch {
	case a.live[c] == 0 && c == a.cur:
		a.chunks[c] = a.chunks[c][:0]
	case a.live[c] == 0:
		a.release(c)
	case c != a.cur && a.live[c]*2 < len(a.chunks[c]):
		z.evacuate(c)
	}
}

// evacuate moves the live records of chunk c to the current chunk and releases c. A record is
// live when its owner's item still refers to it.
func (z *big) evacuate(c int) {
	a := &z.arena
	b := a.chunks[c]
	for off := 0; off < len(b); {
		id := binary.LittleEndian.Uint32(b[off:])
		l, k := binary.Uvarint(b[off+4:])
		size := 4 + k + int(l)
		if int(id) < z.n && z.item(id).ref == makeRef(c, off) {
			a.live[c] -= size
			a.total -= size
			z.item(id).ref = a.alloc(id, b[off+4+k:off+size])
		}
		off += size
	}
	a.release(c)
}

// bigFrom builds a large set from members already in order.
func bigFrom(n int, each func(yield func(member []byte, score float64))) *big {
	z := newBig(n)
	each(func(member []byte, score float64) { z.push(member, score, hashOf(member)) })
	z.buildTree()
	return z
}

// walk calls fn for members from rank r towards the end (or the start when rev) until fn
// returns false.
func (z *big) walk(r int, rev bool, fn func(member []byte, score float64) bool) {
	if r >= z.n {
		return
	}
	n, pos := z.at(r)
	for n != nil {
		id := n.ids[pos]
		it := z.item(id)
		if !fn(z.arena.get(it.ref), it.score) {
			return
		}
		if rev {
			pos--
			if pos < 0 {
				n = n.prev
				if n != nil {
					pos = len(n.ids) - 1
				}
			}
		} else {
			pos++
			if pos == len(n.ids) {
				n, pos = n.next, 0
			}
		}
	}
}

// idAt returns the id of rank r.
func (z *big) idAt(r int) uint32 {
	n, pos := z.at(r)
	return n.ids[pos]
}

// warm loads the items and member bytes of up to n members from rank r (towards rank 0 when rev)
// before a walk reads them one by one: each member is two cache misses (its item, then its bytes)
// at addresses unrelated to its neighbours', and loading a level for all of them first lets the
// misses overlap. It changes nothing and returns a value that depends on the loads.
func (z *big) warm(r int, rev bool, n int) (sink uint64) {
	var refs [warmMax]ref
	n = min(n, warmMax, z.n)
	k := 0
	z.walkIDs(r, rev, n, func(id uint32) { refs[k] = z.item(id).ref; k++ })
	for _, rf := range refs[:k] {
		sink += uint64(z.arena.chunks[rf.chunk()][rf.off()])
	}
	return sink
}

// warmMax bounds the members warm loads ahead.
const warmMax = 64

// walkIDs calls fn with the ids of up to n members from rank r, in walk order.
func (z *big) walkIDs(r int, rev bool, n int, fn func(id uint32)) {
	if r >= z.n {
		return
	}
	nd, pos := z.at(r)
	for ; nd != nil && n > 0; n-- {
		fn(nd.ids[pos])
		if rev {
			if pos--; pos < 0 {
				if nd = nd.prev; nd != nil {
					pos = len(nd.ids) - 1
				}
			}
		} else if pos++; pos == len(nd.ids) {
			nd, pos = nd.next, 0
		}
	}
}
