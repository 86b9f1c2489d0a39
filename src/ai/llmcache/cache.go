// Package llmcache is the value of an LLMCACHE key: cached model responses by namespace, found
// by the exact normalized prompt first and otherwise by vector similarity inside the namespace,
// with guards against near-miss prompts that mean something else, per-entry expiry, LRU eviction
// under MAXENTRIES, feedback that retires wrong hits, and the statistics STATS reports.
//
// It knows nothing of RESP or embedders and takes no locks: the command layer holds the shard's
// token for every call but Get, which may run as a shared read beside other Gets (never beside a
// write): it changes only statistics, hit counts and recency stamps, all with atomic operations
// (lru.go), and reports the expired entries it met for the token holder to remove.
package llmcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"sync/atomic"

	"github.com/hotkv/hotkv/ds/vector"
	"github.com/hotkv/hotkv/src/ai/embed"
)

// Mode selects the lookups GET runs.
type Mode uint8

const (
	ModeBoth Mode = iota // exact, then semantic
	ModeExact
	ModeSemantic
)

// Config is a cache's shape, fixed at CREATE.
type Config struct {
	Dim        int          // vector dimension; 0 until the first vector (or the embedder) fixes it
	Threshold  float32      // cosine similarity a semantic hit needs, in [-1, 1]
	TTL        int64        // default entry TTL in ms; 0 none
	MaxEntries int          // 0 unbounded; else the least recently used entry goes first
	Guard      Guard        // GuardNumbers | GuardNegation
	Quant      vector.Quant // the namespaces' index storage
	Embedder   string       // EMBEDDER's words joined by spaces; "" none
	EF         int          // search EF of semantic lookups; 0: DefaultEF
}

// Entry is one cached response. Fields are read-only to callers.
type Entry struct {
	ID                  uint64
	NS                  string
	Prompt              []byte
	norm                string
	Response            []byte
	TokensIn, TokensOut int64
	Cost                float64
	Expire              int64 // unix ms; 0 never
	Created             int64 // unix ms
	Tags                []string
	Attr                []byte
	hits                atomic.Int64
	hasVec              bool
	feat                Features
	lastHit             atomic.Pointer[[]byte] // the normalized prompt of the last semantic hit (FEEDBACK's default)
	used                atomic.Uint64          // the cache's clock at the last use (lru.go)
	key                 uint64                 // used as of the last settling: the recency heap's key
	hidx                int                    // index in the recency heap
}

// Hits is how many lookups the entry answered.
func (e *Entry) Hits() int64 { return e.hits.Load() }

// namespace is one exact partition: its exact map and its vector index.
type namespace struct {
	exact map[string]*Entry // by normalized prompt
	set   *vector.Set       // names: entry ids as 8 bytes big endian; nil until a vector arrives
	n     int
}

type badKey struct {
	ns         string
	para, orig uint64
}

// Stats are the counters STATS reports.
type Stats struct {
	Lookups, ExactHits, SemanticHits, Misses int64
	GuardRejects                             int64 // semantic candidates above threshold a guard refused
	TokensSaved, TokensInSaved               int64 // in+out tokens of hit entries; the in part
	CostSaved                                float64
	WrongHits                                int64 // FEEDBACK BAD
	Evicted, Expired                         int64
	HitScores, NearMisses                    [Buckets]int64 // semantic hits' cosines; misses' best cosines
}

// Buckets is the histograms' size: cosine [-1,0.5), then 0.05 wide up to 1.
const Buckets = 11

// BucketLow is the lower bound of histogram bucket i.
func BucketLow(i int) float64 {
	if i == 0 {
		return -1
	}
	return 0.5 + 0.05*float64(i-1)
}

func bucket(cos float32) int {
	switch {
	case !(cos >= 0.5): // NaN too
		return 0
	case cos >= 1: // +Inf too: int(+Inf) is not defined
		return Buckets - 1
	}
	return min(Buckets-1, 1+int((float64(cos)-0.5)/0.05+1e-9))
}

