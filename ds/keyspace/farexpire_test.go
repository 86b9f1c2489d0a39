package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestExpireMsRange(t *testing.T) {
	ks := New()
	e := ks.Add([]byte("k"))
	f := func(ms, wantAt int64, far int) {
		t.Helper()
		ks.SetExpireMs(e, ms)
		if got := ks.ExpireMs(e); got != ms || e.ExpireAt() != wantAt || len(ks.far) != far {
			t.Fatalf("SetExpireMs(%d): ExpireMs %d, ExpireAt %d, far %d", ms, got, e.ExpireAt(), len(ks.far))
		}
	}
	f(1, 1e6, 0)
	f(MaxNearMs, MaxNearMs*1e6, 0)
	f(MaxNearMs+1, math.MaxInt64, 1)
	f(math.MaxInt64, math.MaxInt64, 1)
	f(MaxNearMs, MaxNearMs*1e6, 0) // back to near: the far record goes
	f(math.MaxInt64-1, math.MaxInt64, 1)
	f(0, 0, 0)
	if ks.far != nil || ks.Volatile() != 0 {
		t.Fatalf("after persist: far %v, volatile %d", ks.far, ks.Volatile())
	}
	// The latest nanosecond time is near and reads as its millisecond.
	ks.SetExpire(e, math.MaxInt64)
	if ks.ExpireMs(e) != MaxNearMs || ks.far != nil {
		t.Fatalf("ns MaxInt64 reads %d ms, far %v", ks.ExpireMs(e), ks.far)
	}
	// A nanosecond time rounds down to its millisecond.
	ks.SetExpire(e, 1_234_999_999)
	if ks.ExpireMs(e) != 1234 {
		t.Fatalf("ExpireMs of 1234.999999 ms = %d", ks.ExpireMs(e))
	}
}

func TestCopyExpire(t *testing.T) {
	a, b := New(), New()
	src := a.Add([]byte("s"))
	for _, tc := range []struct {
		set  func()
		ms   int64
		at   int64
		farB int
	}{
		{func() { a.SetExpireMs(src, math.MaxInt64) }, math.MaxInt64, math.MaxInt64, 1},
		{func() { a.SetExpire(src, 1_500_000_123) }, 1500, 1_500_000_123, 0},
		{func() { a.SetExpire(src, math.MaxInt64) }, MaxNearMs, math.MaxInt64, 0},
		{func() { a.SetExpire(src, 0) }, 0, 0, 0},
	} {
		tc.set()
		for _, to := range []*Keyspace{a, b} {
			d, _ := to.Upsert([]byte("d"), 0)
			to.SetExpireMs(d, MaxNearMs+5) // a far record CopyExpire must replace
			to.CopyExpire(d, a, src)
			if to.ExpireMs(d) != tc.ms || d.ExpireAt() != tc.at {
				t.Fatalf("copied expiry %d ms / %d ns, want %d / %d", to.ExpireMs(d), d.ExpireAt(), tc.ms, tc.at)
			}
			to.Remove(d)
		}
	}
	// A move: copy, then remove the source; nothing stays behind in either map.
	a.SetExpireMs(src, MaxNearMs+7)
	d := b.Add([]byte("s"))
	d.TakeValue(src)
	b.CopyExpire(d, a, src)
	a.Remove(src)
	if a.far != nil || len(b.far) != 1 || b.ExpireMs(d) != MaxNearMs+7 {
		t.Fatalf("after move: source far %v, destination far %v", a.far, b.far)
	}
	b.Clear()
	if b.far != nil {
		t.Fatal("Clear kept far records")
	}
}

// expiry is the model of one key's expiry: ns, or the exact ms when far.
type expiry struct{ ns, farMs int64 }

func (x expiry) ms() int64 {
	if x.farMs != 0 {
		return x.farMs
	}
	return x.ns / nsPerMs
}

func (x expiry) at() int64 {
	if x.farMs != 0 {
		return farExpire
	}
	return x.ns
}

