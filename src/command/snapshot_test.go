package command

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/hash"
	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	dset "github.com/hotkv/hotkv/ds/set"
	"github.com/hotkv/hotkv/ds/zset"
)

// testSerializer writes a database switch as 'S' db and an entry as 'E' db key kind expiry
// dump, numbers as uvarints and strings length-prefixed; the dump is a canonical form of the
// value read through its family's functions (sets sorted, hashes by field).
type testSerializer struct{}

func (testSerializer) SelectDB(dst []byte, db int) []byte {
	return binary.AppendUvarint(append(dst, 'S'), uint64(db))
}

func (testSerializer) Entry(dst []byte, db int, e *keyspace.Entry, ks *keyspace.Keyspace) []byte {
	dst = binary.AppendUvarint(append(dst, 'E'), uint64(db))
	dst = appendLP(dst, e.Key())
	dst = append(dst, byte(e.Kind))
	dst = binary.AppendUvarint(dst, uint64(ks.ExpireMs(e)))
	return appendLP(dst, string(dumpValue(e)))
}

func appendLP(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

// dumpValue is the canonical form of e's value.
func dumpValue(e *keyspace.Entry) []byte {
	var d []byte
	switch e.Kind {
	case keyspace.KindString:
		return append(d, e.Bytes()...)
	case keyspace.KindList:
		l := keyspace.Obj[list.List](e)
		if l.Len() > 0 {
			for it := l.IterAt(0, false); ; {
				v, ok := it.Next()
				if !ok {
					break
				}
				d = appendLP(d, string(v))
			}
		}
	case keyspace.KindHash:
		var fs []string
		for it := keyspace.Obj[hash.Hash](e).Iter(); it.Next(); {
			fs = append(fs, fmt.Sprintf("%q=%q@%d", it.Field(), it.Value(), it.TTL()))
		}
		slices.Sort(fs)
		for _, f := range fs {
			d = appendLP(d, f)
		}
	case keyspace.KindSet:
		var ms []string
		keyspace.Obj[dset.Set](e).Each(func(m []byte) bool { ms = append(ms, string(m)); return true })
		slices.Sort(ms)
		for _, m := range ms {
			d = appendLP(d, m)
		}
	case keyspace.KindZSet:
		keyspace.Obj[zset.ZSet](e).Walk(0, false, func(m []byte, s float64) bool {
			d = appendLP(d, string(m)+"@"+strconv.FormatFloat(s, 'g', -1, 64))
			return true
		})
	default:
		d = append(d, "kind "+e.Kind.String()...)
	}
	return d
}

// imageKey names one key of an image; imageVal is the rest of its record.
type imageKey struct {
	db  int
	key string
}

type imageVal struct {
	kind   byte
	expire uint64
	dump   string
}

// readImage decodes concatenated chunks into one record per key, failing on a key written twice
// or an entry whose database is not the one last switched to.
func readImage(t testing.TB, b []byte) map[imageKey]imageVal {
	t.Helper()
	out := map[imageKey]imageVal{}
	cur := -1
	num := func() int {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatalf("bad number in image at %q", b[:min(len(b), 20)])
		}
		b = b[n:]
		return int(v)
	}
	str := func() string {
		n := num()
		s := string(b[:n])
		b = b[n:]
		return s
	}
	for len(b) > 0 {
		tag := b[0]
		b = b[1:]
		switch tag {
		case 'S':
			cur = num()
		case 'E':
			db := num()
			if db != cur {
				t.Fatalf("entry of db %d after a switch to %d", db, cur)
			}
			k := imageKey{db, str()}
			kind := b[0]
			b = b[1:]
			v := imageVal{kind: kind, expire: uint64(num())}
			v.dump = str()
			if _, dup := out[k]; dup {
				t.Fatalf("key %+v twice in the image", k)
			}
			out[k] = v
		default:
			t.Fatalf("bad tag %q in image", tag)
		}
	}
	return out
}

