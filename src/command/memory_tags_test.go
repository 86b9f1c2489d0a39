package command

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestTagMemoryAgainstRecount: the key tag index's own bytes are in used memory. After every
// step of random TAG.* commands mixed with the writes that move, drop or replace tagged keys
// (SET, DEL, RENAME, MOVE, SWAPDB, FLUSHDB, expiry, TAG.INVALIDATE), each shard's tag counter
// equals a recount of its indexes, the shard's load is its keys' recount plus that, and MEMORY
// STATS shows the total as hotkv.tags.bytes (absent while nothing is tagged, as Redis's reply).
func TestTagMemoryAgainstRecount(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	if f := memStatsField(t, tc, "hotkv.tags.bytes"); f != -1 {
		t.Fatalf("MEMORY STATS shows hotkv.tags.bytes %d before any tag", f)
	}
	r := rand.New(rand.NewPCG(7, 18))
	k := func() string { return "k" + strconv.Itoa(r.IntN(60)) }
	tg := func() string { return "tag:" + strconv.Itoa(r.IntN(12)) }
	tagged := false
	for step := range 4000 {
		var cmd []string
		switch op := r.IntN(16); {
		case op < 4:
			cmd = []string{"TAG.SET", k(), tg(), tg()}
		case op < 6:
			cmd = []string{"SET", k(), "v"}
		case op == 6:
			cmd = []string{"TAG.DEL", k(), tg()}
		case op == 7:
			cmd = []string{"TAG.CLEAR", k()}
		case op == 8:
			cmd = []string{"DEL", k()}
		case op == 9:
			cmd = []string{"RENAME", k(), k()}
		case op == 10:
			cmd = []string{"MOVE", k(), "1"}
		case op == 11:
			cmd = []string{"PEXPIRE", k(), "1"}
		case op == 12:
			cmd = []string{"TAG.INVALIDATE", tg()}
		case op == 13:
			cmd = []string{"SELECT", strconv.Itoa(r.IntN(2))}
		case op == 14 && r.IntN(10) == 0:
			cmd = []string{"SWAPDB", "0", "1"}
		case op == 15 && r.IntN(30) == 0:
			cmd = []string{"FLUSHDB"}
		default:
			cmd = []string{"GET", k()}
		}
		tc.do(cmd...)
		var sum int64
		keys := recountUsed(e)
		for i := range e.Group.Shards {
			d := e.data(int32(i))
			var n int64
			for _, ix := range d.tags {
				n += ix.Recount()
			}
			if got := d.mem.tags.Load(); got != n {
				t.Fatalf("step %d (%q): shard %d's tag counter %d, a recount %d", step, cmd, i, got, n)
			}
			if got := d.mem.load(); got != keys[i]+n {
				t.Fatalf("step %d (%q): shard %d holds %d, keys %d + tags %d", step, cmd, i, got, keys[i], n)
			}
			sum += n
		}
		tagged = tagged || sum > 0
		want := sum
		if sum == 0 {
			want = -1
		}
		if step%100 == 0 {
			if got := memStatsField(t, tc, "hotkv.tags.bytes"); got != want {
				t.Fatalf("step %d: MEMORY STATS hotkv.tags.bytes %d, the indexes hold %d", step, got, sum)
			}
		}
	}
	if !tagged {
		t.Fatal("the mix never tagged a key")
	}
}

// memStatsField returns MEMORY STATS' integer field name, -1 when absent.
func memStatsField(t *testing.T, tc *testConn, name string) int64 {
	t.Helper()
	elems := replyElems(t, tc.do("MEMORY", "STATS"))
	for i := 0; i+1 < len(elems); i += 2 {
		if replyText(t, elems[i]) == name {
			return replyInt(t, elems[i+1])
		}
	}
	return -1
}

// Eviction sees the tag index: keys whose tags hold most of the bytes are evicted once the
// budget is reached, with their tags, and the total (keys and tags) ends within it.
func TestEvictionCountsTags(t *testing.T) {
	e, tc := evictSetup(t, "allkeys-random", 3_000_000) // 20,000 keys alone fit (about 1.6 MB)
	tags := make([]string, 0, 22)
	tags = append(tags, "TAG.SET", "")
	for i := range 20 {
		tags = append(tags, "a-long-tag-name-of-this-key:"+strconv.Itoa(i))
	}
	for i := range 20_000 {
		k := "k" + strconv.Itoa(i)
		if r := tc.do("SET", k, "v"); r != "+OK\r\n" {
			t.Fatalf("SET %d: %q", i, r)
		}
		tags[1] = k
		tags[2] = "unique:" + k // a tag of its own too: 200+ bytes a key in the index
		tc.do(tags...)
	}
	if e.mem.evicted.Load() == 0 {
		t.Fatal("nothing evicted: the tags' bytes were not counted")
	}
	if used, limit := e.usedMemory(), e.mem.limit.Load(); used > limit+5000 {
		t.Fatalf("used memory %d over the budget %d", used, limit)
	}
	if tb := e.tagBytes(); tb == 0 || tb < e.dataUsed()/2 {
		t.Fatalf("tag bytes %d of %d: the test meant the tags to hold most", tb, e.dataUsed())
	}
}
