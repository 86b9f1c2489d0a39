package command

// LoadRDB: an RDB stream (versions 1 to 11, every encoding persist/rdb decodes) into the engine's
// shards, as Redis 7.0.15's rdbLoadRio does.
//
//  1. Values are converted to HotKV's own forms on the loading goroutine, outside any token,
//     under the configured thresholds (a listpack that is too large for hash-max-listpack-*
//     becomes a table, a small SET of integers an intset, as Redis's loader converts).
//  2. Inserts are batched per shard (loadBatchKeys keys or loadBatchBytes bytes) and applied
//     holding the shard's token (Group.Do), so a load may run while the server serves.
//  3. Keys already expired are skipped and counted (a primary's rule) unless KeepExpired; a key
//     that is already present fails the load with Redis's "Duplicated key" error unless
//     Replace (DEBUG RELOAD MERGE's RDBFLAGS_ALLOW_DUP). The error names the key and database.
//  4. RESIZEDB is only a hint, and HotKV's tables grow by doubling anyway: it is read and not
//     acted on, so a file's declared sizes never reserve memory.
//  5. Function libraries are loaded into src/script as FUNCTION LOAD would (REPLACE with
//     Replace); aux fields are handed back in LoadStats.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/stream"
	"github.com/hotkv/hotkv/ds/zset"
	"github.com/hotkv/hotkv/persist/rdb"
	"github.com/hotkv/hotkv/pipeline"
)

// ErrDuplicateKey is wrapped by LoadRDB's error for a key the engine already holds; Redis panics
// with "Duplicated key found in RDB file".
var ErrDuplicateKey = errors.New("Duplicated key found in RDB file")

// LoadOptions configure LoadRDB.
type LoadOptions struct {
	KeepExpired bool  // load keys whose expiry passed (a replica, an AOF preamble)
	Replace     bool  // a key or library present is replaced instead of failing the load
	Size        int64 // the stream's size when known, for the percentage; 0: unknown
	// Progress, when set, is called from LoadRDB's goroutine every ProgressKeys keys (default
	// 100,000) or 8 MiB read, and once at the end.
	Progress     func(LoadProgress)
	ProgressKeys int64
}

// LoadProgress is what a load reports as it goes (the server's log, INFO's loading_* fields).
type LoadProgress struct {
	Keys    int64   // read so far (and kept: not expired)
	Expired int64   // skipped as expired so far
	Bytes   int64   // read so far
	Percent float64 // of Size, 0 when unknown
	Rate    float64 // keys per second since the start
	Elapsed time.Duration
}

// LoadStats describe a finished load.
type LoadStats struct {
	Version   int
	Keys      int64 // inserted
	Expired   int64 // skipped as expired
	Functions int
	Bytes     int64
	Aux       [][2]string // aux fields in file order
	Elapsed   time.Duration
}

const (
	loadBatchKeys  = 256
	loadBatchBytes = 256 << 10
)

// loadItem is one key waiting for its shard's token.
type loadItem struct {
	db       int
	key      []byte
	expireMs int64 // -1 none
	idle     int64 // -1 none
	freq     int   // -1 none
	kind     keyspace.Kind
	str      []byte
	obj      any
}

type loadShard struct {
	items []loadItem
	bytes int
}

type loader struct {
	e       *Engine
	o       LoadOptions
	lfu     bool
	shards  []loadShard
	st      LoadStats
	start   time.Time
	read    int64 // keys read and kept (queued or inserted)
	lastKey int64
	lastOff int64
	db      int
	err     error
	pairs   [][]byte
	zes     []zset.Entry
	tags    [][]byte // hotkv-tags aux fields
	hfe     [][]byte // hotkv-hfe aux fields (persist_hfe.go)
}

// LoadRDB reads an RDB stream from r into the engine. On an error the keys already inserted
// stay (the server refuses to start, as Redis exits). It must not be called holding a token.
func (e *Engine) LoadRDB(r io.Reader, o LoadOptions) (LoadStats, error) {
	if o.ProgressKeys <= 0 {
		o.ProgressKeys = 100_000
	}
	ld := &loader{e: e, o: o, lfu: lfuPolicy(e), shards: make([]loadShard, len(e.Group.Shards)),
		start: time.Now()}
	d := rdb.NewDecoder(r)
	err := ld.run(d)
	for i := range ld.shards { // what was batched goes in even after a later error
		if ferr := ld.flush(i); err == nil {
			err = ferr
		}
	}
	if err == nil {
		err = e.loadTags(ld.tags)
	}
	if err == nil {
		err = e.loadHFE(ld.hfe)
	}
	e.recountLoaded() // the loader inserts outside the used-memory accounting (memory_acct.go)
	ld.st.Version, ld.st.Bytes, ld.st.Elapsed = d.Version(), d.Offset(), time.Since(ld.start)
	if o.Progress != nil {
		o.Progress(ld.progress(d.Offset()))
	}
	return ld.st, err
}

