package testfuzz

// The persistence tests' filler (every type in its small and large encodings, with and without
// TTLs, in several databases, plus function libraries) and a type-aware dumper of a whole server
// into a canonical form, with a comparison that prints the first differences.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// fillDBs are the databases the filler writes.
var fillDBs = []int{0, 3, 15}

// filler sends pipelined writes to one server and fails the test on an error reply.
type filler struct {
	t       *testing.T
	c       *rawConn
	r       *rand.Rand
	prefix  string
	now     int64 // unix ms the TTLs count from
	buf     []byte
	pending [][]string // the commands of buf, quoted only for an error message
	streams bool
}

func newFiller(t *testing.T, addr string, seed uint64, prefix string) *filler {
	f := &filler{t: t, c: dial(t, addr), r: rand.New(rand.NewPCG(seed, 17)), prefix: prefix,
		now: time.Now().UnixMilli()}
	f.streams = hasCommand(t, f.c, "xadd")
	return f
}

// hasCommand reports whether the server knows the command (COMMAND INFO's element is not nil).
func hasCommand(t *testing.T, c *rawConn, name string) bool {
	v, err := resptest.Parse([]byte(c.do("COMMAND", "INFO", name)))
	if err != nil || len(v.Elems) != 1 {
		t.Fatalf("COMMAND INFO %s: %v %v", name, v, err)
	}
	return !v.Elems[0].Null
}

func (f *filler) cmd(args ...string) {
	f.buf = appendCommand(f.buf, args...)
	f.pending = append(f.pending, args)
	if len(f.buf) > 256<<10 || len(f.pending) >= 200 {
		f.flush()
	}
}

// flush sends the pending commands and checks that none was refused.
func (f *filler) flush() {
	f.t.Helper()
	if len(f.pending) == 0 {
		return
	}
	f.c.write(f.buf)
	for _, args := range f.pending {
		if b := f.c.reply(); len(b) > 0 && b[0] == '-' {
			f.t.Fatalf("%s: %s", shortText(quoteArgs(args[:min(len(args), 4)])), quote(b))
		}
	}
	f.buf, f.pending = f.buf[:0], f.pending[:0]
}

func shortText(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// ttl gives the key an absolute expiry about an hour ahead (ms precision, as files keep it).
func (f *filler) ttl(key string) {
	f.cmd("PEXPIREAT", key, strconv.FormatInt(f.now+3_600_000+f.r.Int64N(86_400_000), 10))
}

func (f *filler) bytes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(f.r.UintN(256))
	}
	return string(b)
}

func (f *filler) word() string { return "w" + strconv.FormatUint(f.r.Uint64N(1<<40), 36) }

// fill writes every type into every database of fillDBs and loads two function libraries.
func (f *filler) fill() {
	for _, db := range fillDBs {
		f.cmd("SELECT", strconv.Itoa(db))
		for _, ttl := range []bool{false, true} {
			p := f.prefix + ":" + strconv.Itoa(db)
			if ttl {
				p += ":ttl"
			}
			for _, k := range []func(string){f.strings, f.lists, f.sets, f.hashes, f.zsets, f.streamsOf} {
				k(p)
			}
			if ttl {
				f.flush()
				f.ttlAll(p)
			}
		}
	}
	f.cmd("SELECT", "0")
	f.functions()
	f.flush()
}

// ttlAll gives every key with prefix p an expiry, found with SCAN so that no list is kept twice.
func (f *filler) ttlAll(p string) {
	for _, k := range scanKeys(f.t, f.c, p+":*") {
		f.ttl(k)
	}
	f.flush()
}

func (f *filler) strings(p string) {
	set := func(k, v string) { f.cmd("SET", p+":s:"+k, v) }
	set("int", strconv.FormatInt(f.r.Int64N(1e9)-5e8, 10))
	set("min", "-9223372036854775808")
	set("max", "9223372036854775807")
	set("notint", "12345678901234567890123")
	set("lead0", "007")
	set("float", "3.14159")
	set("raw", "hello world "+f.word())
	set("empty", "")
	var all strings.Builder
	for i := range 256 {
		all.WriteByte(byte(i))
	}
	set("bin", all.String()+"\r\n\x00")
	set("long", strings.Repeat("compressible "+f.word(), 3000)) // LZF
	set("random", f.bytes(20_000))                              // stored raw
	set("mid", strings.Repeat("ab", 30))                        // just over LZF's 20-byte floor
	f.cmd("SETRANGE", p+":s:bits", "100", "x")
	f.cmd("PFADD", p+":s:hll", "a", "b", "c", f.word())
}

