package cluster

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hotkv/hotkv/src/cluster/wire"
)

// sim runs State machines for nodes on ports 7000+i over an in-memory bus. Every message goes through
// wire.Encode and wire.Decode. A node that is down neither sends nor receives, and links to it stay
// "up" (like a hung process; DEBUG SLEEP), so detection rests on missing pongs.
type sim struct {
	t     *testing.T
	now   int64
	nodes []*simNode
	r     *rand.Rand
	cut   map[[2]int]bool // traffic between these nodes is lost (both orders are stored)
}

type simNode struct {
	st   *State
	loc  Local
	down bool
}

const simTimeout = 3000

func newSim(t *testing.T, n int) *sim {
	s := &sim{t: t, now: 1_000_000, r: rand.New(rand.NewPCG(7, uint64(n))), cut: map[[2]int]bool{}}
	for i := range n {
		st := New("", Config{NodeTimeout: simTimeout, RequireFullCoverage: true})
		st.Myself.IP, st.Myself.Port, st.Myself.CPort = "127.0.0.1", 7000+i, 17000+i
		s.nodes = append(s.nodes, &simNode{st: st, loc: Local{Port: 7000 + i, CPort: 17000 + i}})
	}
	return s
}

func (s *sim) byPort(port int) int { return port - 7000 }

// kill stops node i as kill -9 does: its peers' links to it break and redials fail until it is back.
func (s *sim) kill(i int) {
	s.nodes[i].down = true
	for _, n := range s.nodes {
		if k := n.st.Nodes[s.nodes[i].st.Myself.Name]; k != nil {
			n.st.Disconnected(k)
		}
	}
}

func (s *sim) recode(m *wire.Msg) *wire.Msg {
	b := wire.Encode(nil, m)
	var d wire.Msg
	if err := wire.Decode(b, &d); err != nil {
		s.t.Fatalf("own message does not decode: %v", err)
	}
	if !bytes.Equal(wire.Encode(nil, &d), b) {
		s.t.Fatalf("own message re-encodes differently")
	}
	return &d
}

// send delivers out from node i over i's outbound link to out.To; the receiver's answers on that
// link come back to i with out.To as the link's node.
func (s *sim) send(i int, out Out) {
	if out.Drop {
		return // the state already counts the link as down
	}
	j := s.byPort(out.To.Port)
	if j < 0 || j >= len(s.nodes) || s.nodes[i].down || s.nodes[j].down || s.cut[[2]int{i, j}] {
		return
	}
	rj := s.nodes[j]
	for _, rep := range rj.st.Receive(nil, "127.0.0.1", s.recode(out.Msg), &rj.loc, s.now, s.r) {
		if rep.To == nil {
			ri := s.nodes[i]
			for _, o := range ri.st.Receive(out.To, "127.0.0.1", s.recode(rep.Msg), &ri.loc, s.now, s.r) {
				if o.To != nil {
					s.send(i, o)
				}
			}
		} else {
			s.send(j, rep)
		}
	}
}

func (s *sim) step() {
	s.now += TickEvery
	for i, n := range s.nodes {
		if n.down {
			continue
		}
		for _, p := range n.st.Unlinked(s.now) {
			if j := s.byPort(p.Port); j >= 0 && j < len(s.nodes) && !s.nodes[j].down {
				s.send(i, n.st.Connected(p, &n.loc, s.now, s.r))
			}
		}
		for _, o := range n.st.Tick(&n.loc, s.now, s.r) {
			s.send(i, o)
		}
	}
}

// runUntil steps until ok holds or ms of simulated time pass, and returns the time taken.
func (s *sim) runUntil(ms int64, what string, ok func() bool) int64 {
	start := s.now
	for s.now-start < ms {
		if ok() {
			return s.now - start
		}
		s.step()
	}
	s.t.Fatalf("%s: not reached after %d ms (simulated)\n%s", what, ms, s.dump())
	return 0
}

func (s *sim) dump() string {
	var b bytes.Buffer
	for i, n := range s.nodes {
		fmt.Fprintf(&b, "node %d (down %v):\n%s", i, n.down, n.st.NodesText())
	}
	return b.String()
}

