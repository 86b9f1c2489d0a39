package cluster

import (
	"math/rand/v2"

	"github.com/hotkv/hotkv/src/cluster/wire"
)

// TickEvery is how often the caller runs Tick (Redis's clusterCron runs 10 times a second).
const TickEvery = 100 // ms

// Connected records that the outbound link to n is up and returns its first message: MEET when n was
// met by CLUSTER MEET (the flag is then cleared, as Redis sends MEET once), else PING.
func (s *State) Connected(n *Node, l *Local, now int64, r *rand.Rand) Out {
	n.Linked, n.LinkTime = true, now
	t := wire.Ping
	if n.has(wire.NodeMeet) {
		t = wire.Meet
		n.Flags &^= wire.NodeMeet
	}
	if n.PingSent == 0 {
		n.PingSent = now
	}
	return Out{To: n, Msg: s.BuildPing(t, n, l, r)}
}

// Disconnected records that the outbound link to n is down (the caller reconnects on a later Tick).
func (s *State) Disconnected(n *Node) { n.Linked = false }

// Tick runs clusterCron's duties at now: drop timed-out handshakes, ping a peer with an old pong every
// second and any peer whose pong is older than half the node timeout, flag PFAIL a peer silent for a
// node timeout, run a replica's election and replica migration (migrate.go), and broadcast the
// FAILs decided since the last Tick. Nodes needing a link are those
// Unlinked returns; the caller dials them and calls Connected.
func (s *State) Tick(l *Local, now int64, r *rand.Rand) []Out {
	s.ticks++
	s.UpdateMyselfFlags()
	var out []Out
	for name, n := range s.Nodes {
		if n.has(wire.NodeHandshake) && now-n.PongReceived > s.handshakeTimeout() {
			delete(s.Nodes, name)
		}
	}
	if s.ticks%10 == 0 {
		if n := s.oldestPong(r); n != nil {
			out = append(out, s.ping(n, l, now, r))
		}
	}
	changed := false
	timeout := s.Cfg.NodeTimeout
	for _, n := range s.Nodes {
		if n == s.Myself || n.has(wire.NodeHandshake|wire.NodeNoAddr) {
			continue
		}
		if n.Linked && now-n.LinkTime > timeout && n.PingSent != 0 && now-n.PingSent > timeout/2 &&
			now-n.DataReceived > timeout/2 {
			// A link that carries nothing for half the timeout may be stuck: redial it (the new link's
			// first PING keeps the old ping time, so detection goes on).
			n.Linked = false
			out = append(out, Out{To: n, Drop: true})
		}
		if n.Linked && n.PingSent == 0 && now-n.PongReceived > timeout/2 {
			out = append(out, s.ping(n, l, now, r))
			continue
		}
		if n.PingSent == 0 {
			continue
		}
		delay := min(now-n.PingSent, now-n.DataReceived)
		if delay > timeout && !n.has(wire.NodePFail|wire.NodeFail) {
			n.Flags |= wire.NodePFail
			changed = true
		}
	}
	out = append(out, s.manualFailoverTick(l, now, r)...)
	if s.Myself.Master != nil {
		out = append(out, s.handleFailover(l, now, r)...)
	}
	s.replicaMigration(now) // after the election: a replica it just promoted has no master to leave
	for _, n := range s.pendingFail {
		out = append(out, s.broadcastFail(n, l)...)
	}
	s.pendingFail = s.pendingFail[:0]
	out = append(out, s.Announce(l, r)...)
	if changed || s.ticks%10 == 0 {
		s.UpdateState(now)
	}
	return out
}

func (s *State) ping(n *Node, l *Local, now int64, r *rand.Rand) Out {
	n.PingSent = now
	return Out{To: n, Msg: s.BuildPing(wire.Ping, n, l, r)}
}

// oldestPong samples 5 random linked peers with no ping in flight and returns the one whose pong is
// oldest, as clusterCron's once-a-second ping.
func (s *State) oldestPong(r *rand.Rand) *Node {
	var cands []*Node
	for _, n := range s.Nodes {
		if n != s.Myself && n.Linked && n.PingSent == 0 && !n.has(wire.NodeHandshake|wire.NodePFail) {
			cands = append(cands, n)
		}
	}
	var best *Node
	for range min(5, len(cands)) {
		n := cands[r.IntN(len(cands))]
		if best == nil || n.PongReceived < best.PongReceived {
			best = n
		}
	}
	return best
}

// Unlinked lists the peers that need an outbound link (every known node but myself, including
// handshakes, as Redis connects to all); the caller dials each now. A dial counts as a PING sent when
// none is in flight, as Redis queues its PING before the connect completes: a peer that cannot be
// reached at all is flagged PFAIL a node timeout later.
func (s *State) Unlinked(now int64) []*Node {
	var ns []*Node
	for _, n := range s.Nodes {
		if n != s.Myself && !n.Linked && !n.has(wire.NodeNoAddr) {
			if n.PingSent == 0 {
				n.PingSent = now
			}
			ns = append(ns, n)
		}
	}
	return ns
}

// broadcastFail is a FAIL about n to every linked peer.
func (s *State) broadcastFail(n *Node, l *Local) []Out {
	var out []Out
	for _, p := range s.Nodes {
		if p == s.Myself || p.has(wire.NodeHandshake) || !p.Linked {
			continue
		}
		m := &wire.Msg{Header: s.Header(wire.Fail, l)}
		copy(m.FailName[:], n.Name)
		s.SentByType[wire.Fail]++
		out = append(out, Out{To: p, Msg: m})
	}
	return out
}

// PublishMsgs is a PUBLISH (shard false) for every linked node, or a PUBLISHSHARD (shard true) for
// the linked nodes of this node's shard (its master or itself, and their replicas), as Redis's
// clusterPropagatePublish and clusterPropagatePublishShard.
func (s *State) PublishMsgs(shard bool, channel, message []byte, l *Local) []Out {
	t := wire.Publish
	var to []*Node
	if shard {
		t = wire.PublishShard
		m := s.Myself
		if m.Master != nil {
			m = m.Master
		}
		to = append(to, m)
		to = append(to, m.Replicas...)
	} else {
		for _, n := range s.Nodes {
			to = append(to, n)
		}
	}
	var out []Out
	for _, n := range to {
		if n == s.Myself || !n.Linked || n.has(wire.NodeHandshake) {
			continue
		}
		s.SentByType[t]++
		out = append(out, Out{To: n, Msg: &wire.Msg{Header: s.Header(t, l), Channel: channel, Message: message}})
	}
	return out
}
