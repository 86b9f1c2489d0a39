package testfuzz

// The sorted-set family of the differential generator. Members mix integers and strings; scores
// include infinities, fractions, -0 and a few malformed ones, so ties, lexicographic order among
// equal scores, inf+(-inf) and inf*0 come up. Every reply is in a defined order and compared
// exactly, except ZRANDMEMBER's (shape only).

var zsetMembers = []string{"a", "b", "c", "d", "1", "2", "10", "-1", "x y", "", "member"}

var scores = []string{"0", "1", "-1", "1.5", "2.5", "-0.5", "3", "10", "100", "inf", "-inf", "+inf",
	"-0", "0.1", "1e3", "5.0e-2", "0x10", "9007199254740993", "1.7976931348623157e308"}

// badScores has no overflowing score ("1e400", which the transcripts cover): Redis parses it
// with strtod, which leaves errno at ERANGE, and SORT's numeric weights are checked against errno
// without resetting it, so every numeric SORT that followed, on any connection, would fail until
// some other parse reset errno.
var badScores = []string{"x", "", "nan", "(1", " 1"}

var weights = []string{"1", "2", "0", "-1", "0.5", "inf", "-inf", "x"}

func (g *gen) zkey() string { return g.fkey(zsetKeys) }

// zdest is the destination of a store command: mostly z3, so the results (often empty, which
// deletes the destination) leave z and z2 to grow.
func (g *gen) zdest() string {
	if g.chance(0.6) {
		return g.prefix + "z3"
	}
	return g.zkey()
}

func (g *gen) zmember() string { return g.pick(zsetMembers) }

func (g *gen) score() string {
	if g.chance(0.03) {
		return g.pick(badScores)
	}
	if g.chance(0.02) {
		return g.value()
	}
	return g.pick(scores)
}

// algebraKey is an input of the sorted-set algebra: mostly a sorted set, sometimes a set (which
// counts as a sorted set with every score 1), sometimes anything.
func (g *gen) algebraKey() string {
	switch n := g.r.IntN(10); {
	case n < 7:
		return g.prefix + g.pick(zsetKeys)
	case n < 9:
		return g.prefix + g.pick(setKeys)
	}
	return g.key()
}

func (g *gen) algebraKeys() []string {
	out := make([]string, 1+g.r.IntN(3))
	for i := range out {
		out[i] = g.algebraKey()
	}
	return out
}

var zsetTable = []genEntry{
	{14, (*gen).zadd},
	{3, func(g *gen) genCmd { return exact("zincrby", g.zkey(), g.score(), g.zmember()) }},
	{2, func(g *gen) genCmd { return exact(cmd("zrem", []string{g.zkey()}, g.zmembers(1, 3))...) }},
	{2, func(g *gen) genCmd { return exact("zcard", g.zkey()) }},
	{2, func(g *gen) genCmd { return exact(cmd("zcount", []string{g.zkey()}, g.scoreRange(false))...) }},
	{2, func(g *gen) genCmd { return exact(cmd("zlexcount", []string{g.zkey()}, g.lexRange(false))...) }},
	{3, func(g *gen) genCmd { return exact("zscore", g.zkey(), g.zmember()) }},
	{1, func(g *gen) genCmd { return exact(cmd("zmscore", []string{g.zkey()}, g.zmembers(1, 3))...) }},
	{3, func(g *gen) genCmd { return exact(g.pick([]string{"zrank", "zrevrank"}), g.zkey(), g.zmember()) }},
	{8, func(g *gen) genCmd { return exact(g.junk(g.zrange("zrange", g.zkey()))...) }},
	{3, func(g *gen) genCmd { return exact(g.junk(g.zrange("zrangestore", g.zdest(), g.zkey()))...) }},
	{2, (*gen).zrangeLegacy},
	{2, (*gen).zremrange},
	{2, func(g *gen) genCmd { return g.zpop() }},
	{1, func(g *gen) genCmd { return g.mpop("zmpop", zsetKeys, "min", "max") }},
	{5, (*gen).zstore},
	{2, (*gen).zalgebra},
	{1, (*gen).zintercard},
	{2, (*gen).zrandmember},
	{1, (*gen).zsetBlocking},
	{1, (*gen).zsetArity},
	{4, (*gen).sortCmd},
	delOf(zsetKeys),
}