// converged: every live node knows every live node by its real name, and all agree on slot owners.
func (s *sim) converged() bool {
	var ref *State
	for _, n := range s.nodes {
		if n.down {
			continue
		}
		for _, o := range s.nodes {
			if o.down {
				continue
			}
			k := n.st.Nodes[o.st.Myself.Name]
			if k == nil || k.has(wire.NodeHandshake) {
				return false
			}
		}
		for _, k := range n.st.Nodes {
			if k.has(wire.NodeHandshake) {
				return false
			}
		}
		if ref == nil {
			ref = n.st
			continue
		}
		for slot := range Slots {
			a, b := ref.Owner[slot], n.st.Owner[slot]
			if (a == nil) != (b == nil) || a != nil && a.Name != b.Name {
				return false
			}
		}
	}
	return true
}

func (s *sim) allOK() bool {
	for _, n := range s.nodes {
		if !n.down && !n.st.OK {
			return false
		}
	}
	return true
}

func (s *sim) split(masters int) {
	per := Slots / masters
	for i := range masters {
		hi := (i+1)*per - 1
		if i == masters-1 {
			hi = Slots - 1
		}
		var slots []int
		for slot := i * per; slot <= hi; slot++ {
			slots = append(slots, slot)
		}
		if err := s.nodes[i].st.AddSlots(slots, s.now); err != nil {
			s.t.Fatal(err)
		}
	}
}

// meetAll is what redis-cli --cluster create does: set distinct config epochs, then MEET everyone
// from node 0.
func (s *sim) meetAll() {
	for i, n := range s.nodes {
		if err := n.st.SetConfigEpoch(int64(i + 1)); err != nil {
			s.t.Fatal(err)
		}
	}
	for i := 1; i < len(s.nodes); i++ {
		s.nodes[0].st.Meet("127.0.0.1", 7000+i, 17000+i, s.now)
	}
}

func TestSimMeetConverges(t *testing.T) {
	for _, n := range []int{3, 6, 10} {
		s := newSim(t, n)
		s.split(min(n, 5))
		s.meetAll()
		took := s.runUntil(30000, "convergence", func() bool { return s.converged() && s.allOK() })
		t.Logf("%d nodes: converged and ok after %d ms simulated", n, took)
		for _, nd := range s.nodes {
			if len(nd.st.Nodes) != n {
				t.Fatalf("node knows %d nodes, want %d", len(nd.st.Nodes), n)
			}
		}
	}
}

// TestSimEpochCollision: masters that all start at configEpoch 0 end with distinct epochs.
func TestSimEpochCollision(t *testing.T) {
	s := newSim(t, 4)
	s.split(4)
	for i := 1; i < 4; i++ {
		s.nodes[0].st.Meet("127.0.0.1", 7000+i, 17000+i, s.now)
	}
	s.runUntil(30000, "distinct epochs", func() bool {
		if !s.converged() {
			return false
		}
		seen := map[uint64]bool{}
		for _, n := range s.nodes {
			e := n.st.Myself.ConfigEpoch
			if seen[e] {
				return false
			}
			seen[e] = true
		}
		return true
	})
}

// TestSimFailureDetection: a master that stops answering is flagged PFAIL and then FAIL by every live
// node (majority of 5 masters), the cluster goes fail (full coverage), and the flag lifts after it
// returns.
func TestSimFailureDetection(t *testing.T) {
	s := newSim(t, 5)
	s.split(5)
	s.meetAll()
	s.runUntil(30000, "convergence", func() bool { return s.converged() && s.allOK() })
	victim := s.nodes[4].st.Myself.Name
	s.kill(4)
	failed := func() bool {
		for _, n := range s.nodes[:4] {
			if k := n.st.Nodes[victim]; !k.Failed() || n.st.OK {
				return false
			}
		}
		return true
	}
	took := s.runUntil(4*simTimeout, "FAIL everywhere", failed)
	if took < simTimeout {
		t.Fatalf("FAIL after %d ms, before the node timeout", took)
	}
	t.Logf("FAIL on all 4 live nodes %d ms after the node stopped", took)
	// The node that marked FAIL counted a majority's reports; the others may have learnt FAIL
	// from its broadcast before any report reached them (map order decides), so any one will do.
	reports := 0
	for _, n := range s.nodes[:4] {
		c, _ := n.st.CountFailureReports(victim, s.now)
		reports = max(reports, c)
	}
	if reports == 0 {
		t.Fatalf("no failure reports counted on any live node")
	}
	s.nodes[4].down = false
	s.runUntil(4*simTimeout, "recovery", func() bool {
		for _, n := range s.nodes[:4] {
			if n.st.Nodes[victim].has(wire.NodeFail | wire.NodePFail) {
				return false
			}
		}
		return s.allOK()
	})
}

