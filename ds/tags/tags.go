// Package tags is the key-tag index of one database of one shard (HotKV's TAG.* commands): a
// map from tag to a roaring bitmap of key ids, and from key id to the key and its tags.
//
// It is touched only by the holder of its shard's token, like the keyspace it indexes, so it has
// no locks; readers that run beside each other without the token may call the read methods.
// It knows nothing of keyspaces or RESP: the command layer calls Drop when a key dies.
//
// Invariants:
//
//  1. A key has an id exactly while it carries at least one tag; the id does not change while it
//     does, and is reused (last freed, first reused) once the key's last tag goes.
//  2. A tag is in the map exactly while its bitmap is not empty.
//  3. keys[id].tags lists the key's tags in the order they were first added, each once; every
//     one of them has id in its bitmap, and no other bitmap has it.
package tags

import (
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
)

// Index is one database's tags on one shard. The zero value is ready to use.
type Index struct {
	byTag map[string]*tagSet
	byKey map[string]uint32
	keys  []keyTags // by id; a free id has a nil tags slice
	free  []uint32
	bytes int64         // the estimate of what the index holds (Bytes)
	sink  *atomic.Int64 // also counts bytes' changes (SetSink); nil: none
}

// Memory estimate (Bytes): what a tagged key (besides its name's bytes), a tag (besides its
// name's) and a key's membership in a tag cost in this layout on 64-bit Go, each structure's
// share of its map's or slice's spare room included; fitted to the heap of four shapes, which
// TestBytesAgainstHeap keeps within 0.8-1.25x of the bytes the index adds.
const (
	keyCost    = 50  // byKey's entry with its spare room, the key's keyTags slot
	tagCost    = 170 // byTag's entry, the tagSet, an empty roaring bitmap with its first container
	memberCost = 16  // the key's *tagSet (8 B) and the id in the tag's container (2 B), grown by doubling
)

// Bytes is the estimate of the heap the index holds: its maps, key and tag names, bitmaps. It
// is kept as the index changes (O(1) an operation) and equals Recount.
func (x *Index) Bytes() int64 { return x.bytes }

// SetSink makes every change of Bytes change *sink too (a shard's used-memory counter), taking
// the index's bytes off the sink it had and adding them to the new one; nil detaches it. Only
// the index's owner writes the sink, so a load and a store suffice, as ds/keyspace's.
func (x *Index) SetSink(sink *atomic.Int64) {
	if x.sink != nil {
		x.sink.Store(x.sink.Load() - x.bytes)
	}
	x.sink = sink
	if sink != nil {
		sink.Store(sink.Load() + x.bytes)
	}
}

func (x *Index) account(d int64) {
	if d == 0 {
		return
	}
	x.bytes += d
	if x.sink != nil {
		x.sink.Store(x.sink.Load() + d)
	}
}

// Recount is Bytes computed again by walking the index (tests check the kept figure with it).
func (x *Index) Recount() int64 {
	var n int64
	for name := range x.byTag {
		n += tagCost + int64(len(name))
	}
	for i := range x.keys {
		if kt := &x.keys[i]; kt.tags != nil {
			n += keyCost + int64(len(kt.key)) + memberCost*int64(len(kt.tags))
		}
	}
	return n
}

type tagSet struct {
	name string // the map's key, shared by every keyTags naming it
	ids  *roaring.Bitmap
}

type keyTags struct {
	key  string
	tags []*tagSet
}

// New returns an empty index.
func New() *Index { return &Index{} }

// Len returns the number of tagged keys.
func (x *Index) Len() int { return len(x.byKey) }

// TagCount returns the number of distinct tags.
func (x *Index) TagCount() int { return len(x.byTag) }

// Has reports whether key carries a tag.
func (x *Index) Has(key string) bool { _, ok := x.byKey[key]; return ok }

// Add tags key with every tag of tags and returns how many it did not carry already.
func (x *Index) Add(key string, tags [][]byte) int {
	if len(tags) == 0 {
		return 0
	}
	id, ok := x.byKey[key]
	if !ok {
		id = x.newID(key)
	}
	kt := &x.keys[id]
	n, d := 0, int64(0)
	if !ok {
		d += keyCost + int64(len(key))
	}
	for _, t := range tags {
		ts := x.byTag[string(t)]
		if ts == nil {
			if x.byTag == nil {
				x.byTag = map[string]*tagSet{}
			}
			ts = &tagSet{name: string(t), ids: roaring.New()}
			x.byTag[ts.name] = ts
			d += tagCost + int64(len(t))
		}
		if ts.ids.CheckedAdd(id) {
			kt.tags = append(kt.tags, ts)
			n++
		}
	}
	x.account(d + memberCost*int64(n))
	return n
}

// AddStrings is Add for tags given as strings (loading, RENAME's carried tags).
func (x *Index) AddStrings(key string, tags []string) int {
	b := make([][]byte, len(tags))
	for i, t := range tags {
		b[i] = []byte(t)
	}
	return x.Add(key, b)
}