func (g *gen) zmembers(min, max int) []string {
	out := make([]string, min+g.r.IntN(max-min+1))
	for i := range out {
		out[i] = g.zmember()
	}
	return out
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...], flags in random order,
// sometimes incompatible (NX with XX or GT, INCR with several pairs).
func (g *gen) zadd() genCmd {
	var flags []string
	incr := false
	for _, set := range [][]string{{"nx", "xx"}, {"gt", "lt"}, {"ch"}, {"incr"}} {
		if g.chance(0.25) {
			flags = append(flags, g.name(g.pick(set)))
			incr = set[0] == "incr"
		}
	}
	if g.chance(0.03) {
		flags = append(flags, g.name(g.pick([]string{"nx", "xx", "gt", "lt"})))
	}
	g.r.Shuffle(len(flags), func(i, j int) { flags[i], flags[j] = flags[j], flags[i] })
	pairs := 1 + g.r.IntN(4)
	if incr && g.chance(0.9) {
		pairs = 1 // INCR accepts a single pair only: keep the valid form common
	}
	key := g.zkey()
	args := cmd("zadd", []string{key}, flags)
	for range pairs {
		score := g.score()
		if key == g.prefix+"z2" && g.chance(0.8) {
			score = "0" // z2 mostly holds equal scores, where BYLEX ranges are meaningful
		}
		args = append(args, score, g.zmember())
	}
	if g.chance(0.02) {
		args = args[:len(args)-1] // a score without a member
	}
	return exact(args...)
}

// zrangeBounds returns ZRANGE's two bounds, in the order REV wants when rev, together with the
// BYSCORE/BYLEX flag they go with (or none, for ranks).
func (g *gen) zrangeBounds(rev bool) (bounds []string, by string) {
	switch g.r.IntN(3) {
	case 0:
		return g.scoreRange(rev), "byscore"
	case 1:
		return g.lexRange(rev), "bylex"
	}
	return g.indexRange(), ""
}

// ZRANGE key min max [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES], and ZRANGESTORE
// dst src ... (keys are the key arguments). Now and then the flag does not match the bounds, or
// LIMIT comes without BYSCORE/BYLEX: errors and empty ranges.
func (g *gen) zrange(name string, keys ...string) []string {
	rev := g.chance(0.3)
	bounds, by := g.zrangeBounds(rev)
	if g.chance(0.05) {
		by = g.pick([]string{"", "byscore", "bylex"})
	}
	args := cmd(name, keys, bounds)
	if by != "" {
		args = append(args, g.name(by))
	}
	if rev {
		args = append(args, g.name("rev"))
	}
	if g.chance(0.25) {
		// On a rank range Redis 7.0.15 rejects LIMIT only when the count is not -1, and otherwise
		// ignores it.
		limit := []string{"0", "1", "2", "-1", "3", "x"}
		args = append(args, g.name("limit"), g.pick([]string{"0", "1", "2", "-1", "5"}), g.pick(limit))
	}
	if name == "zrange" && g.chance(0.5) && (by != "bylex" || g.chance(0.1)) {
		args = append(args, g.name("withscores")) // an error with BYLEX
	}
	return args
}

// ZRANGEBYSCORE, ZREVRANGEBYSCORE (with WITHSCORES and LIMIT), ZRANGEBYLEX, ZREVRANGEBYLEX and
// ZREVRANGE: the pre-6.2 forms, which share ZRANGE's code in Redis but not its argument checks.
func (g *gen) zrangeLegacy() genCmd {
	k := g.zkey()
	var args []string
	switch g.r.IntN(3) {
	case 0:
		name := g.pick([]string{"zrangebyscore", "zrevrangebyscore"})
		args = cmd(name, []string{k}, g.scoreRange(name[1] == 'r'))
		if g.chance(0.4) {
			args = append(args, g.name("withscores"))
		}
	case 1:
		name := g.pick([]string{"zrangebylex", "zrevrangebylex"})
		args = cmd(name, []string{k}, g.lexRange(name[1] == 'r'))
	default:
		args = cmd("zrevrange", []string{k}, g.indexRange())
		if g.chance(0.4) {
			args = append(args, g.name("withscores"))
		}
		return exact(g.junk(args)...)
	}
	if g.chance(0.3) {
		args = append(args, g.name("limit"), g.pick([]string{"0", "1", "-1"}), g.pick([]string{"1", "2", "-1"}))
	}
	return exact(g.junk(args)...)
}

// ZREMRANGEBYRANK, ZREMRANGEBYSCORE and ZREMRANGEBYLEX
func (g *gen) zremrange() genCmd {
	k := g.zkey()
	switch g.r.IntN(3) {
	case 0:
		return exact(cmd("zremrangebyrank", []string{k}, g.indexRange())...)
	case 1:
		return exact(cmd("zremrangebyscore", []string{k}, g.scoreRange(false))...)
	}
	return exact(cmd("zremrangebylex", []string{k}, g.lexRange(false))...)
}

