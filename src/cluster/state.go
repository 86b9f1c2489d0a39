package cluster

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/hotkv/hotkv/src/cluster/wire"
)

// Config holds the cluster-* settings the state machine reads.
type Config struct {
	NodeTimeout         int64 // ms (cluster-node-timeout)
	RequireFullCoverage bool
	AllowReadsWhenDown  bool
	// ReplicaValidityFactor and ReplPingPeriod (repl-ping-replica-period, s) bound how old a
	// replica's data may be for it to run an election (failover.go, dataTooOld); 0 turns the rule
	// off. ReplicaNoFailover (cluster-replica-no-failover) keeps myself from running one unless
	// asked by CLUSTER FAILOVER, and flags it nofailover for the other replicas' ranks.
	ReplicaValidityFactor int64
	ReplPingPeriod        int64
	ReplicaNoFailover     bool
	AllowReplicaMigration bool  // cluster-allow-replica-migration (migrate.go)
	MigrationBarrier      int64 // cluster-migration-barrier: replicas a master keeps when one migrates
}

// State is one node's view of the cluster. Not safe for concurrent use: the caller serializes.
type State struct {
	Cfg           Config
	Myself        *Node
	Nodes         map[string]*Node
	CurrentEpoch  uint64
	LastVoteEpoch uint64
	Owner         [Slots]*Node // the master serving each slot, nil when unassigned
	Migrating     [Slots]*Node // slot -> node it migrates to (only our own slots)
	Importing     [Slots]*Node // slot -> node it imports from
	OK            bool         // cluster_state
	Size          int          // masters serving at least one slot
	SentByType    [wire.TypeCount]uint64
	RecvByType    [wire.TypeCount]uint64
	// Forgotten maps a name CLUSTER FORGET dropped to the ms it may be re-added (60 s later, as Redis's
	// nodes blacklist).
	Forgotten map[string]int64

	// Version changes whenever a slot's owner, an importing mark, a node's role or the cluster state
	// changes: what a routing table built from the state depends on (Touch marks other changes).
	Version uint64

	// Promoted and Demoted are set when an election made myself a master, or a newer claim or a
	// replica migration made it a replica (Master says of whom); the caller acts on them
	// (replication) and clears them.
	Promoted, Demoted bool
	// Migrations counts the replica migrations myself made (migrate.go).
	Migrations uint64

	elect       election // myself's election, when a replica of a failed master
	mf          manualFailover
	firstUpdate int64   // ms of the first UpdateState (the writable delay counts from it)
	pendingFail []*Node // flagged FAIL since the last Tick; Tick broadcasts them
	pendingPong bool    // a command wants a PONG to every node (Announce)
	ticks       int
}

// New makes a fresh one-node cluster: myself, a master with no slots, under name (RandomName when "").
func New(name string, cfg Config) *State {
	if name == "" {
		name = RandomName()
	}
	s := &State{Cfg: cfg, Nodes: map[string]*Node{}, Forgotten: map[string]int64{}, Size: 1}
	s.Myself = &Node{Name: name, Flags: wire.NodeMyself | wire.NodeMaster}
	s.Nodes[name] = s.Myself
	return s
}

// Touch marks a change Version does not see by itself (an importing or migrating mark).
func (s *State) Touch() { s.Version++ }

// Node returns the node called name, or nil.
func (s *State) Node(name string) *Node { return s.Nodes[name] }

// assign gives slot to n (nil clears it), keeping Owner and each node's bitmap in step.
func (s *State) assign(slot int, n *Node) {
	s.Version++
	if old := s.Owner[slot]; old != nil {
		old.setSlot(slot, false)
	}
	s.Owner[slot] = n
	if n != nil {
		n.setSlot(slot, true)
		// A master's first slot makes it a migration target when some master has replicas, so a
		// master added to a cluster with replicas gets one too (Redis's clusterNodeSetSlotBit).
		if n.NumSlots == 1 && !n.migrateTo && s.mastersHaveReplicas() {
			n.migrateTo = true
		}
	}
}

