// Package agentmem is an agent's memory: records of text with an embedding and metadata (user,
// session, namespace, type, topics, entities, importance, event time, expiry, pinning), searched
// by similarity, recency and importance under exact pre-filters, with versions (a superseded
// record stays for as-of queries), and per-session working-memory windows with a token budget.
//
// The pre-filters are roaring bitmaps of record ids per field value, intersected before any
// vector is compared: a small candidate set is scored exactly, a large one by the HNSW index
// (ds/vector) with the bitmap as its filter. The package knows nothing of RESP or of time: every
// operation takes the time it runs at (unix ms) from its caller. A Store is not safe for
// concurrent use, except that reads (Get, Search, Window, ForEach) may run concurrently with each
// other while nothing writes.
package agentmem

import (
	"cmp"
	"container/heap"
	"errors"
	"math"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/hotkv/hotkv/ds/vector"
)

// Type is a memory's kind.
type Type uint8

const (
	Semantic Type = iota // a fact ("the user is vegetarian"), the default
	Episodic             // an event ("on Monday the user booked a flight")
	Message              // a conversation turn
	numTypes
)

var typeNames = [numTypes]string{"semantic", "episodic", "message"}

func (t Type) String() string { return typeNames[t] }

// ParseType reads a type's name (lower case).
func ParseType(s string) (Type, bool) {
	for i, n := range typeNames {
		if n == s {
			return Type(i), true
		}
	}
	return 0, false
}

// Errors of the store's operations.
var (
	ErrDim         = errors.New("vector dimension mismatch")
	ErrVector      = errors.New("invalid vector: NaN, infinite or zero")
	ErrNotFound    = errors.New("no such memory")
	ErrSuperseded  = errors.New("memory is already superseded")
	ErrSameMemory  = errors.New("a memory cannot supersede itself")
	ErrWindowLarge = errors.New("message exceeds the window's token budget")
)

// Record is one memory. Vec is the embedding normalized to unit length; Created is when it was
// added (its version is valid from then), ValidTo when it was superseded (0: it is current).
type Record struct {
	ID           string
	Text         []byte
	Vec          []float32
	User         string
	Session      string
	NS           string
	Type         Type
	Topics       []string
	Entities     []string
	Importance   float64
	EventTime    int64 // unix ms
	Created      int64 // unix ms
	Updated      int64 // unix ms
	ExpireAt     int64 // unix ms, 0: never
	Pinned       bool
	SupersededBy string
	Supersedes   string
	ValidTo      int64 // unix ms, 0: current

	id uint32 // the index's id
}

// Config is a store's fixed shape.
type Config struct {
	Dim         int
	Quant       vector.Quant // how the HNSW index stores vectors (the exact path uses Vec)
	RequireUser bool         // searches and forgets must name a user
	Window      int          // a session window's default token budget
	Encoding    uint8        // the token encoding windows count with (the caller's numbering)
	// Embedder names the embedder the caller embeds TEXT with when no vector is given ("" none;
	// the caller's spelling, kept in the encoding).
	Embedder string
	// EF is the index's build EF (0: ds/vector's default); not part of the encoding, which
	// holds the index as built.
	EF int
}

// Store is one agent memory.
type Store struct {
	cfg  Config
	idx  *vector.Set
	recs []*Record // by index id; nil where free
	byID map[string]*Record
	// next numbers generated ids.
	next uint64

	all, current                       *roaring.Bitmap
	users, sessions, nss, topics, ents map[string]*roaring.Bitmap
	types                              [numTypes]*roaring.Bitmap

	expiring int     // records with an ExpireAt
	exp      expHeap // (ExpireAt, ID) of records with one; stale entries are skipped

	windows  map[string]*Window
	bytes    int64 // text, metadata and vectors of the records, for MemoryUsage
	winBytes int64 // the windows' messages
}

// New makes an empty store.
func New(cfg Config) (*Store, error) {
	if cfg.Dim < 1 || cfg.Dim > vector.MaxDim {
		return nil, ErrDim
	}
	idx, err := vector.New(vector.Config{Dim: cfg.Dim, Metric: vector.Cosine, Quant: cfg.Quant,
		M: vector.DefaultM, EF: cmp.Or(cfg.EF, vector.DefaultEF), Seed: 0x9E3779B97F4A7C15})
	if err != nil {
		return nil, err
	}
	return newWith(cfg, idx), nil
}

