package testfuzz

import (
	"math/rand/v2"
	"slices"
	"strconv"
)

// The command generator of TestDifferentialBlocking: blocking pops that clients wait in, and the
// writes (pushes, adds, moves, renames, type changes) that other clients make while they wait.
// Every client shares the same few keys, so waiters queue up on one key, wait on several, meet
// keys of the other type and are served by chains of moves.

// Lists mostly live on bq:a and bq:b, sorted sets on bq:y and bq:z, and both on bq:m; now and
// then a command names any key, so types meet (WRONGTYPE, a waiter facing the other type).
var (
	blockKeys     = []string{"bq:a", "bq:b", "bq:m", "bq:y", "bq:z"}
	blockListKeys = []string{"bq:a", "bq:b", "bq:m"}
	blockZsetKeys = []string{"bq:y", "bq:z", "bq:m"}
)

// blockCmd is a blocking command and what the schedule must know about it.
type blockCmd struct {
	args  []string
	keys  []string // the keys it waits on
	dest  string   // BLMOVE/BRPOPLPUSH's destination, "" for pops
	timed bool     // it has a timeout the test lets expire
	zset  bool     // it pops from sorted sets (else from lists)
}

// crossMove reports whether the command moves an element to another key. HotKV cannot serve such
// a waiter in the shard that made its source ready when the destination lives on another shard:
// it wakes it to rerun instead, and meanwhile serves the waiters queued after it on the same key
// (docs/decisions.md, Blocking commands), where Redis would serve them in FIFO order. The
// schedule therefore never lets another client queue behind a crossMove waiter.
func (b blockCmd) crossMove() bool { return b.dest != "" && b.dest != b.keys[0] }

type blockGen struct {
	r    *rand.Rand
	step int
	// lists keeps to the list family (TestEffectsDifferentialBlocking): list pops only, a
	// blocking move only onto its own source (see blockCmd.crossMove: a cross-shard waiter is
	// served by its own connection, whose events may be published before the push's), list
	// writes and DEL.
	lists bool
}

func (g *blockGen) pick(from []string) string { return from[g.r.IntN(len(from))] }
func (g *blockGen) chance(p float64) bool     { return g.r.Float64() < p }

// key returns one of a type's keys, now and then any key.
func (g *blockGen) key(typed []string) string {
	if g.chance(0.08) {
		return g.pick(blockKeys)
	}
	return g.pick(typed)
}

// keys returns 1..3 distinct keys out of allowed, mostly of the type's keys (nil when none is
// allowed).
func (g *blockGen) keys(typed, allowed []string) []string {
	var from []string
	for _, k := range allowed {
		if slices.Contains(typed, k) || g.chance(0.08) {
			from = append(from, k)
		}
	}
	if len(from) == 0 {
		return nil
	}
	g.r.Shuffle(len(from), func(i, j int) { from[i], from[j] = from[j], from[i] })
	return from[:1+g.r.IntN(min(3, len(from)))]
}

// timeout is 0 (wait until served or unblocked) or short enough to expire during the run.
func (g *blockGen) timeout() (string, bool) {
	if g.chance(0.2) {
		return g.pick([]string{"0.05", "0.02", "0.1"}), true
	}
	return "0", false
}

// blocking returns a random blocking command waiting only on keys allowed for its kind (list or
// sorted-set pops), or false when it found no key.
func (g *blockGen) blocking(allowed func(zset bool) []string) (blockCmd, bool) {
	n := g.r.IntN(9)
	if g.lists {
		n = g.r.IntN(5)
	}
	zset := n >= 5
	typed := blockListKeys
	if zset {
		typed = blockZsetKeys
	}
	keys := g.keys(typed, allowed(zset))
	if keys == nil {
		return blockCmd{}, false
	}
	t, timed := g.timeout()
	b := blockCmd{keys: keys, timed: timed, zset: zset}
	switch n {
	case 0, 1:
		b.args = append(append([]string{"BLPOP"}, keys...), t)
	case 2:
		b.args = append(append([]string{"BRPOP"}, keys...), t)
	case 3:
		b.keys, b.dest = keys[:1], g.key(blockListKeys)
		if g.lists {
			b.dest = keys[0]
		}
		b.args = []string{"BLMOVE", keys[0], b.dest, g.end(), g.end(), t}
		if g.chance(0.3) {
			b.args = []string{"BRPOPLPUSH", keys[0], b.dest, t}
		}
	case 4:
		b.args = append(append([]string{"BLMPOP", t, strconv.Itoa(len(keys))}, keys...), g.end())
		b.args = g.count(b.args)
	case 5, 6:
		b.args = append(append([]string{g.pick([]string{"BZPOPMIN", "BZPOPMAX"})}, keys...), t)
	default:
		b.args = append(append([]string{"BZMPOP", t, strconv.Itoa(len(keys))}, keys...), g.pick([]string{"MIN", "MAX"}))
		b.args = g.count(b.args)
	}
	return b, true
}

func (g *blockGen) count(args []string) []string {
	if g.chance(0.5) {
		return append(args, "COUNT", g.pick([]string{"1", "2", "3", "10"}))
	}
	return args
}

// elems returns n list elements or sorted-set members named after the step, so a reply shows
// which push it came from.
func (g *blockGen) elems(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "v" + strconv.Itoa(g.step) + "." + strconv.Itoa(i)
	}
	return out
}

// write returns a random non-blocking command on the shared keys.
func (g *blockGen) write() []string {
	g.step++
	writes := blockWrites
	if g.lists {
		writes = blockListWrites
	}
	return pickWeighted(g.r, writes, func(w blockWrite) int { return w.weight }).f(g)
}

