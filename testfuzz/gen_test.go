package testfuzz

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// replyNorm says how a reply is compared between the two servers.
type replyNorm uint8

const (
	normExact replyNorm = iota
	// normTTL accepts integers (or arrays of them, element by element) up to two seconds apart
	// in the command's unit (ttlTolerance): a remaining TTL, or an expiry time computed from
	// "now", differs between servers by the milliseconds between their commands. Negative
	// values (-1 no expiry, -2 no key) must be equal.
	normTTL
	// normSorted sorts the elements of an array or set reply: SMEMBERS and the set algebra answer
	// in hash-table order, which is Redis's own and not part of the contract.
	normSorted
	// normShape compares only the reply's structure (types, lengths of aggregates, errors and
	// integers exactly; string and double payloads blanked): SRANDMEMBER, HRANDFIELD and
	// ZRANDMEMBER pick at random.
	normShape
)

// genCmd is one generated request.
type genCmd struct {
	args []string
	norm replyNorm
}

// gen produces random key and string commands for one connection. Every key it names starts with
// prefix, so connections running concurrently never touch each other's keys and the stream stays
// deterministic; within a connection the key space is tiny so commands collide constantly.
//
// Expiry arguments are chosen so that both servers reach the same decisions although they run a
// few milliseconds apart: relative expiries are hours long (never reached during a run) and never
// combined with GT/LT against an equal relative expiry; absolute ones are fixed timestamps two days
// ahead (always later than any relative one) or long past (the key is deleted at once).
type gen struct {
	r      *rand.Rand
	prefix string
	future int64 // unix seconds, two days after the run started
}

// Key names, without the connection's prefix. The string commands mostly use strKeys; each
// collection family mostly uses its own keys (so its values grow, shrink and meet each other in
// multi-key commands) and sometimes any key, so WRONGTYPE and cross-type RENAME/COPY come up.
var (
	strKeys  = []string{"a", "b", "c", "n", "f", "{t}x", "bin\x00\xff\r\n", ""}
	listKeys = []string{"l", "l2", "l3"}
	hashKeys = []string{"h", "h2"}
	setKeys  = []string{"s", "s2", "s3"}
	zsetKeys = []string{"z", "z2", "z3"}
	collKeys = concat(listKeys, hashKeys, setKeys, zsetKeys)
	keyNames = concat(strKeys, collKeys) // every key the state checks look at
)

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

var values = []string{
	"", "0", "1", "-1", "7", "42", "-100", "+5", "007", " 3", "3 ", "10.5", "-2.25", "3.0", "1e3",
	"0.1", "-0", "inf", "-inf", "nan", "abc", "hello world", "\x00\xff\r\n\x01bin", "ab",
	"9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551616",
	"1.7976931348623157e308", "0x10", "5.0e-2", "abcdefghijklmnop", "ACGTACGTTGCA", "AGGTCCATG",
}

var ints = []string{
	"0", "1", "2", "3", "5", "10", "100", "-1", "-2", "-5", "-100", "9223372036854775807",
	"-9223372036854775808", "x", "1.5", "", " 1",
}

var offsets = []string{"0", "1", "3", "7", "20", "64", "-1", "536870912", "x"}

var (
	relSeconds = []string{"1000", "5000", "20000", "50000"}
	relMillis  = []string{"1500000", "7000000", "30000000"}
	badExpiry  = []string{"0", "-1", "-100", "x", "1.5", "", "9223372036854775807", "9223372036854775"}
	pastUnix   = []string{"1", "1000", "1600000000"}
	dbIndexes  = []string{"0", "1", "2", "0", "1", "2", "16", "-1", "x"}
)

func newGen(seed uint64, conn int, now int64) *gen {
	return &gen{
		r:      rand.New(rand.NewPCG(seed, uint64(conn))),
		prefix: "c" + strconv.Itoa(conn) + ":",
		future: now + 2*86400,
	}
}

