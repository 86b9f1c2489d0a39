package zset

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// TestBigChurn grows a large set, deletes most of it at random and grows it again, checking
// the structure, the contents and that the arena's chunks stay within about twice the live
// member bytes (evacuation works).
func TestBigChurn(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	lim := Limits{128, 64}
	z, m := New(), model{}
	add := func(n int) {
		for range n {
			mem := fmt.Sprintf("%d:%s", rng.Intn(1<<30), bytes.Repeat([]byte{'v'}, rng.Intn(200)))
			s := float64(rng.Intn(1000))
			z.Add([]byte(mem), s, 0, lim)
			m.add(mem, s, 0)
		}
	}
	add(60000)
	checkAgainst(t, z, m)
	for mem := range m {
		if rng.Intn(10) < 8 {
			delete(m, mem)
			if !z.Remove([]byte(mem)) {
				t.Fatalf("Remove(%q) found nothing", mem)
			}
		}
	}
	checkAgainst(t, z, m)
	checkArenaBound(t, z.large())
	add(20000)
	checkAgainst(t, z, m)
	checkArenaBound(t, z.large())
	// Pop everything from both ends, the way ZPOPMIN/ZPOPMAX do.
	for z.Len() > 0 {
		if rng.Intn(2) == 0 {
			z.RemoveRange(0, min(z.Len()-1, rng.Intn(50)))
		} else {
			z.RemoveRange(max(z.Len()-1-rng.Intn(50), 0), z.Len()-1)
		}
	}
	checkInvariants(t, z)
	if z.large().arena.total != 0 || len(z.large().slots) != minSlots {
		t.Fatalf("empty set keeps %d arena bytes, %d slots", z.large().arena.total, len(z.large().slots))
	}
}

func checkArenaBound(t *testing.T, b *big) {
	t.Helper()
	held := 0
	for _, c := range b.arena.chunks {
		held += cap(c)
	}
	if held > 2*b.arena.total+4*maxChunk {
		t.Fatalf("arena holds %d bytes for %d live", held, b.arena.total)
	}
}

// TestSequentialFill: sets built in order keep their leaves nearly full.
func TestSequentialFill(t *testing.T) {
	for _, rev := range []bool{false, true} {
		z := New()
		const n = 100000
		for i := range n {
			s := float64(i)
			if rev {
				s = -s
			}
			z.Add([]byte(fmt.Sprint(i)), s, 0, Limits{0, 0})
		}
		checkInvariants(t, z)
		leaves := 0
		for l := z.large().head; l != nil; l = l.next {
			leaves++
		}
		if fill := float64(n) / float64(leaves*leafCap); fill < 0.95 {
			t.Errorf("rev %v: leaves %.0f%% full", rev, fill*100)
		}
	}
}

// A small large set (long members) holds about what its members need: one chunk per member, two
// index slots and a one-item slab for one member, and keeps to that under churn.
func TestSmallBigSizes(t *testing.T) {
	lim := Limits{128, 64}
	mem := func(i int) []byte { return fmt.Appendf(bytes.Repeat([]byte{'m'}, 256), "%d", i) }
	z := New()
	z.Add(mem(0), 1, 0, lim)
	b := z.large()
	if held := cap(b.arena.chunks[0]); len(b.arena.chunks) != 1 || held > 288 || len(b.slots) != 2 || cap(b.items[0]) > 2 {
		t.Fatalf("one member: %d chunks (%d bytes), %d slots, %d items", len(b.arena.chunks), held, len(b.slots), cap(b.items[0]))
	}
	for i := 1; i < 5; i++ {
		z.Add(mem(i), float64(i), 0, lim)
	}
	rng := rand.New(rand.NewSource(3))
	for i := 5; i < 20000; i++ {
		if !z.Remove(mem(i - 5 + rng.Intn(5))) {
			z.Remove(mem(i - 5))
		}
		for z.Len() < 5 {
			z.Add(mem(i), float64(rng.Intn(100)), 0, lim)
			i++
		}
		held := 0
		for _, c := range b.arena.chunks {
			held += cap(c)
		}
		if held > 2*b.arena.total+2*minChunk {
			t.Fatalf("step %d: arena holds %d bytes for %d live", i, held, b.arena.total)
		}
	}
	checkInvariants(t, z)
}
