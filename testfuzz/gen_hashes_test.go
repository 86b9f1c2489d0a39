package testfuzz

// The hash family of the differential generator.
//
// HKEYS, HVALS and HGETALL are compared exactly, order included. Redis 7.0 keeps a hash with at
// most hash-max-listpack-entries (128) fields, none longer than hash-max-listpack-value (64
// bytes), as a listpack in insertion order (an updated field keeps its place, a deleted one
// leaves the order of the rest), and HotKV's small hashes keep the same order by design
// (docs/decisions.md, Collections). The hashes generated here stay inside those limits: fields
// come from hashFields and every value is under 30 bytes. HINCRBYFLOAT's results stay short too
// because hashValue never offers 1.7976931348623157e308: Redis prints HINCRBYFLOAT's result
// without an exponent (309 digits for that one), and HINCRBYFLOAT keeps a too-long value in the
// listpack until the next HSET converts it. A hash past the limits is a hash table in Redis,
// whose order is its own; such hashes would need a multiset comparison instead.
//
// For the effects differential every write of the family comes up with the cases whose effects
// differ: HSET of fields it only overwrites (still an event and a change per pair), HSETNX of a
// field that exists (nothing), HDEL of missing fields (nothing) and of the last ones, with more
// named after them (it stops there: "hdel" then "del"), HINCRBY and HINCRBYFLOAT failing
// (nothing) and HINCRBYFLOAT succeeding (replicated as HSET of its result). Redis 7.4's
// per-field expiry (HEXPIRE … HPERSIST) is not generated: redis-server 7.0.15 answers it with
// "unknown command", so neither its replies nor its effects can be compared;
// src/command/hashes_effects_test.go checks those against Redis 7.4's t_hash.c.

var hashFields = []string{"f", "g", "h", "1", "2", "-5", "a b", "", "field"}

func (g *gen) hkey() string { return g.fkey(hashKeys) }

func (g *gen) field() string { return g.pick(hashFields) }

func (g *gen) fields(min, max int) []string {
	out := make([]string, min+g.r.IntN(max-min+1))
	for i := range out {
		out[i] = g.field()
	}
	return out
}

// hashValue is value without the one whose HINCRBYFLOAT results are too long for a listpack.
func (g *gen) hashValue() string {
	for {
		if v := g.value(); v != "1.7976931348623157e308" {
			return v
		}
	}
}

// fieldValues returns 1..4 field-value pairs.
func (g *gen) fieldValues() []string {
	var out []string
	for _, f := range g.fields(1, 4) {
		out = append(out, f, g.hashValue())
	}
	return out
}

var hashTable = []genEntry{
	{8, func(g *gen) genCmd { return exact(cmd("hset", []string{g.hkey()}, g.fieldValues())...) }},
	{2, func(g *gen) genCmd { return exact(cmd("hmset", []string{g.hkey()}, g.fieldValues())...) }},
	{2, func(g *gen) genCmd { return exact("hsetnx", g.hkey(), g.field(), g.hashValue()) }},
	{5, func(g *gen) genCmd { return exact("hget", g.hkey(), g.field()) }},
	{2, func(g *gen) genCmd { return exact(cmd("hmget", []string{g.hkey()}, g.fields(1, 4))...) }},
	{4, func(g *gen) genCmd { return exact(cmd("hdel", []string{g.hkey()}, g.fields(1, 5))...) }},
	{2, func(g *gen) genCmd { return exact("hlen", g.hkey()) }},
	{1, func(g *gen) genCmd { return exact("hstrlen", g.hkey(), g.field()) }},
	{2, func(g *gen) genCmd { return exact("hexists", g.hkey(), g.field()) }},
	{4, func(g *gen) genCmd { return exact("hincrby", g.hkey(), g.field(), g.pick(ints)) }},
	{3, func(g *gen) genCmd { return exact("hincrbyfloat", g.hkey(), g.field(), g.hashValue()) }},
	{4, func(g *gen) genCmd { return exact(g.pick([]string{"hkeys", "hvals", "hgetall"}), g.hkey()) }},
	{2, (*gen).hrandfield},
	{1, (*gen).hashArity},
	delOf(hashKeys),
}

// HRANDFIELD key [count [WITHVALUES]]: which fields come back is random, so only the reply's
// shape is compared (how many, which types).
func (g *gen) hrandfield() genCmd {
	args := []string{"hrandfield", g.hkey()}
	if g.chance(0.7) {
		args = append(args, g.pick([]string{"1", "2", "3", "20", "0", "-1", "-3", "-20", "x"}))
		if g.chance(0.5) {
			args = append(args, g.name("withvalues"))
		}
	}
	return shape(g.junk(args)...)
}

// hashArity sends hash commands with a wrong number of arguments.
func (g *gen) hashArity() genCmd {
	k := g.hkey()
	forms := [][]string{
		{"hset", k}, {"hset", k, "f"}, {"hset", k, "f", "v", "g"}, {"hmset", k, "f"}, {"hsetnx", k, "f"},
		{"hget", k}, {"hmget", k}, {"hdel", k}, {"hlen"}, {"hstrlen", k}, {"hexists", k},
		{"hincrby", k, "f"}, {"hincrbyfloat", k, "f"}, {"hkeys"}, {"hgetall", k, k}, {"hrandfield"},
	}
	return exact(append([]string(nil), g.pick2(forms)...)...)
}