// Cache is an LLMCACHE value.
type Cache struct {
	cfg      Config
	nextID   uint64
	byID     map[uint64]*Entry
	ns       map[string]*namespace
	lru      []*Entry      // recency heap, least recently used on top (lru.go)
	clock    atomic.Uint64 // recency stamps
	bad      map[badKey]struct{}
	st       liveStats
	bytes    int64 // entries' own bytes, for MemoryUsage
	expiring int   // entries with an expiry
}

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() Stats {
	s := &c.st
	out := Stats{Lookups: s.lookups.Load(), ExactHits: s.exactHits.Load(), SemanticHits: s.semanticHits.Load(),
		Misses: s.misses.Load(), GuardRejects: s.guardRejects.Load(), TokensSaved: s.tokensSaved.Load(),
		TokensInSaved: s.tokensInSaved.Load(), CostSaved: math.Float64frombits(s.costSaved.Load()),
		WrongHits: s.wrongHits.Load(), Evicted: s.evicted.Load(), Expired: s.expired.Load()}
	for i := range Buckets {
		out.HitScores[i], out.NearMisses[i] = s.hitScores[i].Load(), s.nearMisses[i].Load()
	}
	return out
}

// setStats replaces the counters (decoding).
func (c *Cache) setStats(in Stats) {
	s := &c.st
	s.lookups.Store(in.Lookups)
	s.exactHits.Store(in.ExactHits)
	s.semanticHits.Store(in.SemanticHits)
	s.misses.Store(in.Misses)
	s.guardRejects.Store(in.GuardRejects)
	s.tokensSaved.Store(in.TokensSaved)
	s.tokensInSaved.Store(in.TokensInSaved)
	s.costSaved.Store(math.Float64bits(in.CostSaved))
	s.wrongHits.Store(in.WrongHits)
	s.evicted.Store(in.Evicted)
	s.expired.Store(in.Expired)
	for i := range Buckets {
		s.hitScores[i].Store(in.HitScores[i])
		s.nearMisses[i].Store(in.NearMisses[i])
	}
}

func addFloat(a *atomic.Uint64, x float64) {
	for {
		old := a.Load()
		if a.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+x)) {
			return
		}
	}
}

// Errors of the cache's operations (the command layer maps them to replies).
var (
	ErrDim      = errors.New("vector dimension does not match the cache's DIM")
	ErrNoVector = errors.New("semantic lookup needs a vector")
	ErrVector   = errors.New("invalid vector")
	ErrConfig   = errors.New("invalid cache configuration")
)

// New returns an empty cache.
func New(cfg Config) (*Cache, error) {
	if cfg.Dim < 0 || cfg.Dim > vector.MaxDim || cfg.Threshold < -1 || cfg.Threshold > 1 ||
		cfg.TTL < 0 || cfg.MaxEntries < 0 || cfg.Quant > vector.Bin || cfg.EF < 0 || cfg.EF > MaxEF {
		return nil, ErrConfig
	}
	return &Cache{cfg: cfg, nextID: 1, byID: map[uint64]*Entry{}, ns: map[string]*namespace{}}, nil
}

// Config returns the cache's configuration (Dim as fixed so far).
func (c *Cache) Config() Config { return c.cfg }

// Len is the number of entries, expired ones not yet removed included.
func (c *Cache) Len() int { return len(c.byID) }

// NextID is the id the next SET without an ID gets.
func (c *Cache) NextID() uint64 { return c.nextID }

// Namespaces is the number of namespaces holding entries.
func (c *Cache) Namespaces() int { return len(c.ns) }

// Entry returns the entry of id, nil when there is none.
func (c *Cache) Entry(id uint64) *Entry { return c.byID[id] }

// SetArgs are one SET's.
type SetArgs struct {
	NS, Prompt, Response []byte
	Vector               []float32 // nil: the entry is found by its exact prompt only
	TokensIn, TokensOut  int64
	Cost                 float64
	Expire               int64 // unix ms; 0: the cache's TTL from now, or never
	NoExpire             bool  // with Expire 0: never, whatever the cache's TTL
	Tags                 [][]byte
	Attr                 []byte
	ID                   uint64 // 0: the next id (a replica is given the primary's)
}