func (ld *loader) run(d *rdb.Decoder) error {
	for {
		rec, err := d.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot load RDB: %w", err)
		}
		switch rec.Kind {
		case rdb.RecAux:
			if isTagsAux(rec.AuxKey) { // HotKV's key tags, applied after the keys (persist_tags.go)
				ld.tags = append(ld.tags, bytes.Clone(rec.AuxVal))
				continue
			}
			if isHFEAux(rec.AuxKey) { // hash-field TTLs, applied after the keys (persist_hfe.go)
				ld.hfe = append(ld.hfe, bytes.Clone(rec.AuxVal))
				continue
			}
			ld.st.Aux = append(ld.st.Aux, [2]string{string(rec.AuxKey), string(rec.AuxVal)})
		case rdb.RecSelectDB:
			if rec.DB < 0 || rec.DB >= ld.e.dbCount {
				return fmt.Errorf("cannot load RDB: FATAL: Data file was created with a Redis server configured to handle more than %d databases", ld.e.dbCount)
			}
			ld.db = rec.DB
		case rdb.RecResizeDB: // a hint only (invariant 4)
		case rdb.RecFunction:
			if _, msg := ld.e.Scripts().FunctionLoad(loadHost{}, rec.Code, ld.o.Replace); msg != "" {
				return fmt.Errorf("cannot load RDB: failed loading a function library: %s", strings.TrimPrefix(msg, "ERR "))
			}
			ld.st.Functions++
		case rdb.RecKey:
			if err := ld.key(rec); err != nil {
				return err
			}
			if n := ld.read + ld.st.Expired; ld.o.Progress != nil &&
				(n-ld.lastKey >= ld.o.ProgressKeys || d.Offset()-ld.lastOff >= 8<<20) {
				ld.lastKey, ld.lastOff = n, d.Offset()
				ld.o.Progress(ld.progress(d.Offset()))
			}
		}
	}
}

func (ld *loader) progress(off int64) LoadProgress {
	el := time.Since(ld.start)
	p := LoadProgress{Keys: ld.read, Expired: ld.st.Expired, Bytes: off, Elapsed: el}
	if ld.o.Size > 0 {
		p.Percent = 100 * float64(off) / float64(ld.o.Size)
	}
	if s := el.Seconds(); s > 0 {
		p.Rate = float64(ld.read) / s
	}
	return p
}

// key converts one key record and queues it for its shard.
func (ld *loader) key(rec *rdb.Record) error {
	if !ld.o.KeepExpired && rec.ExpireMs != -1 && rec.ExpireMs < time.Now().UnixMilli() {
		ld.st.Expired++
		return nil
	}
	it := loadItem{db: ld.db, key: append([]byte(nil), rec.Key...), expireMs: rec.ExpireMs,
		idle: rec.Idle, freq: rec.Freq}
	size, err := ld.convert(&rec.Value, &it)
	if err != nil {
		return fmt.Errorf("cannot load RDB: key %q: %w", rec.Key, err)
	}
	if it.kind == 0 {
		return nil // an empty collection: Redis skips empty keys
	}
	ld.read++
	sh := int(ld.e.shardOf(it.key))
	ls := &ld.shards[sh]
	ls.items = append(ls.items, it)
	ls.bytes += len(it.key) + size
	if len(ls.items) >= loadBatchKeys || ls.bytes >= loadBatchBytes {
		return ld.flush(sh)
	}
	return nil
}

