package testfuzz

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStreamsAgainstRedis sends HotKV and redis-server the same random stream commands over
// TCP: XADD with explicit and ms-* IDs (some below the top, refused), MAXLEN and MINID trims with
// =, ~ and LIMIT, values of every listpack size class so nodes split by bytes and by entry count,
// XDEL, XTRIM, XRANGE and XREVRANGE with exclusive bounds and COUNT, XREAD over several keys,
// XLEN and XINFO STREAM [FULL], and consumer-group sessions (XGROUP CREATE|SETID|DESTROY|
// CREATECONSUMER|DELCONSUMER, XREADGROUP of new entries and of history, with NOACK, XACK,
// XPENDING, XCLAIM, XAUTOCLAIM, XINFO GROUPS) on two of the keys; every reply must be Redis's byte
// for byte, in RESP2 and RESP3. Replies that carry the server's clock (idle and delivery times)
// are left out: XPENDING's extended form, XINFO CONSUMERS, XINFO STREAM FULL of a key with groups.
// -diff.seed reproduces a run.
func TestStreamsAgainstRedis(t *testing.T) {
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	ops := 5000
	if testing.Short() {
		ops = 1000
	}
	for _, proto := range []int{2, 3} {
		t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
			redis := startRedis(t)
			hotkv, _ := startHotKV(t)
			pair := [2]*rawConn{dial(t, hotkv), dial(t, redis)}
			if proto == 3 {
				for _, c := range pair {
					if r := c.do("HELLO", "3"); !strings.HasPrefix(r, "%") {
						t.Fatalf("HELLO 3 to %s: %s", c.addr, quote(r))
					}
				}
			}
			g := &streamGen{r: rand.New(rand.NewPCG(seed, uint64(proto))), last: map[string]int{}}
			for i := range ops {
				cmd := g.next()
				got, want := pair[0].do(cmd...), pair[1].do(cmd...)
				if got != want {
					t.Fatalf("seed %d op %d: %s\n hotkv: %s\n redis: %s", seed, i, quoteArgs(cmd), quote(got), quote(want))
				}
				g.saw(cmd, want)
			}
		})
	}
}

// streamGen generates stream commands over a few keys, tracking each key's top millisecond so
// most IDs are near it.
type streamGen struct {
	r    *rand.Rand
	last map[string]int
}

var streamKeys = []string{"st:a", "st:b", "st:c"}

func (g *streamGen) key() string { return streamKeys[g.r.IntN(len(streamKeys))] }

func (g *streamGen) value(k string) string {
	n := g.r.IntN(40)
	if k == "st:a" && n == 3 { // st:a fills nodes to 100 entries, the others also by bytes
		n = 4
	}
	switch n {
	case 0:
		return strconv.Itoa(g.r.IntN(300) - 150)
	case 1:
		return strconv.Itoa(g.r.IntN(1 << 40))
	case 2:
		return strings.Repeat("v", g.r.IntN(200))
	case 3:
		return strings.Repeat("w", 4000+g.r.IntN(200))
	}
	return fmt.Sprint("val", g.r.IntN(1000))
}

func (g *streamGen) id(k string, gen bool) string {
	ms := g.last[k] + g.r.IntN(3)
	if g.r.IntN(20) == 0 {
		ms = g.r.IntN(g.last[k] + 1)
	}
	if gen && g.r.IntN(3) == 0 {
		return strconv.Itoa(ms) + "-*"
	}
	if g.r.IntN(4) == 0 {
		return strconv.Itoa(ms)
	}
	return strconv.Itoa(ms) + "-" + strconv.Itoa(g.r.IntN(3))
}

func (g *streamGen) trim(k string) []string {
	op := []string{"=", "~", ""}[g.r.IntN(3)]
	out := []string{"MAXLEN"}
	thr := strconv.Itoa(g.r.IntN(300))
	if g.r.IntN(2) == 0 {
		out, thr = []string{"MINID"}, g.id(k, false)
	}
	if op != "" {
		out = append(out, op)
	}
	out = append(out, thr)
	if op == "~" && g.r.IntN(2) == 0 {
		out = append(out, "LIMIT", strconv.Itoa(g.r.IntN(300)))
	}
	return out
}

func (g *streamGen) next() []string {
	k := g.key()
	switch op := g.r.IntN(48); {
	case op < 24:
		cmd := []string{"XADD", k}
		if g.r.IntN(40) == 0 {
			cmd = append(cmd, g.trim(k)...)
		}
		cmd = append(cmd, g.id(k, true))
		fields := []string{"a", "b", "c"}
		if g.r.IntN(6) == 0 {
			fields = []string{"x", strconv.Itoa(g.r.IntN(5))}
		}
		for _, f := range fields {
			cmd = append(cmd, f, g.value(k))
		}
		return cmd
	case op < 28:
		cmd := []string{"XDEL", k}
		for range 1 + g.r.IntN(3) {
			cmd = append(cmd, g.id(k, false))
		}
		return cmd
	case op < 29:
		return append([]string{"XTRIM", k}, g.trim(k)...)
	case op < 33:
		a, b := g.id(k, false), "+"
		switch g.r.IntN(3) {
		case 0:
			b = "(" + g.id(k, false)
		case 1:
			a = "-"
		}
		if g.r.IntN(2) == 0 {
			return []string{"XREVRANGE", k, b, a, "COUNT", strconv.Itoa(g.r.IntN(20))}
		}
		return []string{"XRANGE", k, a, b, "COUNT", strconv.Itoa(g.r.IntN(20))}
	case op < 35:
		return []string{"XREAD", "COUNT", strconv.Itoa(1 + g.r.IntN(5)), "STREAMS", "st:a", k, g.id("st:a", false), g.id(k, false)}
	case op < 38:
		return []string{"XINFO", "STREAM", k}
	case op < 39:
		return []string{"XINFO", "STREAM", "st:c", "FULL", "COUNT", strconv.Itoa(g.r.IntN(4))}
	case op < 40:
		return []string{"XLEN", k}
	}
	return g.group()
}

