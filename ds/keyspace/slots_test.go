package keyspace

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestSlotIndexAgainstMap drives a keyspace with a slot index through random inserts, deletes,
// expiries and clears and compares every slot's keys with a map kept beside it. Few slots and a
// skewed key choice make some slots pass slotMapAt, so both removal paths run.
func TestSlotIndexAgainstMap(t *testing.T) {
	const slots = 8
	slotOf := func(k string) int {
		n, _ := strconv.Atoi(k[1:])
		if n%3 == 0 {
			return 0 // a "hash tag" slot that grows past slotMapAt
		}
		return n % slots
	}
	ks := New()
	ks.Reindex(NewSlotIndex(slots, slotOf))
	ref := map[string]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	now := int64(1000)
	check := func(step int) {
		t.Helper()
		want := make([][]string, slots)
		for k := range ref {
			want[slotOf(k)] = append(want[slotOf(k)], k)
		}
		for s := range slots {
			var got []string
			n := ks.Slots.Keys(s, -1, func(e *Entry) { got = append(got, e.Key()) })
			slices.Sort(got)
			slices.Sort(want[s])
			if n != len(got) || ks.Slots.Count(s) != len(want[s]) || !slices.Equal(got, want[s]) {
				t.Fatalf("step %d slot %d: index has %d %v, want %v", step, s, ks.Slots.Count(s), got, want[s])
			}
			if len(want[s]) > 2 {
				if m := ks.Slots.Keys(s, 2, func(*Entry) {}); m != 2 {
					t.Fatalf("step %d slot %d: Keys with max 2 called fn %d times", step, s, m)
				}
			}
		}
	}
	for step := range 20000 {
		k := "k" + strconv.Itoa(r.IntN(400))
		switch op := r.IntN(100); {
		case op < 55:
			if _, created := ks.Upsert([]byte(k), now); created {
				ref[k] = true
			}
		case op < 85:
			if ks.Delete([]byte(k), now) || ref[k] {
				delete(ref, k)
			}
		case op < 95:
			if e := ks.Peek([]byte(k), now); e != nil {
				ks.SetExpire(e, now+1) // reclaimed at the next step's lookup of it, or by Sweep
			}
		case op < 99:
			now += 2
			ks.Sweep(now, 1000)
			for k := range ref {
				if ks.Peek([]byte(k), now) == nil {
					if e, _ := ks.find([]byte(k), Hash([]byte(k))); e == nil {
						delete(ref, k)
					}
				}
			}
		default:
			if r.IntN(20) == 0 {
				ks.Clear()
				clear(ref)
			}
		}
		// An expired entry is held (and indexed) until reclaimed: the reference follows the table.
		for k := range ref {
			if e, _ := ks.find([]byte(k), Hash([]byte(k))); e == nil {
				delete(ref, k)
			}
		}
		if step%500 == 0 || step < 200 {
			check(step)
		}
	}
	check(-1)
	// Reindex of a filled keyspace gives the same index.
	x := NewSlotIndex(slots, slotOf)
	ks.Reindex(x)
	check(-2)
}