// referenceAtInstant serializes every entry of every keyspace right now with the test
// serializer; e's shards must all be held (it runs as snapshotInstant).
func referenceAtInstant(e *Engine) []byte {
	var ser testSerializer
	var out []byte
	for _, sh := range e.Group.Shards {
		for db, ks := range sh.Data.(*shardData).dbs {
			out = ser.SelectDB(out, db)
			scanAll(ks, func(en *keyspace.Entry) { out = ser.Entry(out, db, en, ks) })
		}
	}
	return out
}

// slowSnapshots makes snapshots take tiny steps, pausing between them, for the test's life.
func slowSnapshots(t *testing.T, pause time.Duration) {
	snapshotLimitsFor = func() snapshotLimits {
		return snapshotLimits{stepEntries: 4, stepBytes: 1 << 10, chunkBytes: 2 << 10, maxQueued: 16 << 10}
	}
	snapshotStepped = func() { time.Sleep(pause) }
	t.Cleanup(func() {
		snapshotLimitsFor = func() snapshotLimits { return defaultSnapshotLimits }
		snapshotStepped, snapshotInstant = nil, nil
	})
}

// takeSnapshot runs one snapshot to its end with the test serializer, checking that every chunk
// starts with a database switch, and returns the concatenated chunks and the reference image.
func takeSnapshot(t *testing.T, e *Engine, consumerPause time.Duration) (image, ref []byte, sn *Snapshot) {
	return takeSnapshotWith(t, e, testSerializer{}, consumerPause)
}

// takeSnapshotWith is takeSnapshot with ser as every shard's serializer.
func takeSnapshotWith(t *testing.T, e *Engine, ser Serializer, consumerPause time.Duration) (image, ref []byte, sn *Snapshot) {
	t.Helper()
	snapshotInstant = func(e *Engine) { ref = referenceAtInstant(e) }
	sn, err := e.StartSnapshot(func(int) Serializer { return ser })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.StartSnapshot(func(int) Serializer { return testSerializer{} }); !errors.Is(err, ErrSnapshotRunning) {
		t.Fatalf("second StartSnapshot: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		c, err := sn.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(c) == 0 || c[0] != 'S' {
			t.Fatalf("chunk starts with %q, not a database switch", c[:min(len(c), 1)])
		}
		image = append(image, c...)
		time.Sleep(consumerPause)
	}
	checkUnhooked(t, e)
	return image, ref, sn
}

// checkUnhooked: after io.EOF no keyspace has a snapshot and another may start.
func checkUnhooked(t *testing.T, e *Engine) {
	t.Helper()
	e.Group.LockAll()
	defer e.Group.UnlockAll()
	for _, sh := range e.Group.Shards {
		for db, ks := range sh.Data.(*shardData).dbs {
			if ks.Snapshotting() {
				t.Errorf("shard %d db %d still hooked after io.EOF", sh.ID, db)
			}
		}
	}
	if e.snapshot.Load() != nil {
		t.Error("engine still has a running snapshot after io.EOF")
	}
}

// populate fills databases 0-3 with keys of every type, small and large encodings.
func populate(t *testing.T, e *Engine) {
	tc := newTestConn(t, e)
	for db := range 4 {
		tc.do("SELECT", strconv.Itoa(db))
		for i := range 300 {
			s := strconv.Itoa(i)
			tc.do("SET", "str:"+s, "v"+s)
			tc.do("SET", "n:"+s, s)
			tc.do("RPUSH", "l:"+s, "a", "b", s)
			tc.do("HSET", "h:"+s, "f", s, "g", "x")
			tc.do("SADD", "s:"+s, s, "m")
			tc.do("ZADD", "z:"+s, s, "m", "1.5", "n")
		}
		for i := range 600 {
			s := strconv.Itoa(i)
			tc.do("RPUSH", "biglist", s)
			tc.do("SADD", "bigintset", s)
			tc.do("SADD", "bigset", "m"+s)
			tc.do("HSET", "bighash", "f"+s, s)
			tc.do("ZADD", "bigz", s, "m"+s)
		}
		tc.do("EXPIRE", "str:1", "1000")
		tc.do("PEXPIREAT", "str:2", "99999999999999999")
		tc.do("HEXPIRE", "bighash", "1000", "FIELDS", "1", "f1")
	}
}

