package command

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/vector/filter"
	"github.com/hotkv/hotkv/src/ai/embed"
	"github.com/hotkv/hotkv/src/ai/llmcache"
	"github.com/hotkv/hotkv/src/ai/tokens"
)

// llmHold runs fn holding key's shard, as a write when write is set (the maxmemory gate and the
// used-memory accounting around it), and commits its effects while the shard's feed ring is
// held. Inside MULTI/EXEC or a script (c.tx set) the tokens are held already.
func llmHold(c *Ctx, key []byte, write bool, fn func()) {
	if c.tx != nil {
		fn()
		return
	}
	shards := []int32{c.E.shardOf(key)}
	c.E.Group.Lock(shards)
	defer c.E.Group.Unlock(shards)
	c.E.enter(shards, false, c)
	defer c.E.leave(shards, false, c)
	if write {
		if !c.E.selfGate(c) {
			return
		}
		c.E.selfAccount(c, fn)
	} else {
		fn()
	}
	c.E.commit(c, c.slot)
}

// llmRead runs fn as a shared reader of key's shard when its token is free (pipeline/shared.go:
// beside other readers, never beside the token's holder), else holding the token. fn must read
// through findLLMRead, change nothing but the cache's atomic counters and stamps, and stop without
// a reply when c.needToken is set (the key was found expired and must be deleted): it then runs
// again holding the token.
func llmRead(c *Ctx, key []byte, fn func()) {
	if c.tx != nil || !llmReadShared(c, key, fn) {
		llmHold(c, key, false, fn)
	}
}

// llmReadShared runs fn as a shared reader; false when the token was taken or fn needs it. The
// reader leaves by a deferred call: a panic inside would otherwise keep every writer of the
// shard waiting for it.
func llmReadShared(c *Ctx, key []byte, fn func()) bool {
	shard := [1]int32{c.E.shardOf(key)}
	p, ok := c.E.Group.Share(shard[:])
	if !ok {
		return false
	}
	defer c.E.Group.Unshare(p, shard[:])
	c.rstats = &c.E.readers[p]
	defer func() { c.rstats = nil }()
	fn()
	again := c.needToken
	c.needToken = false
	return !again
}

// findLLMRead is findLLM for llmRead: it replies nothing when the key must first be deleted.
func findLLMRead(c *Ctx, key []byte) (*llmValue, bool) {
	e := c.FindRead(key)
	switch {
	case c.needToken:
		return nil, false
	case e == nil:
		c.Err(errLLMNoKey)
		return nil, false
	case e.Kind != keyspace.KindLLMCache:
		c.WrongType()
		return nil, false
	}
	return keyspace.Obj[llmValue](e), true
}

// llmSetArgs is SET's parse.
type llmSetArgs struct {
	a         llmcache.SetArgs
	hasTokens bool
	ttl       int64 // ms, 0 none given
	pxat      int64
	hasPXAT   bool
}

// parseTags reads TAGS n t1 … tn at args[j] (j at the count); it returns the tags and the index
// of the last one, or ok false.
func parseTags(args [][]byte, j int) ([][]byte, int, bool) {
	n, ok := ParseInt(args[j])
	if !ok || n < 0 || n > int64(len(args)-j-1) {
		return nil, 0, false
	}
	return args[j+1 : j+1+int(n)], j + int(n), true
}

