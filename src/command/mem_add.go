package command

import (
	"math"

	"github.com/hotkv/hotkv/ds/agentmem"
)

// memFields are the record fields ADD and UPDATE take; has* mark those given.
type memFields struct {
	id                         []byte
	text                       []byte
	vec                        []float32
	user, session, ns          []byte
	typ                        agentmem.Type
	topics, entities           []string
	importance                 float64
	eventTime, at, expireAt    int64
	dedup                      float64
	pinned, unpinned, persist  bool
	hasText, hasUser, hasSess  bool
	hasNS, hasType, hasTopics  bool
	hasEnts, hasImp, hasEvent  bool
	hasAt, hasExpire, hasDedup bool
	hasID, hasVec              bool
}

// parseMemFields reads ADD's (add) or UPDATE's options from args; ok is false when it replied.
func parseMemFields(c *Ctx, args [][]byte, dim int, add bool) (f memFields, ok bool) {
	now := memNow(c)
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case eqFold(a, "pinned"):
			f.pinned = true
			continue
		case !add && eqFold(a, "unpinned"):
			f.unpinned = true
			continue
		case !add && eqFold(a, "persist"):
			f.persist = true
			continue
		}
		if j+1 >= len(args) {
			c.Err(ErrSyntax)
			return f, false
		}
		val := args[j+1]
		switch {
		case add && eqFold(a, "id"):
			f.id, f.hasID = val, true
		case eqFold(a, "text"):
			f.text, f.hasText = val, true
		case eqFold(a, "vector"):
			vec, n := memVector(c, args, j+1, dim)
			if n == 0 {
				return f, false
			}
			f.vec, f.hasVec = vec, true
			j += n - 1
		case eqFold(a, "user"):
			f.user, f.hasUser = val, true
		case eqFold(a, "session"):
			f.session, f.hasSess = val, true
		case eqFold(a, "ns"):
			f.ns, f.hasNS = val, true
		case eqFold(a, "type"):
			t, ok := agentmem.ParseType(lowerASCII(val))
			if !ok {
				c.Err(ErrMemType)
				return f, false
			}
			f.typ, f.hasType = t, true
		case eqFold(a, "topics"), eqFold(a, "entities"):
			vals, n := memList(c, args, j+1)
			if n == 0 {
				return f, false
			}
			if eqFold(a, "topics") {
				f.topics, f.hasTopics = vals, true
			} else {
				f.entities, f.hasEnts = vals, true
			}
			j += n - 1
		case eqFold(a, "importance"):
			x, ok := ParseFloat(val)
			if !ok || !(x >= 0 && x <= 1) {
				c.Err(ErrMemImportance)
				return f, false
			}
			f.importance, f.hasImp = x, true
		case eqFold(a, "eventtime"), eqFold(a, "at"):
			t, ok := memTime(c, val)
			if !ok {
				return f, false
			}
			if eqFold(a, "at") {
				f.at, f.hasAt = t, true
			} else {
				f.eventTime, f.hasEvent = t, true
			}
		case eqFold(a, "ttl"), eqFold(a, "pxat"):
			n, ok := ParseInt(val)
			if !ok || n <= 0 || n > math.MaxInt64/2-now {
				c.Err(ErrMemTTL)
				return f, false
			}
			if eqFold(a, "ttl") {
				n += now
			}
			f.expireAt, f.hasExpire = n, true
		case add && eqFold(a, "dedup"):
			x, ok := ParseFloat(val)
			if !ok || !(x >= -1 && x <= 1) {
				c.Err(ErrMemDedup)
				return f, false
			}
			f.dedup, f.hasDedup = x, true
		default:
			c.Err(ErrSyntax)
			return f, false
		}
		j++
	}
	return f, true
}

func lowerASCII(b []byte) string {
	out := []byte(string(b))
	for i, ch := range out {
		if ch >= 'A' && ch <= 'Z' {
			out[i] = ch + 32
		}
	}
	return string(out)
}

