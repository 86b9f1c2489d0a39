package keyspace

import (
	"slices"
	"sync"
	"testing"
)

// TestLFUCounter checks the counter against the table in redis.conf's LFU notes (lfu-log-factor
// 10: 100 hits give 10, 1K give 18, 100K give 142; factor 1: 100K give 255), with a margin for
// the coin flips, and its decay of one per lfu-decay-time minutes idle.
func TestLFUCounter(t *testing.T) {
	cases := []struct {
		factor   int64
		hits     int
		lo, high uint8
	}{{10, 100, 8, 13}, {10, 1000, 14, 25}, {10, 100_000, 120, 165}, {1, 100_000, 250, 255}}
	for _, tc := range cases {
		// The counter grows by coin flips, so one run can land outside Redis's figures (7
		// after 100 hits at factor 10, once in 25 runs): the median of 15 runs must be in.
		var got []uint8
		for range 15 {
			ks := New()
			ks.LFU = &LFU{}
			ks.LFU.On.Store(true)
			ks.LFU.LogFactor.Store(tc.factor)
			ks.LFU.DecayTime.Store(1)
			now := int64(1e18)
			e, _ := ks.Upsert([]byte("k"), now)
			for range tc.hits {
				ks.Find([]byte("k"), now)
			}
			f := e.Freq
			got = append(got, f)
			if d := ks.LFU.Decayed(e, now+3*60e9); d != f-3 {
				t.Errorf("3 minutes idle: %d, want %d", d, f-3)
			}
			ks.LFU.DecayTime.Store(0)
			if d := ks.LFU.Decayed(e, now+3*60e9); d != f {
				t.Errorf("decay 0: %d, want %d", d, f)
			}
		}
		slices.Sort(got)
		if m := got[len(got)/2]; m < tc.lo || m > tc.high {
			t.Errorf("factor %d, %d hits: median counter %d (of %v), want %d..%d", tc.factor, tc.hits, m, got, tc.lo, tc.high)
		}
	}
}

// TestLFUSharedReaders: with LFU on, a shared reader changes nothing and hands the access back
// to the token holder (reported expired), whose Find counts it.
func TestLFUSharedReaders(t *testing.T) {
	ks := New()
	ks.LFU = &LFU{}
	ks.LFU.LogFactor.Store(0)
	now := int64(1e18)
	e, _ := ks.Upsert([]byte("k"), now)
	h := Hash([]byte("k"))
	if got, expired := ks.FindShared([]byte("k"), h, now); got != e || expired {
		t.Fatalf("LFU off: FindShared = %p, %v", got, expired)
	}
	ks.LFU.On.Store(true)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if got, expired := ks.FindShared([]byte("k"), h, now); got != nil || !expired {
					t.Errorf("LFU on: FindShared = %p, %v; want a hand-back", got, expired)
					return
				}
			}
		}()
	}
	wg.Wait()
	if e.Freq != LFUInitVal {
		t.Fatalf("shared readers changed the counter: %d", e.Freq)
	}
	for range 200 {
		ks.FindHashed([]byte("k"), h, now)
	}
	// Factor 0: every access adds one, from LFUInitVal.
	if e.Freq != LFUInitVal+200 {
		t.Fatalf("counter %d after 200 accesses at factor 0, want %d", e.Freq, LFUInitVal+200)
	}
}