// mixedLoad runs one client's random writes across databases 0-3 until stop.
func mixedLoad(t *testing.T, tc *testConn, seed uint64, stop *atomic.Bool, ops *atomic.Int64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	for !stop.Load() {
		k := func(prefix string) string { return prefix + strconv.Itoa(rng.IntN(330)) }
		var cmds [][]string
		cmds = append(cmds, []string{"SELECT", strconv.Itoa(rng.IntN(4))})
		switch op := rng.IntN(160); {
		case op < 10:
			cmds = append(cmds, []string{"SET", k("str:"), strconv.Itoa(rng.IntN(1e6))})
		case op < 20:
			cmds = append(cmds, []string{"APPEND", k("str:"), "+"})
		case op < 30:
			cmds = append(cmds, []string{"INCR", k("n:")})
		case op < 40:
			cmds = append(cmds, []string{"LPUSH", k("l:"), "p"}, []string{"RPUSH", "biglist", "q"})
		case op < 50:
			cmds = append(cmds, []string{"HSET", k("h:"), "f", "w"}, []string{"HSET", "bighash", k("f"), "w"})
		case op < 60:
			cmds = append(cmds, []string{"SADD", k("s:"), "new"}, []string{"SREM", "bigintset", k("")})
		case op < 70:
			cmds = append(cmds, []string{"ZADD", k("z:"), "7", "m"}, []string{"ZINCRBY", "bigz", "1", k("m")})
		case op < 85:
			cmds = append(cmds, []string{"DEL", k("str:"), k("l:")})
		case op < 95:
			cmds = append(cmds, []string{"EXPIRE", k("h:"), "100"}, []string{"PEXPIRE", k("s:"), "1"})
		case op < 105:
			cmds = append(cmds, []string{"RENAME", k("z:"), k("z:")}, []string{"RENAME", k("str:"), k("n:")})
		case op < 106:
			if rng.IntN(20) == 0 { // rare, so that the images stay large
				cmds = append(cmds, []string{"FLUSHDB"})
			}
		case op < 108:
			cmds = append(cmds, []string{"SWAPDB", strconv.Itoa(rng.IntN(4)), strconv.Itoa(rng.IntN(4))})
		case op < 112:
			cmds = append(cmds, []string{"COPY", k("h:"), k("h:"), "REPLACE"}, []string{"MOVE", k("s:"), strconv.Itoa(rng.IntN(4))})
		case op < 116:
			cmds = append(cmds, []string{"SORT", k("l:"), "ALPHA", "STORE", k("l:")})
		case op < 120:
			cmds = append(cmds, []string{"EVAL", "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('APPEND', KEYS[2], 'e')",
				"2", k("str:"), k("str:"), "lua"})
		case op < 124:
			cmds = append(cmds, []string{"HPEXPIRE", k("h:"), "1", "FIELDS", "1", "f"}, []string{"HPEXPIRE", "bighash", "1", "FIELDS", "1", k("f")})
		default:
			cmds = append(cmds, []string{"MULTI"}, []string{"SET", k("str:"), "tx"}, []string{"INCR", k("n:")},
				[]string{"LPUSH", k("l:"), "tx"}, []string{"EXEC"})
		}
		var req []byte
		for _, c := range cmds {
			req = append(req, encodeCommand(c)...)
		}
		if _, err := tc.send(req); err != nil {
			t.Error(err)
			return
		}
		ops.Add(1)
	}
}

