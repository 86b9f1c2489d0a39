package command

import (
	"strings"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/vector"
	"github.com/hotkv/hotkv/ds/vector/filter"
)

// The vector-set family: Redis 8's V* commands (modules/vector-sets/vset.c, read from Redis's
// source since no Redis 8 runs here) and HotKV's VSIM.* (vsim_hotkv.go) over one key type, TYPE
// "vectorset". The value is a *vsetValue: the HNSW index (ds/vector), Redis's REDUCE projection,
// and what HotKV's layer adds: tags (a pre-filter index of element ids), per-element expiry and
// the set's default search EF.
//
// Concurrency: writes hold the shard's token; VSIM, VSIM.SEARCH and the other reads are shared
// (shared.go), so searches of one set run on every core at once, never beside a write
// (ds/vector's contract). A shared read changes nothing: expired elements are skipped by reads
// and removed by the next write to the set or by the shard's active cycle (vset_expire.go).
var vsetCommands = []*Spec{
	{Name: "vadd", Arity: -5, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: vadd},
	{Name: "vrem", Arity: 3, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: vrem},
	{Name: "vsim", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: vsim, shared: true},
	{Name: "vdim", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: vdim, shared: true},
	{Name: "vcard", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: vcard, shared: true},
	{Name: "vemb", Arity: -3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: vemb, shared: true},
	{Name: "vlinks", Arity: -3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: vlinks, shared: true},
	{Name: "vinfo", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: vinfo, shared: true},
	{Name: "vsetattr", Arity: 4, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: vsetattr},
	{Name: "vgetattr", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: vgetattr, shared: true},
	{Name: "vrandmember", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: vrandmember, shared: true},
	{Name: "vismember", Arity: 3, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: vismember, shared: true},
	{Name: "vrange", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: vrange, shared: true},
	{Name: "vsim.createindex", Arity: -4, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: vsimCreateIndex},
	{Name: "vsim.set", Arity: -5, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: vsimSet},
	{Name: "vsim.search", Arity: -4, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: vsimSearch, shared: true},
	{Name: "vsim.del", Arity: -3, Flags: Write, FirstKey: 1, LastKey: 1, Step: 1, Run: vsimDel},
	{Name: "vsim.info", Arity: 2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: vsimInfo, shared: true},
}

// commandModule is the module COMMAND DOCS and COMMAND LIST FILTERBY MODULE name for one of
// HotKV's own commands: Redis 8's vector-set commands are its built-in module vectorset's, the
// rest (VSIM.* included) HotKV's.
func commandModule(name string) string {
	if len(name) > 1 && name[0] == 'v' && !strings.HasPrefix(name, "vsim.") {
		for _, s := range vsetCommands {
			if s.Name == name {
				return "vectorset"
			}
		}
	}
	return hotkvModule
}

// vsetValue is a vector set key's value.
type vsetValue struct {
	set *vector.Set
	// proj is REDUCE's projection: projOut x projIn float32s, row major; nil without REDUCE.
	proj   []float32
	projIn int
	uid    uint64 // VINFO's vset-uid
	// efSearch is the default search EF (VSIM.CREATEINDEX EFSEARCH); 0: Redis's 100.
	efSearch int
	// hotkv marks a set made by VSIM.CREATEINDEX (VSIM.INFO reports it; VADD still works on it).
	hotkv bool
	// tags is the tag pre-filter index; nil until VSIM.SET gives an element a tag.
	tags *filter.Tags
	// ttl holds elements' expiry in unix ms by id; nil until VSIM.SET gives one a TTL.
	ttl map[uint32]int64
	// queuedAt is the time of the set's entry in the expiry queue of keyspace queuedKS under
	// the name queuedKey, 0 when none is (vset_expire.go): a set is queued once, at or before its
	// next expiry; a set renamed, moved or copied is queued again by its next write.
	queuedExpiry
	// memN and memBytes are the last full count of memoryUsage and the length it was taken at:
	// the estimate the used-memory counter takes after every write scales it, recounting only
	// when the length has moved by a sixteenth (a full count walks every element).
	memN     int
	memBytes int64
	// attrBytes is the bytes of all attributes, kept by setAttr and remove; memAttr its value
	// at the last full count, so the estimate follows attribute changes at once.
	attrBytes, memAttr int64
}

// newVsetValue makes an empty set, numbered as Redis's VectorSetTypeNextId numbers them (per
// engine here; shards create sets concurrently, so the counter is atomic).
// The index's level generator is seeded from the uid, so a set's shape (VINFO max-level,
// VLINKS) is reproducible for a given history, as transcripts need.
func newVsetValue(c *Ctx, cfg vector.Config) (*vsetValue, error) {
	uid := c.E.vsetUID.Add(1) - 1
	cfg.Seed = (uid + 1) * 0x9E3779B97F4A7C15
	s, err := vector.New(cfg)
	if err != nil {
		return nil, err
	}
	return &vsetValue{set: s, uid: uid}, nil
}

// Encoding is OBJECT ENCODING's answer: Redis reports a module value's encoding as "raw".
func (v *vsetValue) Encoding() string { return "raw" }

// Clone is COPY's, and a snapshot's copy of a large set (Freeze): the index is copied as it is
// (ds/vector's Freeze: ids kept, so the tag index and expiries, which are by id, stay right), so
// the copy shares nothing that changes.
func (v *vsetValue) Clone() any { return v.Freeze() }

