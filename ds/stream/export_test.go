package stream

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestExportRebuild rebuilds random streams (entries, deletions, trims, groups with pending
// entries and consumers) from what export.go documents, and checks the copy reads the same.
func TestExportRebuild(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		s := New()
		for i := 0; i < 300; i++ {
			_ = s.Add(ID{uint64(i / 3), uint64(i % 3)}, randFV(r), Limits{MaxBytes: 200, MaxEntries: 5})
			if r.IntN(5) == 0 {
				s.Delete(ID{uint64(r.IntN(i/3 + 1)), uint64(r.IntN(3))})
			}
		}
		s.Trim(Trim{MaxLen: 150})
		for gi := 0; gi < 2; gi++ {
			g := s.CreateGroup(fmt.Appendf(nil, "g%d", gi), ID{}, InvalidEntriesRead)
			cs := []*Consumer{g.CreateConsumer([]byte("a"), 5), g.CreateConsumer([]byte("b"), 7)}
			it := s.Range(ID{}, Max, false)
			for k := 0; k < 40; k++ {
				id, _, ok := it.Next()
				if !ok {
					break
				}
				s.Advance(g, id)
				g.Deliver(id, cs[r.IntN(2)], int64(100+k))
			}
		}
		c := rebuild(t, s)
		if c.Meta() != s.Meta() {
			t.Fatalf("seed %d: meta %+v, want %+v", seed, c.Meta(), s.Meta())
		}
		if !sameEntries(collect(c, ID{}, Max, false), collect(s, ID{}, Max, false)) {
			t.Fatalf("seed %d: entries differ", seed)
		}
		for i, g := range s.Groups() {
			cg := c.Groups()[i]
			if cg.Name != g.Name || cg.LastID != g.LastID || cg.EntriesRead != g.EntriesRead || len(cg.PEL()) != len(g.PEL()) {
				t.Fatalf("seed %d: group %q differs", seed, g.Name)
			}
			for j, n := range g.PEL() {
				m := cg.PEL()[j]
				if m.ID != n.ID || m.DeliveryTime != n.DeliveryTime || m.DeliveryCount != n.DeliveryCount || m.Consumer.Name != n.Consumer.Name {
					t.Fatalf("seed %d: NACK %v differs", seed, n.ID)
				}
			}
			for j, cons := range g.Consumers() {
				if cc := cg.Consumers()[j]; cc.Name != cons.Name || cc.SeenTime != cons.SeenTime || cc.Pending() != cons.Pending() {
					t.Fatalf("seed %d: consumer %q differs", seed, cons.Name)
				}
			}
		}
	}
	// Refusals: out-of-order pending IDs, an ID pending twice, a length that disagrees.
	s := New()
	_ = s.Load(ID{1, 0}, [][]byte{[]byte("f"), []byte("v")}, DefaultLimits)
	if s.SetMeta(Meta{Length: 2, LastID: ID{1, 0}, EntriesAdded: 2}) == nil {
		t.Error("a wrong length was accepted")
	}
	g := s.CreateGroup([]byte("g"), ID{}, 0)
	if g.LoadNACK(ID{2, 0}, 0, 1) != nil || g.LoadNACK(ID{1, 0}, 0, 1) == nil {
		t.Error("out-of-order pending IDs were accepted")
	}
	a, b := g.CreateConsumer([]byte("a"), 0), g.CreateConsumer([]byte("b"), 0)
	if g.CheckLoaded() == nil || g.LoadConsumerNACK(a, ID{2, 0}) != nil || g.LoadConsumerNACK(b, ID{2, 0}) == nil || g.CheckLoaded() != nil {
		t.Error("ownership checks")
	}
}

// rebuild copies s the way export.go documents.
func rebuild(t *testing.T, s *Stream) *Stream {
	t.Helper()
	c := New()
	it := s.Range(ID{}, Max, false)
	for {
		id, fv, ok := it.Next()
		if !ok {
			break
		}
		cp := make([][]byte, len(fv))
		for i := range fv {
			cp[i] = bytes.Clone(fv[i])
		}
		if err := c.Load(id, cp, DefaultLimits); err != nil {
			t.Fatal(err)
		}
	}
	m := s.Meta()
	if err := c.SetMeta(m); err != nil {
		t.Fatal(err)
	}
	for _, g := range s.Groups() {
		ng := c.CreateGroup([]byte(g.Name), g.LastID, g.EntriesRead)
		for _, n := range g.PEL() {
			if err := ng.LoadNACK(n.ID, n.DeliveryTime, n.DeliveryCount); err != nil {
				t.Fatal(err)
			}
		}
		for _, cons := range g.Consumers() {
			nc := ng.CreateConsumer([]byte(cons.Name), cons.SeenTime)
			for _, n := range cons.PEL() {
				if err := ng.LoadConsumerNACK(nc, n.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := ng.CheckLoaded(); err != nil {
			t.Fatal(err)
		}
	}
	return c
}