// parseLLMSet reads SET's options after the key; "" when they are valid.
func parseLLMSet(args [][]byte) (o llmSetArgs, msg string) {
	var hasNS, hasPrompt, hasResp bool
	for j := 0; j < len(args); j++ {
		more := len(args) - j - 1
		a := args[j]
		switch {
		case eqFold(a, "ns") && more >= 1:
			o.a.NS, hasNS, j = args[j+1], true, j+1
		case eqFold(a, "prompt") && more >= 1:
			o.a.Prompt, hasPrompt, j = args[j+1], true, j+1
		case eqFold(a, "response") && more >= 1:
			o.a.Response, hasResp, j = args[j+1], true, j+1
		case eqFold(a, "vector") && more >= 2 && eqFold(args[j+1], "fp32"):
			if o.a.Vector = parseLLMVector(args[j+2]); o.a.Vector == nil {
				return o, errLLMVector
			}
			j += 2
		case eqFold(a, "tokens") && more >= 2:
			in, ok1 := ParseInt(args[j+1])
			out, ok2 := ParseInt(args[j+2])
			if !ok1 || !ok2 || in < 0 || out < 0 {
				return o, "ERR TOKENS takes two non-negative integers"
			}
			o.a.TokensIn, o.a.TokensOut, o.hasTokens, j = in, out, true, j+2
		case eqFold(a, "cost") && more >= 1:
			f, ok := ParseFloat(args[j+1])
			if !ok || f < 0 {
				return o, "ERR COST must be a non-negative number"
			}
			o.a.Cost, j = f, j+1
		case eqFold(a, "ttl") && more >= 1:
			n, ok := ParseInt(args[j+1])
			if !ok || n <= 0 || n > 1<<40 {
				return o, fmt.Sprintf(ErrInvalidExpire, "llmcache.set")
			}
			o.ttl, j = n*1000, j+1
		case eqFold(a, "pxat") && more >= 1:
			n, ok := ParseInt(args[j+1])
			if !ok || n < 0 {
				return o, fmt.Sprintf(ErrInvalidExpire, "llmcache.set")
			}
			o.pxat, o.hasPXAT, j = n, true, j+1
		case eqFold(a, "tags") && more >= 1:
			tags, last, ok := parseTags(args, j+1)
			if !ok {
				return o, ErrSyntax
			}
			o.a.Tags, j = tags, last
		case eqFold(a, "attr") && more >= 1:
			o.a.Attr, j = args[j+1], j+1
		case eqFold(a, "id") && more >= 1:
			n, ok := ParseInt(args[j+1])
			if !ok || n <= 0 {
				return o, "ERR ID must be a positive integer"
			}
			o.a.ID, j = uint64(n), j+1
		default:
			return o, ErrSyntax
		}
	}
	if !hasNS || !hasPrompt || !hasResp {
		return o, errLLMNeedArgs
	}
	return o, ""
}

// LLMCACHE.SET key NS ns PROMPT p RESPONSE r [VECTOR FP32 blob] [TOKENS in out] [COST c]
// [TTL seconds | PXAT unix-ms] [TAGS n tag …] [ATTR json] [ID id]
func llmSet(c *Ctx) {
	key := c.Args[1]
	o, msg := parseLLMSet(c.Args[2:])
	if msg != "" {
		c.Err(msg)
		return
	}
	if !o.hasTokens { // counted here, holding nothing (cl100k_base)
		o.a.TokensIn = int64(tokens.Count(tokens.Default, o.a.Prompt))
		o.a.TokensOut = int64(tokens.Count(tokens.Default, o.a.Response))
	}
	var emb embed.Embedder
	done := false
	llmHold(c, key, true, func() {
		_, v, ok := findLLM(c, key)
		if !ok {
			done = true
			return
		}
		if o.a.Vector != nil || v.emb == nil {
			done = true
			llmSetLocked(c, key, v, &o)
			return
		}
		emb = v.emb
		if emb.Local() {
			done = true
			llmSetEmbedded(c, key, v, &o, emb)
		}
	})
	if done {
		return
	}
	vecs, err := embedOffShard(c, emb, [][]byte{o.a.Prompt})
	if err != nil {
		c.Err(err.Error())
		return
	}
	o.a.Vector = vecs[0]
	llmHold(c, key, true, func() {
		if _, v, ok := findLLM(c, key); ok {
			llmSetLocked(c, key, v, &o)
		}
	})
}

