package cluster

import "github.com/hotkv/hotkv/src/cluster/wire"

// Replica migration, as Redis 7.0's clusterCron (orphaned masters) and clusterHandleSlaveMigration:
//  1. A master is orphaned when it is not FAIL, serves slots, has no replica that is not FAIL, and
//     is a migration target (Node.migrateTo): it has or had replicas, took over from a master that
//     had some, or got its first slot while some master had replicas. A master never given
//     replicas is not orphaned: it was meant to run without.
//  2. Only a replica looks, on each Tick, and only with cluster-allow-replica-migration yes, when
//     some master is orphaned, the most non-FAIL replicas a master has (max) is at least 2, and its
//     own master has max. Nodes in handshake, without address, and FAIL masters are not counted.
//  3. It then stops unless cluster_state is ok and its master has more than
//     cluster-migration-barrier replicas neither FAIL nor PFAIL. The candidate is the replica with
//     the smallest name among myself and every replica (FAIL or not) of each master with exactly max
//     non-FAIL replicas; the target is the orphaned master with slots of smallest name (Redis takes
//     the first in its node table's order). Each master's orphaned time starts at the first check
//     that finds it orphaned and is cleared by a check that does not.
//  4. The candidate migrates once the target has been orphaned for more than
//     ReplicaMigrationDelay: myself becomes the target's replica (Demoted set, so the caller
//     replicates from it), as CLUSTER REPLICATE does. The delay lets the replicas of a master that
//     just failed over announce their new master first.

// ReplicaMigrationDelay is CLUSTER_SLAVE_MIGRATION_DELAY (ms).
const ReplicaMigrationDelay = 5000

// okReplicas counts n's replicas not flagged FAIL (clusterCountNonFailingSlaves).
func okReplicas(n *Node) int {
	ok := 0
	for _, r := range n.Replicas {
		if !r.Failed() {
			ok++
		}
	}
	return ok
}

// replicaMigration is Tick's part for a replica (rules 2-4).
func (s *State) replicaMigration(now int64) {
	me := s.Myself
	if me.Master == nil || !s.Cfg.AllowReplicaMigration {
		return
	}
	orphaned, maxOK, mine := 0, 0, 0
	for _, n := range s.Nodes {
		if n == me || n.has(wire.NodeNoAddr|wire.NodeHandshake) || !n.IsMaster() || n.Failed() {
			continue
		}
		ok := okReplicas(n)
		if ok == 0 && n.NumSlots > 0 && n.migrateTo {
			orphaned++
		}
		maxOK = max(maxOK, ok)
		if me.Master == n {
			mine = ok
		}
	}
	if orphaned > 0 && maxOK >= 2 && mine == maxOK {
		s.migrateIfCandidate(maxOK, now)
	}
}

// migrateIfCandidate is clusterHandleSlaveMigration (rules 3 and 4).
func (s *State) migrateIfCandidate(maxOK int, now int64) {
	me := s.Myself
	if !s.OK {
		return
	}
	working := 0
	for _, r := range me.Master.Replicas {
		if !r.has(wire.NodeFail | wire.NodePFail) {
			working++
		}
	}
	if int64(working) <= s.Cfg.MigrationBarrier {
		return
	}
	candidate := me
	var target *Node
	for _, n := range s.sortedNodes() {
		ok := 0
		if n.IsMaster() {
			ok = okReplicas(n)
		}
		if n.IsMaster() && !n.Failed() && n.migrateTo && ok == 0 {
			if target == nil && n.NumSlots > 0 {
				target = n
			}
			if n.orphanedTime == 0 {
				n.orphanedTime = now
			}
		} else {
			n.orphanedTime = 0
		}
		if ok == maxOK {
			for _, r := range n.Replicas {
				if r.Name < candidate.Name {
					candidate = r
				}
			}
		}
	}
	if target != nil && candidate == me && now-target.orphanedTime > ReplicaMigrationDelay {
		s.setRole(me, target)
		s.Demoted = true
		s.Migrations++
		s.UpdateState(now)
	}
}