// TestSnapshotPointInTime: while clients write every type in several databases (SET, APPEND,
// INCR, LPUSH, HSET, SADD, ZADD, DEL, EXPIRE, RENAME, FLUSHDB, SWAPDB, MULTI/EXEC, COPY, MOVE,
// SORT STORE, EVAL, HPEXPIRE) and the active expiry cron runs, slowed-down snapshots produce
// exactly the image the same serializer made of every key at the instant.
func TestSnapshotPointInTime(t *testing.T) {
	t.Run("written on the shard", func(t *testing.T) { snapshotPointInTime(t, testSerializer{}) })
	t.Run("every value frozen", func(t *testing.T) { snapshotPointInTime(t, freezingSerializer{}) })
}

// freezingSerializer is testSerializer as a Freezer that freezes every value (invariant 5), so
// every entry is copied holding its shard and written later holding nothing.
type freezingSerializer struct{ testSerializer }

type testFrozen struct {
	db  int
	exp int64
	en  keyspace.Entry
}

func (freezingSerializer) Freeze(db int, e *keyspace.Entry, ks *keyspace.Keyspace) Frozen {
	f := &testFrozen{db: db, exp: ks.ExpireMs(e), en: *e}
	if e.Kind == keyspace.KindString {
		f.en.SetBytes(bytes.Clone(e.Bytes()))
		return f
	}
	obj, ok := cloneValue(e)
	if !ok {
		panic("BUG: a value without Clone")
	}
	setObjOf(&f.en, e.Kind, obj)
	return f
}

func (f *testFrozen) Append(dst []byte) []byte {
	dst = testSerializer{}.SelectDB(dst, f.db)
	dst = binary.AppendUvarint(append(dst, 'E'), uint64(f.db))
	dst = appendLP(dst, f.en.Key())
	dst = append(dst, byte(f.en.Kind))
	dst = binary.AppendUvarint(dst, uint64(f.exp))
	return appendLP(dst, string(dumpValue(&f.en)))
}

func (f *testFrozen) Size() int64 { return 1 }

func snapshotPointInTime(t *testing.T, ser Serializer) {
	e := newTestEngine()
	populate(t, e)
	slowSnapshots(t, 20*time.Microsecond)
	var stop atomic.Bool
	var ops atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() { defer wg.Done(); mixedLoad(t, tc, uint64(w), &stop, &ops) }()
	}
	wg.Add(1)
	go func() { // the server cron's active expiry: keys, and hash fields
		defer wg.Done()
		for !stop.Load() {
			e.ActiveExpire(time.Millisecond)
			time.Sleep(time.Millisecond)
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	var copied int64
	for round := range 3 {
		before := ops.Load()
		image, ref, sn := takeSnapshotWith(t, e, ser, time.Duration(round)*100*time.Microsecond)
		got, want := readImage(t, image), readImage(t, ref)
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Fatalf("round %d: %+v imaged %+v (present %v), at the instant %+v", round, k, g, ok, v)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: image has %d keys, the instant %d", round, len(got), len(want))
		}
		st := sn.Stats()
		if st.Walked+st.Copied != int64(len(want)) || st.Bytes != int64(len(image)) {
			t.Fatalf("stats %+v for %d keys, %d bytes", st, len(want), len(image))
		}
		for db := range 4 {
			keys, _ := sn.Keys(db)
			n := 0
			for k := range want {
				if k.db == db {
					n++
				}
			}
			if keys != uint64(n) {
				t.Fatalf("Keys(%d) = %d, image holds %d", db, keys, n)
			}
		}
		if _, ok := ser.(Freezer); ok && st.Frozen == 0 {
			t.Fatalf("round %d: a freezing serializer froze nothing: %+v", round, st)
		}
		copied += st.Copied
		t.Logf("round %d: %d keys, %d ops during, stats %+v", round, len(want), ops.Load()-before, st)
	}
	if copied == 0 {
		t.Fatal("no entry was copied on write: the load did not overlap the snapshots")
	}
}

