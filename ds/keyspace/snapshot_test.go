package keyspace

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// imaged is what a snapshot's emit saw of one entry.
type imaged struct {
	val    string
	expire int64 // unix ms, as ExpireMs gives it
}

// TestSnapshotAgainstMap interleaves random writes (in place too), deletes, expiries, sweeps,
// random sampling, Clear and epoch moves with the steps of repeated snapshots. Each image must
// equal the reference map copied at the snapshot's instant: every entry present then (expired
// ones not yet reclaimed included), each once, with its value and expiry of that instant.
func TestSnapshotAgainstMap(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runSnapshotAgainstMap(t, seed) })
	}
}

func runSnapshotAgainstMap(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	ks, model := New(), map[string]ref{}
	var epoch uint64
	ks.SetEpoch(&epoch)
	now := int64(1_000_000_000)
	ks.OnExpire = func(k string) {
		if r, ok := model[k]; !ok || live(r, now) {
			t.Fatalf("%q reclaimed at %d, model %+v present %v", k, now, r, ok)
		}
		delete(model, k)
	}
	var (
		snap    *Snap
		atStart map[string]ref
		image   map[string]imaged
		rounds  int
	)
	emit := func(e *Entry, from *Keyspace) {
		k := strings.Clone(e.Key()) // Key points into the entry, which is reused once deleted
		if _, dup := image[k]; dup {
			t.Fatalf("%q imaged twice", k)
		}
		image[k] = imaged{string(e.Bytes()), from.ExpireMs(e)}
	}
	keyRange := 200
	for step := 0; step < 30000 || snap != nil; step++ {
		if step%3000 == 0 {
			keyRange = []int{20, 400, 3000}[rng.IntN(3)]
		}
		now += rng.Int64N(20_000)
		if snap == nil && rng.IntN(500) == 0 {
			checkContents(t, ks, model)
			atStart, image = maps.Clone(model), map[string]imaged{}
			snap = ks.BeginSnapshot(emit)
		}
		if snap != nil && rng.IntN(4) == 0 {
			if _, done := snap.Step(1 + rng.IntN(8)); done {
				snap.End()
				snap = nil
				rounds++
				compareImage(t, atStart, image)
			}
		}
		key := fmt.Sprint("key:", rng.IntN(keyRange))
		m, has := model[key]
		op := rng.IntN(100)
		switch {
		case op < 25: // write a new value
			e, created := ks.Upsert([]byte(key), now)
			if created {
				m = ref{}
			}
			m.val = fmt.Sprintf("v%07d", step)
			e.SetBytes([]byte(m.val))
			model[key] = m
		case op < 40: // change the value in place, as APPEND, INCR and SETRANGE may
			if e := ks.Find([]byte(key), now); e != nil {
				b := e.Bytes()
				b[0]++
				m.val = string(b)
				model[key] = m
			} else if has && live(m, now) {
				t.Fatalf("Find %q missed a model key %+v", key, m)
			}
		case op < 50:
			ks.Delete([]byte(key), now)
			delete(model, key)
		case op < 55: // Remove of a found entry (DEL of a hash whose last field expired, MOVE)
			if e := ks.Find([]byte(key), now); e != nil {
				ks.Remove(e)
				delete(model, key)
			}
		case op < 58: // Add of an absent key (RENAME's target, RESTORE)
			if ks.Peek([]byte(key), math.MinInt64) == nil {
				e := ks.Add([]byte(key))
				m = ref{val: fmt.Sprintf("a%07d", step)}
				e.SetBytes([]byte(m.val))
				model[key] = m
			}
		case op < 75: // expiry: near, far (past 2262), or persist
			if e := ks.Find([]byte(key), now); e != nil {
				switch rng.IntN(4) {
				case 0:
					ks.SetExpire(e, 0)
					m.expire = 0
				case 1:
					ks.SetExpireMs(e, MaxNearMs+1+rng.Int64N(1000))
					m.expire = farExpire
				default:
					at := now + rng.Int64N(400_000)
					ks.SetExpire(e, at)
					m.expire = at
				}
				model[key] = m
			}
		case op < 88:
			ks.Sweep(now, 1+rng.IntN(32))
		case op < 92:
			ks.Random(now, rng.Uint64)
		case op < 93:
			if rng.IntN(8) == 0 {
				ks.Clear()
				clear(model)
			}
		default:
			ks.Find([]byte(key), now)
		}
		if rng.IntN(3) == 0 {
			epoch++
			ks.Recycle()
		}
	}
	if rounds < 10 {
		t.Fatalf("only %d snapshots completed", rounds)
	}
	checkContents(t, ks, model)
	// The table catches up with its load at the first insert after the end.
	for i := range 3*len(ks.buckets) + 8 {
		e, _ := ks.Upsert([]byte(fmt.Sprint("fill", i)), now)
		e.SetBytes([]byte("x"))
	}
	if ks.count > len(ks.buckets) || ks.snap != nil {
		t.Fatalf("table of %d buckets for %d keys after the snapshots", len(ks.buckets), ks.count)
	}
}