// Set stores an entry, replacing one of the same namespace and normalized prompt, and returns
// its id and the ids MAXENTRIES evicted for it.
func (c *Cache) Set(a SetArgs, nowMS int64) (uint64, []uint64, error) {
	if a.Vector != nil {
		if err := c.checkVector(a.Vector); err != nil {
			return 0, nil, err
		}
	}
	norm := string(embed.Normalize(a.Prompt, nil))
	if old := c.nsOf(a.NS, false); old != nil {
		if e := old.exact[norm]; e != nil {
			c.remove(e)
		}
	}
	var evicted []uint64
	for c.cfg.MaxEntries > 0 && len(c.byID) >= c.cfg.MaxEntries {
		o := c.oldest()
		if o == nil {
			break
		}
		evicted = append(evicted, o.ID)
		c.st.evicted.Add(1)
		c.remove(o)
	}
	id := a.ID
	if id == 0 || c.byID[id] != nil {
		id = c.nextID
	}
	c.nextID = max(c.nextID, id+1)
	e := &Entry{ID: id, NS: string(a.NS), Prompt: bytes.Clone(a.Prompt), norm: norm,
		Response: bytes.Clone(a.Response), TokensIn: a.TokensIn, TokensOut: a.TokensOut, Cost: a.Cost,
		Expire: a.Expire, Created: nowMS, Attr: bytes.Clone(a.Attr)}
	if e.Expire == 0 && !a.NoExpire && c.cfg.TTL > 0 {
		e.Expire = nowMS + c.cfg.TTL
	}
	for _, t := range a.Tags {
		e.Tags = append(e.Tags, string(t))
	}
	e.feat = Extract([]byte(norm))
	ns := c.nsOf(a.NS, true)
	if a.Vector != nil {
		if ns.set == nil {
			s, err := vector.New(vector.Config{Dim: c.cfg.Dim, Metric: vector.Cosine, Quant: c.cfg.Quant,
				Seed: fnvHash([]byte(e.NS)) | 1})
			if err != nil {
				return 0, nil, err
			}
			ns.set = s
		}
		if _, err := ns.set.Add(idName(id), a.Vector, 0); err != nil {
			return 0, nil, err
		}
		e.hasVec = true
	}
	ns.exact[norm] = e
	ns.n++
	c.byID[id] = e
	c.bytes += e.size()
	if e.Expire != 0 {
		c.expiring++
	}
	c.lruPush(e)
	return id, evicted, nil
}

// checkVector fixes the cache's dimension at the first vector and checks later ones.
func (c *Cache) checkVector(v []float32) error {
	if len(v) == 0 || len(v) > vector.MaxDim {
		return ErrVector
	}
	zero := true
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return ErrVector
		}
		zero = zero && x == 0
	}
	if zero {
		return ErrVector
	}
	if c.cfg.Dim == 0 {
		c.cfg.Dim = len(v)
	}
	if len(v) != c.cfg.Dim {
		return ErrDim
	}
	return nil
}

// Query is one GET's.
type Query struct {
	NS, Prompt   []byte
	Vector       []float32
	Mode         Mode
	Threshold    float32
	HasThreshold bool
	Tags         [][]byte
	NowMS        int64
	EF           int // search EF; 0: the cache's
}

// Hit is GET's answer.
type Hit struct {
	Entry    *Entry
	Semantic bool
	Score    float32  // cosine similarity; 1 for an exact hit
	Expired  []uint64 // expired entries the lookup met (hit or miss): DropExpired removes them
}

// searchK bounds the semantic lookup: the best searchK candidates of the namespace are taken in
// order of similarity; those a FEEDBACK pair excludes are skipped, the first other one above the
// threshold is the hit if it passes the guards, and a miss if it does not.
//
// The candidates come from an exact scan when the namespace holds at most ExactBelow vectors
// (cheaper than the graph there, and never misses), else from the HNSW index at the search EF
// (the query's, else the cache's, else DefaultEF). On 100,000 random 512-d unit vectors
// (benchmarks/aicache TestRandomSearch) an entry's own vector came first in 90% of searches at
// EF 64, 98% at 128 and 99.9% at 256; random vectors are the graph's hardest case (USE sentence
// vectors gave 100% at 64).
const (
	searchK    = 8
	DefaultEF  = 128
	MaxEF      = 4096
	ExactBelow = 1024
)

