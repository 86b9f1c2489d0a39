package testfuzz

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHLLAgainstRedis adds random element sets (1 to 1,000,000 elements, some shared between
// keys) to HyperLogLogs on HotKV and redis-server, then compares, key by key, PFCOUNT and the raw
// bytes GET returns (sparse and dense, the cached cardinality included), PFCOUNT of several keys,
// and PFMERGE's result. Elements go in PFADDs of up to 500, pipelined 200 commands at a time, so a
// million elements take a few seconds.
func TestHLLAgainstRedis(t *testing.T) {
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	r := rand.New(rand.NewPCG(seed, 15))
	redis := startRedis(t)
	hotkv, _ := startHotKV(t)
	pair := [2]*rawConn{dial(t, hotkv), dial(t, redis)}
	sizes := []int{0, 1, 2, 3, 10, 100, 300, 1000, 2000, 5000, 20000, 100000, 1000000}
	if testing.Short() {
		sizes = sizes[:10]
	}
	var keys []string
	for i, n := range sizes {
		key := fmt.Sprintf("hll%d", i)
		keys = append(keys, key)
		hllFill(t, pair, key, r, n)
		hllCompare(t, seed, pair, "GET", key)
		hllCompare(t, seed, pair, "PFCOUNT", key)
		hllCompare(t, seed, pair, "GET", key) // now with the cardinality cached
		hllCompare(t, seed, pair, "PFDEBUG", "ENCODING", key)
	}
	for range 20 {
		args := []string{"PFCOUNT"}
		for range 2 + r.IntN(4) {
			args = append(args, keys[r.IntN(len(keys))])
		}
		hllCompare(t, seed, pair, args...)
	}
	for i := range 10 {
		dest := "merged" + strconv.Itoa(i)
		args := []string{"PFMERGE", dest}
		for range 1 + r.IntN(3) {
			args = append(args, keys[r.IntN(len(keys))])
		}
		hllCompare(t, seed, pair, args...)
		hllCompare(t, seed, pair, "GET", dest)
		hllCompare(t, seed, pair, "PFCOUNT", dest)
		hllFill(t, pair, dest, r, r.IntN(3000)) // a merged HLL keeps growing like any other
		hllCompare(t, seed, pair, "GET", dest)
		hllCompare(t, seed, pair, "PFCOUNT", dest)
	}
}

// hllFill adds n random elements to key on both servers: numbers, short words and long
// strings, with repeats.
func hllFill(t *testing.T, pair [2]*rawConn, key string, r *rand.Rand, n int) {
	t.Helper()
	var req []byte
	cmds := 0
	flush := func() {
		for _, c := range pair {
			c.write(req)
		}
		for _, c := range pair {
			for range cmds {
				if rep := c.reply(); rep[0] != ':' {
					t.Fatalf("PFADD on %s: %s", c.addr, quote(rep))
				}
			}
		}
		req, cmds = req[:0], 0
	}
	args := []string{"PFADD", key}
	for added := 0; added < n; {
		args = args[:2]
		for k := 0; k < 1+r.IntN(500) && added < n; k++ {
			args = append(args, hllElement(r))
			added++
		}
		req = appendCommand(req, args...)
		if cmds++; cmds == 200 {
			flush()
		}
	}
	if n == 0 {
		req = appendCommand(req, args...) // PFADD with no element creates the key
		cmds++
	}
	flush()
}

func hllElement(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return strconv.Itoa(r.IntN(5000)) // repeats
	case 1:
		return strconv.FormatUint(r.Uint64(), 36)
	case 2:
		b := make([]byte, 1+r.IntN(40))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return string(b)
	}
	return "element:" + strconv.FormatUint(r.Uint64()%1e7, 10)
}

// hllCompare sends one command to both servers and fails unless the replies are equal.
func hllCompare(t *testing.T, seed uint64, pair [2]*rawConn, args ...string) {
	t.Helper()
	h, rd := pair[0].do(args...), pair[1].do(args...)
	if !bytes.Equal([]byte(h), []byte(rd)) {
		t.Fatalf("seed %d: %q:\n  HotKV %s\n  Redis %s", seed, args, quote(h), quote(rd))
	}
}

// TestHLLSparseLimitAgainstRedis sets hll-sparse-max-bytes with CONFIG SET on both servers and
// grows a sparse HLL an element at a time: the value must turn dense at the same add, with the
// same bytes, at every limit (0 never lets a sparse value grow; 3000 is the default).
func TestHLLSparseLimitAgainstRedis(t *testing.T) {
	redis := startRedis(t)
	hotkv, _ := startHotKV(t)
	pair := [2]*rawConn{dial(t, hotkv), dial(t, redis)}
	for _, limit := range []string{"0", "30", "100", "500", "3000"} {
		for _, c := range pair {
			if r := c.do("CONFIG", "SET", "hll-sparse-max-bytes", limit); r != "+OK\r\n" {
				t.Fatalf("CONFIG SET on %s: %s", c.addr, quote(r))
			}
		}
		key := "lim" + limit
		for i := range 1200 {
			hllCompare(t, 0, pair, "PFADD", key, "e"+strconv.Itoa(i))
			if i%7 == 0 || i < 40 {
				hllCompare(t, 0, pair, "PFDEBUG", "ENCODING", key)
				hllCompare(t, 0, pair, "GET", key)
			}
		}
		hllCompare(t, 0, pair, "PFCOUNT", key)
		hllCompare(t, 0, pair, "GET", key)
	}
}

