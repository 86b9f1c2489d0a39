package cluster

import (
	"math/rand/v2"

	"github.com/hotkv/hotkv/src/cluster/wire"
)

// Ordering rules the bus relies on (as Redis's cluster.c):
//  1. A message's header always carries this node's currentEpoch and the configEpoch of the master whose
//     slots it advertises (its own, or its master's when it is a replica).
//  2. A slot changes owner only to a claim with a greater configEpoch than the current owner's, so two
//     nodes that saw the same claims agree whatever order the claims came in.
//  3. A node flagged FAIL keeps the flag until it answers again, and a master with slots only after
//     2 x node timeout (the FAIL_UNDO rule), so a flapping master is not trusted at once.

// Out is a message for the link of node To (To nil: the link the message being answered came on).
type Out struct {
	To   *Node
	Msg  *wire.Msg
	Drop bool // close the outbound link to To (no Msg); the next Tick's Unlinked redials it
}

// Local is what the state machine needs from the node's own server for headers.
type Local struct {
	Port, PPort, CPort int
	AnnounceIP         string
	Hostname           string
	ReplOffset         uint64
	// DataAge is how long ago, in ms, a replica last heard from its master: its last byte while
	// the link is up, the link's loss while it is down, math.MaxInt64 if it never was up (Redis's
	// data_age; see State.dataTooOld).
	DataAge int64
}

// Header builds the header of a message of type t from this node, as clusterBuildMessageHdr.
func (s *State) Header(t wire.Type, l *Local) wire.Header {
	me := s.Myself
	h := wire.Header{Type: t, Port: uint16(l.Port), PPort: uint16(l.PPort), CPort: uint16(l.CPort),
		Flags: me.Flags, CurrentEpoch: s.CurrentEpoch, ConfigEpoch: s.myEpoch(), Offset: l.ReplOffset}
	copy(h.Sender[:], me.Name)
	if m := me.Master; m != nil {
		copy(h.SlaveOf[:], m.Name)
		h.MySlots = m.Slots
	} else {
		h.MySlots = me.Slots
	}
	if l.AnnounceIP != "" {
		wire.SetCString(h.MyIP[:], l.AnnounceIP)
	}
	if !s.OK {
		h.State = 1
	}
	if me.IsMaster() && s.mf.paused { // our offset no longer moves (manual.go step 1)
		h.MFlags[0] |= wire.MFlagPaused
	}
	return h
}

// gossipOf is a gossip entry about n, as clusterSetGossipEntry.
func gossipOf(n *Node) wire.Gossip {
	g := wire.Gossip{PingSent: uint32(n.PingSent / 1000), PongReceived: uint32(n.PongReceived / 1000),
		Port: uint16(n.Port), CPort: uint16(n.CPort), PPort: uint16(n.PPort), Flags: n.Flags}
	copy(g.Name[:], n.Name)
	wire.SetCString(g.IP[:], n.IP)
	return g
}

// BuildPing makes a PING, PONG or MEET with gossip about max(3, nodes/10) random healthy peers plus
// every peer this node flags PFAIL (so failure reports spread within a node timeout), as clusterSendPing.
func (s *State) BuildPing(t wire.Type, to *Node, l *Local, r *rand.Rand) *wire.Msg {
	m := &wire.Msg{Header: s.Header(t, l)}
	fresh := len(s.Nodes) - 2
	wanted := max(3, len(s.Nodes)/10)
	wanted = min(wanted, fresh)
	cands := make([]*Node, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		cands = append(cands, n)
	}
	picked := map[*Node]bool{}
	for tries := 0; len(picked) < wanted && tries < wanted*3; tries++ {
		n := cands[r.IntN(len(cands))]
		if n == s.Myself || n == to || n.has(wire.NodePFail|wire.NodeHandshake|wire.NodeNoAddr) ||
			(!n.Linked && n.NumSlots == 0) || picked[n] {
			continue
		}
		picked[n] = true
		m.Gossip = append(m.Gossip, gossipOf(n))
	}
	for _, n := range cands {
		if n.has(wire.NodePFail) && !n.has(wire.NodeHandshake|wire.NodeNoAddr) {
			m.Gossip = append(m.Gossip, gossipOf(n))
		}
	}
	if l.Hostname != "" {
		m.Exts = append(m.Exts, wire.HostnameExt(l.Hostname))
	}
	s.SentByType[t]++
	return m
}

