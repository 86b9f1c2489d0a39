package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// ref is the dumb reference model: every entry the keyspace holds, expired or not.
type ref struct {
	val    string
	expire int64
}

func live(r ref, now int64) bool { return r.expire == 0 || r.expire > now }

// eachPlaced calls fn for every entry of the table (both arrays during a resize), failing t if
// the entry is not in the one bucket its hash says (bucket): in old at or past moved while a
// resize is under way, else in buckets; old's buckets below moved must be empty.
func eachPlaced(t *testing.T, ks *Keyspace, fn func(e *Entry)) {
	t.Helper()
	if ks.old == nil && ks.moved != 0 || ks.old != nil && ks.moved >= uint64(len(ks.old)) {
		t.Fatalf("resize state: old %d buckets, moved %d", len(ks.old), ks.moved)
	}
	for i, b := range ks.old {
		if uint64(i) < ks.moved && b != nil {
			t.Fatalf("old bucket %d below moved %d holds %q", i, ks.moved, b.Key())
		}
		for e := b; e != nil; e = e.next {
			if h := HashString(e.Key()); h&uint64(len(ks.old)-1) != uint64(i) {
				t.Fatalf("key %q in old bucket %d, hash says %d", e.Key(), i, h&uint64(len(ks.old)-1))
			}
			fn(e)
		}
	}
	for i, b := range ks.buckets {
		for e := b; e != nil; e = e.next {
			h := HashString(e.Key())
			if h&ks.mask() != uint64(i) {
				t.Fatalf("key %q in bucket %d, hash says %d", e.Key(), i, h&ks.mask())
			}
			if ks.old != nil && h&uint64(len(ks.old)-1) >= ks.moved {
				t.Fatalf("key %q in the new array, its old bucket %d not moved yet (%d)", e.Key(),
					h&uint64(len(ks.old)-1), ks.moved)
			}
			fn(e)
		}
	}
}

// checkInvariants walks the table: every entry sits in its hash's bucket, keys are unique, and
// the counters and load factor agree with the contents and the reference.
func checkInvariants(t *testing.T, ks *Keyspace, model map[string]ref) {
	t.Helper()
	seen, volatile := map[string]bool{}, 0
	eachPlaced(t, ks, func(e *Entry) {
		if seen[e.Key()] {
			t.Fatalf("key %q twice", e.Key())
		}
		seen[e.Key()] = true
		if e.expire != 0 {
			volatile++
		}
		m, ok := model[e.Key()]
		if !ok || string(e.Bytes()) != m.val || e.expire != m.expire {
			t.Fatalf("key %q: table (%q, %d), model %+v (present %v)", e.Key(), e.Bytes(), e.expire, m, ok)
		}
	})
	if len(seen) != len(model) || ks.Len() != len(model) || ks.Volatile() != volatile {
		t.Fatalf("table has %d keys (Len %d, volatile %d/%d), model %d", len(seen), ks.Len(),
			ks.Volatile(), volatile, len(model))
	}
	// The load is in range whenever no resize is under way (one starts as soon as it is not).
	if n := len(ks.buckets); n&(n-1) != 0 || n < minBuckets ||
		(ks.old == nil && (n > minBuckets && ks.count*10 < n || ks.count > n)) {
		t.Fatalf("bad table size %d for %d keys (old %d)", n, ks.count, len(ks.old))
	}
	if n := len(ks.old); n&(n-1) != 0 || n != 0 && n < minBuckets {
		t.Fatalf("bad old table size %d", n)
	}
}

// TestAgainstMap runs random operations on a keyspace and a map, over a key range wide enough
// to grow and shrink the table many times.
func TestAgainstMap(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runAgainstMap(t, seed) })
	}
}

