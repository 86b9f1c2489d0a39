package keyspace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
)

// usedModel is the reference: the bytes each live or expired key should count, computed from
// its key and value alone.
func modelFootprint(key string, val int, coll int64) int64 {
	n := EntrySize + int64(val) + coll
	if len(key) > inlineKey {
		n += int64(len(key))
	}
	return n
}

// TestUsedAgainstModel runs random inserts, string rewrites, collection re-estimates, deletes,
// expiries, sweeps and clears, accounting string and collection changes as the command layer
// does (Account of the difference), and checks after every step that Used and the shared sink
// equal the sum of a model map's footprints.
func TestUsedAgainstModel(t *testing.T) {
	type obj struct{ n int }
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			var epoch uint64
			var sink atomic.Int64
			ks := New()
			ks.SetEpoch(&epoch)
			ks.SetUsedSink(&sink)
			model := map[string]int64{}
			ks.OnExpire = func(k string) { delete(model, k) }
			now := int64(1e18)
			key := func() string {
				k := fmt.Sprint("k", r.IntN(300))
				if r.IntN(4) == 0 {
					k += strings.Repeat("x", 20) // a long key
				}
				return k
			}
			for step := range 20000 {
				epoch++
				k := key()
				switch op := r.IntN(10); {
				case op < 4: // a string write
					e, _ := ks.Upsert([]byte(k), now)
					old := e.Accounted()
					e.Kind = KindString
					b := make([]byte, r.IntN(100), 100+r.IntN(50))
					e.SetBytes(b)
					ks.Account(e.Accounted() - old)
					model[k] = modelFootprint(k, cap(b), 0)
				case op < 6: // a collection, re-estimated
					e, _ := ks.Upsert([]byte(k), now)
					old := e.Accounted()
					if e.Kind != KindSet {
						SetObj(e, KindSet, &obj{})
					}
					est := int64(r.IntN(1 << 20))
					if r.IntN(50) == 0 {
						est = 5 << 32 // beyond 32 bits
					}
					e.SetAccounted(est)
					ks.Account(est - old)
					model[k] = modelFootprint(k, 0, est)
				case op < 8:
					if ks.Delete([]byte(k), now) {
						delete(model, k)
					}
				case op < 9:
					if e := ks.Peek([]byte(k), now); e != nil {
						ks.SetExpire(e, now+int64(r.IntN(3)))
					}
				default:
					now++
					ks.Sweep(now, 50)
				}
				if step%5000 == 4999 {
					ks.Clear()
					clear(model)
				}
				var want int64
				for _, v := range model {
					want += v
				}
				// Expired keys not yet reclaimed still count, as in the model (OnExpire
				// drops them only when reclaimed).
				if ks.Used() != want || sink.Load() != want {
					t.Fatalf("step %d: Used %d, sink %d, model %d", step, ks.Used(), sink.Load(), want)
				}
			}
			before := ks.Used()
			if d := ks.Recount(nil); d != 0 || ks.Used() != before {
				t.Fatalf("Recount changed an exact count by %d", d)
			}
		})
	}
}