func (g *gen) pick(from []string) string { return from[g.r.IntN(len(from))] }
func (g *gen) chance(p float64) bool     { return g.r.Float64() < p }

// key returns any key, most often one of the string keys.
func (g *gen) key() string {
	if g.chance(0.75) {
		return g.prefix + g.pick(strKeys)
	}
	return g.prefix + g.pick(collKeys)
}

// fkey returns one of a family's keys, now and then any key.
func (g *gen) fkey(family []string) string {
	if g.chance(0.9) {
		return g.prefix + g.pick(family)
	}
	return g.key()
}

// fkeys returns between min and max family keys.
func (g *gen) fkeys(family []string, min, max int) []string {
	out := make([]string, min+g.r.IntN(max-min+1))
	for i := range out {
		out[i] = g.fkey(family)
	}
	return out
}

// value is often a small integer (so INCR and friends succeed and build on each other), otherwise
// one of the awkward values.
func (g *gen) value() string {
	if g.chance(0.3) {
		return strconv.Itoa(g.r.IntN(201) - 100)
	}
	return g.pick(values)
}

func (g *gen) keys(min, max int) []string {
	out := make([]string, min+g.r.IntN(max-min+1))
	for i := range out {
		out[i] = g.key()
	}
	return out
}

// name spells a command or option name in random letter case, as clients may.
func (g *gen) name(s string) string {
	switch g.r.IntN(4) {
	case 0:
		return strings.ToUpper(s)
	case 1:
		b := []byte(s)
		for i := range b {
			if g.r.IntN(2) == 0 {
				b[i] = strings.ToUpper(string(b[i]))[0]
			}
		}
		return string(b)
	}
	return s
}

// junk occasionally appends a stray token, which turns a valid command into a syntax error or
// into another valid form.
func (g *gen) junk(args []string) []string {
	if g.chance(0.04) {
		return append(args, g.pick([]string{"FOO", "NX", "XX", "EX", "1", "GET", "KEEPTTL", "LEN"}))
	}
	return args
}

// relExpiry returns a relative expiry in seconds or milliseconds, now and then an invalid one.
func (g *gen) relExpiry(millis bool) string {
	if g.chance(0.15) {
		return g.pick(badExpiry)
	}
	if millis {
		return g.pick(relMillis)
	}
	return g.pick(relSeconds)
}

// absExpiry returns an absolute expiry: fixed future instants, or past ones that delete the key.
func (g *gen) absExpiry(millis bool) string {
	if g.chance(0.15) {
		return g.pick(badExpiry)
	}
	var t int64
	if g.chance(0.2) {
		t, _ = strconv.ParseInt(g.pick(pastUnix), 10, 64)
	} else {
		t = g.future + int64(g.r.IntN(4))*1000
	}
	if millis {
		return strconv.FormatInt(t*1000+int64(g.r.IntN(2))*500, 10)
	}
	return strconv.FormatInt(t, 10)
}

// genEntry is one kind of command and how often it comes up within its family.
type genEntry struct {
	weight int
	f      func(*gen) genCmd
}

// genFamily is one command family's generators and its share of the stream.
type genFamily struct {
	name   string
	weight int
	table  []genEntry
}

// genFamilies are the families of the stream; genTable is the key and string commands'.
var genFamilies = []genFamily{
	{"strings", 30, genTable},
	{"lists", 17, listTable},
	{"hashes", 15, hashTable},
	{"sets", 17, setTable},
	{"zsets", 21, zsetTable},
}

// next returns one random command of the families enabled by -diff.only.
func (g *gen) next() genCmd {
	total := 0
	for _, f := range genFamilies {
		if familyOn(f.name) {
			total += f.weight
		}
	}
	n := g.r.IntN(total)
	for _, f := range genFamilies {
		if !familyOn(f.name) {
			continue
		}
		if n -= f.weight; n < 0 {
			c := g.pickEntry(f.table).f(g)
			c.args[0] = g.name(c.args[0])
			return c
		}
	}
	panic("BUG: family weights")
}

