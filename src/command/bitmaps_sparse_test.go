package command

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/sparsebits"
	"github.com/hotkv/hotkv/pipeline"
)

// sparseKeys reports which of keys hold a sparse bitmap in db 0 of e.
func sparseKeys(e *Engine, keys []string) map[string]bool {
	out := map[string]bool{}
	for _, k := range keys {
		ks := e.keyspace(0, []byte(k))
		e.Group.Do(int(e.shardOf([]byte(k))), func(*pipeline.Shard) {
			if en := ks.Peek([]byte(k), time.Now().UnixNano()); en != nil && sparseOf(en) != nil {
				out[k] = true
			}
		})
	}
	return out
}

// digestReply shortens a long bulk reply to its length and hash, for error messages.
func digestReply(s string) string {
	if len(s) < 200 {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%d bytes sha256 %x", len(s), sha256.Sum256([]byte(s)))
}

// sparseCommand returns one random bit or string command over keys, at offsets near the start
// of a string and far out (up to maxBit), so keys are created sparse and dense, cross the rule
// both ways and meet every string command.
func sparseCommand(r *rand.Rand, keys []string, maxBit int64) []string {
	k := func() string { return keys[r.IntN(len(keys))] }
	off := func() string {
		switch r.IntN(40) {
		case 0, 1, 2, 3, 4, 5:
			return strconv.Itoa(r.IntN(4096))
		case 12:
			return strconv.FormatInt(r.Int64N(maxBit), 10)
		default: // clustered past 64 KiB, so several bits meet in one sparse key
			return strconv.Itoa(600000 + r.IntN(1<<r.IntN(20)))
		}
	}
	rng := func() []string {
		a, b := r.Int64N(200000)-100000, r.Int64N(200000)-100000
		if r.IntN(3) == 0 {
			a, b = r.Int64N(20)-10, r.Int64N(20)-10
		}
		out := []string{strconv.FormatInt(a, 10), strconv.FormatInt(b, 10)}
		switch r.IntN(3) {
		case 1:
			out = append(out, "BYTE")
		case 2:
			out = append(out, "BIT")
		}
		return out
	}
	typ := func() string {
		if r.IntN(2) == 0 {
			return "i" + strconv.Itoa(1+r.IntN(64))
		}
		return "u" + strconv.Itoa(1+r.IntN(63))
	}
	switch r.IntN(31) {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		return []string{"SETBIT", k(), off(), strconv.Itoa(r.IntN(2))}
	case 8, 9, 10:
		return []string{"GETBIT", k(), off()}
	case 11, 12:
		return append([]string{"BITCOUNT", k()}, rng()...)
	case 13:
		return []string{"BITCOUNT", k()}
	case 14, 15:
		args := []string{"BITPOS", k(), strconv.Itoa(r.IntN(2))}
		switch rr := rng(); r.IntN(3) {
		case 0:
			return args
		case 1:
			return append(args, rr[0])
		default:
			return append(args, rr...)
		}
	case 16, 17:
		return []string{"BITFIELD", k(), "OVERFLOW", []string{"WRAP", "SAT", "FAIL"}[r.IntN(3)],
			[]string{"GET", "SET", "INCRBY"}[r.IntN(3)], typ(), off(), strconv.FormatInt(r.Int64()>>r.IntN(64), 10)}
	case 18:
		return []string{"BITFIELD_RO", k(), "GET", typ(), off()}
	case 19: // a burst of set bits, to push a sparse key past the rule
		args := []string{"BITFIELD", k()}
		base := 600000 + r.IntN(1<<17)
		for range 16 {
			args = append(args, "SET", "i64", strconv.Itoa(base+r.IntN(1<<15)), "-1")
		}
		return args
	case 20:
		return []string{"STRLEN", k()}
	case 21, 22:
		g := []string{"GETRANGE", k()}
		return append(g, rng()[:2]...)
	case 23:
		return []string{"APPEND", k(), strings.Repeat("\x81", r.IntN(5))}
	case 24:
		return []string{"SETRANGE", k(), strconv.Itoa(r.IntN(1 << r.IntN(18))), "\xff\x00x"}
	case 25:
		return []string{"GET", k()}
	case 26:
		if r.IntN(2) == 0 {
			return []string{"TYPE", k()}
		}
		return []string{"OBJECT", "ENCODING", k()}
	case 27:
		return []string{"BITOP", []string{"AND", "OR", "XOR"}[r.IntN(3)], k(), k(), k()}
	case 28:
		return []string{"COPY", k(), k(), "REPLACE"}
	default:
		return []string{"DEL", k()}
	}
}

// TestSparseBitmapsMatchRedis runs random bit and string commands on the same keys on HotKV and
// on redis-server 7.0.15, offsets small and far (up to 2^27 bits on both sides, 2^24 under -race), and compares
// every reply byte for byte, with DUMP payloads and the packed counts from time to time; after
// every step the used-memory counter equals a recount (the form's real size). It
// fails unless keys were sparse, and dense after holding too many bits, along the way.
func TestSparseBitmapsMatchRedis(t *testing.T) {
	rs := newRedisSession(t)
	e := newTestEngine()
	tc := newTestConn(t, e)
	rs.do("CONFIG", "SET", "rdbcompression", "no")
	tc.do("CONFIG", "SET", "rdbcompression", "no")
	keys := []string{"a", "b", "c"}
	r := rand.New(rand.NewPCG(7, 8))
	sparseSeen, densified := 0, 0
	was := map[string]bool{}
	steps, maxBit := 4000, int64(1<<27)
	if raceEnabledCmd { // the session's one-minute deadline
		steps, maxBit = 1500, 1<<24
	}
	for step := range steps {
		args := sparseCommand(r, keys, maxBit)
		want, got := rs.do(args...), tc.do(args...)
		if got != want {
			t.Fatalf("step %d: %.200q\n got: %s\nwant: %s", step, args, digestReply(got), digestReply(want))
		}
		if got, want := accountedUsed(e), recountUsed(e); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("step %d (%.100q): used memory counts %v, a recount %v", step, args, got, want)
		}
		now := sparseKeys(e, keys)
		for _, k := range keys {
			if was[k] && !now[k] && rs.do("EXISTS", k) == ":1\r\n" && args[0] != "COPY" && args[0] != "BITOP" &&
				args[0] != "APPEND" && args[0] != "SETRANGE" {
				densified++ // a bit write broke the rule
			}
		}
		sparseSeen += len(now)
		was = now
		if step%100 == 50 {
			for _, k := range keys {
				if l := rs.do("STRLEN", k); len(l) < 10 { // DUMP of strings below 100 MB
					if a, b := rs.do("DUMP", k), tc.do("DUMP", k); a != b {
						t.Fatalf("step %d: DUMP %s: %s, want %s", step, k, digestReply(b), digestReply(a))
					}
				}
			}
			checkPackedCounts(t, e, tc, fmt.Sprint("step ", step))
		}
	}
	t.Logf("key-steps sparse: %d, conversions to dense: %d", sparseSeen, densified)
	if sparseSeen == 0 || densified == 0 {
		t.Fatalf("sparse key-steps %d, conversions %d: the run did not cover both forms", sparseSeen, densified)
	}
}

