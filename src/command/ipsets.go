package command

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/hotkv/hotkv/ds/ipset"
	"github.com/hotkv/hotkv/ds/keyspace"
)

// IP sets (issue 21, HotKV's own commands; docs/ipsets.md): a key of type "ipset" holds IPv4
// and IPv6 entries (an address, addr/len or lo-hi), each with an optional label, a NOMATCH flag
// and an expiry. An address's deciding entry is its most specific cover (ds/ipset).
//
// Concurrency: writes hold the shard's token; CONTAINS, MCONTAINS, MATCH, MMATCH and CARD are
// shared reads (shared.go): ds/ipset's lookups change nothing. Expired entries are skipped by
// reads and removed by the next write to the set or by the shard's active cycle
// (expireIPSetsLocked), each removal replicated as IPSET.DEL key entry and raising
// "ipset.expired" (class d); a set left empty is deleted ("del"). The same queue brings a set
// with a pending part or a merge in flight back to the active cycle (ipsetSettleMs later), which
// installs finished merges and merges what a set that stopped changing still has pending
// (ipset.Set.Settle), so a loaded set ends fully indexed.
var ipsetCommands = []*Spec{
	{Name: "ipset.add", Arity: -3, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Run: ipsetAdd},
	{Name: "ipset.del", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: ipsetDel},
	{Name: "ipset.contains", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: ipsetContains, shared: true},
	{Name: "ipset.mcontains", Arity: -3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: ipsetContains, shared: true},
	{Name: "ipset.match", Arity: 3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: ipsetMatch, shared: true},
	{Name: "ipset.mmatch", Arity: -3, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: ipsetMatch, shared: true},
	{Name: "ipset.card", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1, Run: ipsetCard, shared: true},
	{Name: "ipset.addrcount", Arity: -2, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: ipsetAddrCount},
	{Name: "ipset.scan", Arity: -3, Flags: ReadOnly, FirstKey: 1, LastKey: 1, Step: 1, Run: ipsetScan},
	{Name: "ipset.swap", Arity: 3, Flags: Write | Fast, FirstKey: 1, LastKey: 2, Step: 1, Run: ipsetSwap},
}

// ipsetValue is an IP set key's value.
type ipsetValue struct {
	set *ipset.Set
	// queuedAt is the time of the set's entry in the expiry queue of keyspace queuedKS under
	// the name queuedKey, 0 when none is, as vsetValue's (vset_expire.go).
	queuedExpiry
}

// Encoding is OBJECT ENCODING's answer.
func (v *ipsetValue) Encoding() string { return "ipset" }

// Clone is COPY's.
func (v *ipsetValue) Clone() any { return &ipsetValue{set: v.set.Clone()} }

// Len is the number of entries, expired ones not yet removed included.
func (v *ipsetValue) Len() int { return v.set.Len() }

func ipsetEntryErr(c *Ctx, arg []byte) {
	c.Err("ERR invalid IP set entry '" + safeErrArg(arg) + "'")
}

func ipsetAddrErr(c *Ctx, arg []byte) {
	c.Err("ERR invalid IP address '" + safeErrArg(arg) + "'")
}

// safeErrArg is arg as an error reply may quote it: CR and LF become spaces.
func safeErrArg(arg []byte) string {
	if bytes.IndexAny(arg, "\r\n") < 0 {
		return string(arg)
	}
	b := bytes.ReplaceAll(arg, []byte("\r"), []byte(" "))
	return string(bytes.ReplaceAll(b, []byte("\n"), []byte(" ")))
}

// readIPSet looks key up for a read: the set, or nil when missing; ok is false when it
// replied WRONGTYPE, or, in shared work, when the read must run again holding the token
// (c.needToken) to look after the set first (ipsetUnkept).
func readIPSet(c *Ctx, key []byte) (*ipsetValue, bool) {
	e := lookupForRead(c, key)
	if e == nil {
		return nil, true
	}
	if e.Kind != keyspace.KindIPSet {
		c.WrongType()
		return nil, false
	}
	v := keyspace.Obj[ipsetValue](e)
	if ipsetUnkept(v, key) {
		if c.rstats != nil { // shared work: nothing written yet, so it runs again with the token
			c.needToken = true
			return nil, false
		}
		keepIPSet(c, key, v)
		reaccountIPSet(c, c.KS(key), e)
	}
	return v, true
}

