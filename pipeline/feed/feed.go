// Package feed is the write-effect feed: every write a shard runs appends its replicated form
// (RESP, as Redis writes it to the AOF and to replicas) to a bounded ring of that shard's, and
// consumers (the AOF writer, the replication backlog, tests) read every ring and merge the
// entries into one order.
//
// It imports nothing from the project.
//
// Ordering invariants:
//
//  1. Each entry has a sequence number from one counter, taken while the writer holds the token of
//     the shard it appends to (a command spanning shards holds all of theirs and appends once, to
//     the first). Entries of one ring are in increasing order, and two writes of one key (one
//     shard) or of overlapping shard sets are ordered as they ran.
//  2. A Reader returns entries in sequence order, each once, and never returns entry n before
//     every entry below n that any ring will ever hold has been returned: a ring's writer
//     announces the number it is about to append (its claim) before taking it, and a reader
//     stops short of any announced number.
//  3. Writers never wait for readers. A reader that falls more than a ring's size behind a
//     ring gets ErrLost (what it missed is gone) and must start over from a snapshot.
package feed

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sort"
	"sync/atomic"
)

// ErrLost is returned by Reader.Next when the reader fell behind a ring by more than the ring's
// size, or an entry larger than a ring was dropped: entries it has not seen are gone.
var ErrLost = errors.New("feed: reader fell behind; entries were lost")

// header is an entry's prefix in a ring: sequence number, database, length of the RESP bytes.
const header = 16

// claimPending marks a ring whose writer is taking a sequence number right now.
const claimPending = math.MaxUint64

// testHook, set by tests only, runs inside Append where a reader could go wrong: between taking
// a number and announcing it, and between writing an entry and publishing it.
var testHook func()

// Feed is the set of rings of one engine.
type Feed struct {
	seq     atomic.Uint64
	readers atomic.Int32  // attached readers; writers append only while there is one
	dropped atomic.Uint64 // entries too large for a ring: every reader has lost them
	rings   []Ring
}

// Ring is one shard's buffer. Only the holder of the shard's token appends to it.
type Ring struct {
	buf   []byte
	mask  uint64
	head  atomic.Uint64 // bytes appended in all
	claim atomic.Uint64 // the number being appended, claimPending while taking one, 0 when idle
	_     [40]byte      // off the next ring's lines
}

// New makes a feed of n rings of size bytes each (rounded up to a power of two, at least 4 KiB).
// Rings take their memory when the first reader attaches.
func New(n, size int) *Feed {
	size = max(size, 4096)
	p := 1
	for p < size {
		p <<= 1
	}
	f := &Feed{rings: make([]Ring, n)}
	for i := range f.rings {
		f.rings[i].mask = uint64(p - 1)
	}
	return f
}

// Seq returns the last sequence number taken. Read holding every shard's token, it is the
// number of the last entry appended: every later entry has a higher one (a snapshot's instant).
func (f *Feed) Seq() uint64 { return f.seq.Load() }

// Active reports whether any reader is attached: writers build and append entries only then.
func (f *Feed) Active() bool { return f.readers.Load() > 0 }

// Append adds one entry (cmd, the RESP of one or more commands, run in database db) to ring i
// and returns its sequence number. The caller holds ring i's shard token.
func (f *Feed) Append(i int, db int, cmd []byte) uint64 {
	r := &f.rings[i]
	r.claim.Store(claimPending)
	seq := f.seq.Add(1)
	if testHook != nil {
		testHook()
	}
	r.claim.Store(seq)
	n := uint64(header + len(cmd))
	if r.buf == nil || n > uint64(len(r.buf)) {
		if r.buf != nil {
			f.dropped.Add(1)
		}
		r.claim.Store(0)
		return seq
	}
	var h [header]byte
	binary.LittleEndian.PutUint64(h[0:], seq)
	binary.LittleEndian.PutUint32(h[8:], uint32(db))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(cmd)))
	at := r.head.Load()
	r.put(at, h[:])
	r.put(at+header, cmd)
	if testHook != nil {
		testHook()
	}
	r.head.Store(at + n)
	r.claim.Store(0)
	return seq
}

// put copies b into the ring at absolute offset at, wrapping at the end.
func (r *Ring) put(at uint64, b []byte) {
	o := at & r.mask
	k := copy(r.buf[o:], b)
	copy(r.buf, b[k:])
}

// get copies len(dst) bytes from absolute offset at.
func (r *Ring) get(at uint64, dst []byte) {
	o := at & r.mask
	k := copy(dst, r.buf[o:])
	copy(dst[k:], r.buf)
}

// Entry is one write as a reader returns it. Cmd is valid until the reader's next Next.
type Entry struct {
	Seq uint64
	DB  int
	Cmd []byte
}

// Reader merges the rings. One goroutine uses a Reader at a time.
type Reader struct {
	f       *Feed
	cursor  []uint64 // per ring: absolute offset of the next entry to read
	dropped uint64
	pend    [][]Entry // per ring: entries read but not yet returned
	take    []int     // merge's scratch: per ring, how many of pend are ready
	heads   []int     // merge's scratch for the picking merge
	buf     []byte
	out     []Entry
	closed  bool
}