// ZPOPMIN key [count] and ZPOPMAX
func (g *gen) zpop() genCmd {
	args := []string{g.pick([]string{"zpopmin", "zpopmax"}), g.zkey()}
	if g.chance(0.5) {
		args = append(args, g.pick(counts))
	}
	return exact(args...)
}

// weightsAggregate appends WEIGHTS (one per key, sometimes a wrong number) and AGGREGATE.
func (g *gen) weightsAggregate(args []string, nkeys int) []string {
	if g.chance(0.4) {
		n := nkeys
		if g.chance(0.05) {
			n = nkeys + 1 - 2*g.r.IntN(2) // one too many or one too few
		}
		args = append(args, g.name("weights"))
		for range n {
			args = append(args, g.pick(weights))
		}
	}
	if g.chance(0.4) {
		args = append(args, g.name("aggregate"), g.name(g.pick([]string{"sum", "min", "max", "avg"})))
	}
	return args
}

// ZUNIONSTORE/ZINTERSTORE destination numkeys key [key ...] [WEIGHTS ...] [AGGREGATE ...] and
// ZDIFFSTORE destination numkeys key [key ...] (which takes no options).
func (g *gen) zstore() genCmd {
	name := g.pick([]string{"zunionstore", "zinterstore", "zdiffstore"})
	keys := g.algebraKeys()
	args := cmd(name, []string{g.zdest()}, g.numkeys(keys))
	if name != "zdiffstore" || g.chance(0.05) {
		args = g.weightsAggregate(args, len(keys))
	}
	return exact(g.junk(args)...)
}

// ZUNION/ZINTER numkeys key [key ...] [WEIGHTS ...] [AGGREGATE ...] [WITHSCORES] and
// ZDIFF numkeys key [key ...] [WITHSCORES]
func (g *gen) zalgebra() genCmd {
	name := g.pick([]string{"zunion", "zinter", "zdiff"})
	keys := g.algebraKeys()
	args := cmd(name, g.numkeys(keys))
	if name != "zdiff" {
		args = g.weightsAggregate(args, len(keys))
	}
	if g.chance(0.5) {
		args = append(args, g.name("withscores"))
	}
	return exact(g.junk(args)...)
}

// ZINTERCARD numkeys key [key ...] [LIMIT limit]
func (g *gen) zintercard() genCmd {
	args := cmd("zintercard", g.numkeys(g.algebraKeys()))
	if g.chance(0.4) {
		args = append(args, g.name("limit"), g.pick([]string{"0", "1", "2", "-1", "x"}))
	}
	return exact(g.junk(args)...)
}

// ZRANDMEMBER key [count [WITHSCORES]]: random members, so only the reply's shape is compared.
func (g *gen) zrandmember() genCmd {
	args := []string{"zrandmember", g.zkey()}
	if g.chance(0.7) {
		args = append(args, g.pick([]string{"1", "2", "3", "20", "0", "-1", "-3", "-20", "x"}))
		if g.chance(0.5) {
			args = append(args, g.name("withscores"))
		}
	}
	return shape(g.junk(args)...)
}

// zsetBlocking sends BZPOPMIN, BZPOPMAX and BZMPOP with a short timeout (see listBlocking).
func (g *gen) zsetBlocking() genCmd {
	t := g.blockTimeout()
	switch g.r.IntN(3) {
	case 0:
		return exact(cmd("bzpopmin", g.fkeys(zsetKeys, 1, 3), []string{t})...)
	case 1:
		return exact(cmd("bzpopmax", g.fkeys(zsetKeys, 1, 3), []string{t})...)
	}
	args := cmd("bzmpop", []string{t}, g.numkeys(g.fkeys(zsetKeys, 1, 3)), []string{g.name(g.pick([]string{"min", "max"}))})
	if g.chance(0.5) {
		args = append(args, g.name("count"), g.pick(counts))
	}
	return exact(args...)
}

// zsetArity sends sorted-set commands with a wrong number of arguments.
func (g *gen) zsetArity() genCmd {
	k := g.zkey()
	forms := [][]string{
		{"zadd", k}, {"zadd", k, "1"}, {"zincrby", k, "1"}, {"zrem", k}, {"zcard"}, {"zcount", k, "0"},
		{"zscore", k}, {"zmscore", k}, {"zrank", k}, {"zrange", k, "0"}, {"zrangestore", k, k, "0"},
		{"zpopmin"}, {"zmpop", "1", k}, {"zunionstore", k, "1"}, {"zunion", "1"}, {"zintercard", "1"},
		{"zrandmember"}, {"bzpopmin", k}, {"bzmpop", "0.01", "1", k},
	}
	return exact(append([]string(nil), g.pick2(forms)...)...)
}