// mastersHaveReplicas reports whether any master has a replica (clusterMastersHaveSlaves).
func (s *State) mastersHaveReplicas() bool {
	for _, n := range s.Nodes {
		if n.IsMaster() && len(n.Replicas) > 0 {
			return true
		}
	}
	return false
}

// sortedNodes is the nodes in name order (CLUSTER NODES has no defined order; a stable one helps tests).
func (s *State) sortedNodes() []*Node {
	ns := make([]*Node, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		ns = append(ns, n)
	}
	slices.SortFunc(ns, func(a, b *Node) int { return strings.Compare(a.Name, b.Name) })
	return ns
}

// AppendNodeLine appends n's CLUSTER NODES line without the newline. Migrating and importing slots are
// listed for myself only, as Redis does.
func (s *State) AppendNodeLine(dst []byte, n *Node) []byte {
	dst = append(dst, n.Name...)
	dst = append(dst, ' ')
	dst = append(dst, n.IP...)
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, int64(n.Port), 10)
	dst = append(dst, '@')
	dst = strconv.AppendInt(dst, int64(n.CPort), 10)
	if n.Hostname != "" {
		dst = append(append(dst, ','), n.Hostname...)
	}
	dst = append(append(dst, ' '), FlagString(n.Flags)...)
	if n.Master != nil {
		dst = append(append(dst, ' '), n.Master.Name...)
	} else {
		dst = append(dst, " -"...)
	}
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, n.PingSent, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, n.PongReceived, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, n.ConfigEpoch, 10)
	if n.Linked || n == s.Myself {
		dst = append(dst, " connected"...)
	} else {
		dst = append(dst, " disconnected"...)
	}
	if n.IsMaster() {
		dst = appendSlotRanges(dst, &n.Slots)
	}
	if n == s.Myself {
		for slot := range Slots {
			if m := s.Migrating[slot]; m != nil {
				dst = append(dst, " ["...)
				dst = strconv.AppendInt(dst, int64(slot), 10)
				dst = append(append(append(dst, "->-"...), m.Name...), ']')
			} else if im := s.Importing[slot]; im != nil {
				dst = append(dst, " ["...)
				dst = strconv.AppendInt(dst, int64(slot), 10)
				dst = append(append(append(dst, "-<-"...), im.Name...), ']')
			}
		}
	}
	return dst
}

// Nodes is CLUSTER NODES's text: one line per node, each ending in "\n".
func (s *State) NodesText() []byte {
	var b []byte
	for _, n := range s.sortedNodes() {
		b = append(s.AppendNodeLine(b, n), '\n')
	}
	return b
}

// SaveConfig is nodes.conf's contents: the node lines, then the vars line.
func (s *State) SaveConfig() []byte {
	b := s.NodesText()
	b = append(b, "vars currentEpoch "...)
	b = strconv.AppendUint(b, s.CurrentEpoch, 10)
	b = append(b, " lastVoteEpoch "...)
	b = strconv.AppendUint(b, s.LastVoteEpoch, 10)
	return append(b, '\n')
}

// ErrCorruptConfig is returned by LoadConfig for a nodes.conf Redis would refuse ("Unrecoverable
// error: corrupted cluster config file").
var ErrCorruptConfig = errors.New("Unrecoverable error: corrupted cluster config file")

// LoadConfig reads a nodes.conf as Redis's clusterLoadConfig does. Non-zero ping/pong times load as now
// (ms), as Redis does, so a loaded node is not taken as unreachable at once. An empty file gives
// (nil, nil): the caller starts a fresh node and saves it.
func LoadConfig(text []byte, cfg Config, now int64) (*State, error) {
	s := &State{Cfg: cfg, Nodes: map[string]*Node{}, Forgotten: map[string]int64{}, Size: 1}
	lines := strings.Split(string(text), "\n")
	empty := true
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		empty = false
		if f[0] == "vars" {
			if err := s.loadVars(f[1:]); err != nil {
				return nil, err
			}
			continue
		}
		if len(f) < 8 {
			return nil, ErrCorruptConfig
		}
		if err := s.loadNode(f, now); err != nil {
			return nil, err
		}
	}
	if empty {
		return nil, nil
	}
	if s.Myself == nil {
		return nil, ErrCorruptConfig
	}
	for _, n := range s.Nodes {
		if n.CPort == 0 && n.Name == "" {
			return nil, ErrCorruptConfig
		}
	}
	s.UpdateState(now)
	return s, nil
}