// reaccountIPSet reports to ks what e's set holds now against what it accounted. A merge is
// installed, and the pending part it absorbed dropped, outside any write's accounting
// (memory_acct.go): by the active cycle's Settle or a read holding the token. Without this the
// used-memory counter kept the size the load's last write saw, while a merge's pending part was
// held (31-39 B an entry for libloc's list against MEMORY USAGE's 25.7). O(1): MemoryUsage
// adds up slice capacities.
func reaccountIPSet(c *Ctx, ks *keyspace.Keyspace, e *keyspace.Entry) {
	before := e.Accounted()
	e.SetAccounted(valueSize(e, acctSamples))
	accountExpiry(c, ks, e, before)
}

// ipsetUnkept reports whether v, key's set, needs a holder of the token: a merge finished and
// waits to be installed, or the set has something pending or expiring and is not in the active
// cycle's queue under this name (it was RENAMEd or moved there; a staging load RENAMEd over a
// live key arrives so, and would otherwise keep its pending part until its next write, every
// lookup probing the delta's maps). Shared readers may call it: it reads fields only writers
// change, and an atomic. The name is compared, not the database: c.KS would hash the key on
// every read of a set with entry TTLs (5% of CONTAINS's CPU in BenchmarkIPSetHotPath), so a set
// MOVEd to another database under the same name waits for its next write, as before.
func ipsetUnkept(v *ipsetValue, key []byte) bool {
	if v.set.Installable() {
		return true
	}
	if !v.set.Unsettled() && v.set.NextExpiry() == 0 {
		return false
	}
	return v.queuedAt == 0 || v.queuedKey != string(key)
}

// keepIPSet installs v's finished merges and queues it for the active cycle under key; the
// token is held.
func keepIPSet(c *Ctx, key []byte, v *ipsetValue) {
	v.set.Poll()
	if v.queuedKey != string(key) || v.queuedKS != c.KS(key) {
		v.queuedAt = 0
	}
	if next := v.set.NextExpiry(); next != 0 {
		trackIPSetExpiry(c, key, v, next)
	}
	trackIPSetSettle(c, key, v)
}

// writeIPSet is readIPSet for a write: the entry too, and the set's expired entries removed
// first (replicated as IPSET.DELs); a set left empty is deleted and reported missing.
func writeIPSet(c *Ctx, key []byte) (e *keyspace.Entry, v *ipsetValue, ok bool) {
	e = c.Find(key)
	if e == nil {
		return nil, nil, true
	}
	if e.Kind != keyspace.KindIPSet {
		c.WrongType()
		return nil, nil, false
	}
	v = keyspace.Obj[ipsetValue](e)
	ms := c.Now / 1e6
	if next := v.set.NextExpiry(); next != 0 && next <= ms {
		if expireIPSetEntries(c, c.DB, key, v, ms, 0) > 0 && v.Len() == 0 {
			c.KS(key).Remove(e)
			return nil, nil, true
		}
	}
	if next := v.set.NextExpiry(); next != 0 && (v.queuedAt == 0 || v.queuedKS != c.KS(key) || v.queuedKey != string(key)) {
		v.queuedAt = 0 // loaded, renamed, moved or copied: not queued under this name yet
		trackIPSetExpiry(c, key, v, next)
	}
	return e, v, true
}

// addIPSet creates key, which the caller found absent, holding v.
func addIPSet(c *Ctx, key []byte, v *ipsetValue) *keyspace.Entry {
	e := c.KS(key).Add(key)
	keyspace.SetObj(e, keyspace.KindIPSet, v)
	e.Access = uint32(c.Now / int64(time.Second))
	return e
}

// ipsetAddOpts are IPSET.ADD's options.
type ipsetAddOpts struct {
	nx, xx, nomatch, labels, hasLabel bool
	label                             []byte
	expire                            int64 // unix ms, 0: none
	hasExpire                         bool
	first                             int // index of the first entry
}