func runAgainstMap(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	ks, model := New(), map[string]ref{}
	// Each step is a call; the epoch moves after some of them. Entries a step removed must keep
	// their key and value until it does (a handler may still read them), whatever is added.
	var epoch uint64
	ks.SetEpoch(&epoch)
	type removed struct {
		e        *Entry
		key, val string
	}
	var held []removed
	hold := func(key string) {
		if e := ks.Peek([]byte(key), math.MaxInt64/2); e != nil {
			held = append(held, removed{e, key, string(e.Bytes())})
		}
	}
	now := int64(1_000_000)
	hooks := 0
	ks.OnExpire = func(k string) { // every reclaimed key must be expired, and is gone from then on
		if r, ok := model[k]; !ok || live(r, now) {
			t.Fatalf("%q reclaimed at %d, model %+v present %v", k, now, r, ok)
		}
		delete(model, k)
		hooks++
	}
	keyRange := 50
	for step := range 20000 {
		if step%2000 == 0 {
			keyRange = []int{10, 300, 3000}[rng.IntN(3)] // swing the size to force resizes
		}
		now += rng.Int64N(50)
		key := fmt.Sprint("k", rng.IntN(keyRange))
		m, has := model[key]
		hooks = 0
		switch op := rng.IntN(100); {
		case op < 35: // write
			e, created := ks.Upsert([]byte(key), now)
			if created != !(has && live(m, now)) {
				t.Fatalf("Upsert %q created=%v, model %+v present %v", key, created, m, has)
			}
			if created {
				m = ref{}
			}
			m.val = fmt.Sprint(step)
			e.SetBytes([]byte(m.val))
			model[key] = m
		case op < 55: // delete
			hold(key)
			if got, want := ks.Delete([]byte(key), now), has && live(m, now); got != want {
				t.Fatalf("Delete %q = %v, want %v", key, got, want)
			}
			delete(model, key)
		case op < 70: // read
			e := ks.Find([]byte(key), now)
			if (e != nil) != (has && live(m, now)) || (e != nil && string(e.Bytes()) != m.val) {
				t.Fatalf("Find %q = %v, model %+v present %v", key, e, m, has)
			}
		case op < 75: // peek never reclaims
			if e := ks.Peek([]byte(key), now); (e != nil) != (has && live(m, now)) {
				t.Fatalf("Peek %q = %v, model %+v", key, e, m)
			}
		case op < 90: // set or clear an expiry on a live key
			if e := ks.Find([]byte(key), now); e != nil {
				at := now + rng.Int64N(2000)
				if rng.IntN(4) == 0 {
					at = 0
				}
				ks.SetExpire(e, at)
				m.expire = at
				model[key] = m
			} else {
				delete(model, key)
			}
		case op < 97:
			n := ks.ExpireCycle(now, 1+rng.IntN(64))
			if n != hooks {
				t.Fatalf("ExpireCycle reclaimed %d, reported %d", n, hooks)
			}
		case op < 99:
			if e := ks.Random(now, rng.Uint64); e != nil {
				if r, ok := model[e.Key()]; !ok || !live(r, now) {
					t.Fatalf("Random returned %q, model %+v", e.Key(), r)
				}
			}
		default:
			if rng.IntN(20) == 0 {
				ks.Clear()
				clear(model)
			}
		}
		for _, r := range held {
			if r.e.Key() != r.key || string(r.e.Bytes()) != r.val {
				t.Fatalf("step %d: entry of %q (%q) reused as %q (%q) before the epoch moved",
					step, r.key, r.val, r.e.Key(), r.e.Bytes())
			}
		}
		if rng.IntN(3) == 0 {
			epoch++
			held = held[:0]
		}
		if step%97 == 0 {
			checkInvariants(t, ks, model)
		}
	}
	checkInvariants(t, ks, model)
}

// TestScanFullOnce: with no changes between calls, a scan returns every key exactly once.
func TestScanFullOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 100, 4097} {
		ks := New()
		for i := range n {
			ks.Add(fmt.Append(nil, "key:", i))
		}
		seen := map[string]int{}
		cursor := uint64(0)
		for {
			cursor = ks.Scan(cursor, func(e *Entry) { seen[e.Key()]++ })
			if cursor == 0 {
				break
			}
		}
		if len(seen) != n {
			t.Fatalf("%d keys: scan saw %d", n, len(seen))
		}
		for k, c := range seen {
			if c != 1 {
				t.Fatalf("%d keys: %q seen %d times", n, k, c)
			}
		}
	}
}

