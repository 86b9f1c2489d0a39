// Package cluster is Redis Cluster's node state: who is in the cluster, which master owns each of the
// 16384 slots, the epochs that order slot claims, failure detection and the CLUSTER commands' logic.
//
// It is a pure state machine in the style of etcd's raft: State is fed bus messages (wire.Msg) and the
// current time in milliseconds, and answers with the messages to send; it does no I/O, keeps no clock
// and starts no goroutines. The caller (the bus links and the command layer) serializes every call.
//
// Formats follow Redis 7.0.15: CLUSTER NODES lines and nodes.conf are clusterGenNodeDescription's,
// CLUSTER INFO's fields and order are clusterGenInfo's.
package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/hotkv/hotkv/src/cluster/wire"
)

// NameLen is a node name's length: 40 lowercase hex digits.
const NameLen = wire.NameLen

// Node is what this node knows of one cluster node (itself included).
type Node struct {
	Name        string
	Flags       uint16 // wire.Node* bits
	IP          string
	Port        int // client port
	CPort       int // bus port
	PPort       int // plaintext port under TLS (0 otherwise)
	Hostname    string
	Master      *Node // nil for a master
	Replicas    []*Node
	ConfigEpoch uint64
	Slots       [wire.SlotsBytes]byte
	NumSlots    int

	PingSent     int64 // ms; 0 when no ping is in flight
	PongReceived int64 // ms
	DataReceived int64 // ms of the last message on any link from it
	FailTime     int64 // ms it was flagged FAIL
	VotedTime    int64 // ms this node (as a master) last voted for one of its replicas
	ReplOffset   uint64
	// FailReports maps the name of each master that reported this node PFAIL or FAIL to the time of
	// its latest report.
	FailReports map[string]int64
	Linked      bool  // an outbound link to it is up
	LinkTime    int64 // ms the outbound link came up

	// migrateTo is Redis's CLUSTER_NODE_MIGRATE_TO: n is a master that replicas may migrate to once
	// it has none working (migrate.go). Kept by setRole and assign; neither on the wire (no peer
	// reads it) nor in nodes.conf (loading derives it again).
	migrateTo    bool
	orphanedTime int64 // ms a migration check first saw n orphaned; 0 when it was not
}

// RandomName is a fresh node name as Redis makes one (40 random hex digits).
func RandomName() string {
	var b [NameLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("BUG: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// ValidName reports whether s can be a node name (40 hex digits, either case as Redis's verifyClusterNodeId
// only checks the length; lookups compare exactly).
func ValidName(s string) bool { return len(s) == NameLen }

func (n *Node) has(f uint16) bool { return n.Flags&f != 0 }

// IsMaster reports whether n is a master.
func (n *Node) IsMaster() bool { return n.has(wire.NodeMaster) }

// Failed reports whether n is flagged FAIL.
func (n *Node) Failed() bool { return n.has(wire.NodeFail) }

// HasSlot reports whether n claims slot.
func (n *Node) HasSlot(slot int) bool { return wire.SlotSet(&n.Slots, slot) }

func (n *Node) setSlot(slot int, on bool) {
	if n.HasSlot(slot) == on {
		return
	}
	wire.SetSlot(&n.Slots, slot, on)
	if on {
		n.NumSlots++
	} else {
		n.NumSlots--
	}
}

// flagNames is representClusterNodeFlags's table, in its order.
var flagNames = []struct {
	bit  uint16
	name string
}{
	{wire.NodeMyself, "myself"}, {wire.NodeMaster, "master"}, {wire.NodeSlave, "slave"},
	{wire.NodePFail, "fail?"}, {wire.NodeFail, "fail"}, {wire.NodeHandshake, "handshake"},
	{wire.NodeNoAddr, "noaddr"}, {wire.NodeNoFailover, "nofailover"},
}

// FlagString is the node's flags as CLUSTER NODES prints them ("noflags" for none).
func FlagString(flags uint16) string {
	var b strings.Builder
	for _, f := range flagNames {
		if flags&f.bit != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f.name)
		}
	}
	if b.Len() == 0 {
		return "noflags"
	}
	return b.String()
}

func parseFlags(s string) (uint16, bool) {
	var flags uint16
	for _, p := range strings.Split(s, ",") {
		if p == "noflags" {
			continue
		}
		found := false
		for _, f := range flagNames {
			if f.name == p {
				flags |= f.bit
				found = true
			}
		}
		if !found {
			return 0, false
		}
	}
	return flags, true
}

// appendSlotRanges appends the node's slots as CLUSTER NODES does: " a-b" for runs, " a" for one slot.
func appendSlotRanges(dst []byte, bm *[wire.SlotsBytes]byte) []byte {
	for s := 0; s < Slots; s++ {
		if !wire.SlotSet(bm, s) {
			continue
		}
		e := s
		for e+1 < Slots && wire.SlotSet(bm, e+1) {
			e++
		}
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(s), 10)
		if e > s {
			dst = append(dst, '-')
			dst = strconv.AppendInt(dst, int64(e), 10)
		}
		s = e
	}
	return dst
}