// Meet starts a handshake with the node at ip:port@cport (CLUSTER MEET): a HANDSHAKE|MEET node under
// a random name, renamed when its first PONG arrives. It reports false when a handshake with that
// address is already in progress.
func (s *State) Meet(ip string, port, cport int, now int64) bool {
	for _, n := range s.Nodes {
		if n.has(wire.NodeHandshake) && n.IP == ip && n.Port == port && n.CPort == cport {
			return false
		}
	}
	n := &Node{Name: RandomName(), Flags: wire.NodeHandshake | wire.NodeMeet, IP: ip, Port: port,
		CPort: cport, PongReceived: now}
	n.DataReceived = now
	s.Nodes[n.Name] = n
	return true
}

// handshakeTimeout is how long a handshake may take before the node is dropped (node timeout, at
// least 1 s).
func (s *State) handshakeTimeout() int64 { return max(s.Cfg.NodeTimeout, 1000) }

// Receive processes message m that arrived on a link: linkNode is the node of the outbound link it came
// on (nil on an inbound link), srcIP the peer's address. It returns the messages to send: a reply
// (To nil) for PING and MEET, and any UPDATE or FAIL.
func (s *State) Receive(linkNode *Node, srcIP string, m *wire.Msg, l *Local, now int64, r *rand.Rand) []Out {
	if int(m.Type) < len(s.RecvByType) {
		s.RecvByType[m.Type]++
	}
	sender := s.Nodes[wire.Name(&m.Sender)]
	if sender != nil && !sender.has(wire.NodeHandshake) {
		sender.DataReceived = now
		if m.CurrentEpoch > s.CurrentEpoch {
			s.CurrentEpoch = m.CurrentEpoch
		}
		if m.ConfigEpoch > sender.ConfigEpoch {
			sender.ConfigEpoch = m.ConfigEpoch
		}
		sender.ReplOffset = m.Offset
	}
	var out []Out
	switch m.Type {
	case wire.Ping, wire.Meet:
		out = s.receivePing(sender, srcIP, m, l, now, r)
		if sender == nil || sender.has(wire.NodeHandshake) {
			return out
		}
		out = append(out, s.receiveGossipHeader(sender, linkNode, m, now)...)
	case wire.Pong:
		if linkNode != nil && linkNode.has(wire.NodeHandshake) {
			if sender = s.finishHandshake(linkNode, sender, m); sender == nil {
				return nil
			}
		}
		if sender == nil {
			return nil
		}
		if linkNode == sender {
			sender.PongReceived, sender.PingSent = now, 0
			s.clearFailure(sender, now)
		}
		out = s.receiveGossipHeader(sender, linkNode, m, now)
	case wire.FailoverAuthRequest:
		if sender != nil {
			return s.receiveAuthRequest(sender, m, l, now)
		}
	case wire.FailoverAuthAck:
		if sender != nil {
			s.receiveAuthAck(sender, m)
		}
		if s.Myself.Master != nil && s.elect.authSent { // won now rather than at the next Tick
			out = s.handleFailover(l, now, r)
		}
	case wire.MFStart:
		s.receiveMFStart(sender, now)
	case wire.Fail:
		if f := s.Nodes[wire.Name(&m.FailName)]; sender != nil && f != nil && f != s.Myself && !f.Failed() {
			f.Flags = f.Flags&^wire.NodePFail | wire.NodeFail
			f.FailTime = now
			s.UpdateState(now)
		}
	case wire.Update:
		if sender == nil {
			return nil
		}
		n := s.Nodes[wire.Name(&m.UpdateName)]
		if n == nil || n.ConfigEpoch >= m.UpdateEpoch {
			return nil
		}
		if !n.IsMaster() {
			s.setRole(n, nil)
		}
		n.ConfigEpoch = m.UpdateEpoch
		had := MasterOf(s.Myself).NumSlots > 0
		s.updateSlots(n, m.UpdateEpoch, &m.UpdateSlots)
		if s.followWinner(n, had, s.Myself.Master) {
			s.Demoted = true
		}
		s.UpdateState(now)
	}
	if sender != nil && !sender.has(wire.NodeHandshake) && s.receiveMasterOffset(sender, m, l) {
		out = append(out, s.handleFailover(l, now, r)...) // caught up already: the election starts now
	}
	return out
}

// receivePing answers PING and MEET with a PONG; a MEET from an unknown node adds it in handshake (its
// real name arrives with our PING's answer) and takes its gossip, as Redis does.
func (s *State) receivePing(sender *Node, srcIP string, m *wire.Msg, l *Local, now int64, r *rand.Rand) []Out {
	if sender == nil && m.Type == wire.Meet {
		ip := wire.CString(m.MyIP[:])
		if ip == "" {
			ip = srcIP
		}
		n := &Node{Name: RandomName(), Flags: wire.NodeHandshake, IP: ip, Port: int(m.Port),
			CPort: int(m.CPort), PPort: int(m.PPort), PongReceived: now, DataReceived: now}
		s.Nodes[n.Name] = n
		s.receiveGossip(nil, m, now)
	}
	return []Out{{Msg: s.BuildPing(wire.Pong, nil, l, r)}}
}