func parseIPSetAdd(c *Ctx) (o ipsetAddOpts, ok bool) {
	args := c.Args
	nowMs := c.Now / 1e6
	i := 2
loop:
	for ; i < len(args); i++ {
		a := args[i]
		more := i+1 < len(args)
		switch {
		case eqFold(a, "nx"):
			o.nx = true
		case eqFold(a, "xx"):
			o.xx = true
		case eqFold(a, "nomatch"):
			o.nomatch = true
		case eqFold(a, "labels"):
			o.labels = true
		case eqFold(a, "label") && more:
			if o.hasLabel {
				c.Err(ErrSyntax)
				return o, false
			}
			o.label, o.hasLabel = args[i+1], true
			i++
		case (eqFold(a, "ttl") || eqFold(a, "px") || eqFold(a, "exat") || eqFold(a, "pxat")) && more:
			if o.hasExpire {
				c.Err(ErrSyntax)
				return o, false
			}
			n, okn := ParseInt(args[i+1])
			if !okn {
				c.Err(ErrNotInt)
				return o, false
			}
			var at int64
			valid := n > 0
			switch {
			case eqFold(a, "ttl"):
				valid = valid && n <= (1<<62-nowMs)/1000
				at = nowMs + n*1000
			case eqFold(a, "px"):
				valid = valid && n <= 1<<62-nowMs
				at = nowMs + n
			case eqFold(a, "exat"):
				valid = valid && n <= (1<<62)/1000
				at = n * 1000
			default:
				valid = valid && n <= 1<<62
				at = n
			}
			if !valid {
				c.Errf(ErrInvalidExpire, c.Spec.Name)
				return o, false
			}
			o.expire, o.hasExpire = at, true
			i++
		default:
			break loop
		}
	}
	o.first = i
	n := len(args) - i
	if o.nx && o.xx || o.labels && o.hasLabel || n == 0 || o.labels && n%2 != 0 {
		c.Err(ErrSyntax)
		return o, false
	}
	return o, true
}

var (
	ipsetAddArg  = []byte("IPSET.ADD")
	ipsetDelArg  = []byte("IPSET.DEL")
	ipsetPxatArg = []byte("PXAT")
)

// IPSET.ADD key [NX|XX] [TTL s|PX ms|EXAT s|PXAT ms] [NOMATCH] [LABEL l|LABELS] entry [label] …
// Replies the number of new entries. Without NX an existing entry takes the new expiry, label
// and flag (none given: none). An expiry already past removes the entries instead.
func ipsetAdd(c *Ctx) {
	o, ok := parseIPSetAdd(c)
	if !ok {
		return
	}
	step := 1
	if o.labels {
		step = 2
	}
	for i := o.first; i < len(c.Args); i += step {
		if _, ok := ipset.ParseEntry(c.Args[i]); !ok {
			ipsetEntryErr(c, c.Args[i])
			return
		}
	}
	key := c.Args[1]
	e, v, ok := writeIPSet(c, key)
	if !ok {
		return
	}
	nowMs := c.Now / 1e6
	if o.hasExpire && o.expire <= nowMs { // already past: what is there goes, nothing is added
		ipsetDelEntries(c, key, e, v, o.first, step, o.xx, o.nx)
		c.Int(0)
		return
	}
	if v == nil && o.xx {
		c.Int(0)
		return
	}
	created := false
	if v == nil {
		v = &ipsetValue{set: ipset.New()}
		created = true
	}
	added, changed := 0, 0
	m := ipset.Meta{Expire: o.expire, NoMatch: o.nomatch}
	if o.hasLabel {
		m.Label = o.label
	}
	for i := o.first; i < len(c.Args); i += step {
		r, _ := ipset.ParseEntry(c.Args[i])
		if o.labels {
			m.Label = c.Args[i+1]
		}
		a, ch := v.set.Add(r, m, o.nx, o.xx)
		if a {
			added++
		}
		if ch {
			changed++
		}
	}
	if changed == 0 {
		c.Int(0)
		return
	}
	if created {
		e = addIPSet(c, key, v)
	}
	if o.hasExpire {
		trackIPSetExpiry(c, key, v, v.set.NextExpiry())
		ipsetPropagateAdd(c, o)
	}
	trackIPSetSettle(c, key, v)
	c.Changed(NotifyModule, "ipset.add", key)
	c.Dirty(changed)
	c.Int(int64(added))
}

// ipsetPropagateAdd replicates IPSET.ADD with its expiry as PXAT.
func ipsetPropagateAdd(c *Ctx, o ipsetAddOpts) {
	if !c.E.Feed.Active() {
		c.PropagateNothing()
		return
	}
	args := [][]byte{ipsetAddArg, c.Args[1]}
	if o.nx {
		args = append(args, []byte("NX"))
	}
	if o.xx {
		args = append(args, []byte("XX"))
	}
	args = append(args, ipsetPxatArg, strconv.AppendInt(nil, o.expire, 10))
	if o.nomatch {
		args = append(args, []byte("NOMATCH"))
	}
	if o.hasLabel {
		args = append(args, []byte("LABEL"), o.label)
	}
	if o.labels {
		args = append(args, []byte("LABELS"))
	}
	args = append(args, c.Args[o.first:]...)
	c.Propagate(args...)
}

