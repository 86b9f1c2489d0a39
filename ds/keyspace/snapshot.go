package keyspace

// Point-in-time snapshots without fork (Dragonfly's scheme on our chained table).
//
// BeginSnapshot, called at the instant (the owner holds the keyspace, and for a whole-server
// image every other one too), keeps the bucket array being imaged and a bit per bucket saying
// whether that bucket's entries have been handed to the snapshot's emit function. From then on:
//
//  1. The table does not resize, and a resize under way at the instant stops moving buckets:
//     chains just grow or shrink, so a key's bucket (in whichever of the two arrays holds it)
//     is the same in the live table and in the image for the whole snapshot. After End the
//     move resumes, and the first insert after it ends starts growing the table to the
//     right load.
//  2. Every operation of a token holder that may change a bucket's chain or an entry of it
//     (findQuiet and so Find, FindHashed, FindQuiet; Upsert; Add and every insert; Delete;
//     Remove, and so the expiry of Sweep and Random; SetExpire and SetExpireMs, CopyExpire)
//     first emits every entry of that bucket whose bit is clear, as it is now, and sets the
//     bit. An entry is therefore emitted with its value and expiry of the instant, exactly
//     once, and a key created during the snapshot lands in an emitted bucket and is never
//     emitted.
//  3. Step walks the buckets in order (the current array, then the old one of a resize under
//     way) and emits those whose bit is still clear; emitted buckets are skipped.
//  4. Clear does not emit the rest: the old bucket array (with its far-expiry records) moves
//     to a detached keyspace that only the snapshot reaches, and the live keyspace starts from
//     fresh buckets with no snapshot. Clear already drops the slab free lists, so none of the
//     old entries is reused while the snapshot still reads them.
//  5. Readers without the token (FindShared, Peek, Head/Match, Scan) emit nothing and change
//     nothing but an access time.
//
// The emit function runs inside those operations, holding the token: it must not block and
// must not call back into the keyspace except to read (ExpireMs).

// Snap is one keyspace's part of a snapshot. It is touched only by the holder of the keyspace's
// token: the walk (Step) and End as much as the hooks.
type Snap struct {
	ks      *Keyspace // the keyspace imaged: the live one, or after Clear the detached old table
	buckets []*Entry  // the table as of the instant (the live array itself: it does not resize)
	old     []*Entry  // and the old array of a resize under way (frozen), or nil
	moved   uint64    // old's buckets below moved are empty
	done    []uint64  // a bit per bucket emitted, buckets' then old's; allocated on first use
	next    int       // the walk's next bucket, in the same numbering
	emit    func(e *Entry, ks *Keyspace)
	walked  int
	copied  int
}

// BeginSnapshot starts imaging ks as it is now: emit is called once for every entry present
// (expired ones not yet reclaimed included) with its value as of now, either by Step or just
// before an operation would change it. It costs O(1); one snapshot at a time per keyspace.
func (ks *Keyspace) BeginSnapshot(emit func(e *Entry, ks *Keyspace)) *Snap {
	if ks.snap != nil {
		panic("BUG: a keyspace snapshot is already active")
	}
	s := &Snap{ks: ks, buckets: ks.buckets, old: ks.old, moved: ks.moved, emit: emit}
	ks.snap = s
	return s
}

// Snapshotting reports whether a snapshot of ks is active (the table does not resize).
func (ks *Keyspace) Snapshotting() bool { return ks.snap != nil }

// cow emits the image's bucket of hash h if it has not been emitted yet.
func (s *Snap) cow(h uint64) {
	i := h & uint64(len(s.buckets)-1)
	if s.old != nil {
		if j := h & uint64(len(s.old)-1); j >= s.moved {
			i = uint64(len(s.buckets)) + j
		}
	}
	if s.done == nil {
		s.done = make([]uint64, (s.size()+63)/64)
	}
	w, bit := i>>6, uint64(1)<<(i&63)
	if s.done[w]&bit != 0 {
		return
	}
	s.done[w] |= bit
	for e := s.chain(int(i)); e != nil; e = e.next {
		s.copied++
		s.emit(e, s.ks)
	}
}

// size is the number of buckets of the image: the current array's and the old one's.
func (s *Snap) size() int { return len(s.buckets) + len(s.old) }

// chain returns the image's bucket i (numbered as done).
func (s *Snap) chain(i int) *Entry {
	if i < len(s.buckets) {
		return s.buckets[i]
	}
	return s.old[i-len(s.buckets)]
}

// Step emits the entries of the next buckets not emitted yet, stopping once it emitted at least
// budget entries or visited 4×budget buckets, and returns how many it emitted and whether the
// walk is complete.
func (s *Snap) Step(budget int) (n int, done bool) {
	if s.done == nil && s.buckets != nil {
		s.done = make([]uint64, (s.size()+63)/64)
	}
	for visited := 0; s.next < s.size() && n < budget && visited < 4*budget; visited++ {
		i := s.next
		s.next++
		w, bit := i>>6, uint64(1)<<(i&63)
		if s.done[w]&bit != 0 {
			continue
		}
		s.done[w] |= bit
		for e := s.chain(i); e != nil; e = e.next {
			n++
			s.emit(e, s.ks)
		}
	}
	s.walked += n
	return n, s.next >= s.size()
}

// Walked and Copied count the entries emitted by Step and by the hooks (copy-on-write).
func (s *Snap) Walked() int { return s.walked }
func (s *Snap) Copied() int { return s.copied }

// End removes the snapshot from its keyspace (complete or not): no hook emits any more and the
// table may resize again. Calling it twice is harmless.
func (s *Snap) End() {
	if s.ks != nil && s.ks.snap == s {
		s.ks.snap = nil
	}
	s.ks, s.buckets, s.old, s.done, s.emit = nil, nil, nil, nil, nil
}

// detach hands the snapshot the table Clear is about to drop (rule 4).
func (ks *Keyspace) detachSnapshot() {
	s := ks.snap
	old := &Keyspace{buckets: ks.buckets, old: ks.old, moved: ks.moved, count: ks.count,
		volatile: ks.volatile, far: ks.far, snap: s}
	s.ks = old
	ks.snap = nil
}