// pickEntry picks one entry of a family's table by weight.
func (g *gen) pickEntry(table []genEntry) genEntry {
	return pickWeighted(g.r, table, func(e genEntry) int { return e.weight })
}

// pickWeighted picks one of items, each as likely as its weight (weights of 0 are never picked).
func pickWeighted[T any](r *rand.Rand, items []T, weight func(T) int) T {
	total := 0
	for _, it := range items {
		total += weight(it)
	}
	n := r.IntN(total)
	for _, it := range items {
		if n -= weight(it); n < 0 {
			return it
		}
	}
	panic("BUG: weights")
}

func exact(args ...string) genCmd { return genCmd{args: args} }

// delOf deletes one of a family's keys: the families' own way back from a key another type took
// over (which otherwise makes most of the family's commands answer WRONGTYPE for a long time).
func delOf(family []string) genEntry {
	return genEntry{1, func(g *gen) genCmd { return exact("del", g.prefix+g.pick(family)) }}
}

func sorted(args ...string) genCmd { return genCmd{args: args, norm: normSorted} }

func shape(args ...string) genCmd { return genCmd{args: args, norm: normShape} }

// cmd builds a command from a name and argument groups.
func cmd(name string, groups ...[]string) []string {
	args := []string{name}
	for _, g := range groups {
		args = append(args, g...)
	}
	return args
}

var genTable = []genEntry{
	{8, func(g *gen) genCmd { return exact("get", g.key()) }},
	{10, (*gen).set},
	{2, func(g *gen) genCmd { return exact("setnx", g.key(), g.value()) }},
	{2, func(g *gen) genCmd { return exact("setex", g.key(), g.relExpiry(false), g.value()) }},
	{1, func(g *gen) genCmd { return exact("psetex", g.key(), g.relExpiry(true), g.value()) }},
	{2, func(g *gen) genCmd { return exact("getset", g.key(), g.value()) }},
	{2, func(g *gen) genCmd { return exact("getdel", g.key()) }},
	{3, (*gen).getex},
	{4, func(g *gen) genCmd { return exact(append([]string{"mget"}, g.keys(1, 6)...)...) }},
	{3, func(g *gen) genCmd { return g.mset("mset") }},
	{2, func(g *gen) genCmd { return g.mset("msetnx") }},
	{3, func(g *gen) genCmd { return exact("append", g.key(), g.value()) }},
	{2, func(g *gen) genCmd { return exact("strlen", g.key()) }},
	{3, func(g *gen) genCmd { return exact("incr", g.key()) }},
	{2, func(g *gen) genCmd { return exact("decr", g.key()) }},
	{3, func(g *gen) genCmd { return exact("incrby", g.key(), g.pick(ints)) }},
	{2, func(g *gen) genCmd { return exact("decrby", g.key(), g.pick(ints)) }},
	{3, func(g *gen) genCmd { return exact("incrbyfloat", g.key(), g.value()) }},
	{2, func(g *gen) genCmd { return exact("getrange", g.key(), g.pick(ints), g.pick(ints)) }},
	{1, func(g *gen) genCmd { return exact("substr", g.key(), g.pick(ints), g.pick(ints)) }},
	{2, func(g *gen) genCmd { return exact("setrange", g.key(), g.pick(offsets), g.value()) }},
	{2, (*gen).lcs},
	{3, func(g *gen) genCmd { return exact(append([]string{"del"}, g.keys(1, 4)...)...) }},
	{1, func(g *gen) genCmd { return exact(append([]string{"unlink"}, g.keys(1, 4)...)...) }},
	{3, func(g *gen) genCmd { return exact(append([]string{"exists"}, g.keys(1, 12)...)...) }},
	{1, func(g *gen) genCmd { return exact(append([]string{"touch"}, g.keys(1, 4)...)...) }},
	{2, func(g *gen) genCmd { return exact("type", g.key()) }},
	{2, func(g *gen) genCmd { return exact("rename", g.key(), g.key()) }},
	{2, func(g *gen) genCmd { return exact("renamenx", g.key(), g.key()) }},
	{2, (*gen).copy},
	{1, func(g *gen) genCmd { return exact("move", g.key(), g.pick(dbIndexes)) }},
	{4, (*gen).expire},
	{3, (*gen).ttl},
	{2, func(g *gen) genCmd { return exact("persist", g.key()) }},
	{1, func(g *gen) genCmd { return exact("select", g.pick(dbIndexes)) }},
	{1, (*gen).dbWide},
	{1, func(g *gen) genCmd { return exact("echo", g.value()) }},
	{1, func(g *gen) genCmd { return exact(append([]string{"ping"}, g.keys(0, 1)...)...) }},
	{2, (*gen).wrongArity},
	{1, (*gen).unknown},
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL], options in random order and
// sometimes conflicting.
func (g *gen) set() genCmd {
	var opts [][]string
	if g.chance(0.3) {
		opts = append(opts, []string{g.name(g.pick([]string{"nx", "xx"}))})
	}
	if g.chance(0.2) {
		opts = append(opts, []string{g.name("get")})
	}
	if g.chance(0.4) {
		opts = append(opts, g.expiryOpt("keepttl", false))
	}
	if g.chance(0.05) {
		opts = append(opts, g.expiryOpt("keepttl", false))
	}
	g.r.Shuffle(len(opts), func(i, j int) { opts[i], opts[j] = opts[j], opts[i] })
	args := []string{"set", g.key(), g.value()}
	for _, o := range opts {
		args = append(args, o...)
	}
	return exact(g.junk(args)...)
}