// TestScanContract: every key present for the whole scan is returned at least once, even when
// the table grows and shrinks between calls; nothing that was never in the table is returned.
func TestScanContract(t *testing.T) {
	grew, shrank := 0, 0 // resizes during scans, to show the test exercises both directions
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 7))
		ks := New()
		stable := map[string]bool{}
		for i := range 20 + rng.IntN(500) {
			k := fmt.Sprint("stable:", i)
			stable[k] = true
			ks.Add([]byte(k))
		}
		var churn []string
		everChurn := map[string]bool{}
		seen := map[string]bool{}
		cursor, calls := uint64(0), 0
		for {
			cursor = ks.Scan(cursor, func(e *Entry) { seen[e.Key()] = true })
			calls++
			size := len(ks.buckets)
			if cursor == 0 {
				break
			}
			switch rng.IntN(24) {
			case 0: // grow: add a burst of keys, up to a bound so the scan can finish
				for range min(rng.IntN(1500), 6000-len(churn)) {
					k := fmt.Sprint("churn:", len(everChurn))
					everChurn[k] = true
					churn = append(churn, k)
					ks.Add([]byte(k))
				}
			case 1: // shrink: delete a random share of the churn keys, often all of them
				keep := rng.IntN(len(churn) + 1)
				if rng.IntN(2) == 0 {
					keep = 0
				}
				for _, k := range churn[keep:] {
					ks.Delete([]byte(k), 0)
				}
				churn = churn[:keep]
			}
			if n := len(ks.buckets); n > size {
				grew++
			} else if n < size {
				shrank++
			}
			if calls > 1_000_000 {
				t.Fatal("scan does not terminate")
			}
		}
		for k := range stable {
			if !seen[k] {
				t.Fatalf("seed %d: stable key %q never returned", seed, k)
			}
		}
		for k := range seen {
			if !stable[k] && !everChurn[k] {
				t.Fatalf("seed %d: scan returned unknown key %q", seed, k)
			}
		}
	}
	if grew < 10 || shrank < 10 {
		t.Fatalf("table grew %d and shrank %d times mid-scan; the test needs both", grew, shrank)
	}
	t.Logf("table grew %d and shrank %d times mid-scan", grew, shrank)
}

func TestExpiryAndOnExpire(t *testing.T) {
	ks := New()
	var gone []string
	ks.OnExpire = func(k string) { gone = append(gone, k) }
	for i := range 100 {
		e := ks.Add(fmt.Append(nil, i))
		if i%2 == 0 {
			ks.SetExpire(e, 1000)
		}
	}
	if ks.Volatile() != 50 {
		t.Fatalf("volatile %d", ks.Volatile())
	}
	if ks.Find([]byte("0"), 999) == nil || ks.Peek([]byte("0"), 1000) != nil || ks.Len() != 100 {
		t.Fatal("expiry boundary or Peek reclaimed")
	}
	if ks.Find([]byte("0"), 1000) != nil || len(gone) != 1 || gone[0] != "0" {
		t.Fatalf("lazy expiry: %v", gone)
	}
	n := 0
	for range 100 {
		n += ks.ExpireCycle(1000, 10)
	}
	if n != 49 || ks.Len() != 50 || ks.Volatile() != 0 || len(gone) != 50 {
		t.Fatalf("sweep reclaimed %d, len %d, volatile %d, hooks %d", n, ks.Len(), ks.Volatile(), len(gone))
	}
	// An expired key is not live for Upsert or Delete, and its slot is reused.
	e := ks.Add([]byte("x"))
	ks.SetExpire(e, 5)
	if ks.Delete([]byte("x"), 5) || ks.Len() != 50 {
		t.Fatal("Delete of an expired key reported live")
	}
	e = ks.Add([]byte("y"))
	ks.SetExpire(e, 5)
	if e2, created := ks.Upsert([]byte("y"), 5); !created || e2 == e || e2.ExpireAt() != 0 {
		t.Fatal("Upsert over an expired key must create a fresh persistent entry")
	}
}