func (x *Index) newID(key string) uint32 {
	if x.byKey == nil {
		x.byKey = map[string]uint32{}
	}
	var id uint32
	if n := len(x.free); n > 0 {
		id = x.free[n-1]
		x.free = x.free[:n-1]
		x.keys[id].key = key
	} else {
		id = uint32(len(x.keys))
		x.keys = append(x.keys, keyTags{key: key})
	}
	x.byKey[key] = id
	return id
}

func (x *Index) freeID(id uint32) {
	kt := &x.keys[id]
	x.account(-keyCost - int64(len(kt.key)))
	delete(x.byKey, kt.key)
	kt.key, kt.tags = "", nil
	x.free = append(x.free, id)
	if len(x.byKey) == 0 { // all gone: give the slices' memory back
		x.keys, x.free = nil, nil
	}
}

// Remove untags key of every tag of tags and returns how many it carried. The key keeps the
// rest; with none left it leaves the index.
func (x *Index) Remove(key string, tags [][]byte) int {
	id, ok := x.byKey[key]
	if !ok {
		return 0
	}
	n := 0
	for _, t := range tags {
		ts := x.byTag[string(t)]
		if ts != nil && ts.ids.CheckedRemove(id) {
			n++
			if ts.ids.IsEmpty() {
				delete(x.byTag, ts.name)
				x.account(-tagCost - int64(len(ts.name)))
			}
		}
	}
	if n == 0 {
		return 0
	}
	x.account(-memberCost * int64(n))
	kt := &x.keys[id]
	kept := kt.tags[:0]
	for _, ts := range kt.tags {
		if ts.ids.Contains(id) {
			kept = append(kept, ts)
		}
	}
	clear(kt.tags[len(kept):])
	kt.tags = kept
	if len(kept) == 0 {
		x.freeID(id)
	}
	return n
}

// Drop removes every tag of key (the key died, or TAG.CLEAR) and returns how many it had.
func (x *Index) Drop(key string) int {
	id, ok := x.byKey[key]
	if !ok {
		return 0
	}
	kt := &x.keys[id]
	n := len(kt.tags)
	d := -memberCost * int64(n)
	for _, ts := range kt.tags {
		ts.ids.Remove(id)
		if ts.ids.IsEmpty() {
			delete(x.byTag, ts.name)
			d -= tagCost + int64(len(ts.name))
		}
	}
	x.account(d)
	x.freeID(id)
	return n
}

// Take is Drop that returns the tags, in order (RENAME and MOVE carry them to the new key).
func (x *Index) Take(key string) []string {
	t := x.Tags(key)
	x.Drop(key)
	return t
}

// Tags returns key's tags in the order they were added; nil when it has none.
func (x *Index) Tags(key string) []string {
	id, ok := x.byKey[key]
	if !ok {
		return nil
	}
	kt := &x.keys[id]
	out := make([]string, len(kt.tags))
	for i, ts := range kt.tags {
		out[i] = ts.name
	}
	return out
}

// Count returns the number of keys carrying tag.
func (x *Index) Count(tag []byte) int {
	if ts := x.byTag[string(tag)]; ts != nil {
		return int(ts.ids.GetCardinality())
	}
	return 0
}

// Members calls fn with the keys carrying any of tags whose id is at least from, in id order,
// at most max of them, and returns the id to continue from and whether none is left. A key
// carrying several of the tags is passed once. Between calls the index may change: a key that
// carries a tag for the whole walk is passed exactly once (its id does not change), one tagged
// or untagged meanwhile may or may not be. fn must not change the index; the key it gets stays
// valid as long as the string does (it is the index's own copy, never changed in place).
func (x *Index) Members(tags [][]byte, from uint32, max int, fn func(key string)) (next uint32, done bool) {
	var bm *roaring.Bitmap
	switch len(tags) {
	case 0:
		return 0, true
	case 1:
		ts := x.byTag[string(tags[0])]
		if ts == nil {
			return 0, true
		}
		bm = ts.ids
	default:
		var sets []*roaring.Bitmap
		for _, t := range tags {
			if ts := x.byTag[string(t)]; ts != nil {
				sets = append(sets, ts.ids)
			}
		}
		if len(sets) == 0 {
			return 0, true
		}
		bm = roaring.FastOr(sets...)
	}
	it := bm.Iterator()
	it.AdvanceIfNeeded(from)
	for n := 0; n < max && it.HasNext(); n++ {
		id := it.Next()
		fn(x.keys[id].key)
		next = id + 1
	}
	if !it.HasNext() {
		return next, true
	}
	return next, false
}

// Each calls fn for every tagged key with its tags (a view valid during the call), in id order.
func (x *Index) Each(fn func(key string, tags []string)) {
	var buf []string
	for i := range x.keys {
		kt := &x.keys[i]
		if kt.tags == nil {
			continue
		}
		buf = buf[:0]
		for _, ts := range kt.tags {
			buf = append(buf, ts.name)
		}
		fn(kt.key, buf)
	}
}