// searchEF is the EF of q on c.
func (c *Cache) searchEF(q *Query) int {
	switch {
	case q.EF > 0:
		return q.EF
	case c.cfg.EF > 0:
		return c.cfg.EF
	}
	return DefaultEF
}

// candidates returns the namespace's best searchK live candidates for q, best first. Only those
// at a cosine of at least thr can answer, so the graph search narrows its beam to searchK once it
// has found one (vector.SearchNarrow): a hit stops soon after it reaches its neighbourhood, and a
// miss, which finds none, searches as widely as before.
func (c *Cache) candidates(ns *namespace, q *Query, thr float32, keep func(uint32) bool) []vector.Result {
	if ns.set.Len() <= ExactBelow {
		return ns.set.SearchExact(q.Vector, searchK, keep)
	}
	ef := c.searchEF(q)
	// A filtered search stops after a budget of distances; 50 a unit of EF is well above what an
	// unfiltered search at that EF computes on 100,000 entries.
	return ns.set.SearchNarrow(q.Vector, searchK, ef, (thr+1)/2, keep, 50*ef)
}

// Get looks a prompt up and updates the statistics. A semantic lookup needs q.Vector unless the
// mode is exact; ErrNoVector otherwise (counted as nothing). It changes nothing but counters and
// recency stamps, atomically, so Gets may run at once (not beside a write).
func (c *Cache) Get(q Query) (Hit, bool, error) {
	var scratch [maxNorm]byte
	return c.get(q, scratch[:0])
}

// maxNorm is the prompt length Get normalizes on the stack.
const maxNorm = 512

func (c *Cache) get(q Query, scratch []byte) (Hit, bool, error) {
	if q.Mode == ModeSemantic && q.Vector == nil {
		return Hit{}, false, ErrNoVector
	}
	if q.Vector != nil && q.Mode != ModeExact {
		if c.cfg.Dim != 0 && len(q.Vector) != c.cfg.Dim {
			return Hit{}, false, ErrDim
		}
	}
	c.st.lookups.Add(1)
	norm := embed.Normalize(q.Prompt, scratch)
	ns := c.nsOf(q.NS, false)
	if ns != nil && q.Mode != ModeSemantic {
		if e := ns.exact[string(norm)]; e != nil && c.usable(e, q) {
			c.st.exactHits.Add(1)
			c.hit(e)
			return Hit{Entry: e, Score: 1}, true, nil
		}
	}
	if ns == nil || ns.set == nil || q.Vector == nil || q.Mode == ModeExact {
		c.st.misses.Add(1)
		return Hit{}, false, nil
	}
	thr := c.cfg.Threshold
	if q.HasThreshold {
		thr = q.Threshold
	}
	var feat *Features // computed for the first candidate above the threshold
	paraHash := fnvHash(norm)
	var expired []uint64
	// The filter costs a map lookup per visited node: it runs only when entries can be excluded
	// (TAGS asked, or some entry expires); expired ones found after the search are skipped too.
	var keep func(id uint32) bool
	if len(q.Tags) > 0 || c.expiring > 0 {
		keep = func(id uint32) bool {
			e := c.byID[nameID(ns.set.Name(id))]
			if e.Expire != 0 && e.Expire <= q.NowMS {
				expired = append(expired, e.ID)
				return false
			}
			return c.usable(e, q)
		}
	}
	res := c.candidates(ns, &q, thr, keep)
	best := float32(math.Inf(-1))
	for _, r := range res {
		e := c.byID[nameID(ns.set.Name(r.ID))]
		cos := 2*r.Score - 1
		if !math.IsNaN(float64(cos)) {
			best = max(best, cos)
		}
		if !(cos >= thr) { // NaN too (an index decoded from a corrupt payload): a miss
			break
		}
		if c.bad != nil {
			if _, ok := c.bad[badKey{e.NS, paraHash, fnvHash([]byte(e.norm))}]; ok {
				continue
			}
		}
		if feat == nil && c.cfg.Guard != 0 {
			f := Extract(norm)
			feat = &f
		}
		if c.cfg.Guard != 0 && !Pass(c.cfg.Guard, feat, &e.feat) {
			// A miss, not the next candidate: on GPTCache's paraphrases the next one was a
			// different question more often than not (benchmarks/results/2026-12-02-aicache.md).
			c.st.guardRejects.Add(1)
			break
		}
		c.st.semanticHits.Add(1)
		c.st.hitScores[bucket(cos)].Add(1)
		last := bytes.Clone(norm)
		e.lastHit.Store(&last)
		c.hit(e)
		return Hit{Entry: e, Semantic: true, Score: cos, Expired: expired}, true, nil
	}
	c.st.misses.Add(1)
	if len(res) > 0 {
		c.st.nearMisses[bucket(best)].Add(1)
	}
	return Hit{Expired: expired}, false, nil
}