func TestAccessAndTakeValue(t *testing.T) {
	ks := New()
	e, _ := ks.Upsert([]byte("a"), 10e9)
	if e.Access != 10 || e.Freq != LFUInitVal {
		t.Fatalf("new entry access %d freq %d", e.Access, e.Freq)
	}
	ks.FindQuiet([]byte("a"), 20e9)
	if e.Access != 10 {
		t.Fatal("FindQuiet recorded an access")
	}
	ks.Find([]byte("a"), 30e9)
	if e.Access != 30 {
		t.Fatal("Find did not record the access")
	}
	e.Kind, e.Enc = KindString, 3
	e.SetBytes([]byte("v"))
	d := ks.Add([]byte("b"))
	d.TakeValue(e)
	if d.Kind != KindString || d.Enc != 3 || string(d.Bytes()) != "v" || d.Access != 30 || e.Bytes() != nil {
		t.Fatalf("TakeValue: %+v from %+v", d, e)
	}
}

func TestRandomLive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ks := New()
	if ks.Random(0, rng.Uint64) != nil {
		t.Fatal("random key from an empty keyspace")
	}
	for i := range 1000 {
		e := ks.Add(fmt.Append(nil, i))
		if i != 500 {
			ks.SetExpire(e, 10)
		}
	}
	for ks.Len() > 1 {
		if e := ks.Random(10, rng.Uint64); e != nil && e.Key() != "500" {
			t.Fatalf("Random returned expired %q", e.Key())
		}
	}
	if e := ks.Random(10, rng.Uint64); e == nil || e.Key() != "500" {
		t.Fatal("the only live key was not found")
	}
}

func TestFindAllocs(t *testing.T) {
	ks := New()
	key := []byte("some-key")
	ks.Upsert(key, 1)
	if n := testing.AllocsPerRun(100, func() { ks.Find(key, 2); ks.Upsert(key, 3) }); n != 0 {
		t.Fatalf("Find/Upsert of an existing key allocate %.0f", n)
	}
	for i := range 1000 {
		e := ks.Add(fmt.Append(nil, i))
		ks.SetExpire(e, 1e18)
	}
	if n := testing.AllocsPerRun(100, func() { ks.ExpireCycle(5, 20) }); n != 0 {
		t.Fatalf("ExpireCycle allocates %.0f", n)
	}
}

// Sweep reports the volatile entries it met, so callers can judge how stale the table is.
func TestSweepSamples(t *testing.T) {
	ks := New()
	for i := range 100 {
		e := ks.Add(fmt.Append(nil, i))
		switch {
		case i < 10:
			ks.SetExpire(e, 5) // expired at 5
		case i < 50:
			ks.SetExpire(e, 1e9)
		}
	}
	reclaimed, sampled := ks.Sweep(5, 1000)
	if reclaimed != 10 || sampled != 50 {
		t.Fatalf("full sweep: reclaimed %d, sampled %d; want 10, 50", reclaimed, sampled)
	}
	if r, s := ks.Sweep(5, 1000); r != 0 || s != 40 {
		t.Fatalf("second sweep: reclaimed %d, sampled %d; want 0, 40", r, s)
	}
}

// TestEntryKeys stores keys on both sides of the inline limit, and checks that an entry stays one
// 64-byte size class.
func TestEntryKeys(t *testing.T) {
	if s := unsafe.Sizeof(Entry{}); s != 64 {
		t.Fatalf("Entry is %d bytes, want 64", s)
	}
	ks := New()
	var keys []string
	for n := 0; n <= 40; n++ {
		keys = append(keys, strings.Repeat("k", n), strings.Repeat("x", n)+"y")
	}
	for i, k := range keys {
		e, created := ks.Upsert([]byte(k), 1)
		if !created {
			t.Fatalf("%q: not created", k)
		}
		e.Kind = KindString
		e.SetBytes([]byte(strconv.Itoa(i)))
	}
	for i, k := range keys {
		e := ks.Find([]byte(k), 1)
		if e == nil || e.Key() != k {
			t.Fatalf("%q: found %v", k, e)
		}
		if string(e.Bytes()) != strconv.Itoa(i) {
			t.Fatalf("%q: value %q, want %d", k, e.Bytes(), i)
		}
		if ks.Find([]byte(k+"z"), 1) != nil && !slices.Contains(keys, k+"z") {
			t.Fatalf("%q+z found", k)
		}
	}
	e := ks.Find([]byte("kkkk"), 1)
	e.SetBytes([]byte{})
	if b := e.Bytes(); b == nil || len(b) != 0 || !e.HasValue() {
		t.Fatalf("empty string read back as %#v", b)
	}
	e.SetBytes(nil)
	if e.Bytes() != nil || e.HasValue() {
		t.Fatal("SetBytes(nil) left a value")
	}
}