// MEM.ADD key [ID id] TEXT text VECTOR (FP32 blob | VALUES n v…) [USER u] [SESSION s] [NS ns]
// [TYPE semantic|episodic|message] [TOPICS n t…] [ENTITIES n e…] [IMPORTANCE 0..1]
// [EVENTTIME ms] [TTL ms | PXAT ms] [PINNED] [DEDUP cosine] [AT ms]:
// [id, added|updated|deduped].
func memAdd(c *Ctx) {
	key := c.Args[1]
	v, ok := writeAgentMem(c, key)
	if !ok {
		return
	}
	s := v.s
	f, ok := parseMemFields(c, c.Args[2:], s.Config().Dim, true)
	if !ok {
		return
	}
	if !f.hasText {
		c.Err(ErrMemNeedText)
		return
	}
	if !f.hasVec {
		if f.vec, ok = v.embedText(c, f.text); !ok {
			return
		}
	}
	norm, err := s.Normalize(f.vec)
	if err != nil {
		memErr(c, err)
		return
	}
	now := memNow(c)
	if f.hasAt {
		now = f.at
	}
	sweepAgentMem(c, key, v, now)
	if f.hasDedup && !(f.hasID && s.Get(string(f.id)) != nil) {
		if hit := memDedup(s, &f, norm, now); hit != "" {
			c.PropagateNothing()
			memAddReply(c, hit, "deduped")
			return
		}
	}
	r := &agentmem.Record{Text: append([]byte(nil), f.text...), Vec: norm, User: string(f.user),
		Session: string(f.session), NS: string(f.ns), Type: f.typ, Topics: f.topics, Entities: f.entities,
		Importance: f.importance, EventTime: now, Created: now, Updated: now, ExpireAt: f.expireAt, Pinned: f.pinned}
	if f.hasEvent {
		r.EventTime = f.eventTime
	}
	if f.hasID {
		r.ID = string(f.id)
	} else {
		r.ID = s.NextID()
	}
	added, err := s.Put(r)
	if err != nil {
		memErr(c, err)
		return
	}
	propagateMemAdd(c, key, r, f.vec)
	trackMemExpLocked(c, key, v)
	c.Changed(NotifyModule, "mem.add", key)
	c.Dirty(1)
	status := "updated"
	if added {
		status = "added"
	}
	memAddReply(c, r.ID, status)
}

func memAddReply(c *Ctx, id, status string) {
	c.ArrayLen(2)
	c.BulkString(id)
	c.BulkString(status)
}

// memDedup returns the id of a current record of the same user, namespace and type as f whose
// similarity to norm reaches f.dedup, "" when none does.
func memDedup(s *agentmem.Store, f *memFields, norm []float32, now int64) string {
	q := agentmem.Query{Vec: norm, K: 1, MinSim: f.dedup, Weights: agentmem.DefaultWeights,
		Filter: agentmem.Filter{User: string(f.user), HasUser: true, NS: string(f.ns), HasNS: true,
			Types: 1 << f.typ}}
	if hits := s.Search(&q, now); len(hits) > 0 {
		return hits[0].Rec.ID
	}
	return ""
}

var (
	memAddCmd    = []byte("MEM.ADD")
	memUpdateCmd = []byte("MEM.UPDATE")
)

// propagateMemAdd replicates an ADD as its full absolute form (raw the vector as the client
// sent it, so that the replica normalizes the same floats).
func propagateMemAdd(c *Ctx, key []byte, r *agentmem.Record, raw []float32) {
	if !c.E.Feed.Active() {
		c.PropagateNothing()
		return
	}
	args := [][]byte{memAddCmd, key, []byte("ID"), []byte(r.ID), []byte("TEXT"), r.Text,
		[]byte("VECTOR"), []byte("FP32"), appendFP32(nil, raw),
		[]byte("USER"), []byte(r.User), []byte("SESSION"), []byte(r.Session), []byte("NS"), []byte(r.NS),
		[]byte("TYPE"), []byte(r.Type.String())}
	args = appendMemList(args, "TOPICS", r.Topics)
	args = appendMemList(args, "ENTITIES", r.Entities)
	args = append(args, []byte("IMPORTANCE"), fmtFloat(r.Importance), []byte("EVENTTIME"), fmtInt(r.EventTime),
		[]byte("AT"), fmtInt(r.Updated)) // the command's time; an upsert keeps its Created on both sides
	if r.ExpireAt != 0 {
		args = append(args, []byte("PXAT"), fmtInt(r.ExpireAt))
	}
	if r.Pinned {
		args = append(args, []byte("PINNED"))
	}
	c.Propagate(args...)
}

func appendMemList(args [][]byte, name string, vals []string) [][]byte {
	if len(vals) == 0 {
		return args
	}
	args = append(args, []byte(name), fmtInt(int64(len(vals))))
	for _, v := range vals {
		args = append(args, []byte(v))
	}
	return args
}