// ipsetDelEntries removes the entries at c.Args[first::step] (an ADD with an expiry already
// past), replicated as one IPSET.DEL of those that were there.
func ipsetDelEntries(c *Ctx, key []byte, e *keyspace.Entry, v *ipsetValue, first, step int, xx, nx bool) {
	c.PropagateNothing()
	if v == nil || nx {
		return
	}
	_ = xx
	del := [][]byte{ipsetDelArg, key}
	for i := first; i < len(c.Args); i += step {
		r, _ := ipset.ParseEntry(c.Args[i])
		if v.set.Del(r) {
			del = append(del, c.Args[i])
		}
	}
	if len(del) == 2 {
		return
	}
	c.Propagate(del...)
	c.Changed(NotifyModule, "ipset.del", key)
	c.Dirty(len(del) - 2)
	dropIPSetIfEmpty(c, key, e, v)
}

// dropIPSetIfEmpty deletes key when its set has no entry left.
func dropIPSetIfEmpty(c *Ctx, key []byte, e *keyspace.Entry, v *ipsetValue) {
	if v.Len() == 0 {
		c.KS(key).Remove(e)
		c.Notify(NotifyGeneric, "del", key)
	}
}

// IPSET.DEL key entry …: the number removed; the key goes with its last entry.
func ipsetDel(c *Ctx) {
	for _, a := range c.Args[2:] {
		if _, ok := ipset.ParseEntry(a); !ok {
			ipsetEntryErr(c, a)
			return
		}
	}
	key := c.Args[1]
	e, v, ok := writeIPSet(c, key)
	if !ok {
		return
	}
	if v == nil {
		c.Int(0)
		return
	}
	n := 0
	for _, a := range c.Args[2:] {
		r, _ := ipset.ParseEntry(a)
		if v.set.Del(r) {
			n++
		}
	}
	if n > 0 {
		trackIPSetSettle(c, key, v)
		c.Changed(NotifyModule, "ipset.del", key)
		c.Dirty(n)
		dropIPSetIfEmpty(c, key, e, v)
	}
	c.Int(int64(n))
}

// IPSET.CONTAINS key ip, IPSET.MCONTAINS key ip …: 1 or 0 per address, as SISMEMBER and
// SMISMEMBER reply.
func ipsetContains(c *Ctx) {
	v, ok := readIPSet(c, c.Args[1])
	if !ok {
		return
	}
	multi := c.Spec.Arity < 0
	start := len(c.Out)
	if multi {
		c.ArrayLen(len(c.Args) - 2)
	}
	nowMs := c.Now / 1e6
	for _, a := range c.Args[2:] {
		ip, v6, ok := ipset.ParseAddr(a)
		if !ok {
			c.Out = c.Out[:start]
			ipsetAddrErr(c, a)
			return
		}
		if v != nil && v.set.Contains(ip, v6, nowMs) {
			c.Out = append(c.Out, ":1\r\n"...)
		} else {
			c.Out = append(c.Out, ":0\r\n"...)
		}
	}
}

// IPSET.MATCH key ip, IPSET.MMATCH key ip …: the deciding entry as [entry, label|nil,
// ttl-ms|-1] (a map in RESP3), or null when none decides or it is NOMATCH.
func ipsetMatch(c *Ctx) {
	v, ok := readIPSet(c, c.Args[1])
	if !ok {
		return
	}
	multi := c.Spec.Arity < 0
	start := len(c.Out)
	if multi {
		c.ArrayLen(len(c.Args) - 2)
	}
	nowMs := c.Now / 1e6
	for _, a := range c.Args[2:] {
		ip, v6, ok := ipset.ParseAddr(a)
		if !ok {
			c.Out = c.Out[:start]
			ipsetAddrErr(c, a)
			return
		}
		var m ipset.Match
		found := false
		if v != nil {
			m, found = v.set.Lookup(ip, v6, nowMs)
		}
		if !found || m.NoMatch {
			c.Null()
			continue
		}
		ipsetReplyEntry(c, ipset.Entry{Range: m.Range, Label: m.Label, HasLbl: m.HasLbl, Expire: m.Expire}, nowMs, false)
	}
}

var (
	ipsetEntryKey   = "entry"
	ipsetLabelKey   = "label"
	ipsetTTLKey     = "ttl"
	ipsetNoMatchKey = "nomatch"
)