// Attach starts a reader at the current end of every ring: it sees the writes that begin after
// Attach returns. A caller that also needs the state before (a snapshot) takes the snapshot after
// Attach, so that nothing falls between the two.
//
// Rings are allocated by the first Attach. Attach must not race with Append on a ring that has no
// buffer yet; the engine attaches while it holds every shard's token, or before serving.
func (f *Feed) Attach() *Reader {
	for i := range f.rings {
		if r := &f.rings[i]; r.buf == nil {
			r.buf = make([]byte, r.mask+1)
		}
	}
	rd := &Reader{f: f, cursor: make([]uint64, len(f.rings)), pend: make([][]Entry, len(f.rings)),
		dropped: f.dropped.Load()}
	for i := range f.rings {
		rd.cursor[i] = f.rings[i].head.Load()
	}
	f.readers.Add(1)
	return rd
}

// Close detaches the reader; writers stop appending when no reader is left.
func (rd *Reader) Close() {
	if !rd.closed {
		rd.closed = true
		rd.f.readers.Add(-1)
	}
}

// Next returns the entries that are ready, in sequence order (see the package invariants). It
// returns none, without waiting, when nothing is ready yet.
func (rd *Reader) Next() ([]Entry, error) {
	f := rd.f
	if f.dropped.Load() != rd.dropped {
		return nil, ErrLost
	}
	// The watermark: no ring will ever append a number below it that it has not appended yet.
	w := f.seq.Load() + 1
	for i := range f.rings {
		c := f.rings[i].claim.Load()
		if c == claimPending {
			return nil, nil // a number is being taken: which one is not known yet
		}
		if c != 0 {
			w = min(w, c)
		}
	}
	rd.buf = rd.buf[:0]
	for i := range f.rings {
		if err := rd.readRing(i); err != nil {
			return nil, err
		}
	}
	return rd.merge(w), nil
}

// readRing moves ring i's unread entries into rd.pend[i], copying their bytes into rd.buf.
func (rd *Reader) readRing(i int) error {
	r := &rd.f.rings[i]
	head := r.head.Load()
	size := r.mask + 1
	at := rd.cursor[i]
	if head-at > size {
		return ErrLost
	}
	var h [header]byte
	for at < head {
		r.get(at, h[:])
		n := uint64(binary.LittleEndian.Uint32(h[12:]))
		if at+header+n > head || n > size {
			return ErrLost // torn by a writer that lapped us
		}
		off := len(rd.buf)
		rd.buf = slices.Grow(rd.buf, int(n))[:off+int(n)]
		r.get(at+header, rd.buf[off:])
		rd.pend[i] = append(rd.pend[i], Entry{Seq: binary.LittleEndian.Uint64(h[0:]),
			DB: int(binary.LittleEndian.Uint32(h[8:])), Cmd: rd.buf[off : off+int(n) : off+int(n)]})
		at += header + n
	}
	// What was copied is good only if the writer has not come round over it meanwhile.
	if r.head.Load()-rd.cursor[i] > size {
		return ErrLost
	}
	rd.cursor[i] = at
	return nil
}

// merge returns the pending entries below w in sequence order, keeping the rest pending. Each
// ring's entries are in order already; when the ready ones fill their range of numbers, as they
// do while no entry was dropped (every number is taken by one Append), each goes straight to its
// place, O(entries + rings). Otherwise they are merged by picking the lowest head each time.
func (rd *Reader) merge(w uint64) []Entry {
	rd.out = rd.out[:0]
	if len(rd.take) != len(rd.pend) {
		rd.take = make([]int, len(rd.pend))
	}
	n, lo, hi := 0, uint64(math.MaxUint64), uint64(0)
	for i, p := range rd.pend {
		k := readyPrefix(p, w)
		rd.take[i] = k
		if k > 0 {
			n += k
			lo, hi = min(lo, p[0].Seq), max(hi, p[k-1].Seq)
		}
	}
	if n > 0 && hi-lo+1 == uint64(n) { // numbers are unique, so n of them in a range of n fill it
		rd.out = slices.Grow(rd.out, n)[:n]
		for i, p := range rd.pend {
			for _, e := range p[:rd.take[i]] {
				rd.out[e.Seq-lo] = e
			}
		}
	} else if n > 0 {
		heads := slices.Grow(rd.heads[:0], len(rd.pend))[:len(rd.pend)]
		clear(heads)
		for {
			best := -1
			for i, p := range rd.pend {
				if h := heads[i]; h < rd.take[i] && (best < 0 || p[h].Seq < rd.pend[best][heads[best]].Seq) {
					best = i
				}
			}
			if best < 0 {
				break
			}
			rd.out = append(rd.out, rd.pend[best][heads[best]])
			heads[best]++
		}
		rd.heads = heads
	}
	for i, p := range rd.pend {
		k := rd.take[i]
		if k == len(p) {
			rd.pend[i] = p[:0] // the array is reused; the bytes are in rd.buf
			continue
		}
		// Keep what stays pending: its bytes live in rd.buf, which the next Next reuses.
		kept := copy(p, p[k:])
		for j := range p[:kept] {
			p[j].Cmd = append([]byte(nil), p[j].Cmd...)
		}
		rd.pend[i] = p[:kept]
	}
	return rd.out
}

// readyPrefix returns how many entries at the front of p (in increasing order) are below w.
func readyPrefix(p []Entry, w uint64) int {
	if len(p) == 0 || p[len(p)-1].Seq < w {
		return len(p)
	}
	return sort.Search(len(p), func(j int) bool { return p[j].Seq >= w })
}
