package cluster

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/hotkv/hotkv/src/cluster/wire"
)

// checkInvariants: every slot's owner has the slot in its bitmap, no other node does, NumSlots
// counts the bitmap, every owner is a known master, and replica links are symmetric.
func checkInvariants(t *testing.T, s *State) {
	t.Helper()
	for slot := range Slots {
		o := s.Owner[slot]
		for _, n := range s.Nodes {
			if n.HasSlot(slot) != (n == o) {
				t.Fatalf("slot %d: owner %v, but node %s has the bit %v", slot, o != nil, n.Name, n.HasSlot(slot))
			}
		}
		if o != nil && s.Nodes[o.Name] != o {
			t.Fatalf("slot %d owned by an unknown node", slot)
		}
	}
	for _, n := range s.Nodes {
		c := 0
		for _, b := range n.Slots {
			c += bits.OnesCount8(b)
		}
		if c != n.NumSlots {
			t.Fatalf("node %s: NumSlots %d, bitmap %d", n.Name, n.NumSlots, c)
		}
		if n.Master != nil {
			found := false
			for _, r := range n.Master.Replicas {
				found = found || r == n
			}
			if !found {
				t.Fatalf("node %s not among its master's replicas", n.Name)
			}
		}
	}
}

// FuzzReceive feeds any packet that decodes to a State that knows three nodes (as sender, name of
// a gossip entry, FAIL or UPDATE subject, or slaveof, the fuzzer may pick any of them, myself
// included) and then ticks it: nothing panics and the slot invariants hold.
// go test ./src/cluster -run '^$' -fuzz FuzzReceive -fuzztime 1m
func FuzzReceive(f *testing.F) {
	names := []string{"a000000000000000000000000000000000000000", "b000000000000000000000000000000000000000",
		"c000000000000000000000000000000000000000"}
	build := func() (*State, *Local) {
		s := New(names[0], Config{NodeTimeout: 3000, RequireFullCoverage: true})
		s.Myself.IP, s.Myself.Port, s.Myself.CPort = "127.0.0.1", 7000, 17000
		s.AddSlots([]int{0, 1, 2}, 1000)
		for i, n := range names[1:] {
			k := &Node{Name: n, Flags: wire.NodeMaster, IP: "127.0.0.1", Port: 7001 + i, CPort: 17001 + i, Linked: true}
			s.Nodes[n] = k
			s.assign(10+i, k)
		}
		return s, &Local{Port: 7000, CPort: 17000}
	}
	seed := func(m *wire.Msg) { f.Add(wire.Encode(nil, m)) }
	for t := wire.Ping; t < wire.TypeCount; t++ {
		m := &wire.Msg{Header: wire.Header{Type: t, CurrentEpoch: 5, ConfigEpoch: 3}}
		copy(m.Sender[:], names[1])
		wire.SetSlot(&m.MySlots, 0, true)
		if wire.IsGossipType(t) {
			g := wire.Gossip{Flags: wire.NodePFail}
			copy(g.Name[:], names[2])
			m.Gossip = []wire.Gossip{g}
		}
		copy(m.FailName[:], names[0])
		copy(m.UpdateName[:], names[0])
		m.UpdateEpoch = 9
		seed(m)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m wire.Msg
		if wire.Decode(b, &m) != nil {
			return
		}
		s, l := build()
		r := rand.New(rand.NewPCG(1, 2))
		var link *Node
		if len(b) > 0 && b[len(b)-1]&1 == 1 {
			link = s.Nodes[names[1]]
		}
		s.Receive(link, "127.0.0.1", &m, l, 2000, r)
		for i := range 30 {
			s.Tick(l, 2000+int64(i)*TickEvery, r)
		}
		checkInvariants(t, s)
	})
}