// MEM.UPDATE key id [TEXT t] [VECTOR …] [USER u] [SESSION s] [NS ns] [TYPE t] [TOPICS n t…]
// [ENTITIES n e…] [IMPORTANCE f] [EVENTTIME ms] [TTL ms | PXAT ms | PERSIST] [PINNED | UNPINNED]
// [AT ms]: 1, or 0 when there is no such memory. A superseded memory can be updated (a
// correction of that version); its version links stay.
func memUpdate(c *Ctx) {
	key, id := c.Args[1], c.Args[2]
	v, ok := writeAgentMem(c, key)
	if !ok {
		return
	}
	s := v.s
	f, ok := parseMemFields(c, c.Args[3:], s.Config().Dim, false)
	if !ok {
		return
	}
	if f.pinned && f.unpinned || f.persist && f.hasExpire {
		c.Err(ErrSyntax)
		return
	}
	now := memNow(c)
	if f.hasAt {
		now = f.at
	}
	sweepAgentMem(c, key, v, now)
	old := s.Get(string(id))
	if old == nil || old.ExpireAt != 0 && old.ExpireAt <= now {
		c.PropagateNothing()
		c.Int(0)
		return
	}
	r := *old
	r.Vec = old.Vec
	if f.hasText && !f.hasVec && v.emb != nil {
		f.vec, _ = v.embedText(c, f.text)
		f.hasVec = true
	}
	if f.hasVec {
		norm, err := s.Normalize(f.vec)
		if err != nil {
			memErr(c, err)
			return
		}
		r.Vec = norm
	}
	applyMemFields(&r, &f, now)
	if _, err := s.Put(&r); err != nil {
		memErr(c, err)
		return
	}
	propagateMemUpdate(c, key, id, &f, r.Updated)
	trackMemExpLocked(c, key, v)
	c.Changed(NotifyModule, "mem.update", key)
	c.Dirty(1)
	c.Int(1)
}

func applyMemFields(r *agentmem.Record, f *memFields, now int64) {
	if f.hasText {
		r.Text = append([]byte(nil), f.text...)
	}
	if f.hasUser {
		r.User = string(f.user)
	}
	if f.hasSess {
		r.Session = string(f.session)
	}
	if f.hasNS {
		r.NS = string(f.ns)
	}
	if f.hasType {
		r.Type = f.typ
	}
	if f.hasTopics {
		r.Topics = f.topics
	}
	if f.hasEnts {
		r.Entities = f.entities
	}
	if f.hasImp {
		r.Importance = f.importance
	}
	if f.hasEvent {
		r.EventTime = f.eventTime
	}
	if f.hasExpire {
		r.ExpireAt = f.expireAt
	}
	if f.persist {
		r.ExpireAt = 0
	}
	if f.pinned {
		r.Pinned = true
	}
	if f.unpinned {
		r.Pinned = false
	}
	r.Updated = now
	if f.hasAt {
		r.Updated = f.at
	}
}

// propagateMemUpdate replicates an UPDATE with its TTL as PXAT and its time as AT.
func propagateMemUpdate(c *Ctx, key, id []byte, f *memFields, at int64) {
	if !c.E.Feed.Active() {
		c.PropagateNothing()
		return
	}
	args := [][]byte{memUpdateCmd, key, id}
	add := func(name string, val []byte) { args = append(args, []byte(name), val) }
	if f.hasText {
		add("TEXT", f.text)
	}
	if f.hasVec {
		args = append(args, []byte("VECTOR"), []byte("FP32"), appendFP32(nil, f.vec))
	}
	if f.hasUser {
		add("USER", f.user)
	}
	if f.hasSess {
		add("SESSION", f.session)
	}
	if f.hasNS {
		add("NS", f.ns)
	}
	if f.hasType {
		add("TYPE", []byte(f.typ.String()))
	}
	if f.hasTopics {
		args = appendMemList(args, "TOPICS", f.topics)
	}
	if f.hasEnts {
		args = appendMemList(args, "ENTITIES", f.entities)
	}
	if f.hasImp {
		add("IMPORTANCE", fmtFloat(f.importance))
	}
	if f.hasEvent {
		add("EVENTTIME", fmtInt(f.eventTime))
	}
	if f.hasExpire {
		add("PXAT", fmtInt(f.expireAt))
	}
	for _, flag := range []struct {
		on   bool
		name string
	}{{f.persist, "PERSIST"}, {f.pinned, "PINNED"}, {f.unpinned, "UNPINNED"}} {
		if flag.on {
			args = append(args, []byte(flag.name))
		}
	}
	add("AT", fmtInt(at))
	c.Propagate(args...)
}