// Freeze is Clone for persist_freeze.go: an independent copy, written off the shard.
func (v *vsetValue) Freeze() *vsetValue {
	cp := *v
	cp.set = v.set.Freeze()
	cp.queuedAt, cp.queuedKS, cp.queuedKey = 0, nil, ""
	cp.proj = append([]float32(nil), v.proj...)
	if v.tags != nil {
		cp.tags = v.tags.Clone()
	}
	if v.ttl != nil {
		cp.ttl = make(map[uint32]int64, len(v.ttl))
		for id, at := range v.ttl {
			cp.ttl[id] = at
		}
	}
	return &cp
}

// Len is the number of elements, expired ones not yet removed included.
func (v *vsetValue) Len() int { return v.set.Len() }

// live reports whether element id has not expired at ms (unix ms).
func (v *vsetValue) live(id uint32, ms int64) bool {
	if v.ttl == nil {
		return true
	}
	at, ok := v.ttl[id]
	return !ok || at > ms
}

// liveName is live for an element by name; false when it is not in the set.
func (v *vsetValue) liveName(name []byte, ms int64) bool {
	id, ok := v.set.ID(name)
	return ok && v.live(id, ms)
}

// setAttr sets (nil: removes) element name's attribute, keeping attrBytes.
func (v *vsetValue) setAttr(name, attr []byte) {
	if a, ok := v.set.Attr(name); ok {
		v.attrBytes -= int64(len(a))
	}
	if v.set.SetAttr(name, attr) {
		v.attrBytes += int64(len(attr))
	}
}

// forget forgets element id's tags and expiry; the caller removes it from the index.
func (v *vsetValue) forget(id uint32) {
	if v.tags != nil {
		v.tags.RemoveID(id)
	}
	if v.ttl != nil {
		delete(v.ttl, id)
	}
}

// remove deletes element name from the set, its tags and expiry with it.
func (v *vsetValue) remove(name []byte) bool {
	id, ok := v.set.ID(name)
	if !ok {
		return false
	}
	v.forget(id)
	if a, ok := v.set.Attr(name); ok {
		v.attrBytes -= int64(len(a))
	}
	return v.set.Remove(name)
}

// readVset looks key up for a read and returns its set, or nil when it is missing; ok is false
// when it replied WRONGTYPE.
func readVset(c *Ctx, key []byte) (v *vsetValue, ok bool) {
	e := lookupForRead(c, key)
	if e == nil {
		return nil, true
	}
	if e.Kind != keyspace.KindVectorSet {
		c.WrongType()
		return nil, false
	}
	return keyspace.Obj[vsetValue](e), true
}

// writeVset is readVset for a write: the entry too, and the set's expired elements removed first
// (reported as VREMs, vset_expire.go).
func writeVset(c *Ctx, key []byte) (e *keyspace.Entry, v *vsetValue, ok bool) {
	e = c.Find(key)
	if e == nil {
		return nil, nil, true
	}
	if e.Kind != keyspace.KindVectorSet {
		c.WrongType()
		return nil, nil, false
	}
	v = keyspace.Obj[vsetValue](e)
	if v.ttl == nil {
		return e, v, true
	}
	if expireVsetElements(c, c.DB, key, v, c.Now/1e6, 0) > 0 && v.Len() == 0 && !v.hotkv {
		c.KS(key).Remove(e)
		return nil, nil, true
	}
	if v.queuedAt == 0 || v.queuedKS != c.KS(key) || v.queuedKey != string(key) {
		v.queuedAt = 0 // loaded, renamed, moved or copied: not queued under this name yet
		trackVexpLocked(c, key, v, v.nextExpiry())
	}
	return e, v, true
}

// addVset creates key, which the caller found absent, holding v.
func addVset(c *Ctx, key []byte, v *vsetValue) *keyspace.Entry {
	e := c.KS(key).Add(key)
	keyspace.SetObj(e, keyspace.KindVectorSet, v)
	e.Access = uint32(c.Now / int64(time.Second))
	return e
}

// dropVsetIfEmpty deletes key when its set has no element left, as Redis's VREM does.
func dropVsetIfEmpty(c *Ctx, key []byte, e *keyspace.Entry, v *vsetValue) {
	if v.Len() == 0 {
		c.KS(key).Remove(e)
		c.Notify(NotifyGeneric, "del", key)
	}
}

// memoryEstimate is valueSize's figure: with samples 0 (MEMORY USAGE SAMPLES 0) a full count,
// else the last full count scaled to the current length plus the attribute bytes changed since,
// recounted when the length moved by more than a sixteenth. Called only by the holder of the
// shard's token.
func (v *vsetValue) memoryEstimate(samples int) int64 {
	n := v.Len()
	if samples <= 0 {
		return v.memoryUsage() // exact, and leaves the estimate as it was
	}
	if v.memN == 0 || n == 0 || abs(n-v.memN) > v.memN/16 {
		v.memBytes, v.memN, v.memAttr = v.memoryUsage(), n, v.attrBytes
		return v.memBytes
	}
	return v.memBytes*int64(n)/int64(v.memN) + v.attrBytes - v.memAttr
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// memoryUsage is MEMORY USAGE's figure for the value: what the index holds (ds/vector counts its
// arenas, links, names and attributes) plus the projection, tags and expiry map.
func (v *vsetValue) memoryUsage() int64 {
	n := int64(v.set.MemoryUsage()) + int64(4*len(v.proj)) + collHeader
	if v.tags != nil {
		n += int64(v.tags.MemoryUsage())
	}
	n += int64(len(v.ttl)) * 24 // a map slot: key, value and overhead
	return n
}