// TestSimNoFailWithoutMajority: with 5 masters, two that lose a third are not a majority: PFAIL, never
// FAIL.
func TestSimNoFailWithoutMajority(t *testing.T) {
	s := newSim(t, 5)
	s.split(5)
	s.meetAll()
	s.runUntil(30000, "convergence", func() bool { return s.converged() && s.allOK() })
	// Only nodes 0 and 1 lose node 4 (2 of 5 masters): PFAIL there, no FAIL anywhere.
	victim := s.nodes[4].st.Myself.Name
	orig := s.nodes[0].st.Nodes[victim]
	s.cut[[2]int{0, 4}], s.cut[[2]int{4, 0}], s.cut[[2]int{1, 4}], s.cut[[2]int{4, 1}] = true, true, true, true
	for range 3 * simTimeout / TickEvery {
		s.step()
	}
	for i, n := range s.nodes[:4] {
		if n.st.Nodes[victim].Failed() {
			t.Fatalf("node %d flagged FAIL on 2 of 5 masters' reports", i)
		}
	}
	if !orig.has(wire.NodePFail) {
		t.Fatalf("node 0 did not flag PFAIL")
	}
}

// TestSimSlotMoves: SETSLOT NODE on the importing side with a bumped epoch moves the slot everywhere.
func TestSimSlotMoves(t *testing.T) {
	s := newSim(t, 3)
	s.split(3)
	s.meetAll()
	s.runUntil(30000, "convergence", func() bool { return s.converged() && s.allOK() })
	a, b := s.nodes[0].st, s.nodes[1].st
	b.Importing[100] = b.Nodes[a.Myself.Name]
	a.Migrating[100] = a.Nodes[b.Myself.Name]
	if err := b.SetSlotNode(100, b.Myself.Name, s.now); err != nil {
		t.Fatal(err)
	}
	s.runUntil(10000, "slot 100 moves", func() bool {
		for _, n := range s.nodes {
			if o := n.st.Owner[100]; o == nil || o.Name != b.Myself.Name {
				return false
			}
		}
		return a.Migrating[100] == nil
	})
}

// replicate makes node r a replica of node m in every view (what CLUSTER REPLICATE starts).
func (s *sim) replicate(r, m int) {
	if err := s.nodes[r].st.Replicate(s.nodes[m].st.Myself.Name, true, s.now); err != nil {
		s.t.Fatal(err)
	}
}

// TestSimFailover: 3 masters with a replica each; a killed master's replica wins the election
// within Redis's bounds (node timeout to FAIL, then 0.5-1 s delay and the vote), every live node
// moves the slots to it and the cluster is ok again; the old master, back, becomes its replica.
func TestSimFailover(t *testing.T) {
	s := newSim(t, 6)
	s.split(3)
	s.meetAll()
	s.runUntil(30000, "convergence", func() bool { return s.converged() })
	for i := range 3 {
		s.replicate(3+i, i)
	}
	s.runUntil(30000, "replicas known and ok", func() bool {
		for _, n := range s.nodes {
			for i := range 3 {
				if k := n.st.Nodes[s.nodes[3+i].st.Myself.Name]; k == nil || k.Master == nil ||
					k.Master.Name != s.nodes[i].st.Myself.Name {
					return false
				}
			}
		}
		return s.allOK()
	})
	oldName, newName := s.nodes[0].st.Myself.Name, s.nodes[3].st.Myself.Name
	s.kill(0)
	took := s.runUntil(30000, "failover", func() bool {
		for _, n := range s.nodes[1:] {
			if o := n.st.Owner[0]; o == nil || o.Name != newName {
				return false
			}
		}
		return s.allOK()
	})
	t.Logf("replica promoted, slots moved everywhere and cluster ok %d ms (simulated) after the kill", took)
	if took > 10000 {
		t.Fatalf("failover took %d ms", took)
	}
	if !s.nodes[3].st.Promoted || !s.nodes[3].st.Myself.IsMaster() {
		t.Fatalf("winner not flagged promoted")
	}
	s.nodes[0].down = false
	s.runUntil(30000, "old master rejoins as replica", func() bool {
		me := s.nodes[0].st.Myself
		return me.Master != nil && me.Master.Name == newName && me.NumSlots == 0 && s.allOK()
	})
	if !s.nodes[0].st.Demoted {
		t.Fatalf("old master not flagged demoted")
	}
	_ = oldName
}