// MEM.GET key id: the memory's fields (a map in RESP3), or null. A superseded version is
// returned with its superseded_by and valid_to; an expired one is null.
func memGet(c *Ctx) {
	v, ok := readAgentMem(c, c.Args[1])
	if !ok {
		return
	}
	r := v.s.Get(string(c.Args[2]))
	if r == nil || r.ExpireAt != 0 && r.ExpireAt <= memNow(c) {
		c.Null()
		return
	}
	c.MapLen(16)
	pair := func(name string, val []byte) { c.BulkString(name); c.Bulk(val) }
	pair("id", []byte(r.ID))
	pair("text", r.Text)
	pair("user", []byte(r.User))
	pair("session", []byte(r.Session))
	pair("ns", []byte(r.NS))
	pair("type", []byte(r.Type.String()))
	c.BulkString("topics")
	memStrings(c, r.Topics)
	c.BulkString("entities")
	memStrings(c, r.Entities)
	c.BulkString("importance")
	c.Double(r.Importance)
	for _, t := range []struct {
		name string
		val  int64
	}{{"eventtime", r.EventTime}, {"created", r.Created}, {"updated", r.Updated}, {"expireat", r.ExpireAt}} {
		c.BulkString(t.name)
		c.Int(t.val)
	}
	c.BulkString("pinned")
	c.Int(b2i(r.Pinned))
	c.BulkString("superseded_by")
	memOptString(c, r.SupersededBy)
	c.BulkString("supersedes")
	memOptString(c, r.Supersedes)
	c.BulkString("valid_to")
	c.Int(r.ValidTo)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func memStrings(c *Ctx, vals []string) {
	c.ArrayLen(len(vals))
	for _, s := range vals {
		c.BulkString(s)
	}
}

func memOptString(c *Ctx, s string) {
	if s == "" {
		c.Null()
	} else {
		c.BulkString(s)
	}
}

// MEM.DEL key id [id …]: the number of memories deleted (any version).
func memDel(c *Ctx) {
	key := c.Args[1]
	v, ok := writeAgentMem(c, key)
	if !ok {
		return
	}
	n := 0
	for _, id := range c.Args[2:] {
		if v.s.Delete(string(id)) {
			n++
		}
	}
	if n > 0 {
		c.Propagate(c.Args...)
		c.Changed(NotifyModule, "mem.del", key)
		c.Dirty(n)
	}
	c.Int(int64(n))
}

// MEM.SUPERSEDE key old new [AT ms]: +OK. From then old is hidden from searches (but not from
// ASOF searches of a time before, nor from GET).
func memSupersede(c *Ctx) {
	key := c.Args[1]
	at := memNow(c)
	switch {
	case len(c.Args) == 6 && eqFold(c.Args[4], "at"):
		t, ok := memTime(c, c.Args[5])
		if !ok {
			return
		}
		at = t
	case len(c.Args) != 4:
		c.Err(ErrSyntax)
		return
	}
	v, ok := writeAgentMem(c, key)
	if !ok {
		return
	}
	sweepAgentMem(c, key, v, at)
	if err := v.s.Supersede(string(c.Args[2]), string(c.Args[3]), at); err != nil {
		memErr(c, err)
		return
	}
	c.Propagate([]byte("MEM.SUPERSEDE"), key, c.Args[2], c.Args[3], []byte("AT"), fmtInt(at))
	c.Changed(NotifyModule, "mem.supersede", key)
	c.Dirty(1)
	c.OK()
}

// MEM.INFO key: the memory's shape and counts (a map in RESP3).
func memInfo(c *Ctx) {
	v, ok := readAgentMem(c, c.Args[1])
	if !ok {
		return
	}
	cfg := v.s.Config()
	all, cur, users := v.s.Counts()
	c.MapLen(10)
	c.BulkString("dim")
	c.Int(int64(cfg.Dim))
	c.BulkString("quant")
	c.BulkString(cfg.Quant.String())
	c.BulkString("requireuser")
	c.Int(b2i(cfg.RequireUser))
	c.BulkString("window")
	c.Int(int64(cfg.Window))
	c.BulkString("encoding")
	c.BulkString(memEncoding(cfg).String())
	c.BulkString("embedder")
	c.BulkString(cmpOr(cfg.Embedder, "none"))
	c.BulkString("memories")
	c.Int(int64(all))
	c.BulkString("current")
	c.Int(int64(cur))
	c.BulkString("users")
	c.Int(int64(users))
	c.BulkString("windows")
	c.Int(int64(len(v.s.Sessions())))
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