// checkFar compares every entry's expiry with the model and the far map with the far keys.
func checkFar(t *testing.T, ks *Keyspace, model map[string]expiry) {
	t.Helper()
	far := 0
	for k, x := range model {
		e := ks.Peek([]byte(k), math.MinInt64)
		if e == nil || e.ExpireAt() != x.at() || ks.ExpireMs(e) != x.ms() {
			t.Fatalf("%q: entry %v, model %+v", k, e, x)
		}
		if x.farMs != 0 {
			far++
		}
	}
	if len(ks.far) != far || (far == 0 && ks.far != nil) || ks.Len() != len(model) {
		t.Fatalf("far map has %d records (nil %v), model %d far of %d keys, table %d", len(ks.far),
			ks.far == nil, far, len(model), ks.Len())
	}
	for e := range ks.far {
		if got := ks.Peek([]byte(e.Key()), math.MinInt64); got != e || e.expire != farExpire {
			t.Fatalf("far record for %q is stale", e.Key())
		}
	}
}

// TestFarAgainstMap runs random expiry operations on two keyspaces (so expiry also moves
// between them) and checks the far map against a model after every step: it holds exactly
// the far keys, whatever removed or changed them, and is nil once there are none.
func TestFarAgainstMap(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runFarAgainstMap(t, seed) })
	}
}

func runFarAgainstMap(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	kss := [2]*Keyspace{New(), New()}
	models := [2]map[string]expiry{{}, {}}
	now := int64(1e15)
	for i := range kss {
		model := models[i]
		kss[i].OnExpire = func(k string) {
			if x := model[k]; x.farMs != 0 || x.ns == 0 || x.ns > now {
				t.Fatalf("%q expired at %d with expiry %+v", k, now, x)
			}
			delete(model, k)
		}
	}
	for step := range 20000 {
		i := rng.IntN(2)
		ks, model := kss[i], models[i]
		key := fmt.Sprint("k", rng.IntN(200))
		now += rng.Int64N(1000)
		farOp(rng, ks, model, kss[1-i], models[1-i], key, now)
		if step%50 == 0 {
			checkFar(t, kss[0], models[0])
			checkFar(t, kss[1], models[1])
		}
	}
	// Remove every key by each of the ways a far record can end: the map must end up nil.
	for i, ks := range kss {
		for k := range models[i] {
			e := ks.Find([]byte(k), now)
			if e == nil {
				continue // its time had passed: Find reclaimed it, one of the ways too
			}
			switch rng.IntN(4) {
			case 0:
				ks.Delete([]byte(k), now)
			case 1:
				ks.Remove(e)
			case 2:
				ks.SetExpire(e, 0)
			case 3:
				ks.SetExpireMs(e, 0)
			}
		}
		if ks.far != nil {
			t.Fatalf("keyspace %d: %d far records left", i, len(ks.far))
		}
	}
}

// farOp applies one random operation to key in ks, or moves it to other.
func farOp(rng *rand.Rand, ks *Keyspace, model map[string]expiry, other *Keyspace,
	otherModel map[string]expiry, key string, now int64) {
	k := []byte(key)
	switch op := rng.IntN(100); {
	case op < 15: // create or touch
		if _, created := ks.Upsert(k, now); created {
			model[key] = expiry{}
		}
	case op < 35: // a far expiry
		if e := ks.Find(k, now); e != nil {
			ms := MaxNearMs + 1 + rng.Int64N(math.MaxInt64-MaxNearMs)
			ks.SetExpireMs(e, ms)
			model[key] = expiry{ns: farExpire, farMs: ms}
		}
	case op < 50: // a near expiry, some soon enough to pass during the run
		if e := ks.Find(k, now); e != nil {
			ms := now/nsPerMs + rng.Int64N(10)
			ks.SetExpireMs(e, ms)
			model[key] = expiry{ns: ms * nsPerMs}
		}
	case op < 55: // a nanosecond expiry, sometimes the latest one
		if e := ks.Find(k, now); e != nil {
			ns := []int64{math.MaxInt64, now + rng.Int64N(1e7), 0}[rng.IntN(3)]
			ks.SetExpire(e, ns)
			model[key] = expiry{ns: ns}
		}
	case op < 65:
		ks.Delete(k, now)
		delete(model, key)
	case op < 75: // move to the other keyspace, replacing what is there
		if e := ks.Find(k, now); e != nil {
			if old := other.Find(k, now); old != nil {
				other.Remove(old)
			}
			d := other.Add(k)
			d.TakeValue(e)
			other.CopyExpire(d, ks, e)
			ks.Remove(e)
			otherModel[key] = model[key]
			delete(model, key)
		}
	case op < 85: // lazy expiry of near keys as time passes
		ks.Find(k, now)
	case op < 95:
		ks.ExpireCycle(now, 1+rng.IntN(64))
	case op < 99:
		ks.Random(now, rng.Uint64)
	default:
		ks.Clear()
		clear(model)
	}
}
