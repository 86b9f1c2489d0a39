package command

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// TestMemEffects: keyspace events (class d, named mem.*), the replicated form of each write
// (absolute and deterministic: generated ids, AT, PXAT; FORGET as MEM.DEL; a dedup hit and a
// no-op nothing) and the dirty count.
func TestMemEffects(t *testing.T) {
	x := newHashFx(t)
	st := *x.e.Settings()
	st.NotifyKeyspaceEvents |= int64(NotifyModule)
	x.e.SetSettings(st)
	x10 := fp32([]float32{1, 0})
	now := msFromNow(0)
	x.check([]hashEffect{
		{cmd: []string{"MEM.CREATE", "m", "DIM", "2"}, reply: "+OK\r\n", events: ev("mem.create", "m"),
			feed: []string{"0:MEM.CREATE m DIM 2"}, dirty: 1},
		{cmd: []string{"MEM.ADD", "m", "TEXT", "a", "VECTOR", "VALUES", "2", "1", "0", "USER", "u", "TTL", "100000", "TOPICS", "1", "t"},
			reply: "*2\r\n$1\r\n1\r\n$5\r\nadded\r\n", events: ev("mem.add", "m"),
			feed: []string{"0:MEM.ADD m ID 1 TEXT a VECTOR FP32 " + x10 + " USER u SESSION  NS  TYPE semantic TOPICS 1 t IMPORTANCE 0 EVENTTIME ~" +
				now + " AT ~" + now + " PXAT ~" + msFromNow(100*time.Second)}, dirty: 1},
		{cmd: []string{"MEM.ADD", "m", "TEXT", "a2", "VECTOR", "VALUES", "2", "1", "0.01", "USER", "u", "DEDUP", "0.9"},
			reply: "*2\r\n$1\r\n1\r\n$7\r\ndeduped\r\n"},
		{cmd: []string{"MEM.ADD", "m", "ID", "x", "TEXT", "b", "VECTOR", "FP32", x10, "USER", "u", "EVENTTIME", "5", "AT", "7", "PINNED"},
			reply: "*2\r\n$1\r\nx\r\n$5\r\nadded\r\n", events: ev("mem.add", "m"),
			feed: []string{"0:MEM.ADD m ID x TEXT b VECTOR FP32 " + x10 + " USER u SESSION  NS  TYPE semantic IMPORTANCE 0 EVENTTIME 5 AT 7 PINNED"}, dirty: 1},
		{cmd: []string{"MEM.UPDATE", "m", "x", "IMPORTANCE", "0.5", "TTL", "50000"}, reply: ":1\r\n", events: ev("mem.update", "m"),
			feed: []string{"0:MEM.UPDATE m x IMPORTANCE 0.5 PXAT ~" + msFromNow(50*time.Second) + " AT ~" + now}, dirty: 1},
		{cmd: []string{"MEM.UPDATE", "m", "nope", "IMPORTANCE", "0.5"}, reply: ":0\r\n"},
		{cmd: []string{"MEM.SUPERSEDE", "m", "1", "x"}, reply: "+OK\r\n", events: ev("mem.supersede", "m"),
			feed: []string{"0:MEM.SUPERSEDE m 1 x AT ~" + now}, dirty: 1},
		{cmd: []string{"MEM.SEARCH", "m", "VECTOR", "VALUES", "2", "1", "0"}, reply: "*1\r\n*4\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\n1\r\n$1\r\nb\r\n"},
		{cmd: []string{"MEM.WINDOW.APPEND", "m", "s", "user", "hello world"}, reply: "*2\r\n:1\r\n:2\r\n", events: ev("mem.window", "m"),
			feed: []string{"0:MEM.WINDOW.APPEND m s user hello world TOKENS 2 MAXTOKENS 4096"}, dirty: 1},
		{cmd: []string{"MEM.FORGET", "m", "USER", "u", "DRYRUN"}, reply: "*1\r\n$1\r\n1\r\n"},
		{cmd: []string{"MEM.FORGET", "m", "USER", "u"}, reply: ":1\r\n", events: ev("mem.forget", "m"),
			feed: []string{"0:MEM.DEL m 1"}, dirty: 1},
		{cmd: []string{"MEM.FORGET", "m", "USER", "u"}, reply: ":0\r\n"},
		{cmd: []string{"MEM.DEL", "m", "nope"}, reply: ":0\r\n"},
		{cmd: []string{"MEM.DEL", "m", "x"}, reply: ":1\r\n", events: ev("mem.del", "m"), feed: []string{"0:MEM.DEL m x"}, dirty: 1},
		{cmd: []string{"MEM.ADD", "m", "ID", "tmp", "TEXT", "c", "VECTOR", "FP32", x10, "TTL", "20"}, reply: "*2\r\n$3\r\ntmp\r\n$5\r\nadded\r\n",
			events: ev("mem.add", "m"), dirty: 1,
			feed: []string{"0:MEM.ADD m ID tmp TEXT c VECTOR FP32 " + x10 + " USER  SESSION  NS  TYPE semantic IMPORTANCE 0 EVENTTIME ~" +
				now + " AT ~" + now + " PXAT ~" + msFromNow(20*time.Millisecond)}},
	})
	time.Sleep(30 * time.Millisecond)
	// A read hides the expired memory and changes nothing; the next write removes it first.
	x.check([]hashEffect{
		{cmd: []string{"MEM.GET", "m", "tmp"}, reply: "$-1\r\n"},
		{cmd: []string{"MEM.DEL", "m", "nope"}, reply: ":0\r\n"}, // DEL does not sweep (see writeAgentMem)
		{cmd: []string{"MEM.UPDATE", "m", "nope", "IMPORTANCE", "1"}, reply: ":0\r\n", events: ev("mem.expired", "m"), feed: []string{"0:MEM.DEL m tmp"}, dirty: 1},
		{cmd: []string{"MEM.ADD", "m", "TEXT", "bad", "VECTOR", "VALUES", "2", "0", "0"}, reply: "-ERR invalid vector: NaN, infinite or zero\r\n"},
	})
}