// finishHandshake handles the first PONG from a node we MEET or learned of: the handshake node takes
// the sender's name and role, or is dropped when the sender is a node already known under that name
// (its address is refreshed instead). It returns the sender as now known, or nil.
func (s *State) finishHandshake(hs, known *Node, m *wire.Msg) *Node {
	s.Version++ // an address may change
	if known != nil {
		known.IP, known.Port, known.CPort = hs.IP, int(m.Port), int(m.CPort)
		delete(s.Nodes, hs.Name)
		return nil
	}
	name := wire.Name(&m.Sender)
	if !ValidName(name) {
		return nil
	}
	delete(s.Nodes, hs.Name)
	hs.Name = name
	s.Nodes[name] = hs
	hs.Flags = hs.Flags&^(wire.NodeHandshake|wire.NodeMeet) | m.Flags&(wire.NodeMaster|wire.NodeSlave)
	hs.ConfigEpoch = m.ConfigEpoch
	return hs
}

// receiveGossipHeader applies what every PING, PONG and MEET of a known sender says about the sender
// itself (role, master, slots, config epoch) and about others (the gossip section), and answers stale
// slot claims with UPDATE.
func (s *State) receiveGossipHeader(sender, linkNode *Node, m *wire.Msg, now int64) []Out {
	sender.Flags = sender.Flags&^wire.NodeNoFailover | m.Flags&wire.NodeNoFailover
	if h := m.Hostname(); h != sender.Hostname {
		sender.Hostname = h
	}
	master := wire.Name(&m.SlaveOf)
	if master == "" {
		s.setRole(sender, nil)
	} else if mn := s.Nodes[master]; mn != nil && sender.Master != mn {
		s.setRole(sender, mn)
	}
	var out []Out
	if sender.IsMaster() {
		if sender.Slots != m.MySlots {
			myMaster := MasterOf(s.Myself)
			had := myMaster.NumSlots > 0
			s.updateSlots(sender, m.ConfigEpoch, &m.MySlots)
			if s.followWinner(sender, had, s.Myself.Master) {
				s.Demoted = true
			}
		}
		out = s.staleClaims(sender, m)
	}
	if sender.IsMaster() && s.Myself.IsMaster() && sender.ConfigEpoch == s.Myself.ConfigEpoch {
		s.configEpochCollision(sender)
	}
	s.receiveGossip(sender, m, now)
	s.UpdateState(now)
	return out
}

// setRole makes n a master (master nil) or a replica of master. It keeps the migration targets
// as Redis does (migrate.go): a master gaining a replica is one, a master losing its last is no
// longer, a replica other than myself turned master is one (it took over from a master that had
// replicas), a master turned replica is not.
func (s *State) setRole(n, master *Node) {
	if master == nil && n.Master == nil && n.IsMaster() {
		return // every message from a master says so: no change
	}
	s.Version++
	old := n.Master
	if old != nil {
		for i, r := range old.Replicas {
			if r == n {
				old.Replicas = append(old.Replicas[:i], old.Replicas[i+1:]...)
				break
			}
		}
		if len(old.Replicas) == 0 {
			old.migrateTo = false
		}
	}
	n.Master = master
	if master == nil {
		n.Flags = n.Flags&^wire.NodeSlave | wire.NodeMaster
		if old != nil && n != s.Myself {
			n.migrateTo = true
		}
		return
	}
	if n == s.Myself { // a master that now follows another ends its part in a manual failover
		s.resetManualFailover()
	}
	n.Flags = n.Flags&^wire.NodeMaster | wire.NodeSlave
	n.migrateTo = false
	master.Replicas = append(master.Replicas, n)
	master.migrateTo = true
	for slot := range Slots { // a master that became a replica serves nothing
		if s.Owner[slot] == n {
			s.assign(slot, nil)
		}
	}
}

// updateSlots takes sender's claim (slots at epoch): each claimed slot moves to sender when it is
// unassigned or its owner's configEpoch is lower, unless this node is importing it; a slot sender no
// longer claims is left to whoever claims it next (Redis drops it only through a newer claim).
func (s *State) updateSlots(sender *Node, epoch uint64, slots *[wire.SlotsBytes]byte) {
	for slot := range Slots {
		if !wire.SlotSet(slots, slot) {
			continue
		}
		o := s.Owner[slot]
		if o == sender || s.Importing[slot] != nil {
			continue
		}
		if o == nil || o.ConfigEpoch < epoch {
			if o == s.Myself {
				s.Migrating[slot] = nil
			}
			s.assign(slot, sender)
		}
	}
}

