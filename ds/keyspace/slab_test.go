package keyspace

import (
	"fmt"
	"testing"
)

// TestEntryReuse: removed entries come back only after the epoch moves, with nothing of their
// old key or value; a keyspace without an epoch never reuses.
func TestEntryReuse(t *testing.T) {
	var epoch uint64
	ks := New()
	ks.SetEpoch(&epoch)
	keep := ks.Add([]byte("keep")) // the keyspace never empties, so its slabs stay
	keep.SetBytes([]byte("v"))
	gone := map[*Entry]string{}
	for i := range 10 {
		e := ks.Add(fmt.Appendf(nil, "a-rather-long-key-%d", i))
		e.SetBytes(fmt.Appendf(nil, "value-%d", i))
		ks.Remove(e)
		gone[e] = e.Key()
	}
	for i := range 100 { // same epoch: none of the removed entries may be handed out
		if e := ks.Add(fmt.Appendf(nil, "b%d", i)); gone[e] != "" {
			t.Fatalf("entry of %q reused in the epoch it was removed", gone[e])
		}
	}
	for e, k := range gone {
		if e.Key() != k || string(e.Bytes()) != "value-"+k[len("a-rather-long-key-"):] {
			t.Fatalf("removed entry changed before the epoch moved: %q %q", e.Key(), e.Bytes())
		}
	}
	epoch++
	ks.Recycle()
	for e := range gone {
		if e.HasValue() || e.long != nil {
			t.Fatalf("recycled entry still holds its value or key")
		}
	}
	reused := 0
	for i := range 10 {
		e := ks.Add(fmt.Appendf(nil, "c%d", i))
		if _, ok := gone[e]; ok {
			reused++
		}
		if e.Key() != fmt.Sprintf("c%d", i) || e.HasValue() || e.Freq != LFUInitVal || e.expire != 0 {
			t.Fatalf("reused entry not fresh: key %q value %v freq %d expire %d", e.Key(), e.HasValue(), e.Freq, e.expire)
		}
	}
	if reused != 10 {
		t.Fatalf("%d of 10 removed entries reused after the epoch moved", reused)
	}

	plain := New() // no epoch
	e := plain.Add([]byte("x"))
	plain.Remove(e)
	if plain.Add([]byte("y")) == e {
		t.Fatal("keyspace without an epoch reused an entry")
	}
}

// TestEntryReuseEmptyDrops: once a keyspace empties, recycling lets its slabs go instead of
// keeping them on the free list.
func TestEntryReuseEmptyDrops(t *testing.T) {
	var epoch uint64
	ks := New()
	ks.SetEpoch(&epoch)
	for i := range 300 {
		ks.Add(fmt.Appendf(nil, "k%d", i))
	}
	for i := range 300 {
		ks.Delete(fmt.Appendf(nil, "k%d", i), 0)
	}
	epoch++
	ks.Recycle()
	if ks.free != nil || ks.slab != nil || ks.limbo != nil {
		t.Fatal("an empty keyspace kept its entries after recycling")
	}
	if e := ks.Add([]byte("new")); e.Key() != "new" || ks.slabN != slabMin {
		t.Fatalf("first entry after emptying: key %q, slab of %d", e.Key(), ks.slabN)
	}
}

// TestSlabSizes: slabs grow from slabMin to slabMax entries, then stay there.
func TestSlabSizes(t *testing.T) {
	ks := New()
	var sizes []int
	for i := range 1000 {
		before := ks.slabN
		ks.Add(fmt.Appendf(nil, "k%d", i))
		if ks.slabN != before || i == 0 {
			sizes = append(sizes, ks.slabN)
		}
	}
	want := []int{4, 8, 16, 32, 64}
	if fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Fatalf("slab sizes %v, want %v", sizes, want)
	}
}
