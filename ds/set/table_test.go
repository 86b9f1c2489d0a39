package set

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// checkTable verifies the table's invariants: the count, every slot's distance and tag, the
// arena's live-byte accounting, and that every live arena entry has exactly one slot.
func checkTable(t *testing.T, tb *table) {
	t.Helper()
	n := 0
	mask := tb.mask()
	refs := map[uint64]bool{}
	for pos, s := range tb.slots {
		if s == 0 {
			continue
		}
		n++
		m := tb.member(s)
		h := hashOf(m)
		if home := (uint64(pos) - slotDist(s)) & mask; home != h&mask || !tagMatches(s, h) {
			t.Fatalf("slot %d (%q): home %d, want %d", pos, m, home, h&mask)
		}
		refs[slotRef(s)] = true
	}
	if n != tb.n {
		t.Fatalf("%d occupied slots, n = %d", n, tb.n)
	}
	live := 0
	for c := uint32(1); int(c) < len(tb.mem.chunks); c++ {
		bytesLive := 0
		tb.mem.eachIn(c, func(ref uint64, m []byte) {
			if !refs[ref] {
				t.Fatalf("live arena entry %q has no slot", m)
			}
			live++
			bytesLive += entrySize(len(m))
		})
		if uint32(bytesLive) != tb.mem.live[c] {
			t.Fatalf("chunk %d: %d live bytes, accounted %d", c, bytesLive, tb.mem.live[c])
		}
	}
	if live != n {
		t.Fatalf("%d live arena entries, %d members", live, n)
	}
}

// TestTableModel adds and removes many members of mixed sizes, so that the table grows,
// shrinks, compacts chunks and gives large members their own chunks, against a map.
func TestTableModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tb table
	model := map[string]bool{}
	gen := func() string {
		if r.IntN(200) == 0 {
			return fmt.Sprintf("%d%s", r.IntN(50), bytes.Repeat([]byte{'B'}, ownChunk+r.IntN(100)))
		}
		return fmt.Sprintf("member:%d:%s", r.IntN(20000), bytes.Repeat([]byte{'p'}, r.IntN(40)%7))
	}
	for round := range 6 {
		grow := round%2 == 0
		for range 30000 {
			m := gen()
			if grow == (r.IntN(4) != 0) {
				if tb.add([]byte(m)) == model[m] {
					t.Fatalf("add(%q) disagrees with the model", m)
				}
				model[m] = true
			} else {
				if tb.remove([]byte(m)) != model[m] {
					t.Fatalf("remove(%q) disagrees with the model", m)
				}
				delete(model, m)
			}
		}
		checkTable(t, &tb)
		for m := range model {
			if !tb.has([]byte(m)) {
				t.Fatalf("round %d: %q missing", round, m)
			}
		}
	}
	for m := range model {
		tb.remove([]byte(m))
	}
	checkTable(t, &tb)
	if len(tb.slots) != minSlots || tb.mem.bytes() > 2*chunkMax { // the tail and one spare chunk
		t.Fatalf("emptied table keeps %d slots and %d arena bytes", len(tb.slots), tb.mem.bytes())
	}
}

// Deleting most members compacts the arena, so memory follows the live data.
func TestTableCompaction(t *testing.T) {
	var tb table
	const n = 100000
	for i := range n {
		tb.add(fmt.Appendf(nil, "key-%012d", i))
	}
	full := tb.mem.bytes()
	for i := range n {
		if i%10 != 0 {
			tb.remove(fmt.Appendf(nil, "key-%012d", i))
		}
	}
	checkTable(t, &tb)
	if got := tb.mem.bytes(); got > full/4 {
		t.Fatalf("arena keeps %d of %d bytes after removing 90%% of the members", got, full)
	}
	for i := 0; i < n; i += 10 {
		if !tb.has(fmt.Appendf(nil, "key-%012d", i)) {
			t.Fatalf("member %d lost by compaction", i)
		}
	}
}