// TestSparseSetbitHugeOffset: SETBIT at bit 4,000,000,000 makes a 500,000,001-byte string for
// every reply without allocating it: the heap grows (and the process allocates in total) by
// well under a megabyte, and the bit commands, STRLEN, GETRANGE and OBJECT ENCODING answer as
// Redis would for that string.
func TestSparseSetbitHugeOffset(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("SET", "warm", "x") // the engine's first-use allocations happen before the measurement
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := tc.do("SETBIT", "k", "4000000000", "1")
	runtime.ReadMemStats(&after)
	if got != ":0\r\n" {
		t.Fatalf("SETBIT: %q", got)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("SETBIT at 4e9 allocated %d bytes", d)
	}
	if d := int64(after.HeapAlloc) - int64(before.HeapAlloc); d > 1<<20 {
		t.Fatalf("the heap grew %d bytes", d)
	}
	f := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(args...); got != want {
			t.Errorf("%q: %q, want %q", args, got, want)
		}
	}
	f(":1\r\n", "GETBIT", "k", "4000000000")
	f(":0\r\n", "GETBIT", "k", "3999999999")
	f(":0\r\n", "GETBIT", "k", "4000000001")
	f(":1\r\n", "BITCOUNT", "k")
	f(":1\r\n", "BITCOUNT", "k", "-1", "-1")
	f(":0\r\n", "BITCOUNT", "k", "0", "-2")
	f(":1\r\n", "BITCOUNT", "k", "4000000000", "4000000000", "BIT")
	f(":500000001\r\n", "STRLEN", "k")
	f(":4000000000\r\n", "BITPOS", "k", "1")
	f(":0\r\n", "BITPOS", "k", "0")
	f(":4000000001\r\n", "BITPOS", "k", "0", "-1")
	f("$2\r\n\x00\x80\r\n", "GETRANGE", "k", "-2", "-1")
	f("$3\r\nraw\r\n", "OBJECT", "ENCODING", "k")
	f("+string\r\n", "TYPE", "k")
	f("*2\r\n:1\r\n:0\r\n", "BITFIELD", "k", "GET", "u1", "4000000000", "SET", "u8", "3999999992", "16")
	f("*1\r\n:4224\r\n", "BITFIELD_RO", "k", "GET", "u16", "3999999992") // 0x10 0x80
	if !sparseKeys(e, []string{"k"})["k"] {
		t.Fatal("k is not sparse")
	}
	if mu := tc.do("MEMORY", "USAGE", "k"); len(mu) > 7 { // ":" and at most four digits

		t.Errorf("MEMORY USAGE k: %s", mu)
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 4<<20 {
		t.Fatalf("the reads allocated %d bytes", d)
	}
}