// TestSnapshotMovingValue: clients move value between keys on different shards with
// MULTI/EXEC during repeated snapshots; every image holds the whole sum.
func TestSnapshotMovingValue(t *testing.T) {
	e := newTestEngine()
	slowSnapshots(t, 10*time.Microsecond)
	const pairs, total = 4, 1000
	names, moves := startMovers(t, e, pairs, total, 4, 5)
	for round := range 12 {
		before := moves.Load()
		image, _, _ := takeSnapshot(t, e, 0)
		got := readImage(t, image)
		for p := range pairs {
			sum := 0
			for _, k := range names[2*p : 2*p+2] {
				n, err := strconv.Atoi(got[imageKey{0, k}].dump)
				if err != nil {
					t.Fatalf("round %d: %s imaged %+v", round, k, got[imageKey{0, k}])
				}
				sum += n
			}
			if sum != total {
				t.Fatalf("round %d: pair %d sums to %d in the image, want %d", round, p, sum, total)
			}
		}
		if round == 11 {
			t.Logf("%d moves during the last snapshot", moves.Load()-before)
		}
	}
}

// TestSnapshotAbort: Abort mid-walk removes every hook, Next reports the abort, and a new
// snapshot can start.
func TestSnapshotAbort(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	for i := range 3000 {
		tc.do("SET", "k"+strconv.Itoa(i), "v")
	}
	slowSnapshots(t, 100*time.Microsecond)
	sn, err := e.StartSnapshot(func(int) Serializer { return testSerializer{} })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sn.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	tc.do("SET", "k1", "changed") // a hook copies it, or the walk already did
	sn.Abort()
	if _, err := sn.Next(context.Background()); !errors.Is(err, ErrSnapshotAborted) {
		t.Fatalf("Next after Abort: %v", err)
	}
	checkUnhooked(t, e)
	image, ref, _ := takeSnapshot(t, e, 0)
	if got, want := readImage(t, image), readImage(t, ref); len(got) != len(want) || len(got) != 3000 {
		t.Fatalf("snapshot after an abort: %d keys, reference %d", len(got), len(want))
	}
}

