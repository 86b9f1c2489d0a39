package vector

import (
	"maps"
	"slices"
)

// Freeze returns an independent copy of s for a snapshot to read while s goes on changing. The
// arrays are copied as they are (ids, free slots and links unchanged), so the copy costs memcpys
// of what s holds plus one pass over the per-node link blocks, and no distance (Decode of
// AppendBinary, which Clone-like copies use, re-derives every reverse link and re-checks the
// graph). Names and attributes are shared: the set never changes their bytes, it replaces them.
// The copy is a valid set; like s it must not be read during one of its own writes.
func (s *Set) Freeze() *Set {
	c := *s
	c.byName = maps.Clone(s.byName)
	c.names = slices.Clone(s.names)
	c.attrs = slices.Clone(s.attrs)
	c.level = slices.Clone(s.level)
	c.norm = slices.Clone(s.norm)
	c.q8 = slices.Clone(s.q8)
	c.f32 = slices.Clone(s.f32)
	c.i8 = slices.Clone(s.i8)
	c.bits = slices.Clone(s.bits)
	c.links0 = slices.Clone(s.links0)
	c.free = slices.Clone(s.free)
	c.orphans = nil
	c.upper = cloneBlocks(s.upper)
	c.rev = cloneBlocks(s.rev)
	return &c
}

// cloneBlocks copies per-node uint32 slices into one backing array, each keeping its length and
// capacity (so a block written in place later stays within its own range).
func cloneBlocks(b [][]uint32) [][]uint32 {
	if b == nil {
		return nil
	}
	n := 0
	for _, x := range b {
		n += cap(x)
	}
	back := make([]uint32, n)
	out := make([][]uint32, len(b))
	o := 0
	for i, x := range b {
		if x == nil {
			continue
		}
		out[i] = back[o : o+len(x) : o+cap(x)]
		copy(out[i], x)
		o += cap(x)
	}
	return out
}