// expiryOpt returns one of EX/PX/EXAT/PXAT with its argument, or the flag alt (KEEPTTL, PERSIST).
// Absolute times are in the past only when past is set: GETEX deletes the key at once, but SET
// stores a key already expired, which each server reclaims when a command next meets it or when
// its active expiry happens to run, so the "expired" event and the DEL would land at different
// places in the two servers' streams.
func (g *gen) expiryOpt(alt string, past bool) []string {
	abs := func(millis bool) string {
		future := g.future
		if millis {
			future *= 1000
		}
		for {
			v := g.absExpiry(millis)
			if t, err := strconv.ParseInt(v, 10, 64); past || err != nil || t <= 0 || t >= future {
				return v
			}
		}
	}
	switch g.r.IntN(5) {
	case 0:
		return []string{g.name("ex"), g.relExpiry(false)}
	case 1:
		return []string{g.name("px"), g.relExpiry(true)}
	case 2:
		return []string{g.name("exat"), abs(false)}
	case 3:
		return []string{g.name("pxat"), abs(true)}
	}
	return []string{g.name(alt)}
}

// GETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST]
func (g *gen) getex() genCmd {
	args := []string{"getex", g.key()}
	if g.chance(0.7) {
		args = append(args, g.expiryOpt("persist", true)...)
	}
	return exact(g.junk(args)...)
}

// MSET key value [key value ...] (and MSETNX)
func (g *gen) mset(name string) genCmd {
	args := []string{name}
	for _, k := range g.keys(1, 4) {
		args = append(args, k, g.value())
	}
	return exact(args...)
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]
func (g *gen) lcs() genCmd {
	args := []string{"lcs", g.key(), g.key()}
	if g.chance(0.3) {
		args = append(args, g.name("len"))
	}
	if g.chance(0.4) {
		args = append(args, g.name("idx"))
	}
	if g.chance(0.3) {
		args = append(args, g.name("minmatchlen"), g.pick(ints))
	}
	if g.chance(0.3) {
		args = append(args, g.name("withmatchlen"))
	}
	return exact(g.junk(args)...)
}