// memWorkload runs random MEM.* writes on tc (a few keys, users, TTLs, supersedes, forgets,
// windows) and returns the keys it used.
func memWorkload(t *testing.T, tc *testConn, r *rand.Rand, n int) []string {
	keys := []string{"ma", "mb"}
	for _, k := range keys {
		if got := tc.do("MEM.CREATE", k, "DIM", "8", "WINDOW", "50"); got != "+OK\r\n" {
			t.Fatalf("MEM.CREATE: %q", got)
		}
	}
	vec := func() string { return fp32(randVec(r, 8)) }
	var ids []string
	for i := range n {
		k := keys[r.IntN(2)]
		user := "u" + strconv.Itoa(r.IntN(4))
		switch op := r.IntN(12); {
		case op < 5:
			args := []string{"MEM.ADD", k, "TEXT", "t" + strconv.Itoa(i), "VECTOR", "FP32", vec(), "USER", user,
				"TOPICS", "1", "p" + strconv.Itoa(r.IntN(3)), "IMPORTANCE", strconv.FormatFloat(r.Float64(), 'f', 3, 64)}
			if r.IntN(4) == 0 {
				args = append(args, "TTL", strconv.Itoa(1+r.IntN(30)))
			}
			if r.IntN(4) == 0 {
				args = append(args, "DEDUP", "0.5")
			}
			if r.IntN(5) == 0 && len(ids) > 0 {
				args = append(args, "ID", ids[r.IntN(len(ids))])
			}
			out := tc.do(args...)
			if !strings.HasPrefix(out, "*2\r\n") {
				t.Fatalf("%q: %q", args[:3], out)
			}
			ids = append(ids, strings.Split(out, "\r\n")[2])
		case op == 5 && len(ids) > 1:
			tc.do("MEM.SUPERSEDE", k, ids[r.IntN(len(ids))], ids[r.IntN(len(ids))])
		case op == 6 && len(ids) > 0:
			tc.do("MEM.UPDATE", k, ids[r.IntN(len(ids))], "TEXT", "u"+strconv.Itoa(i), "VECTOR", "FP32", vec())
		case op == 7 && len(ids) > 0:
			tc.do("MEM.DEL", k, ids[r.IntN(len(ids))])
		case op == 8:
			tc.do("MEM.FORGET", k, "USER", user, "MAXIMPORTANCE", "0.2")
		case op == 9:
			tc.do("MEM.WINDOW.APPEND", k, "s"+strconv.Itoa(r.IntN(3)), "user", "message number "+strconv.Itoa(i))
		case op == 10:
			time.Sleep(time.Millisecond)
		default:
			tc.do("MEM.SEARCH", k, "VECTOR", "FP32", vec(), "USER", user)
		}
	}
	return keys
}

// feedArgs drains rd's entries as commands (database 0 only here).
func feedArgs(t *testing.T, x *hashFx) [][]string {
	var cmds [][]string
	for {
		es, err := x.rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			return cmds
		}
		for _, e := range es {
			vs, err := resptest.ParseAll(e.Cmd)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				args, err := v.Strings()
				if err != nil {
					t.Fatal(err)
				}
				cmds = append(cmds, args)
			}
		}
	}
}

