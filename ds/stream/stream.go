package stream

import (
	"errors"
	"math"
	"sort"
)

// Stream is a Redis stream: its entries in blocks (sorted by master ID) and its metadata.
type Stream struct {
	blocks       []*block
	length       uint64
	lastID       ID // the greatest ID ever added (or set by XSETID)
	firstID      ID // the first live entry's ID, 0-0 when empty
	maxDeleted   ID
	entriesAdded uint64
	groups       *groupSet // nil until a group is created (groups.go)
	blockMem     int       // the sum of the blocks' memBytes, kept as they change
}

// Node limits, as Redis's stream-node-max-bytes and stream-node-max-entries (0: no limit).
type Limits struct{ MaxBytes, MaxEntries int64 }

// DefaultLimits are Redis's defaults.
var DefaultLimits = Limits{MaxBytes: 4096, MaxEntries: 100}

// maxReserve bounds the bytes a new block reserves from the size of the one before.
const maxReserve = 64 << 10

// listpackMax is Redis's STREAM_LISTPACK_MAX_SIZE: a node never grows past it, and an entry
// whose fields and values exceed it is refused.
const listpackMax = 1 << 30

// Errors of Add and NewID; src/command maps them to Redis's wire errors.
var (
	ErrTooSmall  = errors.New("stream: ID equal or smaller than the top item")
	ErrExhausted = errors.New("stream: last possible ID reached")
	ErrTooLarge  = errors.New("stream: elements too large")
)

// New returns an empty stream.
func New() *Stream { return &Stream{} }

// Len is the number of live entries.
func (s *Stream) Len() uint64 { return s.length }

// LastID is the last generated ID (XINFO last-generated-id).
func (s *Stream) LastID() ID { return s.lastID }

// FirstID is the first live entry's ID, 0-0 when empty (XINFO recorded-first-entry-id).
func (s *Stream) FirstID() ID { return s.firstID }

// MaxDeletedID is the greatest ID deleted by XDEL (or set by XSETID).
func (s *Stream) MaxDeletedID() ID { return s.maxDeleted }

// EntriesAdded counts every entry ever added (or as set by XSETID).
func (s *Stream) EntriesAdded() uint64 { return s.entriesAdded }

// Blocks is the number of nodes (XINFO radix-tree-keys).
func (s *Stream) Blocks() int { return len(s.blocks) }

// Encoding is OBJECT ENCODING's name for a stream.
func (s *Stream) Encoding() string { return "stream" }

// NewID returns the ID XADD gives an entry: with auto ("*") the current millisecond or the one
// after the last ID; with seqGiven false ("ms-*") the next sequence of ms; else id itself, which
// must be above the last ID.
func (s *Stream) NewID(id ID, auto, seqGiven bool, nowMs uint64) (ID, error) {
	last := s.lastID
	switch {
	case auto:
		if nowMs > last.Ms {
			return ID{nowMs, 0}, nil
		}
		next, ok := last.Incr()
		if !ok {
			return ID{}, ErrExhausted
		}
		return next, nil
	case !seqGiven:
		switch {
		case id.Ms == last.Ms:
			if last.Seq == math.MaxUint64 {
				return ID{}, ErrTooSmall
			}
			return ID{id.Ms, last.Seq + 1}, nil
		case id.Ms > last.Ms:
			return ID{id.Ms, 0}, nil
		}
		return ID{}, ErrTooSmall
	case id.Cmp(last) <= 0:
		return ID{}, ErrTooSmall
	}
	return id, nil
}

// Add appends an entry with id, which must be above LastID (NewID gives one), and fields and
// values fv (field, value, …; an even number). A new block starts where Redis would start a new
// listpack under lim.
func (s *Stream) Add(id ID, fv [][]byte, lim Limits) error {
	if id.Cmp(s.lastID) <= 0 {
		return ErrTooSmall
	}
	total := 0
	for _, b := range fv {
		total += len(b)
	}
	if total > listpackMax {
		return ErrTooLarge
	}
	var tail *block
	if n := len(s.blocks); n > 0 {
		tail = s.blocks[n-1]
		maxBytes := lim.MaxBytes
		if maxBytes <= 0 || maxBytes > listpackMax {
			maxBytes = listpackMax
		}
		if int64(tail.lpBytes()+total) >= maxBytes ||
			(lim.MaxEntries > 0 && int64(tail.live+tail.dead) >= lim.MaxEntries) {
			tail = nil
		}
	}
	if tail == nil {
		if n := len(s.blocks); n > 0 {
			prev := s.blocks[n-1]
			s.blockMem -= prev.memBytes()
			prev.shrink() // closed: it grows no more
			s.blockMem += prev.memBytes()
		}
		tail = newBlock(id, fv)
		if n := len(s.blocks); n > 0 && len(s.blocks[n-1].data) <= maxReserve {
			// The block before is what this one will likely hold: take its size at once
			// rather than growing to it by doublings (a stream's first block does not).
			tail.data = make([]byte, 0, len(s.blocks[n-1].data))
		}
		s.blocks = append(s.blocks, tail)
		s.blockMem += tail.memBytes()
	}
	before := tail.memBytes()
	tail.append(id, fv)
	s.blockMem += tail.memBytes() - before
	if s.length == 0 {
		s.firstID = id
	}
	s.length++
	s.entriesAdded++
	s.lastID = id
	return nil
}

// findBlock returns the index of the last block whose master ID is at or below id, or 0.
func (s *Stream) findBlock(id ID) int {
	i := sort.Search(len(s.blocks), func(i int) bool { return id.Less(s.blocks[i].master) })
	if i > 0 {
		i--
	}
	return i
}