// newSimWithReplica is a converged simulation of three masters and node 3 as node 0's replica,
// known as such by every node, with the cluster ok everywhere.
func newSimWithReplica(t *testing.T) *sim {
	s := newSim(t, 4)
	s.split(3)
	s.meetAll()
	s.runUntil(30000, "convergence", func() bool { return s.converged() })
	s.replicate(3, 0)
	s.runUntil(30000, "replica known and ok", func() bool {
		for _, n := range s.nodes {
			if k := n.st.Nodes[s.nodes[3].st.Myself.Name]; k == nil || k.Master == nil {
				return false
			}
		}
		return s.allOK()
	})
	return s
}

// TestSimManualFailover: CLUSTER FAILOVER TAKEOVER and FORCE on a replica whose master is healthy
// make it the master everywhere, and the old master its replica.
func TestSimManualFailover(t *testing.T) {
	for _, mode := range []string{"takeover", "force"} {
		s := newSimWithReplica(t)
		r := s.nodes[3]
		outs, err := r.st.ManualFailover(mode == "force", mode == "takeover", &r.loc, s.now, s.r)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			s.send(3, o)
		}
		newName := r.st.Myself.Name
		took := s.runUntil(10000, mode+" failover", func() bool {
			for _, n := range s.nodes {
				if o := n.st.Owner[0]; o == nil || o.Name != newName {
					return false
				}
			}
			old := s.nodes[0].st.Myself
			return old.Master != nil && old.Master.Name == newName && s.allOK()
		})
		t.Logf("%s: slots moved, old master now a replica, %d ms simulated", mode, took)
	}
	st := New("", Config{NodeTimeout: 3000})
	if _, err := st.ManualFailover(false, false, &Local{}, 0, nil); err == nil || err.Error() != "ERR You should send CLUSTER FAILOVER to a replica" {
		t.Fatalf("on a master: %v", err)
	}
}

// moveSlot is redis-cli --cluster reshard's move of slot from node src to node dst: IMPORTING,
// MIGRATING, then SETSLOT NODE on each node of order, each command's announcements sent before the
// next command (as the bus writes them before the reply). between, when set, runs after the
// command on order[0].
func (s *sim) moveSlot(slot, src, dst int, order []int, between func()) {
	from, to := s.nodes[src].st, s.nodes[dst].st
	to.Importing[slot] = to.Nodes[from.Myself.Name]
	from.Migrating[slot] = from.Nodes[to.Myself.Name]
	for k, i := range order {
		n := s.nodes[i]
		if err := n.st.SetSlotNode(slot, to.Myself.Name, s.now); err != nil {
			s.t.Fatal(err)
		}
		for _, o := range n.st.Announce(&n.loc, s.r) {
			s.send(i, o)
		}
		if k == 0 && between != nil {
			between()
		}
	}
}

