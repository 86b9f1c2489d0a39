package cluster

import (
	"math"
	"math/rand/v2"

	"github.com/hotkv/hotkv/src/cluster/wire"
)

// Replica elections, as Redis 7.0's clusterHandleSlaveFailover and clusterSendFailoverAuthIfNeeded:
//  1. A replica whose master is FAIL (and served slots) waits 500 ms + up to 500 ms random + 1 s per
//     replica of the same master with a greater replication offset (its rank), then takes a new
//     currentEpoch and asks every master for a vote (FAILOVER_AUTH_REQUEST).
//  2. A master votes once per epoch, only for a replica of a FAIL master, not twice for replicas of
//     the same master within 2 x node timeout, and only when no slot the replica claims is owned at
//     a greater configEpoch than the replica's claim.
//  3. With votes from a majority of the slot-serving masters, the replica becomes master at the
//     election's epoch, claims its old master's slots and tells everyone (PONG to all); the others
//     move the slots on that claim's greater configEpoch, and a master left without slots to the
//     winner becomes its replica.

// election is a replica's state in an election.
type election struct {
	authTime  int64  // when the request goes (or went) out
	authSent  bool   // the request for authEpoch is out
	authEpoch uint64 // the epoch of the election
	votes     int
}

// failoverTimeouts are the election's timeout (max(2 x node timeout, 2 s)) and retry period.
func (s *State) failoverTimeouts() (timeout, retry int64) {
	timeout = max(2*s.Cfg.NodeTimeout, 2000)
	return timeout, 2 * timeout
}

// dataTooOld is Redis's data-age rule (cluster-replica-validity-factor): a replica that heard
// from its master age ms ago, less the node timeout, holds data too old to take over when that is
// more than repl-ping-replica-period plus node timeout x the factor. A factor of 0 turns the
// rule off, and a manual failover ignores it.
func (s *State) dataTooOld(age int64) bool {
	f, timeout := s.Cfg.ReplicaValidityFactor, s.Cfg.NodeTimeout
	if f <= 0 {
		return false
	}
	if age > timeout {
		age -= timeout
	}
	limit := s.Cfg.ReplPingPeriod * 1000
	if timeout > 0 && f > (math.MaxInt64-limit)/timeout {
		return false // a limit past int64 is never reached
	}
	return age > limit+timeout*f
}

// UpdateMyselfFlags sets myself's nofailover flag from cluster-replica-no-failover, on a master
// as on a replica (Redis's clusterUpdateMyselfFlags): CLUSTER NODES shows it, and the replicas of
// our master leave a nofailover one out of their ranks. Tick calls it; so does a change of the
// setting, for CLUSTER NODES to show it at once.
func (s *State) UpdateMyselfFlags() {
	me := s.Myself
	if s.Cfg.ReplicaNoFailover == me.has(wire.NodeNoFailover) {
		return
	}
	me.Flags ^= wire.NodeNoFailover
	s.Touch()
}

// replicaRank is how many other replicas of our master have a greater replication offset.
func (s *State) replicaRank(myOffset uint64) int {
	rank := 0
	for _, r := range s.Myself.Master.Replicas {
		if r != s.Myself && !r.has(wire.NodeNoFailover) && r.ReplOffset > myOffset {
			rank++
		}
	}
	return rank
}

// handleFailover runs on every Tick of a replica: start, retry or win an election.
func (s *State) handleFailover(l *Local, now int64, r *rand.Rand) []Out {
	me, m := s.Myself, s.Myself.Master
	manual := s.mf.end != 0 && s.mf.canStart
	if m == nil || m.NumSlots == 0 || (!manual && (!m.Failed() || s.Cfg.ReplicaNoFailover)) {
		s.elect = election{}
		return nil
	}
	if !manual && s.dataTooOld(l.DataAge) {
		return nil // an election under way waits, as in Redis, until the data is fresh again
	}
	timeout, retry := s.failoverTimeouts()
	e := &s.elect
	if e.authTime == 0 || now-e.authTime > retry {
		e.authTime = now + 500 + r.Int64N(500) + int64(s.replicaRank(l.ReplOffset))*1000
		e.authSent, e.votes = false, 0
		if !manual {
			return nil
		}
		e.authTime = now // a manual failover asks at once
	}
	if now < e.authTime || now-e.authTime > timeout {
		return nil
	}
	if !e.authSent {
		s.CurrentEpoch++
		e.authEpoch, e.authSent = s.CurrentEpoch, true
		out := s.toMasters(wire.FailoverAuthRequest, l)
		if s.mf.end != 0 { // masters vote although our master is not failing
			for _, o := range out {
				o.Msg.MFlags[0] |= wire.MFlagForceAck
			}
		}
		return out
	}
	if e.votes >= s.Size/2+1 {
		return s.takeOver(me, m, e.authEpoch, l, now, r)
	}
	return nil
}