// TestBitsEffectsAgainstRedis runs a fixed script of the cases whose effects are easy to get
// wrong, one command at a time, on HotKV (its write-effect feed attached) and on redis-server
// writing its AOF, both with notify-keyspace-events KEA: the replies, the notifications, the
// replicated commands (in order, whole) and rdb_changes_since_last_save must be equal. Among
// them: SETBIT that changes nothing (not replicated), BITFIELD of GETs only (not replicated) and
// with writes (replicated as itself), a FAIL'd BITFIELD (creates the key, replicates nothing),
// BITOP of an empty result, PFADD that raises nothing, PFCOUNT of one key (readonly, but writes
// its cache: replicated as PFCOUNT) and of several, PFDEBUG TODENSE and GETREG converting.
func TestBitsEffectsAgainstRedis(t *testing.T) {
	dir := t.TempDir()
	redis := startRedis(t, "--notify-keyspace-events", "KEA", "--appendonly", "yes",
		"--appendfsync", "always", "--aof-use-rdb-preamble", "no", "--dir", dir)
	hotkv, srv := startHotKV(t, "--notify-keyspace-events", "KEA")
	rd := srv.Engine.AttachFeed()
	defer rd.Close()
	hSub, rSub := newEventSub(t, hotkv), newEventSub(t, redis)
	hc, rc := dial(t, hotkv), dial(t, redis)
	script := [][]string{
		{"SETBIT", "b", "7", "1"}, {"SETBIT", "b", "7", "1"}, {"SETBIT", "b", "7", "0"}, {"SETBIT", "b", "40", "0"},
		{"GETBIT", "b", "7"}, {"BITCOUNT", "b"}, {"BITPOS", "b", "1"},
		{"BITFIELD", "f", "GET", "u8", "0"}, {"BITFIELD", "f", "SET", "u8", "0", "9", "GET", "u4", "0"},
		{"BITFIELD", "f", "SET", "u8", "0", "9"}, {"BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"},
		{"BITFIELD", "g", "OVERFLOW", "FAIL", "SET", "u8", "0", "300"}, {"BITFIELD_RO", "f", "GET", "u8", "0"},
		{"BITFIELD", "f", "INCRBY", "i5", "3", "100", "OVERFLOW", "SAT", "INCRBY", "i5", "3", "100"},
		{"BITOP", "AND", "d", "b", "f"}, {"BITOP", "AND", "d", "nokey"}, {"BITOP", "AND", "d", "nokey"},
		{"BITOP", "NOT", "d2", "b"}, {"SET", "e", "v", "PXAT", "4102444800000"}, {"BITOP", "OR", "e", "b"}, {"TTL", "e"},
		{"PFADD", "h", "a", "b", "c"}, {"PFADD", "h", "a"}, {"PFADD", "h"}, {"PFADD", "h2"},
		{"PFCOUNT", "h"}, {"PFCOUNT", "h"}, {"PFADD", "h", "z"}, {"PFCOUNT", "h", "h2"}, {"PFCOUNT", "h"},
		{"PFMERGE", "m", "h", "h2"}, {"PFMERGE", "m"}, {"PFDEBUG", "ENCODING", "m"}, {"PFDEBUG", "TODENSE", "m"},
		{"PFDEBUG", "TODENSE", "m"}, {"PFADD", "h3", "x"}, {"PFDEBUG", "GETREG", "h3"}, {"PFDEBUG", "GETREG", "h3"},
		{"PFCOUNT", "m"}, {"SET", "bad", "HYLL"}, {"PFADD", "bad", "a"}, {"PFCOUNT", "bad"},
	}
	var feedCmds [][]string
	lastDB := -1
	for _, args := range script {
		h, r := hc.do(args...), rc.do(args...)
		if h != r {
			t.Fatalf("%q: HotKV %s, Redis %s", args, quote(h), quote(r))
		}
		for {
			es, err := rd.Next()
			if err != nil {
				t.Fatal(err)
			}
			if len(es) == 0 {
				break
			}
			feedCmds = appendFeedCommands(t, feedCmds, es, &lastDB)
		}
	}
	hEvents, rEvents := hSub.finish(t, hc), rSub.finish(t, rc)
	compareEvents(t, 0, "KEA", hEvents, rEvents)
	aof := readRedisAOF(t, dir)
	render := func(cmds [][]string) []string {
		var out []string
		for _, c := range cmds {
			out = append(out, strings.Join(c, " "))
		}
		return out
	}
	if h, r := render(feedCmds), render(aof); !slices.Equal(h, r) {
		t.Errorf("replicated commands differ:\n  HotKV %q\n  Redis %q", h, r)
	}
	t.Logf("%d commands replicated, %d notifications", len(aof), len(rEvents))
	if h, r := infoField(t, hc, "persistence", "rdb_changes_since_last_save"),
		infoField(t, rc, "persistence", "rdb_changes_since_last_save"); h != r {
		t.Errorf("rdb_changes_since_last_save: HotKV %s, Redis %s", h, r)
	}
}
