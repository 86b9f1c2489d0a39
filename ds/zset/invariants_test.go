package zset

import (
	"encoding/binary"
	"testing"
)

// checkInvariants verifies the large encoding's structure: tree shape, counts, separators and
// leaf links; index entries; arena ownership and accounting.
func checkInvariants(t *testing.T, z *ZSet) {
	t.Helper()
	if z.large() == nil {
		n, lp := 0, lpRecords(z.buf())
		for off := 0; off < len(lp); n++ {
			_, _, off = recordAt(lp, off)
		}
		if n != z.Len() || (z.len > 0 && z.len < countSize) {
			t.Fatalf("packed count %d, records %d", z.Len(), n)
		}
		return
	}
	b := z.large()
	var leaves []*node
	size := checkNode(t, b, b.root, &leaves, true)
	if size != b.n {
		t.Fatalf("tree holds %d, n %d", size, b.n)
	}
	if len(leaves) == 0 || b.head != leaves[0] || b.tail != leaves[len(leaves)-1] {
		t.Fatal("head or tail leaf wrong")
	}
	seen := make([]bool, b.n)
	for i, l := range leaves {
		if (i > 0 && l.prev != leaves[i-1]) || (i == 0 && l.prev != nil) ||
			(i < len(leaves)-1 && l.next != leaves[i+1]) || (i == len(leaves)-1 && l.next != nil) {
			t.Fatalf("leaf %d links wrong", i)
		}
		for _, id := range l.ids {
			if int(id) >= b.n || seen[id] {
				t.Fatalf("id %d out of range or twice", id)
			}
			seen[id] = true
		}
	}
	checkOrder(t, b)
	checkIndex(t, b)
	checkArena(t, b)
}

func checkNode(t *testing.T, b *big, n *node, leaves *[]*node, root bool) int {
	if n.isLeaf() {
		if len(n.ids) == 0 && !root {
			t.Fatal("empty leaf")
		}
		*leaves = append(*leaves, n)
		return len(n.ids)
	}
	if len(n.kids) == 0 || len(n.kids) != len(n.first) || len(n.kids) != len(n.cnt) || len(n.kids) > innerCap {
		t.Fatalf("inner node widths %d %d %d", len(n.kids), len(n.first), len(n.cnt))
	}
	if root && len(n.kids) < 2 {
		t.Fatal("inner root with one child")
	}
	total := 0
	for i, kid := range n.kids {
		s := checkNode(t, b, kid, leaves, false)
		if int(n.cnt[i]) != s {
			t.Fatalf("count %d, subtree %d", n.cnt[i], s)
		}
		if n.first[i] != kid.firstID() {
			t.Fatal("stale separator")
		}
		total += s
	}
	return total
}

func checkOrder(t *testing.T, b *big) {
	prev := -1
	for l := b.head; l != nil; l = l.next {
		if len(l.ids) > leafCap {
			t.Fatal("leaf over capacity")
		}
		for _, id := range l.ids {
			if prev >= 0 {
				p, c := b.item(uint32(prev)), b.item(id)
				if modelOrder(Entry{b.arena.get(p.ref), p.score}, Entry{b.arena.get(c.ref), c.score}) >= 0 {
					t.Fatal("tree out of order")
				}
			}
			prev = int(id)
		}
	}
}

func checkIndex(t *testing.T, b *big) {
	count := 0
	for _, s := range b.slots {
		if s == 0 {
			continue
		}
		count++
		id := slotID(s)
		if int(id) >= b.n || hashOf(b.member(id)) != slotHash(s) {
			t.Fatal("index entry wrong")
		}
	}
	if count != b.n {
		t.Fatalf("index holds %d, n %d", count, b.n)
	}
	for id := range b.n {
		if got, ok := b.find(b.member(uint32(id))); !ok || got != uint32(id) {
			t.Fatalf("find(member of %d) = %d %v", id, got, ok)
		}
	}
	if b.n*4 > len(b.slots)*3 {
		t.Fatal("index over 3/4 full")
	}
}

func checkArena(t *testing.T, b *big) {
	a := &b.arena
	live := make([]int, len(a.chunks))
	for id := range b.n {
		r := b.item(uint32(id)).ref
		if a.chunks[r.chunk()] == nil {
			t.Fatalf("item %d refers to a released chunk", id)
		}
		if owner := binary.LittleEndian.Uint32(a.chunks[r.chunk()][r.off():]); owner != uint32(id) {
			t.Fatalf("record of %d owned by %d", id, owner)
		}
		live[r.chunk()] += recordSize(len(a.get(r)))
	}
	total := 0
	for c := range a.chunks {
		if live[c] != a.live[c] {
			t.Fatalf("chunk %d: live %d, accounted %d", c, live[c], a.live[c])
		}
		total += live[c]
	}
	if total != a.total {
		t.Fatalf("arena total %d, live %d", a.total, total)
	}
}
