package zset

import "encoding/binary"

// arena holds the members of a large set as records in a few big byte chunks, so a million
// members cost a few hundred pointer-free allocations instead of a million strings. A record
// is the owner's id (4 bytes, little endian), the length (uvarint) and the bytes; a member is
// addressed by a ref, chunk<<32 | offset.
//
// Freed records leave holes. A chunk that falls below half live (and is not the one being
// filled) is evacuated: its live records move to the current chunk and it is released, so the
// arena stays within about twice its live bytes and each freed byte pays O(1) moving work.
type arena struct {
	chunks [][]byte // nil once released
	live   []int    // live bytes per chunk
	cur    int      // chunk new records go to, or -1
	free   []int    // released chunk slots
	total  int      // live bytes in all chunks
}

const (
	minChunk = 512
	maxChunk = 64 << 10
)

type ref uint64

func makeRef(chunk, off int) ref { return ref(uint64(chunk)<<32 | uint64(off)) }
func (r ref) chunk() int         { return int(r >> 32) }
func (r ref) off() int           { return int(uint32(r)) }

// deadRef marks an item whose record is being freed.
const deadRef = ^ref(0)

func newArena() arena { return arena{cur: -1} }

func recordSize(n int) int { return 4 + uvarintLen(uint64(n)) + n }

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// alloc stores member for owner id and returns its ref.
func (a *arena) alloc(id uint32, member []byte) ref {
	need := recordSize(len(member))
	c := a.cur
	if c < 0 || len(a.chunks[c])+need > cap(a.chunks[c]) {
		size := chunkSize(a.total)
		if need > size/8 {
			// A large member gets a chunk of its own, released when it is freed, so it never
			// strands the tail of a shared chunk, and a set of a few long members holds no
			// half-filled chunk: growing needs no copy of the members already there, so it
			// leaves no garbage (the collector lets garbage take up to the live heap again).
			c = a.newChunk(need)
		} else {
			c = a.newChunk(size)
			a.cur = c
		}
	}
	b := a.chunks[c]
	off := len(b)
	b = binary.LittleEndian.AppendUint32(b, id)
	b = binary.AppendUvarint(b, uint64(len(member)))
	a.chunks[c] = append(b, member...)
	a.live[c] += need
	a.total += need
	return makeRef(c, off)
}

// chunkSize grows chunks with the set: about a quarter of the live bytes, within bounds.
func chunkSize(total int) int {
	s := minChunk
	for s < total/4 && s < maxChunk {
		s <<= 1
	}
	return s
}

func (a *arena) newChunk(size int) int {
	b := make([]byte, 0, size)
	if n := len(a.free); n > 0 {
		c := a.free[n-1]
		a.free = a.free[:n-1]
		a.chunks[c] = b
		return c
	}
	a.chunks = append(a.chunks, b)
	a.live = append(a.live, 0)
	return len(a.chunks) - 1
}

// get returns the member stored at r; the bytes are valid until the arena next changes.
func (a *arena) get(r ref) []byte {
	b := a.chunks[r.chunk()][r.off()+4:]
	l, k := binary.Uvarint(b)
	return b[k : k+int(l)]
}

// setOwner rewrites the id of the record at r.
func (a *arena) setOwner(r ref, id uint32) {
	binary.LittleEndian.PutUint32(a.chunks[r.chunk()][r.off():], id)
}

// release drops chunk c, whose records are all dead or moved.
func (a *arena) release(c int) {
	a.total -= a.live[c]
	a.live[c] = 0
	a.chunks[c] = nil
	if c == a.cur {
		a.cur = -1
	}
	a.free = append(a.free, c)
}