// TestSnapshotSeqAndFeed: the image plus the feed's entries numbered after Seq, replayed in
// order on another engine, give exactly the first engine's final state, so Seq is the instant.
func TestSnapshotSeqAndFeed(t *testing.T) {
	e := newTestEngine()
	rd := e.Feed.Attach()
	defer rd.Close()
	slowSnapshots(t, 20*time.Microsecond)
	setup := newTestConn(t, e)
	for i := range 250 {
		setup.do("SET", "n"+strconv.Itoa(i), strconv.Itoa(i))
		setup.do("SET", "s"+strconv.Itoa(i), "v")
	}
	var wg sync.WaitGroup
	// The writers go on past the snapshot's end (100 requests each at least): on a loaded
	// machine the snapshot may otherwise begin after their last write, and nothing is replayed.
	var started atomic.Int64
	snapped := make(chan struct{})
	for w := range 4 {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			// Every write but the rare DEL changes a key whatever it held, so one entry
			// replayed twice or missed shows in the end state.
			k := func(p string) string { return p + strconv.Itoa(rng.IntN(300)) }
			after := -1
			for i := 0; i < 1500 || after < 100; i++ {
				started.Add(1)
				if after >= 0 {
					after++
				} else {
					select {
					case <-snapped:
						after = 0
					default:
					}
				}
				var req []byte
				switch op := rng.IntN(20); {
				case op < 8:
					req = encodeCommand([]string{"INCRBY", k("n"), strconv.Itoa(1 + rng.IntN(9))})
				case op < 16:
					req = encodeCommand([]string{"APPEND", k("s"), "x"})
				case op < 17:
					req = encodeCommand([]string{"DEL", k("n"), k("s")})
				default:
					req = encodeCommand([]string{"MULTI"})
					req = append(req, encodeCommand([]string{"INCRBY", k("n"), "100"})...)
					req = append(req, encodeCommand([]string{"APPEND", k("s"), "y"})...)
					req = append(req, encodeCommand([]string{"EXEC"})...)
				}
				if _, err := tc.send(req); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for started.Load() < 200 { // writes under way
		time.Sleep(100 * time.Microsecond)
	}
	image, _, sn := takeSnapshot(t, e, 0)
	close(snapped)
	wg.Wait()

	e2 := newTestEngine()
	tc2 := newTestConn(t, e2)
	for k, v := range readImage(t, image) {
		tc2.do("SELECT", strconv.Itoa(k.db))
		tc2.do("SET", k.key, v.dump)
	}
	replayed := 0
	for {
		es, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			break
		}
		for _, en := range es {
			if en.Seq <= sn.Seq() {
				continue
			}
			tc2.do("SELECT", strconv.Itoa(en.DB))
			if _, err := tc2.send(en.Cmd); err != nil {
				t.Fatal(err)
			}
			replayed++
		}
	}
	state := func(e *Engine) map[imageKey]imageVal {
		e.Group.LockAll()
		defer e.Group.UnlockAll()
		return readImage(t, referenceAtInstant(e))
	}
	got, want := state(e2), state(e)
	for k, v := range want {
		if g := got[k]; g.dump != v.dump || g.kind != v.kind {
			t.Fatalf("%+v: image and feed give %+v, the engine holds %+v", k, g, v)
		}
	}
	if len(got) != len(want) || replayed == 0 || sn.Seq() == 0 {
		t.Fatalf("replayed %d entries after seq %d: %d keys, the engine %d", replayed, sn.Seq(), len(got), len(want))
	}
	t.Logf("seq %d, %d entries replayed, %d keys", sn.Seq(), replayed, len(want))
}

// startMovers fills e with pairs of keys on different shards, the first of each holding total,
// plus 2,000 fillers (so a snapshot's walk takes a while), and starts workers clients that move
// random amounts between the keys of a pair with MULTI/EXEC (touching a filler on the way) until
// the test ends. It returns the pairs' keys (2p and 2p+1 are pair p) and the moves counter.
func startMovers(t *testing.T, e *Engine, pairs, total, workers int, seed uint64) ([]string, *atomic.Int64) {
	var names []string
	seen := map[int32]bool{}
	for i := 0; len(names) < 2*pairs; i++ {
		k := "acct:" + strconv.Itoa(i)
		if sh := e.shardOf([]byte(k)); !seen[sh] {
			seen[sh] = true
			names = append(names, k)
		}
	}
	setup := newTestConn(t, e)
	for i := range pairs {
		setup.do("SET", names[2*i], strconv.Itoa(total))
		setup.do("SET", names[2*i+1], "0")
	}
	for i := range 2000 {
		setup.do("SET", "filler:"+strconv.Itoa(i), "x")
	}
	var stop atomic.Bool
	moves := new(atomic.Int64)
	var wg sync.WaitGroup
	for w := range workers {
		tc := newTestConn(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), seed))
			for !stop.Load() {
				p := rng.IntN(pairs)
				from, to := names[2*p], names[2*p+1]
				if rng.IntN(2) == 0 {
					from, to = to, from
				}
				amount := strconv.Itoa(1 + rng.IntN(9))
				req := encodeCommand([]string{"MULTI"})
				req = append(req, encodeCommand([]string{"DECRBY", from, amount})...)
				req = append(req, encodeCommand([]string{"SET", "filler:" + strconv.Itoa(rng.IntN(2000)), amount})...)
				req = append(req, encodeCommand([]string{"INCRBY", to, amount})...)
				req = append(req, encodeCommand([]string{"EXEC"})...)
				if _, err := tc.send(req); err != nil {
					t.Error(err)
					return
				}
				moves.Add(1)
			}
		}()
	}
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	return names, moves
}