// TestSimReshardThroughNode: slot 0 moves from node 0 to node 1 and at once on to node 2 (redis-cli
// --cluster reshard twice, no gossip between), node 2 taking it first and a PING node 1 sent before
// its own SETSLOT NODE reaching node 2 after. Node 2 must have bumped over node 1's new epoch,
// which it knows only from the PONG node 1 announces on taking the slot: without it node 2 stayed
// at epoch 3 under node 1's 4 and gave the slot back to node 1 for good (seen with redis-server as
// node 2).
func TestSimReshardThroughNode(t *testing.T) {
	s := newSim(t, 3)
	s.split(3)
	s.meetAll()
	s.runUntil(30000, "convergence", func() bool { return s.converged() && s.allOK() })
	s.moveSlot(0, 0, 1, []int{0, 1, 2}, nil)
	h, c := s.nodes[1], s.nodes[2]
	if e := h.st.Myself.ConfigEpoch; e != 4 {
		t.Fatalf("node 1's epoch after taking slot 0: %d, want 4", e)
	}
	stale := h.st.BuildPing(wire.Ping, nil, &h.loc, s.r) // still claims slot 0
	s.moveSlot(0, 1, 2, []int{2, 1, 0}, func() {
		s.send(1, Out{To: h.st.Nodes[c.st.Myself.Name], Msg: stale})
	})
	if ce, he := c.st.Myself.ConfigEpoch, c.st.Nodes[h.st.Myself.Name].ConfigEpoch; ce <= he {
		t.Fatalf("node 2's epoch %d after importing slot 0, node 1's %d", ce, he)
	}
	s.runUntil(10000, "slot 0 on node 2 everywhere", func() bool {
		for _, n := range s.nodes {
			if o := n.st.Owner[0]; o == nil || o.Name != c.st.Myself.Name {
				return false
			}
		}
		return true
	})
}

// TestSimManualFailoverDefault: CLUSTER FAILOVER without flags. The master pauses on MFSTART (the
// test plays the caller: it reports the pause with offset 1000); the replica, at 900, must not
// start an election until it reaches 1000, then wins it, and the old master follows it, which
// ends its pause. A second run where the replica never catches up gives up after
// ManualFailoverTimeout on both sides with no change of roles.
func TestSimManualFailoverDefault(t *testing.T) {
	for _, catchUp := range []bool{true, false} {
		s := newSimWithReplica(t)
		m, r := s.nodes[0], s.nodes[3]
		m.loc.ReplOffset, r.loc.ReplOffset = 1000, 900
		outs, err := r.st.ManualFailover(false, false, &r.loc, s.now, s.r)
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != 1 || outs[0].Msg.Type != wire.MFStart || outs[0].To.Name != m.st.Myself.Name {
			t.Fatalf("CLUSTER FAILOVER sent %v, want one MFSTART to the master", outs)
		}
		s.send(3, outs[0])
		if !m.st.WantPause() {
			t.Fatalf("master does not ask for a pause after MFSTART")
		}
		for _, o := range m.st.Paused(&m.loc, s.now, s.r) {
			s.send(0, o)
		}
		if !r.st.mf.offKnown || r.st.mf.masterOff != 1000 {
			t.Fatalf("replica's view of the paused master's offset: known %v, %d", r.st.mf.offKnown, r.st.mf.masterOff)
		}
		for range 20 { // 2 s behind the master: no election
			s.step()
			if r.st.Myself.IsMaster() || r.st.elect.authSent {
				t.Fatalf("replica at offset 900 started an election before reaching the master's 1000")
			}
		}
		if !catchUp {
			s.runUntil(ManualFailoverTimeout, "manual failover timeout", func() bool {
				return !m.st.WantPause() && !r.st.ManualFailoverInProgress()
			})
			if r.st.Myself.IsMaster() || !m.st.Myself.IsMaster() {
				t.Fatalf("roles changed although the replica never caught up")
			}
			continue
		}
		r.loc.ReplOffset = 1000
		newName := r.st.Myself.Name
		took := s.runUntil(5000, "coordinated failover", func() bool {
			for _, n := range s.nodes {
				if o := n.st.Owner[0]; o == nil || o.Name != newName {
					return false
				}
			}
			old := m.st.Myself
			return old.Master != nil && old.Master.Name == newName && s.allOK()
		})
		if m.st.WantPause() || m.st.ManualFailoverInProgress() || r.st.ManualFailoverInProgress() {
			t.Fatalf("manual failover state left after it completed")
		}
		t.Logf("replica caught up: slots moved and old master a replica %d ms (simulated) later", took)
	}
}

// killMasterOfReplica kills node 0 and waits until node 3, its replica, sees it FAIL.
func (s *sim) killMasterOfReplica() {
	m := s.nodes[0].st.Myself.Name
	s.kill(0)
	s.runUntil(30000, "master FAIL in its replica's view", func() bool { return s.nodes[3].st.Nodes[m].Failed() })
}