// usable reports whether e may answer q: live and carrying every tag of q.
func (c *Cache) usable(e *Entry, q Query) bool {
	if e.Expire != 0 && e.Expire <= q.NowMS {
		return false
	}
	for _, t := range q.Tags {
		if !e.HasTag(t) {
			return false
		}
	}
	return true
}

// HasTag reports whether the entry carries tag t.
func (e *Entry) HasTag(t []byte) bool {
	for _, have := range e.Tags {
		if have == string(t) {
			return true
		}
	}
	return false
}

// DropExpired removes the entries of ids that are expired at nowMS (those a Get met) and returns
// how many it removed.
func (c *Cache) DropExpired(ids []uint64, nowMS int64) int {
	n := 0
	for _, id := range ids {
		if e := c.byID[id]; e != nil && e.Expire != 0 && e.Expire <= nowMS {
			c.st.expired.Add(1)
			c.remove(e)
			n++
		}
	}
	return n
}

// hit counts a hit on e and makes it the most recently used.
func (c *Cache) hit(e *Entry) {
	e.hits.Add(1)
	c.st.tokensSaved.Add(e.TokensIn + e.TokensOut)
	c.st.tokensInSaved.Add(e.TokensIn)
	if e.Cost != 0 {
		addFloat(&c.st.costSaved, e.Cost)
	}
	touch(e, c.stamp())
}

// HasExact reports, changing nothing, whether GET would find an exact hit for prompt in ns
// (the command layer asks before it pays for an embedding).
func (c *Cache) HasExact(ns, prompt []byte, tags [][]byte, nowMS int64) bool {
	n := c.nsOf(ns, false)
	if n == nil {
		return false
	}
	e := n.exact[string(embed.Normalize(prompt, nil))]
	return e != nil && c.usable(e, Query{Tags: tags, NowMS: nowMS})
}

// LastHit is the normalized prompt of entry id's last semantic hit (nil: none).
func (c *Cache) LastHit(id uint64) []byte {
	if e := c.byID[id]; e != nil {
		if p := e.lastHit.Load(); p != nil {
			return *p
		}
	}
	return nil
}

// Del removes entries by id and returns how many existed.
func (c *Cache) Del(ids ...uint64) int {
	n := 0
	for _, id := range ids {
		if e := c.byID[id]; e != nil {
			c.remove(e)
			n++
		}
	}
	return n
}

// Feedback marks the hit of entry id wrong: the entry goes, and the paraphrase (para, or the
// entry's last semantic hit when para is nil) never hits an entry of that namespace and prompt
// again. It reports whether the entry existed.
func (c *Cache) Feedback(id uint64, para []byte) bool {
	e := c.byID[id]
	if e == nil {
		return false
	}
	p := c.LastHit(id)
	if para != nil {
		p = embed.Normalize(para, nil)
	}
	if len(p) > 0 && string(p) != e.norm {
		if c.bad == nil {
			c.bad = map[badKey]struct{}{}
		}
		c.bad[badKey{e.NS, fnvHash(p), fnvHash([]byte(e.norm))}] = struct{}{}
	}
	c.st.wrongHits.Add(1)
	c.remove(e)
	return true
}

// Match selects entries for Invalidate; zero fields match everything.
type Match struct {
	NS        []byte
	HasNS     bool
	Tags      [][]byte          // every one of them
	Filter    func([]byte) bool // on ATTR
	OlderThan int64             // created before this unix ms; 0 any
}