// llmSetEmbedded embeds the prompt with a local embedder, holding the shard, and stores.
func llmSetEmbedded(c *Ctx, key []byte, v *llmValue, o *llmSetArgs, emb embed.Embedder) {
	vecs, err := embedOffShard(c, emb, [][]byte{o.a.Prompt})
	if err != nil {
		c.Err(err.Error())
		return
	}
	o.a.Vector = vecs[0]
	llmSetLocked(c, key, v, o)
}

// llmSetLocked stores the entry and replicates it in its deterministic form.
func llmSetLocked(c *Ctx, key []byte, v *llmValue, o *llmSetArgs) {
	nowMS := c.Now / 1e6
	switch {
	case o.hasPXAT:
		o.a.Expire, o.a.NoExpire = o.pxat, o.pxat == 0
	case o.ttl > 0:
		o.a.Expire = nowMS + o.ttl
	}
	if o.a.Expire != 0 && o.a.Expire <= nowMS {
		c.Int(0) // already expired: stored and gone, as SET … PXAT in the past
		c.PropagateNothing()
		return
	}
	v.c.Sweep(nowMS, 8)
	id, evicted, err := v.c.Set(o.a, nowMS)
	if err != nil {
		llmErr(c, err)
		return
	}
	e := v.c.Entry(id)
	if len(evicted) > 0 {
		del := [][]byte{[]byte("LLMCACHE.DEL"), key}
		for _, x := range evicted {
			del = append(del, appendU(x))
		}
		c.Propagate(del...)
		c.Notify(NotifyEvicted, "llmcache.evict", key)
	}
	args := [][]byte{[]byte("LLMCACHE.SET"), key, []byte("NS"), o.a.NS, []byte("PROMPT"), o.a.Prompt,
		[]byte("RESPONSE"), o.a.Response}
	if o.a.Vector != nil {
		args = append(args, []byte("VECTOR"), []byte("FP32"), fp32Blob(o.a.Vector))
	}
	args = append(args, []byte("TOKENS"), appendI(e.TokensIn), appendI(e.TokensOut),
		[]byte("COST"), strconv.AppendFloat(nil, e.Cost, 'g', -1, 64))
	if len(o.a.Tags) > 0 {
		args = append(args, []byte("TAGS"), appendI(int64(len(o.a.Tags))))
		args = append(args, o.a.Tags...)
	}
	if o.a.Attr != nil {
		args = append(args, []byte("ATTR"), o.a.Attr)
	}
	args = append(args, []byte("ID"), appendU(id), []byte("PXAT"), appendI(e.Expire))
	c.Propagate(args...)
	c.Changed(NotifyModule, "llmcache.set", key)
	c.Dirty(1)
	c.Int(int64(id))
}

// parseLLMGet reads GET's options after the key.
func parseLLMGet(args [][]byte) (q llmcache.Query, msg string) {
	var hasNS, hasPrompt bool
	for j := 0; j < len(args); j++ {
		more := len(args) - j - 1
		a := args[j]
		switch {
		case eqFold(a, "ns") && more >= 1:
			q.NS, hasNS, j = args[j+1], true, j+1
		case eqFold(a, "prompt") && more >= 1:
			q.Prompt, hasPrompt, j = args[j+1], true, j+1
		case eqFold(a, "vector") && more >= 2 && eqFold(args[j+1], "fp32"):
			if q.Vector = parseLLMVector(args[j+2]); q.Vector == nil {
				return q, errLLMVector
			}
			j += 2
		case eqFold(a, "mode") && more >= 1:
			switch m := args[j+1]; {
			case eqFold(m, "exact"):
				q.Mode = llmcache.ModeExact
			case eqFold(m, "semantic"):
				q.Mode = llmcache.ModeSemantic
			case eqFold(m, "both"):
				q.Mode = llmcache.ModeBoth
			default:
				return q, "ERR MODE must be EXACT, SEMANTIC or BOTH"
			}
			j++
		case eqFold(a, "threshold") && more >= 1:
			f, ok := ParseFloat(args[j+1])
			if !ok || f < -1 || f > 1 {
				return q, errLLMThreshold
			}
			q.Threshold, q.HasThreshold, j = float32(f), true, j+1
		case eqFold(a, "ef") && more >= 1:
			ef, ok := parseLLMEF(args[j+1])
			if !ok {
				return q, errLLMEF
			}
			q.EF, j = ef, j+1
		case eqFold(a, "tags") && more >= 1:
			tags, last, ok := parseTags(args, j+1)
			if !ok {
				return q, ErrSyntax
			}
			q.Tags, j = tags, last
		default:
			return q, ErrSyntax
		}
	}
	if !hasNS || !hasPrompt {
		return q, errLLMGetArgs
	}
	return q, ""
}