// COPY source destination [DB destination-db] [REPLACE]
func (g *gen) copy() genCmd {
	args := []string{"copy", g.key(), g.key()}
	if g.chance(0.4) {
		args = append(args, g.name("db"), g.pick(dbIndexes))
	}
	if g.chance(0.4) {
		args = append(args, g.name("replace"))
	}
	return exact(g.junk(args)...)
}

// EXPIRE key seconds [NX|XX|GT|LT] and PEXPIRE, EXPIREAT, PEXPIREAT. GT and LT only go with
// absolute times (see gen).
func (g *gen) expire() genCmd {
	name := g.pick([]string{"expire", "pexpire", "expireat", "pexpireat"})
	millis := name[0] == 'p'
	abs := strings.HasSuffix(name, "at")
	args := []string{name, g.key()}
	flags := []string{"nx", "xx"}
	if abs {
		args = append(args, g.absExpiry(millis))
		flags = append(flags, "gt", "lt")
	} else {
		args = append(args, g.relExpiry(millis))
	}
	for n := g.r.IntN(3); n > 0; n-- {
		if g.chance(0.5) {
			args = append(args, g.name(g.pick(flags)))
		}
	}
	return exact(g.junk(args)...)
}

// TTL, PTTL, EXPIRETIME and PEXPIRETIME: compared within two seconds, -1 and -2 exactly.
func (g *gen) ttl() genCmd {
	name := g.pick([]string{"ttl", "pttl", "expiretime", "pexpiretime"})
	return genCmd{args: []string{name, g.key()}, norm: normTTL}
}

// dbWide is SWAPDB, FLUSHDB or FLUSHALL: they change every connection's keys, so they come up
// only while one connection runs the stream (-diff.conns 1); otherwise it is a TOUCH.
func (g *gen) dbWide() genCmd {
	if *diffConns > 1 {
		return exact("touch", g.key())
	}
	switch n := g.r.IntN(10); {
	case n < 6:
		return exact(g.junk([]string{"swapdb", g.pick(dbIndexes), g.pick(dbIndexes)})...)
	case n < 9:
		args := []string{g.pick([]string{"flushdb", "flushall"})}
		if g.chance(0.3) {
			args = append(args, g.name(g.pick([]string{"async", "sync"})))
		}
		return exact(g.junk(args)...)
	}
	return exact("flushdb", "now") // a syntax error
}

// wrongArity sends a known command with too few or too many arguments.
func (g *gen) wrongArity() genCmd {
	k := g.key()
	forms := [][]string{
		{"get"}, {"get", k, k}, {"set", k}, {"mset", k}, {"mset", k, "v", k}, {"msetnx", k},
		{"expire", k}, {"incr"}, {"incrby", k}, {"lcs", k}, {"copy", k}, {"ttl"}, {"select"},
		{"echo"}, {"echo", "a", "b"}, {"ping", "a", "b"}, {"getex"}, {"exists"}, {"del"},
		{"rename", k}, {"move", k}, {"getrange", k, "0"}, {"setrange", k, "0"}, {"append", k},
		{"strlen"}, {"type"}, {"persist"}, {"dbsize", k}, {"incrbyfloat", k}, {"getset", k},
	}
	return exact(append([]string(nil), g.pick2(forms)...)...)
}

func (g *gen) pick2(from [][]string) []string { return from[g.r.IntN(len(from))] }

// unknown sends commands Redis does not have, including the argument quoting and truncation
// corners of the error message.
func (g *gen) unknown() genCmd {
	forms := [][]string{
		{"foobar"}, {"foobar", g.key(), g.value()}, {"gett", g.key()}, {"", "x"},
		{"nosuch", strings.Repeat("z", 200)}, {"nosuch", "a\r\nb", "c d"},
		{"x", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15"},
	}
	return exact(append([]string(nil), g.pick2(forms)...)...)
}