// Delete marks the entry id deleted; false when there is none. A block left with no live entry
// goes; MaxDeletedID rises to id.
func (s *Stream) Delete(id ID) bool {
	if len(s.blocks) == 0 {
		return false
	}
	bi := s.findBlock(id)
	b := s.blocks[bi]
	c := cursor{b: b}
	var e entry
	var fv [][]byte
	for {
		var ok bool
		if fv, ok = c.next(&e, fv); !ok {
			return false
		}
		if e.id == id {
			break
		}
		if id.Less(e.id) {
			return false
		}
	}
	if e.flags&flagDeleted != 0 {
		return false
	}
	b.markDeleted(e.off)
	if b.live == 0 {
		s.blockMem -= b.memBytes()
		s.blocks = append(s.blocks[:bi], s.blocks[bi+1:]...)
	}
	s.length--
	if s.maxDeleted.Less(id) {
		s.maxDeleted = id
	}
	if id == s.firstID {
		s.firstID = s.edgeID(false)
	}
	return true
}

// edgeID returns the first (or last) live entry's ID, 0-0 when empty.
func (s *Stream) edgeID(last bool) ID {
	var got ID
	it := s.Range(ID{}, Max, last)
	if id, _, ok := it.Next(); ok {
		got = id
	}
	return got
}

// FirstEntry and LastEntry return the first and last live entries (fv valid until the next call
// on the stream); ok false when empty.
func (s *Stream) FirstEntry() (ID, [][]byte, bool) { it := s.Range(ID{}, Max, false); return it.Next() }
func (s *Stream) LastEntry() (ID, [][]byte, bool)  { it := s.Range(ID{}, Max, true); return it.Next() }

// LastLiveID is LastEntry's ID (Redis's streamLastValidID), without decoding the last block
// unless its last entry was deleted; ok false when empty.
func (s *Stream) LastLiveID() (ID, bool) {
	if n := len(s.blocks); n > 0 && s.blocks[n-1].lastLive() {
		return s.blocks[n-1].last, true
	}
	id, _, ok := s.LastEntry()
	return id, ok
}

// Trim options: by MaxLen (ByMinID false) or by MinID; Approx removes whole blocks only;
// Limit (0: none) bounds the entries removed, a whole block at a time.
type Trim struct {
	ByMinID bool
	MaxLen  uint64
	MinID   ID
	Approx  bool
	Limit   int64
}

// Trim removes entries from the head as Redis 7.0's streamTrim and returns how many.
func (s *Stream) Trim(t Trim) int64 {
	var deleted int64
	drop := 0
	for drop < len(s.blocks) {
		if !t.ByMinID && s.length <= t.MaxLen {
			break
		}
		b := s.blocks[drop]
		entries := int64(b.live)
		if t.Limit > 0 && deleted+entries > t.Limit {
			break
		}
		var remove bool
		if t.ByMinID {
			remove = b.last.Less(t.MinID)
		} else {
			remove = s.length-uint64(entries) >= t.MaxLen
		}
		if remove {
			s.blockMem -= b.memBytes()
			s.length -= uint64(entries)
			deleted += entries
			drop++
			continue
		}
		if t.Approx {
			break
		}
		deleted += s.trimInBlock(b, t)
		break
	}
	if drop > 0 {
		clear(s.blocks[:drop])
		s.blocks = append(s.blocks[:0], s.blocks[drop:]...)
	}
	if deleted > 0 {
		s.firstID = s.edgeID(false)
	}
	return deleted
}

// trimInBlock marks b's leading entries deleted until the trim is satisfied.
func (s *Stream) trimInBlock(b *block, t Trim) int64 {
	var n int64
	c := cursor{b: b}
	var e entry
	var fv [][]byte
	for {
		var ok bool
		if fv, ok = c.next(&e, fv); !ok {
			break
		}
		if t.ByMinID && !e.id.Less(t.MinID) || !t.ByMinID && s.length <= t.MaxLen {
			break
		}
		if e.flags&flagDeleted == 0 {
			b.markDeleted(e.off)
			s.length--
			n++
		}
	}
	return n
}

// SetID is XSETID: last becomes the last ID; entriesAdded and maxDeleted are set when given.
func (s *Stream) SetID(last ID, entriesAdded *uint64, maxDeleted *ID) {
	s.lastID = last
	if entriesAdded != nil {
		s.entriesAdded = *entriesAdded
	}
	if maxDeleted != nil {
		s.maxDeleted = *maxDeleted
	}
}

// Clone returns a deep copy (COPY).
func (s *Stream) Clone() any {
	ns := *s
	ns.blocks = make([]*block, len(s.blocks))
	ns.blockMem = 0
	for i, b := range s.blocks {
		ns.blocks[i] = b.clone()
		ns.blockMem += ns.blocks[i].memBytes()
	}
	ns.groups = s.groups.clone()
	return &ns
}

// MemoryBytes estimates the bytes the stream holds (MEMORY USAGE, INFO, and the used-memory
// counter after every write, so it must not walk the blocks).
func (s *Stream) MemoryBytes() int {
	const header = 112 // the Stream itself: 104 bytes, in the allocator's 112-byte class
	return header + 8*cap(s.blocks) + s.blockMem + s.groups.memoryBytes()
}

// countBlockMem is blockMem counted afresh (tests check the kept sum against it).
func (s *Stream) countBlockMem() int {
	n := 0
	for _, b := range s.blocks {
		n += b.memBytes()
	}
	return n
}

// FirstIDAny is the first entry's ID counting deleted ones (Redis's streamGetEdgeID without
// skipping tombstones, what a `~` MINID trim is replicated with), Max when there is none.
func (s *Stream) FirstIDAny() ID {
	if len(s.blocks) == 0 {
		return Max
	}
	c := cursor{b: s.blocks[0]}
	var e entry
	c.next(&e, nil)
	return e.id
}