// LLMCACHE.GET key NS ns PROMPT p [VECTOR FP32 blob] [MODE EXACT|SEMANTIC|BOTH] [THRESHOLD cos]
// [EF search-ef] [TAGS n tag …]
//
// A hit replies [id, response, "exact"|"semantic", score, tokens (in + out)]; a miss a null. The
// exact lookup runs first and costs no vector: a remote embedder is called only when it misses.
func llmGet(c *Ctx) {
	key := c.Args[1]
	q, msg := parseLLMGet(c.Args[2:])
	if msg != "" {
		c.Err(msg)
		return
	}
	g := llmGetRun{q: q}
	llmRead(c, key, func() { g.first(c, key) })
	if g.emb != nil {
		vecs, err := embedOffShard(c, g.emb, [][]byte{g.q.Prompt})
		if err != nil {
			c.Err(err.Error())
			return
		}
		g.q.Vector = vecs[0]
		llmRead(c, key, func() {
			if v, ok := findLLMRead(c, key); ok {
				g.lookup(c, v)
			}
		})
	}
	if len(g.expired) > 0 { // met by the lookup, removed holding the token
		llmHold(c, key, false, func() {
			if _, v, ok := findLLM(c, key); ok {
				v.c.DropExpired(g.expired, c.Now/1e6)
			}
		})
	}
}

// llmGetRun is one GET's state across its shared reads.
type llmGetRun struct {
	q       llmcache.Query
	emb     embed.Embedder // set when the prompt must be embedded off the shard
	expired []uint64
}

// first looks up what needs no remote embedding, or leaves g.emb set for the caller to embed.
func (g *llmGetRun) first(c *Ctx, key []byte) {
	g.q.NowMS = c.Now / 1e6
	v, ok := findLLMRead(c, key)
	if !ok {
		return
	}
	q := &g.q
	if q.Vector != nil || q.Mode == llmcache.ModeExact || v.emb == nil ||
		q.Mode == llmcache.ModeBoth && v.c.HasExact(q.NS, q.Prompt, q.Tags, q.NowMS) {
		g.lookup(c, v)
		return
	}
	if v.emb.Local() {
		vecs, _ := embedOffShard(c, v.emb, [][]byte{q.Prompt})
		q.Vector = vecs[0]
		g.lookup(c, v)
		return
	}
	g.emb = v.emb
}

// lookup runs the cache's Get and replies.
func (g *llmGetRun) lookup(c *Ctx, v *llmValue) {
	q := &g.q
	if q.Vector != nil && allZero(q.Vector) {
		q.Vector = nil // the lexical embedding of a prompt without letters: exact lookup only
		if q.Mode == llmcache.ModeSemantic {
			c.Null()
			return
		}
	}
	h, ok, err := v.c.Get(*q)
	g.expired = h.Expired
	if err != nil {
		llmErr(c, err)
		return
	}
	if !ok {
		c.Null()
		return
	}
	c.ArrayLen(5)
	c.Int(int64(h.Entry.ID))
	c.Bulk(h.Entry.Response)
	if h.Semantic {
		c.BulkString("semantic")
	} else {
		c.BulkString("exact")
	}
	llmFloat(c, h.Score)
	c.Int(h.Entry.TokensIn + h.Entry.TokensOut)
}

