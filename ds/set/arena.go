package set

import (
	"encoding/binary"
	"math/bits"
)

// arena stores a large set's string members packed in chunks of at most 64 KiB, so a member
// costs its bytes plus a one- or two-byte header, and the garbage collector sees a few hundred
// pointer-free buffers instead of one object per member.
//
// A member is named by a ref: its chunk index (from 1; 0 is never used, so no ref is 0) times
// 2^16 plus its offset in the chunk. An entry is uvarint(len<<1 | dead) followed by the bytes.
// Freeing an entry sets its dead bit in place (the varint keeps its length: len<<1 is even and
// no varint boundary lies between an even number and the next). A chunk whose live bytes drop
// below half of its length is compacted by the table, which moves the live entries to the tail
// chunk and rewrites their refs. A member too large to share a chunk gets a chunk of its own.
type arena struct {
	chunks [][]byte
	live   []uint32 // live bytes of each chunk
	free   []uint32 // indexes of released chunks, for reuse
	tail   uint32   // the chunk new small entries go to; 0 = none yet
	spare  []byte   // a released full-size chunk kept for the next one, so churn allocates nothing
}

const (
	chunkMax = 1 << 16 // offsets are 16 bits
	ownChunk = 4096    // entries larger than this get a chunk of their own
	refMax   = 1<<40 - 1
)

func entrySize(n int) int { return uvarintLen(uint64(n)<<1) + n }

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// get returns the member named by ref; it is valid until the arena changes.
func (a *arena) get(ref uint64) []byte {
	ch := a.chunks[ref>>16][ref&0xFFFF:]
	v, k := binary.Uvarint(ch)
	return ch[k : k+int(v>>1)]
}

// alloc stores a copy of m and returns its ref.
func (a *arena) alloc(m []byte) uint64 {
	size := entrySize(len(m))
	if size > ownChunk {
		c := a.newChunk(size)
		a.chunks[c] = appendEntry(a.chunks[c], m)
		a.live[c] = uint32(size)
		return uint64(c) << 16
	}
	if a.tail == 0 || len(a.chunks[a.tail])+size > chunkMax {
		first := size // a set's first chunk grows from what its first member needs
		if a.tail != 0 {
			first = chunkMax // the set has filled a chunk already: it is big
		}
		a.tail = a.newChunk(first)
	}
	ch := a.chunks[a.tail]
	off := len(ch)
	if off+size > cap(ch) {
		// A set has an arena only once it outgrew the listpack, so it is growing: the chunk
		// grows to the next power of two, as it doubled from 256 bytes before the listpack
		// took the small sets, up to its limit. Powers of two are size classes up to 32 KiB;
		// doubling from an odd size reached past 32 KiB early, where every buffer is a large
		// object of its own pages (growing by a quarter, or doubling from a conversion's
		// reservation, made SDIFF of a hundred 256-byte members half as slow again).
		ch = resize(ch, min(1<<bits.Len(uint(off+size-1)), chunkMax))
	}
	a.chunks[a.tail] = appendEntry(ch, m)
	a.live[a.tail] += uint32(size)
	return uint64(a.tail)<<16 | uint64(off)
}

func appendEntry(ch, m []byte) []byte {
	ch = binary.AppendUvarint(ch, uint64(len(m))<<1)
	return append(ch, m...)
}

// newChunk returns the index of an empty chunk with room for size bytes.
func (a *arena) newChunk(size int) uint32 {
	if len(a.chunks) == 0 {
		a.chunks, a.live = make([][]byte, 1, 2), make([]uint32, 1, 2)
	}
	var c uint32
	if n := len(a.free); n > 0 {
		c, a.free = a.free[n-1], a.free[:n-1]
	} else {
		c = uint32(len(a.chunks))
		if uint64(c)<<16 > refMax {
			panic("BUG: set arena exceeds 2^24 chunks")
		}
		a.chunks, a.live = append(a.chunks, nil), append(a.live, 0)
	}
	if size == chunkMax && a.spare != nil {
		a.chunks[c], a.spare = a.spare[:0], nil
	} else {
		a.chunks[c] = grow(nil, size)
	}
	return c
}

// reserve gives an empty arena a first chunk of size bytes (at most chunkMax), for a
// conversion that knows what it will store.
func (a *arena) reserve(size int) {
	if a.tail == 0 && size > 0 {
		a.tail = a.newChunk(min(size, chunkMax))
	}
}

// release frees a chunk whose entries are all dead or moved.
func (a *arena) release(c uint32) {
	if cap(a.chunks[c]) == chunkMax {
		a.spare = a.chunks[c]
	}
	a.chunks[c], a.live[c] = nil, 0
	a.free = append(a.free, c)
}

// kill marks ref's entry dead and returns the chunk to compact, or 0. An emptied chunk is
// released (the tail is kept and rewound instead).
func (a *arena) kill(ref uint64) uint32 {
	c, off := uint32(ref>>16), int(ref&0xFFFF)
	ch := a.chunks[c]
	v, k := binary.Uvarint(ch[off:])
	ch[off] |= 1
	a.live[c] -= uint32(k + int(v>>1))
	switch {
	case a.live[c] == 0 && c == a.tail:
		a.chunks[c] = ch[:0]
	case a.live[c] == 0:
		a.release(c)
	case c != a.tail && int(a.live[c])*2 < len(ch):
		return c
	}
	return 0
}

// eachIn calls fn with the ref and member of every live entry of chunk c.
func (a *arena) eachIn(c uint32, fn func(ref uint64, m []byte)) {
	ch := a.chunks[c]
	for off := 0; off < len(ch); {
		v, k := binary.Uvarint(ch[off:])
		end := off + k + int(v>>1)
		if v&1 == 0 {
			fn(uint64(c)<<16|uint64(off), ch[off+k:end])
		}
		off = end
	}
}

// each calls fn with every live member, chunk by chunk, until fn returns false.
func (a *arena) each(fn func(m []byte) bool) bool {
	for c := 1; c < len(a.chunks); c++ {
		ch := a.chunks[c]
		for off := 0; off < len(ch); {
			v, k := binary.Uvarint(ch[off:])
			end := off + k + int(v>>1)
			if v&1 == 0 && !fn(ch[off+k:end]) {
				return false
			}
			off = end
		}
	}
	return true
}

// bytes returns the arena's footprint: the capacity of its chunks.
func (a *arena) bytes() int {
	n := 0
	for _, ch := range a.chunks {
		n += cap(ch)
	}
	return n + cap(a.spare)
}

func (a *arena) clone() arena {
	out := arena{chunks: make([][]byte, len(a.chunks)), live: append([]uint32(nil), a.live...),
		free: append([]uint32(nil), a.free...), tail: a.tail}
	for i, ch := range a.chunks {
		if ch != nil {
			out.chunks[i] = append(make([]byte, 0, cap(ch)), ch...)
		}
	}
	return out
}