func (f *filler) lists(p string) {
	f.cmd("RPUSH", p+":l:small", "1", "-2", "three", "", "9223372036854775807", f.word())
	big := []string{"RPUSH", p + ":l:large"}
	for i := range 2000 {
		if i%3 == 0 {
			big = append(big, strconv.Itoa(i))
		} else {
			big = append(big, f.word())
		}
	}
	f.cmd(big...)
	f.cmd("RPUSH", p+":l:huge", f.bytes(9000), "x", strings.Repeat("y", 10_000), f.bytes(8193))
	f.cmd("LPUSH", p+":l:one", "only")
}

func (f *filler) sets(p string) {
	f.cmd("SADD", p+":z:intset", "1", "-5", "70000", "-2147483649", "9223372036854775807")
	ints := []string{"SADD", p + ":z:intset500"}
	for range 500 { // within set-max-intset-entries (512)
		ints = append(ints, strconv.FormatInt(f.r.Int64()-f.r.Int64(), 10))
	}
	f.cmd(ints...)
	bigInts := []string{"SADD", p + ":z:ints2000"}
	for range 2000 {
		bigInts = append(bigInts, strconv.Itoa(f.r.IntN(1_000_000)))
	}
	f.cmd(bigInts...)
	f.cmd("SADD", p+":z:small", "a", "b", "", f.word(), "12")
	strs := []string{"SADD", p + ":z:large"}
	for range 1000 {
		strs = append(strs, f.word())
	}
	f.cmd(strs...)
}

func (f *filler) hashes(p string) {
	f.cmd("HSET", p+":h:small", "f1", "v1", "n", "42", "", "empty-field", "e", "")
	large := []string{"HSET", p + ":h:large"}
	for i := range 1000 {
		large = append(large, "field"+strconv.Itoa(i), f.word())
	}
	f.cmd(large...)
	f.cmd("HSET", p+":h:longvals", "a", strings.Repeat("v", 200), "b", f.bytes(100), "c", "short")
}

func (f *filler) zsets(p string) {
	f.cmd("ZADD", p+":zs:small", "inf", "top", "-inf", "bottom", "1.5", "x", "-0.25", "y",
		"3", "z", "1e-300", "tiny", "0", "zero", "123456789.125", "w")
	large := []string{"ZADD", p + ":zs:large"}
	for i := range 300 {
		large = append(large, strconv.FormatFloat((f.r.Float64()-0.5)*1e6, 'g', -1, 64), "m"+strconv.Itoa(i))
	}
	large = append(large, "inf", "pinf", "-inf", "ninf")
	f.cmd(large...)
	f.cmd("ZADD", p+":zs:longmember", "1", strings.Repeat("m", 100), "2", "b")
}

