package testfuzz

// The set family of the differential generator. Members mix canonical integers (a set of only
// those is an intset in Redis, and in HotKV an integer set) with strings, so sets move between
// encodings. Replies listing members (SMEMBERS, SINTER, SUNION, SDIFF) are compared as sorted
// multisets: Redis answers a hash table's members in its own order. The *STORE variants are
// checked through the state checks after every round, which compare each set's sorted members.

var setMembers = []string{"1", "2", "3", "10", "-5", "0", "9223372036854775807", "007", "a", "b",
	"c", "x y", ""}

// intMembers are the members of the sets that stay integer-only until a string member arrives.
var intMembers = []string{"1", "2", "3", "10", "-5", "0", "100", "-9223372036854775808"}

// oneSets are keys (outside setKeys, so no other command names them) whose set never holds more
// than its one member: only setOne's commands touch them, and each keeps the set a subset of
// {member}. SPOP on them, with or without a count, pops that member or nothing, which is
// deterministic, so the single SPOP (replicated as SREM) and SPOP with a count reaching the size
// (replicated as DEL) are compared exactly, and so is SMOVE creating its destination and
// emptying its source.
var oneSets = []struct{ key, member string }{{"s1", "7"}, {"s1s", "one"}}

// bigCount is larger than any set the generator builds (they draw from setMembers and
// intMembers), so SPOP with it removes every member, which is deterministic.
const bigCount = "50"

func (g *gen) skey() string { return g.fkey(setKeys) }

func (g *gen) member() string {
	if g.chance(0.4) {
		return g.pick(intMembers)
	}
	return g.pick(setMembers)
}

func (g *gen) members(min, max int) []string {
	out := make([]string, min+g.r.IntN(max-min+1))
	for i := range out {
		out[i] = g.member()
	}
	return out
}

var setTable = []genEntry{
	{8, func(g *gen) genCmd { return exact(cmd("sadd", []string{g.skey()}, g.members(1, 4))...) }},
	{4, func(g *gen) genCmd { return exact(cmd("srem", []string{g.skey()}, g.members(1, 3))...) }},
	{2, func(g *gen) genCmd { return exact("scard", g.skey()) }},
	{3, func(g *gen) genCmd { return exact("sismember", g.skey(), g.member()) }},
	{2, func(g *gen) genCmd { return exact(cmd("smismember", []string{g.skey()}, g.members(1, 4))...) }},
	{3, func(g *gen) genCmd { return sorted("smembers", g.skey()) }},
	{2, func(g *gen) genCmd { return exact("smove", g.skey(), g.skey(), g.member()) }},
	{2, (*gen).sintercard},
	{4, func(g *gen) genCmd {
		return sorted(cmd(g.pick([]string{"sinter", "sunion", "sdiff"}), g.fkeys(setKeys, 1, 3))...)
	}},
	{4, func(g *gen) genCmd {
		name := g.pick([]string{"sinterstore", "sunionstore", "sdiffstore"})
		dest := g.skey()
		if g.chance(0.6) {
			dest = g.prefix + "s3" // store results are often empty: leave s and s2 to grow
		}
		return exact(cmd(name, []string{dest}, g.fkeys(setKeys, 1, 3))...)
	}},
	{2, (*gen).srandmember},
	{1, (*gen).spop},
	{3, (*gen).setOne},
	{1, (*gen).setArity},
	delOf(setKeys),
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
func (g *gen) sintercard() genCmd {
	args := cmd("sintercard", g.numkeys(g.fkeys(setKeys, 1, 3)))
	if g.chance(0.4) {
		args = append(args, g.name("limit"), g.pick([]string{"0", "1", "2", "5", "-1", "x"}))
	}
	return exact(g.junk(args)...)
}

// SRANDMEMBER key [count]: the members are random, so only the reply's shape is compared.
func (g *gen) srandmember() genCmd {
	args := []string{"srandmember", g.skey()}
	if g.chance(0.7) {
		args = append(args, g.pick([]string{"1", "2", "3", "20", "0", "-1", "-3", "-20", "x"}))
	}
	return shape(args...)
}

// SPOP key count, only with counts whose effect is deterministic: none (0), every member
// (bigCount, compared as a sorted multiset) or an error. SPOP without a count, or with a count
// smaller than the set, removes random members and the two servers' sets would part ways.
func (g *gen) spop() genCmd {
	return sorted("spop", g.skey(), g.pick([]string{bigCount, bigCount, "0", "-1", "x"}))
}

// setOne sends a command on one of the oneSets that keeps it within its one member.
func (g *gen) setOne() genCmd {
	o := oneSets[g.r.IntN(len(oneSets))]
	k, m, s := g.prefix+o.key, o.member, g.prefix+g.pick(setKeys)
	forms := [][]string{
		{"sadd", k, m}, {"sadd", k, m, m}, {"srem", k, m}, {"srem", k, m, "other"},
		{"spop", k}, {"spop", k}, {"spop", k, "1"}, {"spop", k, "2"}, {"spop", k, "0"},
		{"smove", k, s, m}, {"smove", s, k, m}, {"smove", k, k, m},
		{"sinterstore", k, k, s}, {"sinterstore", k, s, k}, {"sdiffstore", k, k, s},
		{"sunionstore", k, k}, {"sunionstore", k, k, k}, {"sdiffstore", k, k},
	}
	return exact(append([]string(nil), g.pick2(forms)...)...)
}

// setArity sends set commands with a wrong number of arguments.
func (g *gen) setArity() genCmd {
	k := g.skey()
	forms := [][]string{
		{"sadd", k}, {"srem", k}, {"scard"}, {"sismember", k}, {"smismember", k}, {"smembers"},
		{"smove", k, k}, {"sintercard"}, {"sinter"}, {"sunionstore", k}, {"spop"}, {"spop", k, "1", "2"},
		{"srandmember", k, "1", "2"},
	}
	return exact(append([]string(nil), g.pick2(forms)...)...)
}