// compareImage checks an image against the reference copied at its instant.
func compareImage(t *testing.T, want map[string]ref, got map[string]imaged) {
	t.Helper()
	for k, r := range want {
		g, ok := got[k]
		exp := r.expire / nsPerMs
		if r.expire == farExpire {
			exp = -1 // any far time: the far map is checked by farexpire_test
		}
		if !ok || g.val != r.val || (exp >= 0 && g.expire != exp) || (exp < 0 && g.expire <= MaxNearMs) {
			t.Fatalf("image of %q = %+v (present %v), at the instant %+v", k, g, ok, r)
		}
	}
	if len(got) != len(want) {
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Fatalf("image holds %q, created after the instant", k)
			}
		}
	}
}

// checkContents compares the table with the model, without the load-factor check (a snapshot
// holds the table at its size).
func checkContents(t *testing.T, ks *Keyspace, model map[string]ref) {
	t.Helper()
	n := 0
	eachPlaced(t, ks, func(e *Entry) {
		n++
		if m, ok := model[e.Key()]; !ok || m.val != string(e.Bytes()) || m.expire != e.expire {
			t.Fatalf("key %q: table %q %d, model %+v %v", e.Key(), e.Bytes(), e.expire, m, ok)
		}
	})
	if n != len(model) || ks.Len() != n {
		t.Fatalf("table %d keys (Len %d), model %d", n, ks.Len(), len(model))
	}
}

// TestSnapshotClearKeepsOldTable: Clear during a snapshot leaves the image of the instant whole
// (far expiries included), the live keyspace starts empty and unhooked, and its new keys are
// not imaged.
func TestSnapshotClearKeepsOldTable(t *testing.T) {
	ks := New()
	var epoch uint64
	ks.SetEpoch(&epoch)
	for i := range 1000 {
		e, _ := ks.Upsert([]byte(fmt.Sprint("k", i)), 1)
		e.SetBytes([]byte(fmt.Sprint("v", i)))
		if i%10 == 0 {
			ks.SetExpireMs(e, MaxNearMs+int64(i))
		}
	}
	image := map[string]imaged{}
	s := ks.BeginSnapshot(func(e *Entry, from *Keyspace) { image[e.Key()] = imaged{string(e.Bytes()), from.ExpireMs(e)} })
	s.Step(10)
	ks.Clear()
	if ks.Snapshotting() || ks.Len() != 0 {
		t.Fatalf("after Clear: snapshotting %v, %d keys", ks.Snapshotting(), ks.Len())
	}
	for i := range 2000 { // new keys reuse no old entry and are not imaged
		e, _ := ks.Upsert([]byte(fmt.Sprint("n", i)), 1)
		e.SetBytes([]byte("new"))
		epoch++
		ks.Delete([]byte(fmt.Sprint("n", i/2)), 1)
	}
	for _, done := s.Step(7); !done; _, done = s.Step(7) {
	}
	s.End()
	if len(image) != 1000 {
		t.Fatalf("image holds %d keys, want 1000", len(image))
	}
	for i := range 1000 {
		want := imaged{fmt.Sprint("v", i), 0}
		if i%10 == 0 {
			want.expire = MaxNearMs + int64(i)
		}
		if g := image[fmt.Sprint("k", i)]; g != want {
			t.Fatalf("k%d imaged %+v, want %+v", i, g, want)
		}
	}
}