func newWith(cfg Config, idx *vector.Set) *Store {
	s := &Store{cfg: cfg, idx: idx, byID: map[string]*Record{}, all: roaring.New(), current: roaring.New(),
		users: map[string]*roaring.Bitmap{}, sessions: map[string]*roaring.Bitmap{},
		nss: map[string]*roaring.Bitmap{}, topics: map[string]*roaring.Bitmap{}, ents: map[string]*roaring.Bitmap{},
		windows: map[string]*Window{}}
	for i := range s.types {
		s.types[i] = roaring.New()
	}
	return s
}

// Config is the store's shape.
func (s *Store) Config() Config { return s.cfg }

// Len is the number of records, superseded and expired ones not yet removed included.
func (s *Store) Len() int { return len(s.byID) }

// Get returns the record with external id (nil when none); the caller must not change it.
func (s *Store) Get(id string) *Record { return s.byID[id] }

// NextID returns an id for a new record: the next decimal number above every decimal id a
// record has been given, that no record has.
func (s *Store) NextID() string {
	for {
		s.next++
		id := formatUint(s.next)
		if s.byID[id] == nil {
			return id
		}
	}
}

func formatUint(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}

// Normalize returns vec scaled to unit length, or ErrDim/ErrVector.
func (s *Store) Normalize(vec []float32) ([]float32, error) {
	if len(vec) != s.cfg.Dim {
		return nil, ErrDim
	}
	var n float64
	for _, f := range vec {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, ErrVector
		}
		n += float64(f) * float64(f)
	}
	if n == 0 {
		return nil, ErrVector
	}
	inv := 1 / math.Sqrt(n)
	out := make([]float32, len(vec))
	for i, f := range vec {
		out[i] = float32(float64(f) * inv)
	}
	return out, nil
}

// Put adds r (r.Vec normalized by the caller with Normalize, r.ID set), or replaces the content
// of the record with r.ID: the replaced record keeps its Created time and its version links. It
// reports whether the record was new.
func (s *Store) Put(r *Record) (bool, error) {
	if len(r.Vec) != s.cfg.Dim {
		return false, ErrDim
	}
	old := s.byID[r.ID]
	if old != nil {
		r.Created, r.SupersededBy, r.Supersedes, r.ValidTo = old.Created, old.SupersededBy, old.Supersedes, old.ValidTo
		s.remove(old)
	}
	if _, err := s.idx.Add([]byte(r.ID), r.Vec, 0); err != nil {
		if old != nil {
			s.insert(old) // cannot fail: it was in the index before
		}
		return false, err
	}
	s.insert(r)
	if n, ok := parseUint(r.ID); ok && n > s.next {
		s.next = n // a replica, given the ids its primary generated, numbers on from the same place
	}
	return old == nil, nil
}

// parseUint reads a canonical decimal (no sign, no leading zero).
func parseUint(id string) (uint64, bool) {
	if id == "" || len(id) > 19 || id[0] == '0' {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return 0, false
		}
		n = n*10 + uint64(id[i]-'0')
	}
	return n, true
}

// insert indexes r, whose vector the index holds already under r.ID.
func (s *Store) insert(r *Record) {
	id, ok := s.idx.ID([]byte(r.ID))
	if !ok {
		if _, err := s.idx.Add([]byte(r.ID), r.Vec, 0); err != nil {
			panic("BUG: a record's vector does not go back into the index: " + err.Error())
		}
		id, _ = s.idx.ID([]byte(r.ID))
	}
	r.id = id
	for int(id) >= len(s.recs) {
		s.recs = append(s.recs, nil)
	}
	s.recs[id] = r
	s.byID[r.ID] = r
	s.all.Add(id)
	if r.ValidTo == 0 {
		s.current.Add(id)
	}
	addTo(s.users, r.User, id)
	addTo(s.sessions, r.Session, id)
	addTo(s.nss, r.NS, id)
	for _, t := range r.Topics {
		addTo(s.topics, t, id)
	}
	for _, e := range r.Entities {
		addTo(s.ents, e, id)
	}
	s.types[r.Type].Add(id)
	if r.ExpireAt != 0 {
		s.expiring++
		heap.Push(&s.exp, expItem{r.ExpireAt, r.ID})
	}
	s.bytes += recordBytes(r)
}

