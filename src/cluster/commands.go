package cluster

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/hotkv/hotkv/src/cluster/wire"
)

// The CLUSTER subcommands' state changes. Errors are Redis 7.0.15's reply texts (without the leading
// '-'); the command layer sends them as they are.

var (
	errNotReplica    = errors.New("ERR You should send CLUSTER FAILOVER to a replica")
	errMasterUnknown = errors.New("ERR I'm a replica but my master is unknown to me")
	errMasterDown    = errors.New("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
)

// ErrInvalidSlot is Redis's reply to a slot argument out of 0..16383 or not a number.
var ErrInvalidSlot = errors.New("ERR Invalid or out of range slot")

// AddSlots assigns slots to myself (CLUSTER ADDSLOTS / ADDSLOTSRANGE): all or none.
func (s *State) AddSlots(slots []int, now int64) error {
	seen := map[int]bool{}
	for _, slot := range slots {
		if slot < 0 || slot >= Slots {
			return ErrInvalidSlot
		}
		if s.Owner[slot] != nil {
			return fmt.Errorf("ERR Slot %d is already busy", slot)
		}
		if seen[slot] {
			return fmt.Errorf("ERR Slot %d specified multiple times", slot)
		}
		seen[slot] = true
	}
	for _, slot := range slots {
		s.Importing[slot] = nil
		s.assign(slot, s.Myself)
	}
	s.UpdateState(now)
	return nil
}

// DelSlots unassigns slots (CLUSTER DELSLOTS / DELSLOTSRANGE): all or none.
func (s *State) DelSlots(slots []int, now int64) error {
	seen := map[int]bool{}
	for _, slot := range slots {
		if slot < 0 || slot >= Slots {
			return ErrInvalidSlot
		}
		if s.Owner[slot] == nil {
			return fmt.Errorf("ERR Slot %d is already unassigned", slot)
		}
		if seen[slot] {
			return fmt.Errorf("ERR Slot %d specified multiple times", slot)
		}
		seen[slot] = true
	}
	for _, slot := range slots {
		s.Migrating[slot], s.Importing[slot] = nil, nil
		s.assign(slot, nil)
	}
	s.UpdateState(now)
	return nil
}

// FlushSlots drops all of myself's slots (CLUSTER FLUSHSLOTS); the caller checks the db is empty.
func (s *State) FlushSlots(now int64) {
	for slot := range Slots {
		if s.Owner[slot] == s.Myself {
			s.assign(slot, nil)
		}
	}
	s.UpdateState(now)
}

// SetConfigEpoch is CLUSTER SET-CONFIG-EPOCH.
func (s *State) SetConfigEpoch(epoch int64) error {
	switch {
	case epoch < 0:
		return fmt.Errorf("ERR Invalid config epoch specified: %d", epoch)
	case len(s.Nodes) > 1:
		return errors.New("ERR The user can assign a config epoch only when the node does not know any other node.")
	case s.Myself.ConfigEpoch != 0:
		return errors.New("ERR Node config epoch is already non-zero")
	}
	s.Myself.ConfigEpoch = uint64(epoch)
	if s.CurrentEpoch < uint64(epoch) {
		s.CurrentEpoch = uint64(epoch)
	}
	return nil
}

// BumpEpoch is CLUSTER BUMPEPOCH: a new configEpoch unless myself's is already the greatest and
// unique. It returns Redis's status text, "BUMPED n" or "STILL n".
func (s *State) BumpEpoch() string {
	maxEpoch, unique := uint64(0), true
	for _, n := range s.Nodes {
		if n == s.Myself {
			continue
		}
		if n.ConfigEpoch > maxEpoch {
			maxEpoch = n.ConfigEpoch
		}
		if n.ConfigEpoch == s.Myself.ConfigEpoch {
			unique = false
		}
	}
	if s.Myself.ConfigEpoch == 0 || s.Myself.ConfigEpoch < maxEpoch || !unique {
		s.CurrentEpoch++
		s.Myself.ConfigEpoch = s.CurrentEpoch
		return fmt.Sprintf("BUMPED %d", s.Myself.ConfigEpoch)
	}
	return fmt.Sprintf("STILL %d", s.Myself.ConfigEpoch)
}

// Forget is CLUSTER FORGET: the node is dropped and not re-added from gossip for 60 s.
func (s *State) Forget(name string, now int64) error {
	n := s.Nodes[name]
	switch {
	case n == nil:
		return fmt.Errorf("ERR Unknown node %s", name)
	case n == s.Myself:
		return errors.New("ERR I tried hard but I can't forget myself...")
	case s.Myself.Master == n:
		return errors.New("ERR Can't forget my master!")
	}
	s.Forgotten[name] = now + 60000
	s.delNode(n)
	s.UpdateState(now)
	return nil
}

// delNode removes n: its slots become unassigned, its failure reports by others vanish.
func (s *State) delNode(n *Node) {
	for slot := range Slots {
		if s.Owner[slot] == n {
			s.assign(slot, nil)
		}
		if s.Migrating[slot] == n {
			s.Migrating[slot] = nil
		}
		if s.Importing[slot] == n {
			s.Importing[slot] = nil
		}
	}
	for _, o := range s.Nodes {
		delete(o.FailReports, n.Name)
	}
	if n.Master != nil {
		s.setRole(n, nil)
	}
	for _, r := range n.Replicas {
		r.Master = nil
	}
	delete(s.Nodes, n.Name)
}

// Replicate is CLUSTER REPLICATE's check and state change: myself becomes a replica of the master
// called name. dbEmpty says whether myself holds no keys (required when it is a master).
func (s *State) Replicate(name string, dbEmpty bool, now int64) error {
	n := s.Nodes[name]
	switch {
	case n == nil:
		return fmt.Errorf("ERR Unknown node %s", name)
	case n == s.Myself:
		return errors.New("ERR Can't replicate myself")
	case !n.IsMaster():
		return errors.New("ERR I can only replicate a master, not a replica.")
	case s.Myself.IsMaster() && (s.Myself.NumSlots != 0 || !dbEmpty):
		return errors.New("ERR To set a master the node must be empty and without assigned slots.")
	}
	for slot := range Slots {
		s.Migrating[slot], s.Importing[slot] = nil, nil
	}
	s.setRole(s.Myself, n)
	s.UpdateState(now)
	return nil
}

// CountFailureReports is CLUSTER COUNT-FAILURE-REPORTS.
func (s *State) CountFailureReports(name string, now int64) (int, error) {
	n := s.Nodes[name]
	if n == nil {
		return 0, fmt.Errorf("ERR Unknown node %s", name)
	}
	return s.validReports(n, now), nil
}

// SetSlotNode is CLUSTER SETSLOT slot NODE name's state change (checks about keys are the caller's).
func (s *State) SetSlotNode(slot int, name string, now int64) error {
	n := s.Nodes[name]
	if n == nil {
		return fmt.Errorf("ERR Unknown node %s", name)
	}
	if !n.IsMaster() {
		return errors.New("ERR Target node is not a master")
	}
	if n == s.Myself && s.Importing[slot] != nil {
		// Taking a slot this node imported: a new configEpoch so the claim wins
		// (clusterBumpConfigEpochWithoutConsensus), told to every node at once (Announce), as Redis
		// broadcasts a PONG here. A node that heard of the epoch only from the next regular PING
		// could import a slot from this node before: its own bump, reckoned without this epoch,
		// would then leave it at or under ours, and our claim still in flight would take the slot
		// back from it.
		s.Importing[slot] = nil
		s.bumpWithoutConsensus()
		s.pendingPong = true
	}
	if s.Owner[slot] == s.Myself && n != s.Myself {
		s.Migrating[slot] = nil
	}
	s.assign(slot, n)
	s.UpdateState(now)
	return nil
}

// Announce returns a PONG to every linked node when a command asked for one (SetSlotNode taking an
// imported slot), as clusterBroadcastPong(CLUSTER_BROADCAST_ALL); nothing otherwise. The caller sends
// them before the command's reply; Tick sends any left over.
func (s *State) Announce(l *Local, r *rand.Rand) []Out {
	if !s.pendingPong {
		return nil
	}
	s.pendingPong = false
	var out []Out
	for _, n := range s.Nodes {
		if n != s.Myself && n.Linked && !n.has(wire.NodeHandshake) {
			out = append(out, Out{To: n, Msg: s.BuildPing(wire.Pong, n, l, r)})
		}
	}
	return out
}

func (s *State) bumpWithoutConsensus() {
	maxEpoch := s.CurrentEpoch
	for _, n := range s.Nodes {
		maxEpoch = max(maxEpoch, n.ConfigEpoch)
	}
	if s.Myself.ConfigEpoch == 0 || s.Myself.ConfigEpoch != maxEpoch {
		s.CurrentEpoch++
		s.Myself.ConfigEpoch = s.CurrentEpoch
	}
}

// Owns reports whether myself serves slot (as a master or as a replica of its owner).
func (s *State) Owns(slot int) bool {
	o := s.Owner[slot]
	return o == s.Myself || (o != nil && s.Myself.Master == o)
}

// MasterOf returns n's master, or n itself when it is a master.
func MasterOf(n *Node) *Node {
	if n.Master != nil {
		return n.Master
	}
	return n
}
