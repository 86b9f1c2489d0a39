package filter

import "github.com/RoaringBitmap/roaring/v2"

// Tags is a vector set's tag index for VSIM.SEARCH's TAGS pre-filter: each tag maps to the
// roaring bitmap of the element ids carrying it, and each id to its tags so a removal finds
// them. Not safe for concurrent writes; reads (Ids, Count) may run concurrently with each other.
type Tags struct {
	byTag map[string]*roaring.Bitmap
	byID  map[uint32][]string
}

// NewTags returns an empty index.
func NewTags() *Tags {
	return &Tags{byTag: map[string]*roaring.Bitmap{}, byID: map[uint32][]string{}}
}

// Set replaces id's tags by tags (duplicates ignored).
func (t *Tags) Set(id uint32, tags [][]byte) {
	t.RemoveID(id)
	if len(tags) == 0 {
		return
	}
	names := make([]string, 0, len(tags))
	for _, tag := range tags {
		b := t.byTag[string(tag)]
		if b == nil {
			b = roaring.New()
			t.byTag[string(tag)] = b
		}
		if b.CheckedAdd(id) {
			names = append(names, string(tag))
		}
	}
	t.byID[id] = names
}

// RemoveID forgets id's tags.
func (t *Tags) RemoveID(id uint32) {
	for _, tag := range t.byID[id] {
		b := t.byTag[tag]
		b.Remove(id)
		if b.IsEmpty() {
			delete(t.byTag, tag)
		}
	}
	delete(t.byID, id)
}

// Of returns id's tags (shared: the caller must not change them).
func (t *Tags) Of(id uint32) []string { return t.byID[id] }

// Len is the number of tagged ids.
func (t *Tags) Len() int { return len(t.byID) }

// Match returns the ids carrying any (all=false) or all (all=true) of tags, as a new bitmap.
func (t *Tags) Match(tags [][]byte, all bool) *roaring.Bitmap {
	var out *roaring.Bitmap
	for _, tag := range tags {
		b := t.byTag[string(tag)]
		switch {
		case b == nil && all:
			return roaring.New()
		case b == nil:
			continue
		case out == nil:
			out = b.Clone()
		case all:
			out.And(b)
		default:
			out.Or(b)
		}
	}
	if out == nil {
		return roaring.New()
	}
	return out
}

// Clone returns an independent copy.
func (t *Tags) Clone() *Tags {
	c := NewTags()
	for tag, b := range t.byTag {
		c.byTag[tag] = b.Clone()
	}
	for id, names := range t.byID {
		c.byID[id] = append([]string(nil), names...)
	}
	return c
}

// MemoryUsage estimates the bytes the index holds.
func (t *Tags) MemoryUsage() int {
	n := 48
	for tag, b := range t.byTag {
		n += len(tag) + 48 + int(b.GetSizeInBytes())
	}
	for _, names := range t.byID {
		n += 32 + 16*len(names)
	}
	return n
}