// convert turns a decoded value into HotKV's, returning about how many bytes it holds.
func (ld *loader) convert(v *rdb.Value, it *loadItem) (int, error) {
	st := ld.e.Settings()
	switch v.Type {
	case rdb.ValString:
		it.kind, it.str = keyspace.KindString, append([]byte{}, v.Str...) // never nil: "" is a value
		return len(v.Str), nil
	case rdb.ValList:
		if len(v.Elems) == 0 {
			return 0, nil
		}
		l := list.New(int(st.ListMaxListpackSize))
		n := 0
		for _, el := range v.Elems {
			l.PushBack(el)
			n += len(el)
		}
		it.kind, it.obj = keyspace.KindList, l
		return n, nil
	case rdb.ValSet:
		if len(v.Elems) == 0 {
			return 0, nil
		}
		lim := dset.Limits{Intset: int(st.SetMaxIntsetEntries), Listpack: int(st.SetMaxListpackEntries),
			ListpackValue: int(st.SetMaxListpackValue)}
		s, n := dset.New(), 0
		for _, m := range v.Elems {
			s.Add(m, &lim)
			n += len(m)
		}
		it.kind, it.obj = keyspace.KindSet, s
		return n, nil
	case rdb.ValHash:
		return ld.hash(v, it, hash.Limits{MaxEntries: int(st.HashMaxListpackEntries), MaxValue: int(st.HashMaxListpackValue)})
	case rdb.ValZSet:
		return ld.zset(v, it, zset.Limits{MaxEntries: st.ZSetMaxListpackEntries, MaxValue: st.ZSetMaxListpackValue})
	case rdb.ValStream:
		return ld.stream(v.Stream, it)
	case rdb.ValModule: // vset_persist.go: HotKV's vector sets; budget.go: token budgets
		if v.Module == rdb.LLMCacheModule { // llmcache_persist.go
			return loadLLMCache(v.Str, it)
		}
		if v.Module == rdb.AgentMemModule { // mem_persist.go
			return loadAgentMem(v.Str, it)
		}
		if v.Module == rdb.BudgetModule {
			b, err := loadBudget(ld.e, it.db, it.key, v.Str)
			if err != nil {
				return 0, err
			}
			it.kind, it.obj = keyspace.KindBudget, b
			return int(b.MemoryBytes()), nil
		}
		vs, err := decodeVset(ld.e, v.Str)
		if err != nil {
			return 0, err
		}
		it.kind, it.obj = keyspace.KindVectorSet, vs
		return int(vs.memoryUsage()), nil
	}
	return 0, fmt.Errorf("unknown value type %d", v.Type)
}

func (ld *loader) hash(v *rdb.Value, it *loadItem, lim hash.Limits) (int, error) {
	if len(v.Fields) == 0 {
		return 0, nil
	}
	ld.pairs = ld.pairs[:0]
	n := 0
	for i := range v.Fields {
		ld.pairs = append(ld.pairs, v.Fields[i], v.Vals[i])
		n += len(v.Fields[i]) + len(v.Vals[i])
	}
	h := hash.NewFor(lim, ld.pairs)
	for i := range v.Fields {
		h.Set(v.Fields[i], v.Vals[i], false, lim)
	}
	clear(ld.pairs)
	it.kind, it.obj = keyspace.KindHash, h
	return n, nil
}

func (ld *loader) zset(v *rdb.Value, it *loadItem, lim zset.Limits) (int, error) {
	if len(v.Members) == 0 {
		return 0, nil
	}
	if isIPSetZSet(v.Members) { // ipset_persist.go
		return ld.ipsetLoad(v, it)
	}
	ld.zes = ld.zes[:0]
	n := 0
	for i, m := range v.Members {
		s := v.Scores[i]
		if math.IsNaN(s) {
			return 0, fmt.Errorf("%w: zset score is NaN", rdb.ErrCorrupt)
		}
		ld.zes = append(ld.zes, zset.Entry{Member: m, Score: s})
		n += len(m) + 8
	}
	zset.SortEntries(ld.zes)
	it.kind, it.obj = keyspace.KindZSet, zset.FromSorted(ld.zes, lim)
	clear(ld.zes)
	return n, nil
}

func (ld *loader) stream(rs *rdb.Stream, it *loadItem) (int, error) {
	s, n, err := streamFromRDB(rs)
	if err != nil {
		return 0, err
	}
	it.kind, it.obj = keyspace.KindStream, s
	return n, nil
}