func (s *State) loadVars(f []string) error {
	for i := 0; i+1 < len(f); i += 2 {
		v, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return ErrCorruptConfig
		}
		switch f[i] {
		case "currentEpoch":
			s.CurrentEpoch = v
		case "lastVoteEpoch":
			s.LastVoteEpoch = v
		}
	}
	return nil
}

func (s *State) lookupOrCreate(name string) *Node {
	n := s.Nodes[name]
	if n == nil {
		n = &Node{Name: name}
		s.Nodes[name] = n
	}
	return n
}

func (s *State) loadNode(f []string, now int64) error {
	if !ValidName(f[0]) {
		return ErrCorruptConfig
	}
	n := s.lookupOrCreate(f[0])
	if err := parseAddr(n, f[1]); err != nil {
		return err
	}
	flags, ok := parseFlags(f[2])
	if !ok {
		return ErrCorruptConfig
	}
	n.Flags = flags
	if flags&wire.NodeMyself != 0 {
		s.Myself = n
	}
	if f[3] != "-" {
		if !ValidName(f[3]) {
			return ErrCorruptConfig
		}
		m := s.lookupOrCreate(f[3])
		n.Master = m
		m.Replicas = append(m.Replicas, n)
		m.migrateTo = true
	}
	if f[4] != "0" {
		n.PingSent = now
	}
	if f[5] != "0" {
		n.PongReceived = now
	}
	ep, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return ErrCorruptConfig
	}
	n.ConfigEpoch = ep
	for _, r := range f[8:] {
		if err := s.loadSlots(n, r); err != nil {
			return err
		}
	}
	return nil
}

// parseAddr reads "ip:port@cport[,hostname]" (or the pre-4.0 "ip:port", bus port = port+10000).
func parseAddr(n *Node, a string) error {
	if i := strings.IndexByte(a, ','); i >= 0 {
		n.Hostname, a = a[i+1:], a[:i]
	}
	bus := ""
	if i := strings.IndexByte(a, '@'); i >= 0 {
		bus, a = a[i+1:], a[:i]
	}
	i := strings.LastIndexByte(a, ':')
	if i < 0 {
		return ErrCorruptConfig
	}
	port, err := strconv.Atoi(a[i+1:])
	if err != nil || port < 0 || port > 65535 {
		return ErrCorruptConfig
	}
	n.IP, n.Port, n.CPort = a[:i], port, port+10000
	if bus != "" {
		if n.CPort, err = strconv.Atoi(bus); err != nil || n.CPort < 0 || n.CPort > 65535 {
			return ErrCorruptConfig
		}
	}
	return nil
}