// TestSparseBitmapRDB: a sparse bitmap goes to an RDB file (and a DUMP payload) as the dense
// string: redis-server 7.0.15 loads the file and serves the same bytes, RESTORE of HotKV's DUMP
// into Redis gives them too, and HotKV loading the file back serves them.
func TestSparseBitmapRDB(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	ref := make([]byte, 0)
	for _, off := range []int{1 << 20, 9, 1<<20 + 1, 3 << 22, 1 << 24} {
		tc.do("SETBIT", "bm", strconv.Itoa(off), "1")
		for len(ref) <= off/8 {
			ref = append(ref, 0)
		}
		ref[off/8] |= 0x80 >> (off % 8)
	}
	tc.do("SETBIT", "small", "100", "1")
	if !sparseKeys(e, []string{"bm"})["bm"] {
		t.Fatal("bm is not sparse")
	}
	want := fmt.Sprintf("$%d\r\n%s\r\n", len(ref), ref)
	for _, o := range []RDBOptions{{Compress: true, Checksum: true}, {Compress: false, Checksum: true}} {
		dir := t.TempDir()
		file := writeRDB(t, e, o)
		if err := os.WriteFile(dir+"/dump.rdb", file, 0o600); err != nil {
			t.Fatal(err)
		}
		rs := startRedisIn(t, dir)
		if got := rs.do("GET", "bm"); got != want {
			t.Fatalf("%+v: redis-server's bm: %s, want %s", o, digestReply(got), digestReply(want))
		}
		if got, w := rs.do("GET", "small"), tc.do("GET", "small"); got != w {
			t.Fatalf("small: %q, want %q", got, w)
		}
		rs.do("DEL", "bm")
		if got := rs.do("RESTORE", "bm", "0", bulkOf(t, tc.do("DUMP", "bm"))); got != "+OK\r\n" {
			t.Fatalf("RESTORE: %q", got)
		}
		if got := rs.do("GET", "bm"); got != want {
			t.Fatalf("restored bm: %s", digestReply(got))
		}
		back := newTestEngine()
		bc := newTestConn(t, back)
		if _, err := back.LoadRDB(bytes.NewReader(file), LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := bc.do("GET", "bm"); got != want {
			t.Fatalf("loaded bm: %s", digestReply(got))
		}
	}
}

// TestSparseEditsKeepCounts: every way a sparse value is replaced or edited leaves the packed
// counts equal to a walk of the keyspace, and the densified value equal to the reference.
func TestSparseEditsKeepCounts(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	f := func(args ...string) string {
		t.Helper()
		got := tc.do(args...)
		checkPackedCounts(t, e, tc, strings.Join(args, " "))
		return got
	}
	f("SETBIT", "s", "1000000", "1")
	if checkPackedCounts(t, e, tc, "one") != 1 {
		t.Fatal("the sparse key is not counted")
	}
	f("SETBIT", "s", "2000000", "1")
	f("SETBIT", "s", "1000000", "0")
	f("COPY", "s", "t")
	f("BITFIELD", "t", "SET", "u8", "0", "255")
	f("APPEND", "t", "x")
	if sparseKeys(e, []string{"s", "t"})["t"] {
		t.Fatal("APPEND left t sparse")
	}
	if got := f("GETRANGE", "t", "0", "0"); got != "$1\r\n\xff\r\n" {
		t.Fatalf("GETRANGE t: %q", got)
	}
	f("SET", "s", "plain")
	f("SETBIT", "h", "0", "0")
	f("SETBIT", "h", "1", "1") // "HYLL" at the start keeps the value dense
	for i, c := range []byte("HYLL") {
		for b := range 8 {
			f("SETBIT", "hy", strconv.Itoa(i*8+b), strconv.Itoa(int(c>>(7-b))&1))
		}
	}
	f("SETBIT", "hy", "900000", "1")
	if sparseKeys(e, []string{"hy"})["hy"] {
		t.Fatal("a value starting with HYLL is sparse")
	}
	f("SETBIT", "hz", "900000", "1")
	f("DEL", "hz")
	f("SETBIT", "bulk", strconv.Itoa(sparsebits.MinLen*8), "1")
	for i := range sparsebits.MinLen / 64 { // past the rule: becomes dense
		f("SETBIT", "bulk", strconv.Itoa(i*8), "1")
	}
	if sparseKeys(e, []string{"bulk"})["bulk"] {
		t.Fatal("bulk is still sparse")
	}
	if got := f("BITCOUNT", "bulk"); got != ":"+strconv.Itoa(sparsebits.MinLen/64+1)+"\r\n" {
		t.Fatalf("BITCOUNT bulk: %q", got)
	}
}

// TestSparseBitmapFreezes: a snapshot freezes a sparse bitmap by its string's length (writing it
// means building the dense bytes, which must not happen under the shard's token), and the frozen
// copy writes the dense string of the instant it was frozen, whatever SETBIT does after.
func TestSparseBitmapFreezes(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("SETBIT", "bm", strconv.Itoa(freezeMinBytes*8+5), "1")
	want := tc.do("GET", "bm")
	key := []byte("bm")
	ks := e.keyspace(0, key)
	var f Frozen
	e.Group.Do(int(e.shardOf(key)), func(*pipeline.Shard) {
		en := ks.Peek(key, time.Now().UnixNano())
		if sparseOf(en) == nil {
			t.Error("bm is not sparse")
		}
		f = e.newRDBSerializer(false, time.Now()).Freeze(0, en, ks)
	})
	if f == nil {
		t.Fatal("a sparse bitmap longer than freezeMinBytes is not frozen")
	}
	tc.do("SETBIT", "bm", "3", "1")
	tc.do("SETBIT", "bm", strconv.Itoa(freezeMinBytes*8+5), "0")
	out := f.Append(nil)
	if !bytes.Contains(out, []byte(bulkOf(t, want))) {
		t.Fatal("the frozen record does not hold the dense string of the instant")
	}
}