// remove unindexes r and drops its vector.
func (s *Store) remove(r *Record) {
	id := r.id
	s.idx.Remove([]byte(r.ID))
	s.recs[id] = nil
	delete(s.byID, r.ID)
	s.all.Remove(id)
	s.current.Remove(id)
	removeFrom(s.users, r.User, id)
	removeFrom(s.sessions, r.Session, id)
	removeFrom(s.nss, r.NS, id)
	for _, t := range r.Topics {
		removeFrom(s.topics, t, id)
	}
	for _, e := range r.Entities {
		removeFrom(s.ents, e, id)
	}
	s.types[r.Type].Remove(id)
	if r.ExpireAt != 0 {
		s.expiring--
	}
	s.bytes -= recordBytes(r)
}

func addTo(m map[string]*roaring.Bitmap, v string, id uint32) {
	b := m[v]
	if b == nil {
		b = roaring.New()
		m[v] = b
	}
	b.Add(id)
}

func removeFrom(m map[string]*roaring.Bitmap, v string, id uint32) {
	if b := m[v]; b != nil {
		b.Remove(id)
		if b.IsEmpty() {
			delete(m, v)
		}
	}
}

func recordBytes(r *Record) int64 {
	n := 200 + 6*(7+len(r.Topics)+len(r.Entities)) + len(r.ID) + len(r.Text) + 4*len(r.Vec) + len(r.User) + len(r.Session) + len(r.NS) +
		len(r.SupersededBy) + len(r.Supersedes)
	for _, t := range r.Topics {
		n += 16 + len(t)
	}
	for _, e := range r.Entities {
		n += 16 + len(e)
	}
	return int64(n)
}

// Delete removes the record with id, superseded or not; records it superseded stay superseded.
func (s *Store) Delete(id string) bool {
	r := s.byID[id]
	if r == nil {
		return false
	}
	s.remove(r)
	return true
}

// Supersede marks old replaced by new at ms: old stays for as-of searches and Get, hidden from
// other searches.
func (s *Store) Supersede(oldID, newID string, ms int64) error {
	if oldID == newID {
		return ErrSameMemory
	}
	o, n := s.byID[oldID], s.byID[newID]
	if o == nil || n == nil {
		return ErrNotFound
	}
	if o.ValidTo != 0 {
		return ErrSuperseded
	}
	s.bytes += int64(len(newID) + len(oldID) - len(o.SupersededBy) - len(n.Supersedes))
	o.SupersededBy, o.ValidTo, n.Supersedes = newID, ms, oldID
	s.current.Remove(o.id)
	return nil
}

// Expired removes the records expired at ms, at most max (0: all), and returns their ids,
// earliest expiry first.
func (s *Store) Expired(ms int64, max int) []string {
	var out []string
	for len(s.exp) > 0 && s.exp[0].at <= ms && (max == 0 || len(out) < max) {
		it := heap.Pop(&s.exp).(expItem)
		if r := s.byID[it.id]; r != nil && r.ExpireAt == it.at {
			s.remove(r)
			out = append(out, it.id)
		}
	}
	return out
}

// NextExpiry is the earliest ExpireAt (unix ms) queued, 0 when none.
func (s *Store) NextExpiry() int64 {
	for len(s.exp) > 0 {
		it := s.exp[0]
		if r := s.byID[it.id]; r != nil && r.ExpireAt == it.at {
			return it.at
		}
		heap.Pop(&s.exp)
	}
	return 0
}

type expItem struct {
	at int64
	id string
}

type expHeap []expItem

func (h expHeap) Len() int { return len(h) }
func (h expHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].id < h[j].id
}
func (h expHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *expHeap) Push(x any)   { *h = append(*h, x.(expItem)) }
func (h *expHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// ForEach calls f for every record in id order of the index (a stable order for one history)
// until f returns false.
func (s *Store) ForEach(f func(r *Record) bool) {
	for _, r := range s.recs {
		if r != nil && !f(r) {
			return
		}
	}
}

// Counts reports the store's records: all, current (not superseded), and distinct users.
func (s *Store) Counts() (all, current, users int) {
	return int(s.all.GetCardinality()), int(s.current.GetCardinality()), len(s.users)
}

// MemoryUsage estimates the bytes the store holds, in O(1): the records' bytes (counted as they
// change, about 6 bytes per bitmap membership included), the index's own count, 64 bytes per
// distinct indexed value and the windows' bytes.
func (s *Store) MemoryUsage() int64 {
	n := s.bytes + int64(s.idx.MemoryUsage()) + int64(cap(s.recs))*8 + 48*int64(len(s.byID))
	n += 64 * int64(len(s.users)+len(s.sessions)+len(s.nss)+len(s.topics)+len(s.ents))
	return n + s.winBytes
}