// streamFromRDB builds a stream with its groups, consumers and pending entries.
func streamFromRDB(rs *rdb.Stream) (*stream.Stream, int, error) {
	s, n := stream.New(), 0
	for _, en := range rs.Entries {
		if len(en.Fields) == 0 || len(en.Fields)%2 != 0 {
			return nil, 0, fmt.Errorf("%w: stream entry without field-value pairs", rdb.ErrCorrupt)
		}
		if err := s.Add(stream.ID{Ms: en.ID.Ms, Seq: en.ID.Seq}, en.Fields, stream.DefaultLimits); err != nil {
			return nil, 0, fmt.Errorf("%w: stream entry %d-%d: %v", rdb.ErrCorrupt, en.ID.Ms, en.ID.Seq, err)
		}
		for _, f := range en.Fields {
			n += len(f)
		}
	}
	last := streamID(rs.LastID)
	if last.Less(s.LastID()) {
		return nil, 0, fmt.Errorf("%w: stream last ID below its entries", rdb.ErrCorrupt)
	}
	added, maxDel := rs.EntriesAdded, streamID(rs.MaxDeletedID)
	s.SetID(last, &added, &maxDel)
	for i := range rs.Groups {
		rg := &rs.Groups[i]
		g := s.CreateGroup(rg.Name, streamID(rg.LastID), rg.EntriesRead)
		if g == nil {
			return nil, 0, fmt.Errorf("%w: duplicated consumer group name %q", rdb.ErrCorrupt, rg.Name)
		}
		for j := range rg.Consumers {
			rc := &rg.Consumers[j]
			if g.Consumer(rc.Name) != nil {
				return nil, 0, fmt.Errorf("%w: duplicated consumer %q", rdb.ErrCorrupt, rc.Name)
			}
			g.CreateConsumer(rc.Name, rc.SeenTimeMs)
		}
		for _, p := range rg.PEL {
			c := g.Consumer(p.Consumer)
			if p.Consumer == nil || c == nil {
				return nil, 0, fmt.Errorf("%w: pending entry %d-%d without a consumer", rdb.ErrCorrupt, p.ID.Ms, p.ID.Seq)
			}
			if g.Pending(streamID(p.ID)) != nil {
				return nil, 0, fmt.Errorf("%w: duplicated pending entry %d-%d", rdb.ErrCorrupt, p.ID.Ms, p.ID.Seq)
			}
			g.AddPending(streamID(p.ID), c, p.DeliveryTimeMs, p.DeliveryCount)
			n += 32
		}
	}
	return s, n, nil
}

func streamID(id rdb.StreamID) stream.ID { return stream.ID{Ms: id.Ms, Seq: id.Seq} }

// recountLoaded is RecountMemory for after a load: every collection the loader inserted has its
// estimate already (insertLocked) and every other key its own accounting, so the walk only adds
// up footprints.
func (e *Engine) recountLoaded() {
	e.Group.LockAll()
	defer e.Group.UnlockAll()
	for i := range e.Group.Shards {
		for _, ks := range e.data(int32(i)).dbs {
			ks.Recount(nil)
		}
	}
	e.dataUsed()
}

// flush inserts shard i's batch holding its token.
func (ld *loader) flush(i int) error {
	ls := &ld.shards[i]
	if len(ls.items) == 0 {
		return nil
	}
	var err error
	nowNs := time.Now().UnixNano()
	ld.e.Group.Do(i, func(*pipeline.Shard) {
		d := ld.e.data(int32(i))
		for k := range ls.items {
			if err = ld.insertLocked(d, &ls.items[k], nowNs); err != nil {
				return
			}
		}
	})
	clear(ls.items)
	ls.items, ls.bytes = ls.items[:0], 0
	return err
}

// insertLocked adds one key; its shard is held.
func (ld *loader) insertLocked(d *shardData, it *loadItem, nowNs int64) error {
	ks := d.dbs[it.db]
	if old := ks.Peek(it.key, math.MinInt64); old != nil { // live or expired alike
		if !ld.o.Replace {
			return fmt.Errorf("cannot load RDB: RDB has duplicated key '%s' in DB %d: %w", it.key, it.db, ErrDuplicateKey)
		}
		ks.Remove(old)
	}
	en := ks.Add(it.key)
	en.Access = uint32(nowNs / 1e9)
	switch {
	case ld.lfu && it.freq >= 0:
		en.Freq = uint8(it.freq)
	case !ld.lfu && it.idle >= 0:
		en.Access -= uint32(min(it.idle, int64(en.Access)))
	}
	en.Kind = it.kind
	if it.kind == keyspace.KindString {
		storeOwnedString(ld.e, ks, en, it.str, &d.ctx.packed) // the shard's own Ctx: its token is held
	} else {
		setObjOf(en, it.kind, it.obj)
		// The estimate RecountMemory would make, while the value is still in cache: made in
		// the recount's walk of every key after the load it was a fifth of loading a Redis
		// file of 400,000 small collections (pprof).
		en.SetAccounted(valueSize(en, acctSamples))
	}
	switch {
	case it.expireMs == -1:
	case it.expireMs <= 0: // kept although expired (KeepExpired): any time in the past will do
		ks.SetExpire(en, 1)
	default:
		ks.SetExpireMs(en, it.expireMs)
	}
	ld.st.Keys++
	return nil
}