// TestMemReplicationReplay: a random workload's replicated form, replayed on another engine,
// leaves every key byte-for-byte equal (DUMP payloads), and a RESTORE of the DUMP and an RDB
// save and load answer searches the same.
func TestMemReplicationReplay(t *testing.T) {
	x := newHashFx(t)
	keys := memWorkload(t, x.tc, rand.New(rand.NewPCG(1, 1)), 600)
	cmds := feedArgs(t, x)
	dst := newTestEngine()
	dc := newTestConn(t, dst)
	for _, c := range cmds {
		if c[0] == "MULTI" || c[0] == "EXEC" {
			continue
		}
		if got := dc.do(c...); strings.HasPrefix(got, "-") {
			t.Fatalf("replaying %q: %q", c[:2], got)
		}
	}
	q := fp32(randVec(rand.New(rand.NewPCG(9, 9)), 8))
	for _, k := range keys {
		a, b := x.tc.do("DUMP", k), dc.do("DUMP", k)
		if a != b {
			t.Fatalf("key %s differs after replay (%d and %d bytes)", k, len(a), len(b))
		}
		for _, u := range []string{"u0", "u1", "u2", "u3"} {
			if a, b := x.tc.do("MEM.SEARCH", k, "VECTOR", "FP32", q, "USER", u, "K", "20"), dc.do("MEM.SEARCH", k, "VECTOR", "FP32", q, "USER", u, "K", "20"); a != b {
				t.Fatalf("key %s user %s: search differs after replay", k, u)
			}
		}
	}
	// DUMP/RESTORE and an RDB round trip.
	payload := x.tc.do("DUMP", keys[0])
	raw := payload[strings.Index(payload, "\r\n")+2 : len(payload)-2]
	if got := x.tc.do("RESTORE", "copy", "0", raw); got != "+OK\r\n" {
		t.Fatalf("RESTORE: %q", got)
	}
	file := writeRDB(t, x.e, RDBOptions{})
	le := newTestEngine()
	if _, err := le.LoadRDB(bytes.NewReader(file), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	lc := newTestConn(t, le)
	search := []string{"MEM.SEARCH", keys[0], "VECTOR", "FP32", q, "USER", "u1", "K", "20", "WITHMETA"}
	want := x.tc.do(search...)
	if !strings.HasPrefix(want, "*") || want == "*0\r\n" {
		t.Fatalf("search before: %q", want)
	}
	search[1] = "copy"
	if got := x.tc.do(search...); got != want {
		t.Fatalf("restored copy answers %q, want %q", got, want)
	}
	search[1] = keys[0]
	if got := lc.do(search...); got != want {
		t.Fatalf("loaded key answers %q, want %q", got, want)
	}
	if got := x.tc.do("OBJECT", "ENCODING", "copy"); got != "$3\r\nraw\r\n" {
		t.Fatalf("OBJECT ENCODING: %q", got)
	}
	if got := lc.do("TYPE", keys[0]); got != "+agentmem\r\n" {
		t.Fatalf("TYPE after load: %q", got)
	}
	flip := []byte(raw)
	flip[len(flip)-12] ^= 0xff // a byte of the module value (before the version and CRC)
	if got := x.tc.do("RESTORE", "bad", "0", string(flip)); !strings.HasPrefix(got, "-") {
		t.Fatalf("RESTORE of a corrupt payload: %q", got)
	}
}

// TestMemDedupReplay: 300 memories added three times (verbatim, then with noise of ~1% of their
// norm) with DEDUP 0.95 leave 300 records, and each replay answers the first add's id.
func TestMemDedupReplay(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	tc.do("MEM.CREATE", "m", "DIM", "64")
	r := rand.New(rand.NewPCG(2, 3))
	vecs := make([][]float32, 300)
	ids := make([]string, 300)
	for pass := range 3 {
		for i := range vecs {
			if pass == 0 {
				vecs[i] = randVec(r, 64)
			}
			v := append([]float32(nil), vecs[i]...)
			if pass == 2 {
				for j := range v {
					v[j] += float32(r.NormFloat64() * 0.005)
				}
			}
			out := tc.do("MEM.ADD", "m", "TEXT", fmt.Sprint("memory ", i), "VECTOR", "FP32", fp32(v),
				"USER", "u"+strconv.Itoa(i%3), "DEDUP", "0.95")
			parts := strings.Split(out, "\r\n")
			if len(parts) < 5 {
				t.Fatalf("MEM.ADD: %q", out)
			}
			if pass == 0 {
				ids[i] = parts[2]
				if parts[4] != "added" {
					t.Fatalf("first add: %q", out)
				}
			} else if parts[2] != ids[i] || parts[4] != "deduped" {
				t.Fatalf("pass %d memory %d: %q, want %s deduped", pass, i, out, ids[i])
			}
		}
	}
	if got := tc.do("MEM.INFO", "m"); !strings.Contains(got, "memories\r\n:300\r\n") {
		t.Fatalf("MEM.INFO after replays: %q", got)
	}
	if got := tc.do("MEMORY", "USAGE", "m"); !strings.HasPrefix(got, ":") || len(got) < 8 {
		t.Fatalf("MEMORY USAGE: %q", got)
	}
}
