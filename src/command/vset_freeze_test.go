package command

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/pipeline"
)

// fillLargeVset makes a VSIM.CREATEINDEX set of n 8-d elements with tags and expiries, in batches.
func fillLargeVset(t *testing.T, tc *testConn, key string, n int, r *rand.Rand) {
	if got := tc.do("VSIM.CREATEINDEX", key, "DIM", "8", "METRIC", "L2", "M", "4", "EF", "16"); got != "+OK\r\n" {
		t.Fatalf("VSIM.CREATEINDEX: %q", got)
	}
	for i := 0; i < n; i += 250 {
		args := []string{"VSIM.SET", key, "PXAT", strconv.FormatInt(time.Now().UnixMilli()+int64(3600_000+i), 10),
			"TAGS", "1", "t" + strconv.Itoa(i%3), "ITEMS", strconv.Itoa(min(250, n-i))}
		for j := i; j < min(n, i+250); j++ {
			args = append(args, "e"+strconv.Itoa(j), fp32(randVec8(r)))
		}
		if got := tc.do(args...); !strings.HasPrefix(got, ":") {
			t.Fatalf("VSIM.SET: %q", got)
		}
	}
}

func randVec8(r *rand.Rand) []float32 {
	v := make([]float32, 8)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// vsetWrite applies one random write to key: adds and replacements, removals, attributes, tagged
// and expiring batch inserts, VSIM.DEL.
func vsetWrite(t *testing.T, tc *testConn, r *rand.Rand, key string, n int) {
	m := "e" + strconv.Itoa(r.IntN(n+n/2))
	var cmd []string
	switch r.IntN(5) {
	case 0:
		cmd = []string{"VADD", key, "FP32", fp32(randVec8(r)), m, "M", "4"}
	case 1:
		cmd = []string{"VREM", key, m}
	case 2:
		cmd = []string{"VSETATTR", key, m, `{"w":` + strconv.Itoa(r.IntN(100)) + `}`}
	case 3:
		cmd = []string{"VSIM.SET", key, "TTL", strconv.Itoa(3600_000 + r.IntN(1000)), "TAGS", "1", "t" + strconv.Itoa(r.IntN(3)),
			"ITEMS", "1", m, fp32(randVec8(r))}
	default:
		cmd = []string{"VSIM.DEL", key, m}
	}
	if out := tc.do(cmd...); strings.HasPrefix(out, "-") {
		t.Errorf("%q: %q", cmd[:3], out)
	}
}

// TestVsetSnapshotFreeze: a vector set above freezeMinElems is frozen by a snapshot (copied holding
// its shard, written off it) while clients keep adding, replacing, removing, tagging and expiring
// its elements, and a burst of such writes runs between the freeze and the writing; every file
// loads to the digest of the dataset at the snapshot's instant.
func TestVsetSnapshotFreeze(t *testing.T) {
	const n = 2 * freezeMinElems
	e := newTestEngine()
	tc := newTestConn(t, e)
	r := rand.New(rand.NewPCG(21, 22))
	fillLargeVset(t, tc, "vbig", n, r)
	tc.do("VADD", "vsmall", "VALUES", "2", "1", "2", "x") // below the threshold: written in place
	var stop atomic.Bool
	var ops atomic.Int64
	var wg sync.WaitGroup
	for w := range 2 {
		wc := newTestConn(t, e)
		wr := rand.New(rand.NewPCG(uint64(w), 23))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				vsetWrite(t, wc, wr, "vbig", n)
				ops.Add(1)
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	burst := newTestConn(t, e)
	br := rand.New(rand.NewPCG(99, 24))
	var inWindow atomic.Int64
	snapshotFreezing = func() {
		for range 30 {
			vsetWrite(t, burst, br, "vbig", n)
		}
		inWindow.Add(30)
	}
	at := watchInstant(t)
	for round := range 3 {
		before := ops.Load()
		st := at.saveMatches(t, e, round, func() int64 { return ops.Load() - before })
		if st.Snapshot.Frozen != 1 {
			t.Fatalf("round %d: %d values frozen, want the large vector set only: %+v", round, st.Snapshot.Frozen, st.Snapshot)
		}
		t.Logf("round %d: %d writes during, %d in the freeze window; frozen %d KB", round, ops.Load()-before, inWindow.Load(), st.Snapshot.FrozenSize>>10)
	}
}

// TestVsetCopyAfterRemovals: COPY of a set with freed ids keeps each element's tags and expiry
// (they are kept by id; a copy that renumbered ids would give them to other elements).
func TestVsetCopyAfterRemovals(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("VSIM.CREATEINDEX", "src", "DIM", "2", "METRIC", "L2", "QUANT", "NOQUANT")
	for i := range 20 {
		args := []string{"VSIM.SET", "src", "TAGS", "1", "t" + strconv.Itoa(i%2)}
		if i%2 == 1 {
			args = append(args[:2], "TTL", "3600000", "TAGS", "1", "t1")
		}
		args = append(args, "ITEMS", "1", "e"+strconv.Itoa(i), fp32([]float32{float32(i), 1}))
		tc.do(args...)
	}
	tc.do("VSIM.DEL", "src", "e0", "e3", "e4")
	if got := tc.do("COPY", "src", "dst"); got != ":1\r\n" {
		t.Fatalf("COPY: %q", got)
	}
	for _, tag := range []string{"t0", "t1"} {
		q := []string{"FP32", fp32([]float32{0, 1}), "K", "20", "TAGS", "ANY", "1", tag}
		a := tc.do(append([]string{"VSIM.SEARCH", "src"}, q...)...)
		b := tc.do(append([]string{"VSIM.SEARCH", "dst"}, q...)...)
		if a != b || !strings.HasPrefix(a, "*") || a == "*0\r\n" {
			t.Fatalf("tag %s: source %q, copy %q", tag, a, b)
		}
	}
	if a, b := tc.do("VSIM.INFO", "src"), tc.do("VSIM.INFO", "dst"); a != b {
		t.Fatalf("VSIM.INFO: source %q, copy %q", a, b)
	}
	// The digest hashes the payload, which names each expiring and tagged element.
	if a, b := tc.do("DEBUG", "DIGEST-VALUE", "src"), tc.do("DEBUG", "DIGEST-VALUE", "dst"); a != b {
		t.Fatalf("DEBUG DIGEST-VALUE: source %q, copy %q", a, b)
	}
}

// TestVsetFreezeCost logs what a large vector set costs holding its shard: its copy (Freeze)
// against writing it there (rdbcompression on). HOTKV_VSET_FREEZE_N=20000 (784-d Q8 elements)
// runs it; the figures are in persist_freeze.go.
func TestVsetFreezeCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("HOTKV_VSET_FREEZE_N"))
	if n == 0 {
		t.Skip("HOTKV_VSET_FREEZE_N unset")
	}
	e := newTestEngine()
	tc := newTestConn(t, e)
	r := rand.New(rand.NewPCG(1, 2))
	tc.do("VSIM.CREATEINDEX", "big", "DIM", "784")
	for i := 0; i < n; i += 100 {
		args := []string{"VSIM.SET", "big", "ITEMS", strconv.Itoa(min(100, n-i))}
		for j := i; j < min(n, i+100); j++ {
			v := make([]float32, 784)
			for k := range v {
				v[k] = float32(r.IntN(256))
			}
			args = append(args, "e"+strconv.Itoa(j), fp32(v))
		}
		tc.do(args...)
	}
	for range 3 {
		e.Group.Do(int(e.shardOf([]byte("big"))), func(*pipeline.Shard) {
			ks := e.keyspace(0, []byte("big"))
			en := ks.Peek([]byte("big"), 0)
			s := e.newRDBSerializer(true, time.Now())
			t0 := time.Now()
			f := s.Freeze(0, en, ks)
			freeze := time.Since(t0)
			t0 = time.Now()
			out := len(s.Entry(nil, 0, en, ks))
			write := time.Since(t0)
			if f == nil {
				t.Fatal("not frozen")
			}
			t.Logf("vector set of %d x 784 Q8: freeze %v, write %v (%d KB) holding the shard; the copy holds %d KB",
				n, freeze.Round(10*time.Microsecond), write.Round(10*time.Microsecond), out>>10, f.Size()>>10)
		})
	}
}
