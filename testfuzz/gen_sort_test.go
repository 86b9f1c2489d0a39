package testfuzz

import "strings"

// SORT and SORT_RO, part of the sorted-set family's stream: a sorted set, list or set sorted
// numerically or ALPHA, by its elements or by keys a BY pattern names, replying the elements or
// GET values, or storing them as a list (SORT ... STORE, into its own list or the list keys, now
// and then over a sorted set or the source itself).
//
// SORT reads keys of its own, which no other command of the stream touches: zs, a sorted set
// (written here by ZADD and DEL), ss, a set (SADD and DEL), ls, a list only SORT ... STORE
// writes (zs and ss may become lists the same way), and sn, which is never written. Not the
// family's keys: SORT converts a sorted set to the skiplist encoding for good, and on a skiplist
// Redis's lex ranges over members of different scores depend on the skiplist's random levels,
// where on a listpack (the family's small sets) they are a defined walk; and any key of the
// family may hold a sorted set, which ZADD creates on whatever key it is given.
//
// BY and GET patterns name the connection's own keys: "*" reads the string keys (a, b, c, n, f
// are sorted-set members too), "h*->f" a field of the hashes h and h2 (members "2" and "" name
// them), "z*" the sorted sets (a wrong type: no value), "w_*" nothing. Patterns without '*'
// ("nosort") keep the source's order.
//
// Redis's order is left undefined in some cases, which the generator avoids rather than
// compare. A set's members come in its hash table's order: so a set sorted BY nosort without
// STORE replies in that order (and LIMIT takes whichever come first), and members that tie in
// an ALPHA BY sort (equal or missing weights, most often) keep it. A sorted set sorted by
// anything but nosort is loaded from its dict, so its ALPHA BY ties are as undefined. And ALPHA
// BY with LIMIT sorts with Redis's pqsort, which is not stable, so even a list's ties come out
// in an order of its own. So an unstored BY nosort goes only with zs and ls, ALPHA BY only with
// ls (each may be a list stored from a set, but a sorted one), and never with LIMIT. Numeric ties
// are ordered by the elements' bytes in both servers.

var sortTable = []genEntry{
	{8, (*gen).sort},
	{3, (*gen).sortZAdd},
	{2, func(g *gen) genCmd { return exact(cmd("sadd", []string{g.prefix + "ss"}, g.sortElems())...) }},
	{1, func(g *gen) genCmd { return exact("del", g.prefix+g.pick([]string{"zs", "ss"})) }},
}

// sortElems are 1 to 4 elements for zs or ss: sorted-set members and integers, so that numeric
// sorts both fail and succeed.
func (g *gen) sortElems() []string {
	out := make([]string, 1+g.r.IntN(4))
	for i := range out {
		out[i] = g.pick([]string{"1", "2", "10", "-1", "0", "007", "1.5", "a", "b", "x y", ""})
	}
	return out
}

// sortCmd is one command of sortTable.
func (g *gen) sortCmd() genCmd { return g.pickEntry(sortTable).f(g) }

// sortZAdd adds members to zs (see sortTable), mostly with integer scores so that numeric
// sorts of its members (which are scores too, in BY patterns) meet ties.
func (g *gen) sortZAdd() genCmd {
	args := []string{"zadd", g.prefix + "zs"}
	for _, m := range g.sortElems() {
		args = append(args, g.pick([]string{"0", "1", "2", "-1", "1.5", "inf"}), m)
	}
	return exact(args...)
}

func (g *gen) sortByPattern() string {
	return g.pick([]string{g.prefix + "*", g.prefix + "h*->f", g.prefix + "z*", g.prefix + "w_*", "nosort", g.prefix + "*->g"})
}

func (g *gen) sortGetPattern() string {
	return g.pick([]string{"#", g.prefix + "*", g.prefix + "h*->f", g.prefix + "h*->g", g.prefix + "w_*", "nostar"})
}

// sortSource returns the key to sort and what it holds, as far as the generator knows: "zs" (a
// sorted set or a list), "ls" (a list), or "" (a set, a list or nothing).
func (g *gen) sortSource() (string, string) {
	switch n := g.r.IntN(10); {
	case n < 4:
		return g.prefix + "zs", "zs"
	case n < 6:
		return g.prefix + "ls", "ls"
	case n < 9:
		return g.prefix + "ss", ""
	}
	return g.prefix + "sn", ""
}

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE dst]
// and SORT_RO (no STORE), options in random order, as Redis reads them in any.
func (g *gen) sort() genCmd {
	name := "sort"
	if g.chance(0.2) {
		name = "sort_ro"
	}
	src, kind := g.sortSource()
	store := name == "sort" && g.chance(0.5)
	by := ""
	if g.chance(0.5) {
		by = g.sortByPattern()
	}
	alpha := g.chance(0.4)
	limit := g.chance(0.3)
	nosort := by != "" && !strings.Contains(by, "*")
	switch {
	case nosort && kind == "" && !store:
		by = ""
	case alpha && by != "" && !nosort && kind != "ls":
		by = ""
	case alpha && by != "" && !nosort && limit:
		limit = false
	}
	var opts [][]string
	if by != "" {
		opts = append(opts, []string{g.name("by"), by})
	}
	if limit {
		opts = append(opts, []string{g.name("limit"), g.pick([]string{"0", "1", "2", "-1", "5"}),
			g.pick([]string{"0", "1", "3", "-1", "10", "x"})})
	}
	for n := g.r.IntN(3); g.chance(0.4) && n > 0; n-- {
		opts = append(opts, []string{g.name("get"), g.sortGetPattern()})
	}
	if g.chance(0.3) {
		opts = append(opts, []string{g.name(g.pick([]string{"asc", "desc"}))})
	}
	if alpha {
		opts = append(opts, []string{g.name("alpha")})
	}
	if store {
		dst := g.prefix + "ls"
		switch n := g.r.IntN(10); {
		case n == 0:
			dst = src
		case n == 1:
			dst = g.zdest() // a list over a sorted set: WRONGTYPE for the family until it is replaced
		case n < 5:
			dst = g.prefix + g.pick(listKeys)
		}
		opts = append(opts, []string{g.name("store"), dst})
	}
	// Options go in any order, except that GET patterns keep theirs (the reply's).
	var gets [][]string
	for _, o := range opts {
		if strings.EqualFold(o[0], "get") {
			gets = append(gets, o)
		}
	}
	g.r.Shuffle(len(opts), func(i, j int) { opts[i], opts[j] = opts[j], opts[i] })
	for i := range opts {
		if strings.EqualFold(opts[i][0], "get") {
			opts[i], gets = gets[0], gets[1:]
		}
	}
	args := []string{name, src}
	for _, o := range opts {
		args = append(args, o...)
	}
	return exact(g.junk(args)...)
}
