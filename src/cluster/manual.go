package cluster

import (
	"math/rand/v2"

	"github.com/hotkv/hotkv/src/cluster/wire"
)

// Manual failover, CLUSTER FAILOVER [FORCE|TAKEOVER] on a replica, as Redis 7.0 runs it:
//  1. The default form sends MFSTART to the master. The master (a replica of its own asked)
//     pauses client writes, and from then on every message it sends carries the PAUSED flag and
//     its replication offset, which no longer moves; it pings the replica at every Tick.
//  2. The replica takes the offset of the first PAUSED message from its master and waits until
//     its own replication offset equals it: every write the master acknowledged is then applied.
//  3. Then (at once for FORCE) it runs an election without the usual delay, its vote requests
//     flagged FORCEACK so masters vote although its master is not failing, and on winning claims
//     the slots (takeOver). The master, seeing its slots claimed at a greater configEpoch,
//     follows the winner, which ends its pause: the writes it held back are redirected.
//  4. Either side gives up ManualFailoverTimeout after the start (the master's pause ends then).
//
// The pause is the caller's: State asks for it (WantPause) and is told when it holds (Paused),
// since pausing waits for the writes already under way to reach the replication stream. Until
// then the master's messages carry no PAUSED flag, so the replica never takes an offset that
// could still move.

// ManualFailoverTimeout is CLUSTER_MF_TIMEOUT (ms).
const ManualFailoverTimeout = 5000

// manualFailover is the state of a manual failover on either side (Redis's mf_* fields).
type manualFailover struct {
	end       int64 // ms it gives up; 0: none in progress
	canStart  bool  // replica: the election may start (FORCE, or caught up with the paused master)
	offKnown  bool  // replica: masterOff came with a PAUSED message
	masterOff uint64
	replica   *Node // master: the replica that sent MFSTART
	paused    bool  // master: the caller reported writes paused (Paused)
}

func (s *State) resetManualFailover() { s.mf = manualFailover{} }

// WantPause reports whether client writes must be paused: myself is a master one of whose replicas
// asked for a manual failover. The caller pauses, then calls Paused; it unpauses once this is false.
func (s *State) WantPause() bool { return s.mf.replica != nil && s.Myself.IsMaster() }

// Paused tells the state that client writes are paused and l.ReplOffset is the final offset: the
// replica that asked gets a PING carrying it (the PAUSED flag set from now on).
func (s *State) Paused(l *Local, now int64, r *rand.Rand) []Out {
	if !s.WantPause() || s.mf.paused {
		return nil
	}
	s.mf.paused = true
	return s.pingManualReplica(l, now, r)
}

// ManualFailoverInProgress reports whether a manual failover is under way on this node (either
// side), for CLUSTER INFO-like introspection and tests.
func (s *State) ManualFailoverInProgress() bool { return s.mf.end != 0 }

func (s *State) pingManualReplica(l *Local, now int64, r *rand.Rand) []Out {
	n := s.mf.replica
	if n == nil || !n.Linked || !s.mf.paused {
		return nil
	}
	if n.PingSent == 0 { // an earlier ping still unanswered keeps its time (failure detection)
		n.PingSent = now
	}
	return []Out{{To: n, Msg: s.BuildPing(wire.Ping, n, l, r)}}
}

// ManualFailover is CLUSTER FAILOVER on a replica: the default form (neither flag) sends MFSTART
// and waits for the paused master's offset (step 1); FORCE starts the election at once, without
// the master's part; TAKEOVER takes a new configEpoch without votes and claims the master's slots
// at once.
func (s *State) ManualFailover(force, takeover bool, l *Local, now int64, r *rand.Rand) ([]Out, error) {
	me, m := s.Myself, s.Myself.Master
	switch {
	case m == nil:
		return nil, errNotReplica
	case s.Nodes[m.Name] != m:
		return nil, errMasterUnknown
	case !force && !takeover && (m.Failed() || !m.Linked):
		return nil, errMasterDown
	}
	s.resetManualFailover()
	s.mf.end = now + ManualFailoverTimeout
	if takeover {
		s.bumpWithoutConsensus()
		return s.takeOver(me, m, me.ConfigEpoch, l, now, r), nil
	}
	s.elect = election{}
	if force {
		s.mf.canStart = true
		return nil, nil
	}
	s.SentByType[wire.MFStart]++
	return []Out{{To: m, Msg: &wire.Msg{Header: s.Header(wire.MFStart, l)}}}, nil
}

// receiveMFStart is a master's step 1: only from one of its replicas.
func (s *State) receiveMFStart(sender *Node, now int64) {
	if sender == nil || sender.Master != s.Myself || !s.Myself.IsMaster() {
		return
	}
	s.resetManualFailover()
	s.mf.end = now + ManualFailoverTimeout
	s.mf.replica = sender
}

// receiveMasterOffset is the replica's step 2 on any message from its master; it reports whether
// the election may start now.
func (s *State) receiveMasterOffset(sender *Node, m *wire.Msg, l *Local) bool {
	if s.mf.end == 0 || s.mf.offKnown || s.Myself.Master != sender || m.MFlags[0]&wire.MFlagPaused == 0 {
		return false
	}
	s.mf.offKnown, s.mf.masterOff = true, m.Offset
	return s.checkCaughtUp(l)
}

// checkCaughtUp lets the election start once the replica's offset is the paused master's.
func (s *State) checkCaughtUp(l *Local) bool {
	if s.mf.end != 0 && !s.mf.canStart && s.mf.offKnown && s.mf.masterOff == l.ReplOffset {
		s.mf.canStart = true
		return true
	}
	return false
}

// manualFailoverTick is the manual failover's part of Tick: the timeout on both sides, the
// replica's catch-up check, and the master's PING to the replica.
func (s *State) manualFailoverTick(l *Local, now int64, r *rand.Rand) []Out {
	if s.mf.end == 0 {
		return nil
	}
	if s.mf.end < now {
		s.resetManualFailover()
		s.elect = election{}
		return nil
	}
	if s.Myself.Master != nil {
		s.checkCaughtUp(l) // Tick's handleFailover starts the election
		return nil
	}
	return s.pingManualReplica(l, now, r)
}