// staleClaims sends sender an UPDATE about the first slot it claims that another master owns with a
// greater configEpoch, as Redis does.
func (s *State) staleClaims(sender *Node, m *wire.Msg) []Out {
	for slot := range Slots {
		if !wire.SlotSet(&m.MySlots, slot) {
			continue
		}
		o := s.Owner[slot]
		if o == nil || o == sender || o.ConfigEpoch <= m.ConfigEpoch {
			continue
		}
		u := &wire.Msg{Header: s.Header(wire.Update, &Local{}), UpdateEpoch: o.ConfigEpoch, UpdateSlots: o.Slots}
		copy(u.UpdateName[:], o.Name)
		s.SentByType[wire.Update]++
		return []Out{{To: sender, Msg: u}}
	}
	return nil
}

// configEpochCollision: two masters with the same configEpoch; the one with the smaller name takes a
// new epoch, so the claims order again (clusterHandleConfigEpochCollision).
func (s *State) configEpochCollision(sender *Node) {
	if sender.Name <= s.Myself.Name {
		return
	}
	s.CurrentEpoch++
	s.Myself.ConfigEpoch = s.CurrentEpoch
}

// receiveGossip reads the gossip section: failure reports from masters, pong times, and handshakes
// with nodes not known yet (sender nil: from a MEET of an unknown node, which only adds nodes).
func (s *State) receiveGossip(sender *Node, m *wire.Msg, now int64) {
	for i := range m.Gossip {
		g := &m.Gossip[i]
		name := wire.Name(&g.Name)
		n := s.Nodes[name]
		if n == nil {
			if g.Flags&wire.NodeNoAddr == 0 && !s.forgotten(name, now) && ValidName(name) {
				ip := wire.CString(g.IP[:])
				s.Meet(ip, int(g.Port), int(g.CPort), now)
			}
			continue
		}
		if sender == nil || n == s.Myself {
			continue
		}
		if sender.IsMaster() {
			if g.Flags&(wire.NodeFail|wire.NodePFail) != 0 {
				if n.FailReports == nil {
					n.FailReports = map[string]int64{}
				}
				n.FailReports[sender.Name] = now
				s.markFailingIfNeeded(n, now)
			} else {
				delete(n.FailReports, sender.Name)
			}
		}
		if g.Flags&(wire.NodeFail|wire.NodePFail) == 0 && n.PingSent == 0 && len(n.FailReports) == 0 {
			if pt := int64(g.PongReceived) * 1000; pt <= now+500 && pt > n.PongReceived {
				n.PongReceived = pt
			}
		}
	}
}

func (s *State) forgotten(name string, now int64) bool {
	until, ok := s.Forgotten[name]
	if ok && until <= now {
		delete(s.Forgotten, name)
		return false
	}
	return ok
}

// validReports counts failure reports about n younger than 2 x node timeout, dropping older ones.
func (s *State) validReports(n *Node, now int64) int {
	for k, t := range n.FailReports {
		if now-t > 2*s.Cfg.NodeTimeout {
			delete(n.FailReports, k)
		}
	}
	return len(n.FailReports)
}

// markFailingIfNeeded flags n FAIL when this node sees it PFAIL and a majority of the masters serving
// slots (this one included when it is a master) report it failing; it returns whether it did, and the
// caller broadcasts a FAIL (BroadcastFail).
func (s *State) markFailingIfNeeded(n *Node, now int64) bool {
	if !n.has(wire.NodePFail) || n.Failed() {
		return false
	}
	failures := s.validReports(n, now)
	if s.Myself.IsMaster() {
		failures++
	}
	if failures < s.Size/2+1 {
		return false
	}
	n.Flags = n.Flags&^wire.NodePFail | wire.NodeFail
	n.FailTime = now
	s.pendingFail = append(s.pendingFail, n)
	return true
}

// clearFailure lifts PFAIL on any answer and FAIL as clearNodeFailureIfNeeded: at once for a replica
// or a master without slots, after 2 x node timeout for a master that still has slots.
func (s *State) clearFailure(n *Node, now int64) {
	n.Flags &^= wire.NodePFail
	if !n.Failed() {
		return
	}
	if !n.IsMaster() || n.NumSlots == 0 || now-n.FailTime > 2*s.Cfg.NodeTimeout {
		n.Flags &^= wire.NodeFail
		s.UpdateState(now)
	}
}