// group returns a consumer-group command on st:a or st:b (st:c never has groups, so its XINFO
// STREAM FULL holds no delivery times).
func (g *streamGen) group() []string {
	k := streamKeys[g.r.IntN(2)]
	grp := []string{"g1", "g2"}[g.r.IntN(2)]
	cons := "c" + strconv.Itoa(g.r.IntN(3))
	count := strconv.Itoa(g.r.IntN(4))
	pid := func() string { return strconv.Itoa(g.r.IntN(g.last[k]+1)) + "-" + strconv.Itoa(g.r.IntN(3)) }
	switch g.r.IntN(14) {
	case 0:
		id := []string{"$", "0", pid()}[g.r.IntN(3)]
		return []string{"XGROUP", "CREATE", k, grp, id, "MKSTREAM"}
	case 1:
		return []string{"XGROUP", "SETID", k, grp, []string{"$", "0", pid()}[g.r.IntN(3)]}
	case 2:
		if g.r.IntN(4) == 0 {
			return []string{"XGROUP", "DESTROY", k, grp}
		}
		return []string{"XGROUP", "DELCONSUMER", k, grp, cons}
	case 3:
		return []string{"XGROUP", "CREATECONSUMER", k, grp, cons}
	case 4, 5, 6:
		cmd := []string{"XREADGROUP", "GROUP", grp, cons, "COUNT", count}
		if g.r.IntN(4) == 0 {
			cmd = append(cmd, "NOACK")
		}
		return append(cmd, "STREAMS", k, ">")
	case 7:
		return []string{"XREADGROUP", "GROUP", grp, cons, "COUNT", count, "STREAMS", k, []string{"0", pid()}[g.r.IntN(2)]}
	case 8, 9:
		return []string{"XACK", k, grp, pid(), pid()}
	case 10:
		return []string{"XPENDING", k, grp}
	case 11:
		cmd := []string{"XCLAIM", k, grp, cons, "0", pid(), pid()}
		if g.r.IntN(2) == 0 {
			cmd = append(cmd, "JUSTID")
		}
		return cmd
	case 12:
		cmd := []string{"XAUTOCLAIM", k, grp, cons, "0", pid(), "COUNT", strconv.Itoa(1 + g.r.IntN(5))}
		if g.r.IntN(2) == 0 {
			cmd = append(cmd, "JUSTID")
		}
		return cmd
	}
	return []string{"XINFO", "GROUPS", k}
}

// saw records the top millisecond an XADD reply gave.
func (g *streamGen) saw(cmd []string, reply string) {
	if cmd[0] != "XADD" || !strings.HasPrefix(reply, "$") {
		return
	}
	ms, _, _ := strings.Cut(strings.Split(reply, "\r\n")[1], "-")
	g.last[cmd[1]], _ = strconv.Atoi(ms)
}

// TestStreamNodeLimitsAgainstRedis sets stream-node-max-bytes and stream-node-max-entries to
// values other than the defaults (0, no limit, included) on HotKV and redis-server, changes them
// in the middle of a run of random stream commands, and compares every reply: CONFIG GET, the
// refused values' errors, and XINFO STREAM's radix-tree-keys and nodes, `~` trims and
// OBJECT ENCODING, which show where nodes split.
func TestStreamNodeLimitsAgainstRedis(t *testing.T) {
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	redis := startRedis(t)
	hotkv, _ := startHotKV(t)
	pair := [2]*rawConn{dial(t, hotkv), dial(t, redis)}
	compare := func(cmd ...string) string {
		t.Helper()
		got, want := pair[0].do(cmd...), pair[1].do(cmd...)
		if got != want {
			t.Fatalf("seed %d: %s\n hotkv: %s\n redis: %s", seed, quoteArgs(cmd), quote(got), quote(want))
		}
		return want
	}
	for _, bad := range [][]string{{"stream-node-max-bytes", "-1"}, {"stream-node-max-entries", "-5"},
		{"stream-node-max-entries", "x"}, {"stream-node-max-bytes", "1zb"}} {
		compare("CONFIG", "SET", bad[0], bad[1])
	}
	settings := [][2]string{{"1kb", "10"}, {"0", "7"}, {"300", "0"}, {"2048", "1"}, {"0", "0"}, {"4096", "100"}}
	g := &streamGen{r: rand.New(rand.NewPCG(seed, 7)), last: map[string]int{}}
	ops := 600
	if testing.Short() {
		ops = 200
	}
	for i, s := range settings {
		compare("CONFIG", "SET", "stream-node-max-bytes", s[0], "stream-node-max-entries", s[1])
		// One at a time: Redis orders a pattern's matches by its dict, seeded per process.
		compare("CONFIG", "GET", "stream-node-max-bytes")
		compare("CONFIG", "GET", "stream-node-max-entries")
		if i == 2 { // start over: the unlimited settings fill fresh streams
			compare("DEL", streamKeys[0], streamKeys[1], streamKeys[2])
		}
		for range ops {
			cmd := g.next()
			g.saw(cmd, compare(cmd...))
		}
		for _, k := range streamKeys {
			compare("XINFO", "STREAM", k)
			compare("OBJECT", "ENCODING", k)
		}
	}
}