// TestSnapshotReadersEmitNothing: the token-free read paths neither emit nor change the image
// state, and no resize happens while a snapshot is active.
func TestSnapshotReadersEmitNothing(t *testing.T) {
	ks := New()
	for i := range 100 {
		e, _ := ks.Upsert([]byte(fmt.Sprint("k", i)), 1)
		e.SetBytes([]byte("v"))
	}
	emitted := 0
	s := ks.BeginSnapshot(func(*Entry, *Keyspace) { emitted++ })
	for i := range 100 {
		k := []byte(fmt.Sprint("k", i))
		ks.Peek(k, 1)
		ks.FindShared(k, Hash(k), 1)
		ks.Head(Hash(k))
	}
	if emitted != 0 {
		t.Fatalf("readers emitted %d entries", emitted)
	}
	n := len(ks.buckets)
	for i := range 1000 {
		e, _ := ks.Upsert([]byte(fmt.Sprint("new", i)), 1)
		e.SetBytes([]byte("v"))
	}
	if len(ks.buckets) != n {
		t.Fatalf("table resized from %d to %d buckets during the snapshot", n, len(ks.buckets))
	}
	for _, done := s.Step(1000); !done; _, done = s.Step(1000) {
	}
	if emitted != 100 || s.Walked()+s.Copied() != 100 {
		t.Fatalf("emitted %d (walked %d, copied %d), want 100", emitted, s.Walked(), s.Copied())
	}
	s.End()
}

// TestSnapshotDuringResize begins snapshots while an incremental resize is under way (growing
// and shrinking): the move stops for the snapshot, the image equals the map at the instant
// whatever the writes, deletes and Clear that follow, and after End the move resumes and ends.
func TestSnapshotDuringResize(t *testing.T) {
	began := [2]int{} // snapshots begun mid-grow, mid-shrink
	for seed := range uint64(16) {
		rng := rand.New(rand.NewPCG(seed, 3))
		ks, model := New(), map[string]ref{}
		var epoch uint64
		ks.SetEpoch(&epoch)
		n := 100 + rng.IntN(5000)
		for i := 0; i < n || ks.old == nil; i++ { // fill until a grow is under way
			k := fmt.Sprint("k", i)
			ks.Add([]byte(k)).SetBytes([]byte(k))
			model[k] = ref{val: k}
		}
		shrink := seed%2 == 1
		if shrink { // delete until a shrink is under way
			ks.Rehash()
			for k := range model {
				ks.Delete([]byte(k), 1)
				delete(model, k)
				if ks.old != nil && len(ks.old) > len(ks.buckets) {
					break
				}
			}
		}
		if ks.old == nil || (len(ks.old) > len(ks.buckets)) != shrink {
			t.Fatalf("seed %d: no resize under way (old %d, buckets %d)", seed, len(ks.old), len(ks.buckets))
		}
		began[len(ks.old)/len(ks.buckets)/2]++
		old, moved := len(ks.old), ks.moved
		atStart, image := maps.Clone(model), map[string]imaged{}
		s := ks.BeginSnapshot(func(e *Entry, from *Keyspace) {
			k := strings.Clone(e.Key())
			if _, dup := image[k]; dup {
				t.Fatalf("%q imaged twice", k)
			}
			image[k] = imaged{string(e.Bytes()), from.ExpireMs(e)}
		})
		cleared := false
		for done := false; !done; {
			for range rng.IntN(20) {
				k := fmt.Sprint("k", rng.IntN(2*n))
				switch rng.IntN(3) {
				case 0:
					e, _ := ks.Upsert([]byte(k), 1)
					e.SetBytes([]byte("new"))
					model[k] = ref{val: "new"}
				case 1:
					ks.Delete([]byte(k), 1)
					delete(model, k)
				default:
					ks.Find([]byte(k), 1)
				}
			}
			if !cleared && (len(ks.old) != old || ks.moved != moved) {
				t.Fatalf("seed %d: the resize moved during the snapshot (old %d→%d, moved %d→%d)",
					seed, old, len(ks.old), moved, ks.moved)
			}
			if !cleared && rng.IntN(200) == 0 {
				ks.Clear()
				clear(model)
				cleared = true
			}
			epoch++
			ks.Recycle()
			_, done = s.Step(1 + rng.IntN(16))
		}
		s.End()
		compareImage(t, atStart, image)
		checkContents(t, ks, model)
		for i := 0; ks.old != nil; i++ { // the move resumes with the writes
			if i > 4*old+100 {
				t.Fatalf("seed %d: resize still under way after %d writes", seed, i)
			}
			k := fmt.Sprint("after", i)
			ks.Add([]byte(k)).SetBytes([]byte(k))
			model[k] = ref{val: k}
		}
		checkContents(t, ks, model)
	}
	if began[0] < 4 || began[1] < 4 {
		t.Fatalf("snapshots begun mid-grow %d, mid-shrink %d", began[0], began[1])
	}
}