func (f *filler) streamsOf(p string) {
	if !f.streams {
		return
	}
	k := p + ":x:groups"
	for i := range 60 {
		f.cmd("XADD", k, "*", "n", strconv.Itoa(i), "w", f.word())
	}
	f.flush()
	ids := streamIDs(f.t, f.c, k)
	f.cmd("XDEL", k, ids[3], ids[10])
	f.cmd("XGROUP", "CREATE", k, "g1", "0")
	f.cmd("XGROUP", "CREATE", k, "g2", "$")
	f.cmd("XGROUP", "CREATE", k, "g3", ids[20], "ENTRIESREAD", "20")
	f.cmd("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "10", "STREAMS", k, ">")
	f.cmd("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", k, ">")
	f.cmd("XACK", k, "g1", ids[0], ids[2])
	f.cmd("XGROUP", "CREATECONSUMER", k, "g2", "carol")
	f.cmd("XREADGROUP", "GROUP", "g3", "dave", "NOACK", "COUNT", "3", "STREAMS", k, ">")
	big := p + ":x:large"
	for i := range 1500 { // several listpack nodes
		f.cmd("XADD", big, fmt.Sprintf("%d-%d", 1000+i/7, i%7), "field", f.word(), "i", strconv.Itoa(i))
	}
	f.cmd("XTRIM", big, "MAXLEN", "1400")
	f.cmd("XADD", p+":x:empty", "5-1", "a", "b")
	f.cmd("XDEL", p+":x:empty", "5-1")
	f.cmd("XGROUP", "CREATE", p+":x:mk", "g", "$", "MKSTREAM")
}

// streamIDs lists the IDs of a stream's entries.
func streamIDs(t *testing.T, c *rawConn, key string) []string {
	v := parseReply(t, c.do("XRANGE", key, "-", "+"))
	var ids []string
	for _, e := range v.Elems {
		ids = append(ids, e.Elems[0].Str)
	}
	return ids
}

func (f *filler) functions() {
	lib := strings.ReplaceAll(f.prefix, ":", "_")
	f.cmd("FUNCTION", "LOAD", "REPLACE", "#!lua name="+lib+"_one\n"+
		"redis.register_function('"+lib+"_get', function(keys, args) return redis.call('GET', keys[1]) end)\n"+
		"redis.register_function{function_name='"+lib+"_ro', callback=function() return 1 end, flags={'no-writes'}, description='read only'}")
	f.cmd("FUNCTION", "LOAD", "REPLACE", "#!lua name="+lib+"_two\n"+
		"redis.register_function('"+lib+"_set', function(keys, args) return redis.call('SET', keys[1], args[1]) end)")
}

// mutate changes what fill wrote (for the AOF's tail after a rewrite): new keys, appended
// values, deletions, new expiries, a new stream entry and group read, a third library.
func (f *filler) mutate() {
	for _, db := range fillDBs {
		f.cmd("SELECT", strconv.Itoa(db))
		p := f.prefix + ":" + strconv.Itoa(db)
		f.cmd("INCRBY", p+":s:int", "7")
		f.cmd("APPEND", p+":s:raw", " more")
		f.cmd("DEL", p+":s:float", p+":l:one")
		f.cmd("RPUSH", p+":l:large", "tail1", "tail2")
		f.cmd("LPOP", p+":l:small")
		f.cmd("SREM", p+":z:small", "a")
		f.cmd("SADD", p+":z:intset", "12345678")
		f.cmd("HSET", p+":h:small", "added", "1")
		f.cmd("HDEL", p+":h:large", "field7")
		f.cmd("ZINCRBY", p+":zs:small", "2.5", "x")
		f.cmd("ZREM", p+":zs:large", "m1")
		f.cmd("SET", p+":s:new", f.word())
		f.ttl(p + ":s:new")
		f.cmd("PERSIST", p+":ttl:s:raw")
		f.cmd("RENAME", p+":h:longvals", p+":h:renamed")
		if f.streams {
			k := p + ":x:groups"
			f.cmd("XADD", k, "*", "late", "1")
			f.cmd("XREADGROUP", "GROUP", "g2", "carol", "STREAMS", k, ">")
			f.cmd("XCLAIM", k, "g1", "erin", "0", streamIDs1(f, k, 5))
			f.cmd("XGROUP", "DELCONSUMER", k, "g1", "bob")
		}
	}
	f.cmd("SELECT", "0")
	lib := strings.ReplaceAll(f.prefix, ":", "_")
	f.cmd("FUNCTION", "LOAD", "#!lua name="+lib+"_three\nredis.register_function('"+lib+"_three', function() return 3 end)")
	f.cmd("FUNCTION", "DELETE", lib+"_two")
	f.flush()
}

func streamIDs1(f *filler, key string, i int) string {
	f.flush()
	return streamIDs(f.t, f.c, key)[i]
}

func parseReply(t *testing.T, raw string) resptest.Value {
	t.Helper()
	v, err := resptest.Parse([]byte(raw))
	if err != nil {
		t.Fatalf("parse %s: %v", quote(raw), err)
	}
	if v.Kind == '-' {
		t.Fatalf("error reply %s", quote(raw))
	}
	return v
}

// scanKeys lists the keys of the selected database matching pattern, sorted, with SCAN.
func scanKeys(t *testing.T, c *rawConn, pattern string) []string {
	var keys []string
	cursor := "0"
	for {
		v := parseReply(t, c.do("SCAN", cursor, "MATCH", pattern, "COUNT", "1000"))
		cursor = v.Elems[0].Str
		ks, err := v.Elems[1].Strings()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ks...)
		if cursor == "0" {
			break
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// keyDump is one key in canonical form.
type keyDump struct {
	typ, val string
	exp      int64 // PEXPIRETIME: absolute unix ms, -1 without expiry
}

// serverDump is a whole server in canonical form: "db/key" -> key, and the function libraries.
type serverDump struct {
	keys  map[string]keyDump
	funcs string
}

// dumpOpts say what a comparison must leave out.
type dumpOpts struct {
	// aof drops consumers' seen-time (replaying an AOF sets it to the time of the replay) and
	// groups' entries-read and lag (Redis 7.0.15 replays a group read as XCLAIM, which leaves
	// entries-read unknown: nil after the load, where the live server had a number).
	aof bool
	// replay keeps entries-read and lag with aof set: two loads of the same AOF must agree.
	replay bool
}

// dumpServer reads every database of the server at addr into canonical form.
func dumpServer(t *testing.T, addr string, o dumpOpts) serverDump {
	t.Helper()
	c := dial(t, addr)
	d := serverDump{keys: map[string]keyDump{}}
	dbs, err := strconv.Atoi(parseReply(t, c.do("CONFIG", "GET", "databases")).Elems[1].Str)
	if err != nil {
		t.Fatal(err)
	}
	for db := range dbs {
		c.do("SELECT", strconv.Itoa(db))
		for _, k := range scanKeys(t, c, "*") {
			d.keys[strconv.Itoa(db)+"/"+k] = dumpKey(t, c, k, o)
		}
	}
	d.funcs = dumpFunctions(t, c)
	return d
}

func dumpKey(t *testing.T, c *rawConn, k string, o dumpOpts) keyDump {
	typ := parseReply(t, c.do("TYPE", k)).Str
	exp, err := parseReply(t, c.do("PEXPIRETIME", k)).Int()
	if err != nil {
		t.Fatal(err)
	}
	var v resptest.Value
	switch typ {
	case "string":
		v = parseReply(t, c.do("GET", k))
	case "list":
		v = parseReply(t, c.do("LRANGE", k, "0", "-1"))
	case "set":
		v = sortedElems(parseReply(t, c.do("SMEMBERS", k)), 1)
	case "hash":
		v = sortedElems(parseReply(t, c.do("HGETALL", k)), 2)
	case "zset":
		v = parseReply(t, c.do("ZRANGE", k, "0", "-1", "WITHSCORES"))
	case "stream":
		v = canonicalStream(parseReply(t, c.do("XINFO", "STREAM", k, "FULL", "COUNT", "0")), o)
	default:
		t.Fatalf("key %q has type %q", k, typ)
	}
	return keyDump{typ: typ, val: v.String(), exp: exp}
}

// sortedElems sorts an aggregate's elements in groups of n (members, or field-value pairs).
func sortedElems(v resptest.Value, n int) resptest.Value {
	groups := make([][]resptest.Value, 0, len(v.Elems)/n)
	for i := 0; i+n <= len(v.Elems); i += n {
		groups = append(groups, v.Elems[i:i+n])
	}
	slices.SortFunc(groups, func(a, b []resptest.Value) int { return strings.Compare(a[0].Str, b[0].Str) })
	out := resptest.Value{Kind: v.Kind}
	for _, g := range groups {
		out.Elems = append(out.Elems, g...)
	}
	return out
}

// canonicalStream drops XINFO STREAM FULL's fields that describe the radix tree's shape (how
// entries are packed into nodes is the writer's choice) and, for AOF loads, seen-time.
func canonicalStream(v resptest.Value, o dumpOpts) resptest.Value {
	drop := map[string]bool{"radix-tree-keys": true, "radix-tree-nodes": true}
	if o.aof {
		drop["seen-time"], drop["active-time"] = true, true
		if !o.replay {
			drop["entries-read"], drop["lag"] = true, true
		}
	}
	var walk func(v resptest.Value) resptest.Value
	walk = func(v resptest.Value) resptest.Value {
		if !v.IsAggregate() {
			return v
		}
		out := resptest.Value{Kind: v.Kind, Null: v.Null}
		isMap := v.Kind == '%' || looksLikeMap(v)
		for i := 0; i < len(v.Elems); i++ {
			if isMap && i%2 == 0 && i+1 < len(v.Elems) && drop[v.Elems[i].Str] {
				i++
				continue
			}
			out.Elems = append(out.Elems, walk(v.Elems[i]))
		}
		return out
	}
	return walk(v)
}

// looksLikeMap tells a RESP2 flattened map of XINFO (field names at even positions) from a list.
func looksLikeMap(v resptest.Value) bool {
	if len(v.Elems)%2 != 0 || len(v.Elems) == 0 {
		return false
	}
	for i := 0; i < len(v.Elems); i += 2 {
		if v.Elems[i].Kind != '$' || v.Elems[i].Str == "" || strings.Trim(v.Elems[i].Str, "abcdefghijklmnopqrstuvwxyz-") != "" {
			return false
		}
	}
	return true
}

// dumpFunctions renders FUNCTION LIST WITHCODE, libraries sorted by name.
func dumpFunctions(t *testing.T, c *rawConn) string {
	v := parseReply(t, c.do("FUNCTION", "LIST", "WITHCODE"))
	libs := make([]string, 0, len(v.Elems))
	for _, l := range v.Elems {
		// Redis lists a library's functions in its dict's order, which a reload changes.
		for i := 0; i+1 < len(l.Elems); i += 2 {
			if l.Elems[i].Str == "functions" {
				slices.SortFunc(l.Elems[i+1].Elems, func(a, b resptest.Value) int {
					return strings.Compare(a.String(), b.String())
				})
			}
		}
		libs = append(libs, l.String())
	}
	slices.Sort(libs)
	return strings.Join(libs, "\n")
}

// compareDumps fails the test with the first differences between two dumps (at most 10).
func compareDumps(t *testing.T, what string, want, got serverDump) {
	t.Helper()
	var diffs []string
	keys := make([]string, 0, len(want.keys)+len(got.keys))
	for k := range want.keys {
		keys = append(keys, k)
	}
	for k := range got.keys {
		if _, ok := want.keys[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		w, inW := want.keys[k]
		g, inG := got.keys[k]
		switch {
		case !inG:
			diffs = append(diffs, fmt.Sprintf("%q missing (want %s %s exp %d)", k, w.typ, shortText(w.val), w.exp))
		case !inW:
			diffs = append(diffs, fmt.Sprintf("%q unexpected (%s %s exp %d)", k, g.typ, shortText(g.val), g.exp))
		case w.typ != g.typ:
			diffs = append(diffs, fmt.Sprintf("%q type %s, want %s", k, g.typ, w.typ))
		case w.val != g.val:
			diffs = append(diffs, fmt.Sprintf("%q %s value differs at byte %d:\n      got  %s\n      want %s", k, w.typ,
				firstDiff(g.val, w.val), excerpt(g.val, firstDiff(g.val, w.val)), excerpt(w.val, firstDiff(g.val, w.val))))
		case w.exp != g.exp:
			diffs = append(diffs, fmt.Sprintf("%q PEXPIRETIME %d, want %d", k, g.exp, w.exp))
		}
	}
	if want.funcs != got.funcs {
		at := firstDiff(got.funcs, want.funcs)
		diffs = append(diffs, fmt.Sprintf("FUNCTION LIST WITHCODE differs at byte %d:\n      got  %s\n      want %s",
			at, excerpt(got.funcs, at), excerpt(want.funcs, at)))
	}
	if len(diffs) > 0 {
		t.Errorf("%s: %d differences among %d keys (want %d, got %d keys); first:\n  %s", what, len(diffs),
			len(keys), len(want.keys), len(got.keys), strings.Join(diffs[:min(10, len(diffs))], "\n  "))
	}
}

func excerpt(s string, at int) string {
	lo := max(0, at-60)
	hi := min(len(s), at+100)
	return strconv.Quote(s[lo:hi])
}

// dumpStats counts a dump's keys by type, for the log.
func (d serverDump) stats() string {
	n := map[string]int{}
	ttl := 0
	for _, k := range d.keys {
		n[k.typ]++
		if k.exp >= 0 {
			ttl++
		}
	}
	return fmt.Sprintf("%d keys (%v), %d with TTL", len(d.keys), n, ttl)
}