func (g *blockGen) lkey() string { return g.key(blockListKeys) }
func (g *blockGen) zkey() string { return g.key(blockZsetKeys) }
func (g *blockGen) end() string  { return g.pick([]string{"LEFT", "RIGHT"}) }

type blockWrite struct {
	weight int
	f      func(*blockGen) []string
}

// blockWrites keep the elements coming about as fast as the waiters take them, so clients both
// find elements at once and block.
var blockWrites = []blockWrite{
	// Often several elements at once, on a key several clients may wait on: FIFO among them.
	{4, func(g *blockGen) []string {
		return append([]string{g.pick([]string{"LPUSH", "RPUSH"}), g.lkey()}, g.elems(1+g.r.IntN(3))...)
	}},
	{1, func(g *blockGen) []string {
		return append([]string{g.pick([]string{"LPUSHX", "RPUSHX"}), g.lkey()}, g.elems(1)...)
	}},
	{4, func(g *blockGen) []string {
		args := []string{"ZADD", g.zkey()}
		for _, m := range g.elems(1 + g.r.IntN(3)) {
			args = append(args, g.pick([]string{"1", "2", "3", "1.5", "-1", "0", "inf"}), m)
		}
		return args
	}},
	{1, func(g *blockGen) []string { return []string{"ZINCRBY", g.zkey(), "1", "v1.0"} }},
	{1, func(g *blockGen) []string { return []string{"RPOPLPUSH", g.lkey(), g.lkey()} }},
	{2, func(g *blockGen) []string { return []string{"LMOVE", g.lkey(), g.lkey(), g.end(), g.end()} }},
	{1, func(g *blockGen) []string {
		return []string{g.pick([]string{"ZUNIONSTORE", "ZINTERSTORE"}), g.zkey(), "2", g.zkey(), g.zkey()}
	}},
	{1, func(g *blockGen) []string { return []string{"ZRANGESTORE", g.zkey(), g.zkey(), "0", "-1"} }},
	{1, func(g *blockGen) []string {
		k := g.key(g.pick2(blockListKeys, blockZsetKeys))
		if g.chance(0.5) {
			return []string{"RENAME", k, g.pick(blockKeys)}
		}
		return []string{"COPY", k, g.pick(blockKeys), "REPLACE"}
	}},
	{3, func(g *blockGen) []string { return []string{"DEL", g.pick(blockKeys)} }},
	// Another type on a key clients may wait on: they keep waiting (Redis 7.0).
	{1, func(g *blockGen) []string { return []string{g.pick([]string{"SET", "SADD"}), g.pick(blockKeys), "x"} }},
	{1, func(g *blockGen) []string { return []string{g.pick([]string{"LPOP", "RPOP"}), g.lkey()} }},
	{1, func(g *blockGen) []string { return []string{g.pick([]string{"ZPOPMIN", "ZPOPMAX"}), g.zkey()} }},
	{1, func(g *blockGen) []string { return []string{"LRANGE", g.lkey(), "0", "-1"} }},
	{1, func(g *blockGen) []string { return []string{"ZRANGE", g.zkey(), "0", "-1", "WITHSCORES"} }},
}

func (g *blockGen) pick2(a, b []string) []string {
	if g.r.IntN(2) == 0 {
		return a
	}
	return b
}

// blockListWrites are the writes of the lists-only schedule: blockWrites' list commands, and the
// list edits that raise events of their own on a key clients wait on.
var blockListWrites = []blockWrite{
	{4, func(g *blockGen) []string {
		return append([]string{g.pick([]string{"LPUSH", "RPUSH"}), g.lkey()}, g.elems(1+g.r.IntN(3))...)
	}},
	{1, func(g *blockGen) []string {
		return append([]string{g.pick([]string{"LPUSHX", "RPUSHX"}), g.lkey()}, g.elems(1)...)
	}},
	{1, func(g *blockGen) []string { return []string{"RPOPLPUSH", g.lkey(), g.lkey()} }},
	{2, func(g *blockGen) []string { return []string{"LMOVE", g.lkey(), g.lkey(), g.end(), g.end()} }},
	{2, func(g *blockGen) []string { return []string{"DEL", g.lkey()} }},
	{1, func(g *blockGen) []string { return []string{g.pick([]string{"LPOP", "RPOP"}), g.lkey()} }},
	{1, func(g *blockGen) []string { return []string{"LPOP", g.lkey(), g.pick([]string{"0", "2", "5"})} }},
	{1, func(g *blockGen) []string {
		return []string{"LMPOP", "2", g.lkey(), g.lkey(), g.end(), "COUNT", g.pick([]string{"1", "3"})}
	}},
	{1, func(g *blockGen) []string {
		return []string{"LTRIM", g.lkey(), g.pick([]string{"0", "1", "5"}), g.pick([]string{"-1", "0", "2"})}
	}},
	{1, func(g *blockGen) []string {
		return []string{"LINSERT", g.lkey(), g.pick([]string{"BEFORE", "AFTER"}), "v" + strconv.Itoa(g.step-1) + ".0", "ins"}
	}},
	{1, func(g *blockGen) []string { return []string{"LREM", g.lkey(), "0", "ins"} }},
	{1, func(g *blockGen) []string { return []string{"LSET", g.lkey(), "0", "set"} }},
	{1, func(g *blockGen) []string { return []string{"LRANGE", g.lkey(), "0", "-1"} }},
}