func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// LLMCACHE.DEL key id [id …]
func llmDel(c *Ctx) {
	key := c.Args[1]
	ids := make([]uint64, 0, len(c.Args)-2)
	for _, a := range c.Args[2:] {
		n, ok := ParseInt(a)
		if !ok || n <= 0 {
			c.Err("ERR entry ids are positive integers")
			return
		}
		ids = append(ids, uint64(n))
	}
	_, v, ok := findLLM(c, key)
	if !ok {
		return
	}
	n := v.c.Del(ids...)
	if n > 0 {
		c.Changed(NotifyModule, "llmcache.del", key)
		c.Dirty(n)
	}
	c.Int(int64(n))
}

// LLMCACHE.INVALIDATE key [NS ns] [TAGS n tag …] [FILTER expr] [OLDER seconds]
//
// With no selector every entry goes. Replicated as an LLMCACHE.DEL of the ids removed.
func llmInvalidate(c *Ctx) {
	key := c.Args[1]
	var m llmcache.Match
	args := c.Args[2:]
	for j := 0; j < len(args); j++ {
		more := len(args) - j - 1
		a := args[j]
		switch {
		case eqFold(a, "ns") && more >= 1:
			m.NS, m.HasNS, j = args[j+1], true, j+1
		case eqFold(a, "tags") && more >= 1:
			tags, last, ok := parseTags(args, j+1)
			if !ok {
				c.Err(ErrSyntax)
				return
			}
			m.Tags, j = tags, last
		case eqFold(a, "filter") && more >= 1:
			expr, err := filter.Compile(args[j+1])
			if err != nil {
				c.Err("ERR syntax error in FILTER expression")
				return
			}
			m.Filter, j = expr.Match, j+1
		case eqFold(a, "older") && more >= 1:
			n, ok := ParseInt(args[j+1])
			if !ok || n < 0 {
				c.Err("ERR OLDER takes seconds, a non-negative integer")
				return
			}
			m.OlderThan, j = c.Now/1e6-n*1000, j+1
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	_, v, ok := findLLM(c, key)
	if !ok {
		return
	}
	ids := v.c.Invalidate(m)
	slices.Sort(ids)
	if len(ids) == 0 {
		c.PropagateNothing()
		c.Int(0)
		return
	}
	del := [][]byte{[]byte("LLMCACHE.DEL"), key}
	for _, id := range ids {
		del = append(del, appendU(id))
	}
	c.Propagate(del...)
	c.Changed(NotifyModule, "llmcache.invalidate", key)
	c.Dirty(len(ids))
	c.Int(int64(len(ids)))
}

// LLMCACHE.FEEDBACK key id BAD [PROMPT paraphrase]
//
// The entry goes, and the paraphrase (PROMPT, else the prompt of the entry's last semantic hit)
// never hits an entry of that namespace and prompt again. Replies 1, or 0 when there is no such
// entry. Replicated with the paraphrase it resolved.
func llmFeedback(c *Ctx) {
	key := c.Args[1]
	n, ok := ParseInt(c.Args[2])
	if !ok || n <= 0 {
		c.Err("ERR entry ids are positive integers")
		return
	}
	if !eqFold(c.Args[3], "bad") {
		c.Err(ErrSyntax)
		return
	}
	var para []byte
	switch {
	case len(c.Args) == 6 && eqFold(c.Args[4], "prompt"):
		para = c.Args[5]
	case len(c.Args) != 4:
		c.Err(ErrSyntax)
		return
	}
	_, v, ok := findLLM(c, key)
	if !ok {
		return
	}
	if para == nil {
		para = v.c.LastHit(uint64(n))
	}
	if !v.c.Feedback(uint64(n), para) {
		c.PropagateNothing()
		c.Int(0)
		return
	}
	prop := [][]byte{[]byte("LLMCACHE.FEEDBACK"), key, c.Args[2], []byte("BAD")}
	if len(para) > 0 {
		prop = append(prop, []byte("PROMPT"), para)
	}
	c.Propagate(prop...)
	c.Changed(NotifyModule, "llmcache.feedback", key)
	c.Dirty(1)
	c.Int(1)
}

// LLMCACHE.STATS key
func llmStats(c *Ctx) {
	key := c.Args[1]
	e := c.Find(key)
	if e == nil {
		c.Err(errLLMNoKey)
		return
	}
	if e.Kind != keyspace.KindLLMCache {
		c.WrongType()
		return
	}
	v := keyspace.Obj[llmValue](e)
	st, cfg := v.c.Stats(), v.c.Config()
	s := &st
	c.MapLen(24)
	kv := func(k string, n int64) { c.BulkString(k); c.Int(n) }
	kv("entries", int64(v.c.Len()))
	kv("namespaces", int64(v.c.Namespaces()))
	kv("dim", int64(cfg.Dim))
	c.BulkString("threshold")
	llmFloat(c, cfg.Threshold)
	c.BulkString("guard")
	c.BulkString(guardName(cfg.Guard))
	c.BulkString("embedder")
	switch {
	case v.emb != nil:
		c.BulkString(v.emb.Name())
	default:
		c.BulkString("none")
	}
	kv("ttl", cfg.TTL/1000)
	kv("maxentries", int64(cfg.MaxEntries))
	ef := cfg.EF
	if ef == 0 {
		ef = llmcache.DefaultEF
	}
	kv("ef", int64(ef))
	kv("lookups", s.Lookups)
	kv("exact_hits", s.ExactHits)
	kv("semantic_hits", s.SemanticHits)
	kv("misses", s.Misses)
	kv("guard_rejects", s.GuardRejects)
	c.BulkString("hit_rate")
	if s.Lookups == 0 {
		c.Double(0)
	} else {
		c.Double(float64(s.ExactHits+s.SemanticHits) / float64(s.Lookups))
	}
	kv("tokens_saved", s.TokensSaved)
	kv("tokens_in_saved", s.TokensInSaved)
	c.BulkString("cost_saved")
	c.Double(s.CostSaved)
	kv("wrong_hits", s.WrongHits)
	kv("evicted", s.Evicted)
	kv("expired", s.Expired)
	kv("next_id", int64(v.c.NextID()))
	c.BulkString("hit_scores")
	llmHistogram(c, &s.HitScores)
	c.BulkString("near_misses")
	llmHistogram(c, &s.NearMisses)
}

// llmHistogram replies a histogram as a map from each bucket's lower bound to its count.
func llmHistogram(c *Ctx, h *[llmcache.Buckets]int64) {
	c.MapLen(llmcache.Buckets)
	for i, n := range h {
		c.BulkString(strconv.FormatFloat(llmcache.BucketLow(i), 'f', 2, 64))
		c.Int(n)
	}
}

func guardName(g llmcache.Guard) string {
	switch g {
	case 0:
		return "none"
	case llmcache.GuardNumbers:
		return "numbers"
	case llmcache.GuardNegation:
		return "negation"
	}
	return "numbers,negation"
}

// llmFloat replies a float32 in its shortest decimal form: a bulk string in RESP2, a double in
// RESP3.
func llmFloat(c *Ctx, x float32) {
	if c.Proto < 3 {
		c.BulkString(strconv.FormatFloat(float64(x), 'g', -1, 32))
		return
	}
	c.Double(f32(x))
}

// f32 is x as the float64 of its shortest decimal form, so replies show 0.9, not 0.8999999761.
func f32(x float32) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
	return f
}