// stepFor runs ms of simulated time.
func (s *sim) stepFor(ms int64) {
	for end := s.now + ms; s.now < end; {
		s.step()
	}
}

// TestSimReplicaNoFailover: a replica with cluster-replica-no-failover shows nofailover (to itself
// and, by gossip, to every node), runs no election when its master fails, 15 s after the FAIL (an
// election takes under 10 s, TestSimFailover), and CLUSTER FAILOVER FORCE still promotes it.
func TestSimReplicaNoFailover(t *testing.T) {
	s := newSimWithReplica(t)
	r := s.nodes[3]
	r.st.Cfg.ReplicaNoFailover = true
	name := r.st.Myself.Name
	s.runUntil(10000, "nofailover flag known everywhere", func() bool {
		for _, n := range s.nodes {
			if k := n.st.Nodes[name]; k == nil || !k.has(wire.NodeNoFailover) {
				return false
			}
		}
		return true
	})
	if txt := r.st.NodesText(); !bytes.Contains([]byte(txt), []byte("myself,slave,nofailover ")) {
		t.Fatalf("CLUSTER NODES of the replica:\n%s", txt)
	}
	s.killMasterOfReplica()
	s.stepFor(15000)
	if r.st.Myself.IsMaster() || r.st.Promoted {
		t.Fatalf("a nofailover replica took over")
	}
	outs, err := r.st.ManualFailover(true, false, &r.loc, s.now, s.r)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		s.send(3, o)
	}
	s.runUntil(10000, "FORCE failover of a nofailover replica", func() bool {
		for _, n := range s.nodes[1:] {
			if o := n.st.Owner[0]; o == nil || o.Name != name {
				return false
			}
		}
		return s.allOK()
	})
	r.st.Cfg.ReplicaNoFailover = false
	s.step()
	if r.st.Myself.has(wire.NodeNoFailover) {
		t.Fatalf("flag kept after the setting was cleared")
	}
}

// TestSimReplicaValidityFactor: with cluster-replica-validity-factor 10 and a 10 s ping period, a
// replica whose data is older than node timeout + 10 s + 10 x node timeout runs no election (15 s
// after its master's FAIL), one exactly at that age wins one, and a factor of 0 lets any age win.
func TestSimReplicaValidityFactor(t *testing.T) {
	limit := int64(simTimeout + 10*1000 + 10*simTimeout)
	for _, c := range []struct {
		factor, age int64
		promoted    bool
	}{{10, limit + 1, false}, {10, limit, true}, {0, 1 << 62, true}} {
		s := newSimWithReplica(t)
		r := s.nodes[3]
		r.st.Cfg.ReplicaValidityFactor, r.st.Cfg.ReplPingPeriod = c.factor, 10
		r.loc.DataAge = c.age
		s.killMasterOfReplica()
		s.stepFor(15000)
		if got := r.st.Myself.IsMaster(); got != c.promoted {
			t.Fatalf("factor %d, data age %d ms: promoted %v, want %v", c.factor, c.age, got, c.promoted)
		}
		if c.promoted {
			continue
		}
		r.loc.DataAge = 0 // the data is fresh again (a real replica's is not, once its master is gone)
		s.runUntil(10000, "election once the data is fresh", func() bool { return r.st.Myself.IsMaster() })
	}
}

func TestDataTooOld(t *testing.T) {
	s := New("", Config{NodeTimeout: 15000, ReplicaValidityFactor: 10, ReplPingPeriod: 10})
	limit := int64(15000 + 10*1000 + 10*15000)
	for _, c := range []struct {
		age int64
		old bool
	}{{0, false}, {15000, false}, {limit, false}, {limit + 1, true}, {1 << 62, true}} {
		if got := s.dataTooOld(c.age); got != c.old {
			t.Errorf("age %d: %v, want %v", c.age, got, c.old)
		}
	}
	s.Cfg.ReplicaValidityFactor = 1 << 62 // node timeout x factor overflows: never too old
	if s.dataTooOld(1 << 62) {
		t.Errorf("an overflowing limit was reached")
	}
	s.Cfg.ReplicaValidityFactor = 0
	if s.dataTooOld(1 << 62) {
		t.Errorf("factor 0 still checks")
	}
}