// TestScanDuringResizeAgainstMap interleaves single random Adds, Upserts, Deletes, Finds and
// expiry sweeps with the calls of a running scan, over a key range that swings so the table
// grows and shrinks many times with its incremental resize under way at most calls. A plain map
// is the reference: each finished scan must have returned every key present from its start to
// its end, and only keys present at some time during it; the table must agree with the map.
func TestScanDuringResizeAgainstMap(t *testing.T) {
	midResize, scans := 0, 0
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 14))
		ks, model := New(), map[string]ref{}
		var epoch uint64
		ks.SetEpoch(&epoch)
		now := int64(1_000_000)
		// whole: keys present since the scan began; during: keys present at any time of it.
		whole, during, seen := map[string]bool{}, map[string]bool{}, map[string]bool{}
		gone := func(k string) { delete(model, k); delete(whole, k) }
		ks.OnExpire = gone // an expired key reclaimed (and maybe created again) left the table
		begin := func() {
			clear(whole)
			clear(during)
			clear(seen)
			for k := range model {
				whole[k], during[k] = true, true
			}
		}
		begin()
		cursor, keyRange := uint64(0), 100
		for step := range 60000 {
			if step%4000 == 0 {
				keyRange = []int{30, 2000, 9000}[rng.IntN(3)]
			}
			now += rng.Int64N(20)
			key := fmt.Sprint("k", rng.IntN(keyRange))
			switch op := rng.IntN(100); {
			case op < 30:
				if ks.Peek([]byte(key), math.MinInt64) == nil {
					ks.Add([]byte(key)).SetBytes([]byte(key))
					model[key], during[key] = ref{val: key}, true
				}
			case op < 45:
				e, _ := ks.Upsert([]byte(key), now)
				e.SetBytes([]byte(key))
				if rng.IntN(8) == 0 {
					ks.SetExpire(e, now+rng.Int64N(300))
				} else {
					ks.SetExpire(e, 0)
				}
				model[key], during[key] = ref{val: key, expire: e.expire}, true
			case op < 75:
				ks.Delete([]byte(key), now)
				gone(key)
			case op < 80:
				if e := ks.Find([]byte(key), now); (e != nil) != (model[key] != ref{}) {
					t.Fatalf("Find %q = %v, model %+v", key, e, model[key])
				}
			case op < 82:
				ks.Sweep(now, 1+rng.IntN(16))
			default: // one scan call
				if ks.old != nil {
					midResize++
				}
				cursor = ks.Scan(cursor, func(e *Entry) {
					if !during[e.Key()] {
						t.Fatalf("seed %d: scan returned %q, never present during it", seed, e.Key())
					}
					seen[e.Key()] = true
				})
				if cursor == 0 {
					for k := range whole {
						if !seen[k] {
							t.Fatalf("seed %d step %d: %q present for the whole scan, not returned", seed, step, k)
						}
					}
					scans++
					begin()
				}
			}
			if rng.IntN(3) == 0 {
				epoch++
				ks.Recycle()
			}
			if step%1009 == 0 {
				for k, r := range model { // OnExpire drops expired keys from model lazily
					if !live(r, now) {
						ks.Find([]byte(k), now)
					}
				}
				checkInvariants(t, ks, model)
			}
		}
	}
	if midResize < 3000 || scans < 60 {
		t.Fatalf("%d scan calls with a resize under way, %d scans completed; the test needs more", midResize, scans)
	}
	t.Logf("%d scan calls with a resize under way, %d scans completed", midResize, scans)
}
