package cluster

import (
	"testing"
)

// newSimLayout is a converged simulation of three masters (nodes 0-2) and replicas given as
// replica -> master, with replica migration on at barrier, every view agreeing on every
// replica's master and the cluster ok everywhere.
func newSimLayout(t *testing.T, replicas map[int]int, allow bool, barrier int64) *sim {
	t.Helper()
	s := newSim(t, 3+len(replicas))
	for _, n := range s.nodes {
		n.st.Cfg.AllowReplicaMigration, n.st.Cfg.MigrationBarrier = allow, barrier
	}
	s.split(3)
	s.meetAll()
	s.runUntil(30000, "convergence", func() bool { return s.converged() })
	for r, m := range replicas {
		s.replicate(r, m)
	}
	s.runUntil(30000, "replicas known and ok", func() bool {
		for _, n := range s.nodes {
			for r, m := range replicas {
				if !s.follows(n, r, m) {
					return false
				}
			}
		}
		return s.allOK()
	})
	return s
}

// follows reports whether n's view has node r as a replica of node m.
func (s *sim) follows(n *simNode, r, m int) bool {
	k := n.st.Nodes[s.nodes[r].st.Myself.Name]
	return k != nil && k.Master != nil && k.Master.Name == s.nodes[m].st.Myself.Name
}

// followsEverywhere reports whether every live node has node r as a replica of node m.
func (s *sim) followsEverywhere(r, m int) bool {
	for _, n := range s.nodes {
		if !n.down && !s.follows(n, r, m) {
			return false
		}
	}
	return true
}

func (s *sim) migrations() (sum uint64) {
	for _, n := range s.nodes {
		sum += n.st.Migrations
	}
	return sum
}

// smaller returns whichever of nodes a and b has the smaller name.
func (s *sim) smaller(a, b int) (lo, hi int) {
	if s.nodes[b].st.Myself.Name < s.nodes[a].st.Myself.Name {
		return b, a
	}
	return a, b
}

// TestSimReplicaMigration: master 0 has replicas 3 and 4, masters 1 and 2 one each (5, 6). When
// replica 5 dies, master 1 is orphaned: the replica of master 0 with the smaller name, and only
// it, becomes master 1's replica in every view, no sooner than ReplicaMigrationDelay after the
// orphan is seen (FAIL of 5), and asks its server to replicate (Demoted); nothing moves after.
func TestSimReplicaMigration(t *testing.T) {
	s := newSimLayout(t, map[int]int{3: 0, 4: 0, 5: 1, 6: 2}, true, 1)
	mover, stayer := s.smaller(3, 4)
	dead := s.nodes[5].st.Myself.Name
	s.kill(5)
	s.runUntil(4*simTimeout, "replica 5 FAIL on the movers", func() bool {
		return s.nodes[3].st.Nodes[dead].Failed() || s.nodes[4].st.Nodes[dead].Failed()
	})
	took := s.runUntil(30000, "migration to master 1", func() bool { return s.followsEverywhere(mover, 1) })
	t.Logf("node %d migrated to the orphaned master %d ms (simulated) after its replica's FAIL", mover, took)
	if took < ReplicaMigrationDelay {
		t.Fatalf("migrated %d ms after the FAIL, before the %d ms delay", took, ReplicaMigrationDelay)
	}
	if !s.nodes[mover].st.Demoted {
		t.Fatalf("the migrated replica is not flagged Demoted (its server would not replicate)")
	}
	for range 10000 / TickEvery {
		s.step()
	}
	if !s.followsEverywhere(mover, 1) || !s.followsEverywhere(stayer, 0) || s.migrations() != 1 {
		t.Fatalf("after 10 s more: %d migrations (want 1), node %d on master 1 %v, node %d on master 0 %v\n%s",
			s.migrations(), mover, s.followsEverywhere(mover, 1), stayer, s.followsEverywhere(stayer, 0), s.dump())
	}
}

// TestSimReplicaMigrationAfterFailover: master 1 dies; its replica 5 wins the election and, as a
// master that took over from one with replicas, is orphaned: a replica of master 0 migrates to it.
// The old master, back, follows 5 too.
func TestSimReplicaMigrationAfterFailover(t *testing.T) {
	s := newSimLayout(t, map[int]int{3: 0, 4: 0, 5: 1, 6: 2}, true, 1)
	mover, _ := s.smaller(3, 4)
	s.kill(1)
	s.runUntil(30000, "failover to 5", func() bool {
		for _, n := range s.nodes {
			if o := n.st.Owner[Slots/3]; !n.down && (o == nil || o.Name != s.nodes[5].st.Myself.Name) {
				return false
			}
		}
		return s.allOK()
	})
	took := s.runUntil(30000, "migration to the new master", func() bool { return s.followsEverywhere(mover, 5) })
	t.Logf("node %d migrated to the promoted master %d ms (simulated) after the failover", mover, took)
	s.nodes[1].down = false
	s.runUntil(30000, "old master rejoins as 5's replica", func() bool { return s.followsEverywhere(1, 5) && s.allOK() })
	if got := s.migrations(); got != 1 {
		t.Fatalf("%d migrations, want 1\n%s", got, s.dump())
	}
}

// TestSimNoReplicaMigration: no replica moves when cluster-allow-replica-migration is no, when
// the barrier is 2 (master 0 would keep only one), or when the master without working replicas
// never had one (masters 1 and 2 got their slots before any master had replicas).
func TestSimNoReplicaMigration(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas map[int]int
		allow    bool
		barrier  int64
		kill     int
	}{
		{"AllowNo", map[int]int{3: 0, 4: 0, 5: 1, 6: 2}, false, 1, 5},
		{"Barrier2", map[int]int{3: 0, 4: 0, 5: 1, 6: 2}, true, 2, 5},
		{"NeverHadReplicas", map[int]int{3: 0, 4: 0}, true, 1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSimLayout(t, tc.replicas, tc.allow, tc.barrier)
			if tc.kill >= 0 {
				s.kill(tc.kill)
			}
			for range 20000 / TickEvery {
				s.step()
			}
			if got := s.migrations(); got != 0 {
				t.Fatalf("%d migrations, want none\n%s", got, s.dump())
			}
			for r, m := range tc.replicas {
				if r != tc.kill && !s.followsEverywhere(r, m) {
					t.Fatalf("node %d left master %d\n%s", r, m, s.dump())
				}
			}
		})
	}
}