func (s *State) loadSlots(n *Node, r string) error {
	if strings.HasPrefix(r, "[") {
		body := strings.TrimSuffix(r[1:], "]")
		dir, i := "->-", strings.Index(body, "->-")
		if i < 0 {
			dir, i = "-<-", strings.Index(body, "-<-")
		}
		if i < 0 {
			return ErrCorruptConfig
		}
		slot, err := strconv.Atoi(body[:i])
		peer := body[i+3:]
		if err != nil || slot < 0 || slot >= Slots || !ValidName(peer) {
			return ErrCorruptConfig
		}
		if dir == "->-" {
			s.Migrating[slot] = s.lookupOrCreate(peer)
		} else {
			s.Importing[slot] = s.lookupOrCreate(peer)
		}
		return nil
	}
	lo, hi := r, r
	if i := strings.IndexByte(r, '-'); i >= 0 {
		lo, hi = r[:i], r[i+1:]
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || a < 0 || b >= Slots || a > b {
		return ErrCorruptConfig
	}
	for slot := a; slot <= b; slot++ {
		s.assign(slot, n)
	}
	return nil
}

// UpdateState recomputes cluster_state and the cluster size as Redis's clusterUpdateState: the state
// is fail when full coverage is required and a slot is unassigned or its owner is FAIL, or when this
// master cannot reach a majority of the masters serving slots. (Redis also waits 2 s after a master
// rejoins before going ok; that rule is not implemented.) As Redis's, a master whose cluster is
// failing leaves state and size as they are for WritableDelay after the first call, so a node
// restarting does not serve before it has heard from the others (Redis starts with size 1).
func (s *State) UpdateState(now int64) {
	if s.firstUpdate == 0 {
		s.firstUpdate = now
	}
	if s.Myself.IsMaster() && !s.OK && now-s.firstUpdate < WritableDelay {
		return
	}
	ok := true
	if s.Cfg.RequireFullCoverage {
		for slot := range Slots {
			if o := s.Owner[slot]; o == nil || o.Failed() {
				ok = false
				break
			}
		}
	}
	size, reachable := 0, 0
	for _, n := range s.Nodes {
		if n.IsMaster() && n.NumSlots > 0 {
			size++
			if !n.has(wire.NodeFail | wire.NodePFail) {
				reachable++
			}
		}
	}
	s.Size = size
	if reachable < size/2+1 {
		ok = false
	}
	if s.OK != ok {
		s.Version++
	}
	s.OK = ok
}

// WritableDelay is Redis's CLUSTER_WRITABLE_DELAY (ms).
const WritableDelay = 2000

// SlotCounts returns (assigned, ok, pfail, fail) slot counts for CLUSTER INFO.
func (s *State) SlotCounts() (assigned, ok, pfail, fail int) {
	for slot := range Slots {
		o := s.Owner[slot]
		if o == nil {
			continue
		}
		assigned++
		switch {
		case o.Failed():
			fail++
		case o.has(wire.NodePFail):
			pfail++
		default:
			ok++
		}
	}
	return
}

// myEpoch is the configEpoch this node advertises: its own, or its master's when a replica.
func (s *State) myEpoch() uint64 {
	if m := s.Myself.Master; m != nil {
		return m.ConfigEpoch
	}
	return s.Myself.ConfigEpoch
}

// InfoText is CLUSTER INFO's text (CRLF line ends, as Redis), field for field as 7.0.15.
func (s *State) InfoText() []byte {
	assigned, ok, pfail, fail := s.SlotCounts()
	st := "ok"
	if !s.OK {
		st = "fail"
	}
	var b []byte
	str := func(k, v string) { b = append(append(append(append(b, k...), ':'), v...), "\r\n"...) }
	num := func(k string, v uint64) { str(k, strconv.FormatUint(v, 10)) }
	str("cluster_state", st)
	num("cluster_slots_assigned", uint64(assigned))
	num("cluster_slots_ok", uint64(ok))
	num("cluster_slots_pfail", uint64(pfail))
	num("cluster_slots_fail", uint64(fail))
	num("cluster_known_nodes", uint64(len(s.Nodes)))
	num("cluster_size", uint64(s.Size))
	num("cluster_current_epoch", s.CurrentEpoch)
	num("cluster_my_epoch", s.myEpoch())
	var sent, recv uint64
	for t := range wire.TypeCount {
		if v := s.SentByType[t]; v > 0 {
			num("cluster_stats_messages_"+t.String()+"_sent", v)
			sent += v
		}
	}
	num("cluster_stats_messages_sent", sent)
	for t := range wire.TypeCount {
		if v := s.RecvByType[t]; v > 0 {
			num("cluster_stats_messages_"+t.String()+"_received", v)
			recv += v
		}
	}
	num("cluster_stats_messages_received", recv)
	num("total_cluster_links_buffer_limit_exceeded", 0)
	return b
}