// Invalidate removes the entries m selects and returns their ids, in id order of the walk (map
// order: callers sort when they need a stable order).
func (c *Cache) Invalidate(m Match) []uint64 {
	var ids []uint64
	for id, e := range c.byID {
		if m.HasNS && e.NS != string(m.NS) || m.OlderThan != 0 && e.Created >= m.OlderThan ||
			m.Filter != nil && !m.Filter(e.Attr) {
			continue
		}
		all := true
		for _, t := range m.Tags {
			all = all && e.HasTag(t)
		}
		if all {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		c.remove(c.byID[id])
	}
	return ids
}

// Sweep looks at up to limit entries from the least recently used end (the top of the recency
// heap: the oldest stamps as last settled) and removes those expired; it returns how many.
func (c *Cache) Sweep(nowMS int64, limit int) int {
	if c.expiring == 0 {
		return 0
	}
	var buf [16]uint64
	ids := buf[:0]
	for _, e := range c.lru[:min(limit, len(c.lru))] {
		if e.Expire != 0 && e.Expire <= nowMS {
			ids = append(ids, e.ID)
		}
	}
	return c.DropExpired(ids, nowMS)
}

func (c *Cache) nsOf(name []byte, create bool) *namespace {
	ns := c.ns[string(name)]
	if ns == nil && create {
		ns = &namespace{exact: map[string]*Entry{}}
		c.ns[string(name)] = ns
	}
	return ns
}

// remove deletes e from every index.
func (c *Cache) remove(e *Entry) {
	ns := c.ns[e.NS]
	if ns.exact[e.norm] == e {
		delete(ns.exact, e.norm)
	}
	if e.hasVec && ns.set != nil { // nil only while a version 3 encoding is decoded
		ns.set.Remove(idName(e.ID))
	}
	ns.n--
	if ns.n == 0 {
		delete(c.ns, e.NS)
	}
	delete(c.byID, e.ID)
	c.bytes -= e.size()
	if e.Expire != 0 {
		c.expiring--
	}
	c.lruRemove(e)
}

func sortByUsed(es []*Entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].used.Load() < es[j].used.Load() })
}

// size is an entry's own bytes (its struct, strings and slices; not its index node).
func (e *Entry) size() int64 {
	n := 200 + len(e.NS) + len(e.Prompt) + len(e.norm) + len(e.Response) + len(e.Attr)
	for _, t := range e.Tags {
		n += 16 + len(t)
	}
	return int64(n)
}

// MemoryUsage estimates the cache's bytes: entries, exact maps and vector indexes.
func (c *Cache) MemoryUsage() int64 {
	n := c.bytes + 64*int64(len(c.byID)) + 16*int64(len(c.bad))
	for _, ns := range c.ns {
		if ns.set != nil {
			n += int64(ns.set.MemoryUsage())
		}
	}
	return n
}

// Vector returns entry id's stored vector (dequantized), nil when it has none.
func (c *Cache) Vector(id uint64) []float32 {
	e := c.byID[id]
	if e == nil || !e.hasVec {
		return nil
	}
	v, _ := c.ns[e.NS].set.Vector(idName(id))
	return v
}

// ExactTop1 is the brute-force best entry of namespace ns for v (for the ANN-recall harness):
// its id and cosine, ok false when the namespace has no vectors.
func (c *Cache) ExactTop1(ns []byte, v []float32) (uint64, float32, bool) {
	n := c.nsOf(ns, false)
	if n == nil || n.set == nil {
		return 0, 0, false
	}
	r := n.set.SearchExact(v, 1, nil)
	if len(r) == 0 {
		return 0, 0, false
	}
	return nameID(n.set.Name(r[0].ID)), 2*r[0].Score - 1, true
}

// ANNTop1 is the index's best entry of namespace ns for v, with no threshold, guard or filter.
func (c *Cache) ANNTop1(ns []byte, v []float32) (uint64, float32, bool) {
	n := c.nsOf(ns, false)
	if n == nil || n.set == nil {
		return 0, 0, false
	}
	r := n.set.Search(v, 1, DefaultEF, nil, 0)
	if len(r) == 0 {
		return 0, 0, false
	}
	return nameID(n.set.Name(r[0].ID)), 2*r[0].Score - 1, true
}

func idName(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

func nameID(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// fnvHash is 64-bit FNV-1a (hash/fnv's, without its allocation).
func fnvHash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, x := range b {
		h ^= uint64(x)
		h *= 1099511628211
	}
	return h
}