// ipsetReplyEntry replies [entry, label|nil, ttl-ms|-1] (with nomatch: and 0|1), a map in RESP3.
func ipsetReplyEntry(c *Ctx, en ipset.Entry, nowMs int64, withNoMatch bool) {
	n := 3
	if withNoMatch {
		n = 4
	}
	if c.Proto == 3 {
		c.MapLen(n)
		c.BulkString(ipsetEntryKey)
	} else {
		c.ArrayLen(n)
	}
	c.Out = resp_appendBulkRange(c.Out, en.Range)
	if c.Proto == 3 {
		c.BulkString(ipsetLabelKey)
	}
	if en.HasLbl {
		c.BulkString(en.Label)
	} else {
		c.Null()
	}
	if c.Proto == 3 {
		c.BulkString(ipsetTTLKey)
	}
	if en.Expire == 0 {
		c.Int(-1)
	} else {
		c.Int(max(en.Expire-nowMs, 0))
	}
	if withNoMatch {
		if c.Proto == 3 {
			c.BulkString(ipsetNoMatchKey)
			c.Bool(en.NoMatch)
		} else if en.NoMatch {
			c.Int(1)
		} else {
			c.Int(0)
		}
	}
}

// resp_appendBulkRange appends r's canonical text as a bulk string without allocating.
func resp_appendBulkRange(dst []byte, r ipset.Range) []byte {
	var buf [96]byte
	b := ipset.AppendRange(buf[:0], r)
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// IPSET.CARD key: the number of entries not expired.
func ipsetCard(c *Ctx) {
	v, ok := readIPSet(c, c.Args[1])
	switch {
	case !ok:
	case v == nil:
		c.Int(0)
	default:
		c.Int(int64(v.set.LiveLen(c.Now / 1e6)))
	}
}

// IPSET.ADDRCOUNT key [V4|V6]: the number of addresses whose CONTAINS is 1, a decimal bulk
// string (an IPv6 count passes 64 bits).
func ipsetAddrCount(c *Ctx) {
	v4, v6 := true, true
	switch {
	case len(c.Args) == 2:
	case len(c.Args) == 3 && eqFold(c.Args[2], "v4"):
		v6 = false
	case len(c.Args) == 3 && eqFold(c.Args[2], "v6"):
		v4 = false
	default:
		c.Err(ErrSyntax)
		return
	}
	v, ok := readIPSet(c, c.Args[1])
	if !ok {
		return
	}
	if v == nil {
		c.BulkString("0")
		return
	}
	c.BulkString(v.set.AddrCount(v4, v6, c.Now/1e6).String())
}

// IPSET.SCAN key cursor [COUNT n] [WITHMETA] [MERGED]: [next cursor, entries]. The cursor is
// the position in the set's order (IPv4 first, by start then end); MERGED lists the minimal
// CIDRs of the addresses whose CONTAINS is 1 instead; WITHMETA gives each entry as
// [entry, label|nil, ttl-ms|-1, nomatch 0|1] (a map in RESP3).
func ipsetScan(c *Ctx) {
	cur, err := strconv.ParseUint(string(c.Args[2]), 10, 64)
	if err != nil {
		c.Err(ErrInvalidCursor)
		return
	}
	count := int64(10)
	withMeta, merged := false, false
	for i := 3; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case eqFold(a, "count") && i+1 < len(c.Args):
			n, ok := ParseInt(c.Args[i+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if n < 1 {
				c.Err(ErrSyntax)
				return
			}
			count = n
			i++
		case eqFold(a, "withmeta"):
			withMeta = true
		case eqFold(a, "merged"):
			merged = true
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if withMeta && merged {
		c.Err(ErrSyntax)
		return
	}
	v, ok := readIPSet(c, c.Args[1])
	if !ok {
		return
	}
	nowMs := c.Now / 1e6
	var ents []ipset.Entry
	if v != nil {
		if merged {
			for _, r := range v.set.Merged(true, true, nowMs) {
				ents = append(ents, ipset.Entry{Range: r})
			}
		} else {
			ents = v.set.Entries(nowMs)
		}
	}
	c.ArrayLen(2)
	if cur >= uint64(len(ents)) {
		c.BulkString("0")
		c.ArrayLen(0)
		return
	}
	end := uint64(len(ents))
	if uint64(count) < end-cur {
		end = cur + uint64(count)
	}
	if end == uint64(len(ents)) {
		c.BulkString("0")
	} else {
		c.Out = resp_appendBulkUint(c.Out, end)
	}
	c.ArrayLen(int(end - cur))
	for _, en := range ents[cur:end] {
		if withMeta {
			ipsetReplyEntry(c, en, nowMs, true)
		} else {
			c.Out = resp_appendBulkRange(c.Out, en.Range)
		}
	}
}

func resp_appendBulkUint(dst []byte, n uint64) []byte {
	var buf [20]byte
	b := strconv.AppendUint(buf[:0], n, 10)
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// IPSET.SWAP k1 k2: exchanges the two keys' IP sets (either may be missing; the keys keep their
// own expiry). O(1): only the values' pointers move.
func ipsetSwap(c *Ctx) {
	k1, k2 := c.Args[1], c.Args[2]
	e1, v1, ok := writeIPSet(c, k1)
	if !ok {
		return
	}
	e2, v2, ok := writeIPSet(c, k2)
	if !ok {
		return
	}
	if bytes.Equal(k1, k2) || v1 == nil && v2 == nil {
		c.OK()
		return
	}
	put := func(key []byte, e *keyspace.Entry, v *ipsetValue) {
		switch {
		case e != nil && v != nil:
			keyspace.SetObj(e, keyspace.KindIPSet, v)
		case e != nil:
			c.KS(key).Remove(e)
			c.Notify(NotifyGeneric, "del", key)
		case v != nil:
			addIPSet(c, key, v)
		}
		if v != nil {
			v.queuedAt = 0
			trackIPSetExpiry(c, key, v, v.set.NextExpiry())
			c.Changed(NotifyModule, "ipset.swap", key)
		} else {
			c.Touch(key)
		}
	}
	put(k1, e1, v2)
	put(k2, e2, v1)
	c.Dirty(1)
	c.OK()
}

// expireIPSetEntries removes v's entries expired at ms (at most max, 0: all), replicating each
// as IPSET.DEL before what the command propagates; it returns how many went.
func expireIPSetEntries(c *Ctx, db int, key []byte, v *ipsetValue, ms int64, max int) int {
	n := v.set.Expire(ms, max, func(r ipset.Range) {
		if c.E.Feed.Active() {
			var buf [96]byte
			ent := ipset.AppendRange(buf[:0], r)
			c.fx.pre = binary.AppendUvarint(c.fx.pre, uint64(db))
			c.fx.pre = appendCommand(c.fx.pre, [][]byte{ipsetDelArg, key, ent})
			c.fx.npre++
		}
	})
	if n == 0 {
		return 0
	}
	c.touchIn(db, key, false)
	c.NotifyIn(db, NotifyModule, "ipset.expired", key)
	if v.Len() == 0 {
		c.NotifyIn(db, NotifyGeneric, "del", key)
	}
	return n
}

// trackIPSetExpiry queues key's set in its shard's queue at at (unix ms), unless queued at or
// before at already.
func trackIPSetExpiry(c *Ctx, key []byte, v *ipsetValue, at int64) {
	trackDeadline(c, key, &v.queuedExpiry, at, func(d *shardData) *vexpQueues { return &d.ipexp })
}

// ipsetSettleMs is how long after a write the active cycle looks at a set left with a pending
// part or a merge in flight.
const ipsetSettleMs = 100

// trackIPSetSettle queues v for the active cycle's Settle when it has something pending.
func trackIPSetSettle(c *Ctx, key []byte, v *ipsetValue) {
	if v.set.Unsettled() {
		trackIPSetExpiry(c, key, v, c.Now/1e6+ipsetSettleMs)
	}
}

// expireIPSetsLocked is one step of the active cycle in ks, one of the held shard d's keyspaces.
func (d *shardData) expireIPSetsLocked(ks *keyspace.Keyspace, now int64) {
	sweepDeadlines(d, d.ipexp[ks], ks, now, keyspace.KindIPSet,
		func(c *Ctx, db int, k []byte, e *keyspace.Entry, v *ipsetValue, ms int64) int64 {
			expireIPSetEntries(c, db, k, v, ms, vexpSweepElems)
			if v.Len() == 0 {
				ks.Remove(e)
				return 0
			}
			next := v.set.NextExpiry()
			if v.set.Settle() && (next == 0 || next > ms+ipsetSettleMs) {
				next = ms + ipsetSettleMs
			}
			reaccountIPSet(c, ks, e) // the entries expired and the merge installed
			return next
		})
}