// toMasters is a header-only message of type t to every linked slot-serving master.
func (s *State) toMasters(t wire.Type, l *Local) []Out {
	var out []Out
	for _, n := range s.Nodes {
		if n != s.Myself && n.IsMaster() && n.NumSlots > 0 && n.Linked {
			s.SentByType[t]++
			out = append(out, Out{To: n, Msg: &wire.Msg{Header: s.Header(t, l)}})
		}
	}
	return out
}

// takeOver makes myself the master of m's slots at epoch and announces it to every node.
func (s *State) takeOver(me, m *Node, epoch uint64, l *Local, now int64, r *rand.Rand) []Out {
	s.setRole(me, nil)
	me.ConfigEpoch = epoch
	for slot := range Slots {
		if s.Owner[slot] == m {
			s.assign(slot, me)
		}
	}
	s.elect = election{}
	s.resetManualFailover()
	s.Promoted = true
	s.UpdateState(now)
	var out []Out
	for _, n := range s.Nodes {
		if n != me && n.Linked && !n.has(wire.NodeHandshake) {
			out = append(out, Out{To: n, Msg: s.BuildPing(wire.Pong, n, l, r)})
		}
	}
	return out
}

// receiveAuthRequest is a master's vote (rule 2): an AUTH_ACK to the requester, or nothing.
func (s *State) receiveAuthRequest(req *Node, m *wire.Msg, l *Local, now int64) []Out {
	me := s.Myself
	if !me.IsMaster() || me.NumSlots == 0 || m.CurrentEpoch < s.CurrentEpoch || s.LastVoteEpoch == s.CurrentEpoch {
		return nil
	}
	master := req.Master
	force := m.MFlags[0]&wire.MFlagForceAck != 0
	if req.IsMaster() || master == nil || (!master.Failed() && !force) {
		return nil
	}
	if now-master.VotedTime < 2*s.Cfg.NodeTimeout {
		return nil
	}
	for slot := range Slots {
		if !wire.SlotSet(&m.MySlots, slot) {
			continue
		}
		if o := s.Owner[slot]; o != nil && o.ConfigEpoch > m.ConfigEpoch {
			return nil
		}
	}
	s.LastVoteEpoch = s.CurrentEpoch
	master.VotedTime = now
	s.SentByType[wire.FailoverAuthAck]++
	return []Out{{To: req, Msg: &wire.Msg{Header: s.Header(wire.FailoverAuthAck, l)}}}
}

// receiveAuthAck counts a vote from a slot-serving master for the current election.
func (s *State) receiveAuthAck(sender *Node, m *wire.Msg) {
	if sender.IsMaster() && sender.NumSlots > 0 && m.CurrentEpoch >= s.elect.authEpoch && s.elect.authSent {
		s.elect.votes++
	}
}

// followWinner: when myself (a master) or myself's master lost its last slot to sender's newer
// claim, myself becomes sender's replica (rule 3). It reports whether the role changed.
func (s *State) followWinner(sender *Node, hadSlots bool, oldMaster *Node) bool {
	me := s.Myself
	if me == sender {
		return false
	}
	if me.IsMaster() && hadSlots && me.NumSlots == 0 {
		s.setRole(me, sender)
		return true
	}
	if oldMaster != nil && oldMaster != sender && oldMaster.NumSlots == 0 && me.Master == oldMaster && hadSlots {
		s.setRole(me, sender)
		return true
	}
	return false
}
