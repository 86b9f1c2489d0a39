package command

// Cluster mode (issue 23 item 5): CLUSTER, ASKING, READONLY, READWRITE, and the redirection check
// route makes (clusterRefusal) when Hooks.Cluster is set, that is when cluster-enabled is yes. The
// cluster itself (nodes, slots, the bus) is src/cluster; src/server fills the hook. In standalone
// mode route pays one nil check and CLUSTER answers ErrNoCluster, as Redis.

import (
	"strconv"

	"github.com/hotkv/hotkv/src/cluster"
	"github.com/hotkv/hotkv/src/pubsub"
)

// ClusterHooks is the server's cluster mode.
type ClusterHooks interface {
	// Cluster appends the reply to CLUSTER args (args[1] is the subcommand) in protocol proto.
	Cluster(dst []byte, proto int, args [][]byte) []byte
	// Redirect is "" when this node serves slot for a command of a client with the given ASKING
	// and READONLY state, else the error reply (MOVED, ASK, CLUSTERDOWN …) without its '-'.
	Redirect(slot int, write, asking, readonly bool) string
	// Publish sends a PUBLISH (shard false: to every node) or SPUBLISH (shard true: to the nodes of
	// this node's shard) over the bus.
	Publish(shard bool, channel, message []byte)
}

// PublishFromBus delivers a message that arrived on the cluster bus to this node's subscribers,
// without sending it on again. Safe from any goroutine.
func (e *Engine) PublishFromBus(shard bool, channel, message []byte) {
	kind := pubsub.Channel
	if shard {
		kind = pubsub.ShardChannel
	}
	var woken []*pubsub.Subscriber
	e.PubSub.Publish(kind, channel, message, &woken)
	for _, s := range woken {
		s.Wake()
	}
}

// errSlotNotServed is the redirect of a slot no node serves (ClusterHooks.Redirect's text).
const errSlotNotServed = "CLUSTERDOWN Hash slot not served"

// clusterClient is a connection's cluster-mode state.
type clusterClient struct {
	asking   bool // ASKING: the next command may use an importing slot
	readonly bool // READONLY: reads may be served by a replica of the slot's master
}

var clusterSubs = []*Spec{
	{Name: "cluster|addslots", Arity: -3, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|addslotsrange", Arity: -4, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|bumpepoch", Arity: 2, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|count-failure-reports", Arity: 3, Flags: Admin | Stale},
	{Name: "cluster|delslots", Arity: -3, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|delslotsrange", Arity: -4, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|failover", Arity: -2, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|flushslots", Arity: 2, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|forget", Arity: 3, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|help", Arity: 2, Flags: Loading | Stale},
	{Name: "cluster|info", Arity: 2, Flags: Stale},
	{Name: "cluster|keyslot", Arity: 3, Flags: Stale},
	{Name: "cluster|links", Arity: 2, Flags: Stale},
	{Name: "cluster|meet", Arity: -4, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|myid", Arity: 2, Flags: Stale},
	{Name: "cluster|nodes", Arity: 2, Flags: Stale},
	{Name: "cluster|replicas", Arity: 3, Flags: Admin | Stale},
	{Name: "cluster|replicate", Arity: 3, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|reset", Arity: -2, Flags: Admin | NoScript | Stale},
	{Name: "cluster|saveconfig", Arity: 2, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|set-config-epoch", Arity: 3, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|setslot", Arity: -4, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|shards", Arity: 2, Flags: Stale},
	{Name: "cluster|shards", Arity: 2, Flags: Stale},
	{Name: "cluster|slaves", Arity: 3, Flags: Admin | Stale},
	{Name: "cluster|slots", Arity: 2, Flags: Stale},
}

var clusterCommands = []*Spec{
	(&Spec{Name: "cluster", Arity: -2, Scope: ScopeConn}).sub(clusterSubsWithRun()...),
	{Name: "asking", Arity: 1, Flags: Fast, Scope: ScopeConn, Run: askingCmd},
	{Name: "readonly", Arity: 1, Flags: Loading | Stale | Fast, Scope: ScopeConn, Run: readonlyCmd},
	{Name: "readwrite", Arity: 1, Flags: Loading | Stale | Fast, Scope: ScopeConn, Run: readwriteCmd},
}

func clusterSubsWithRun() []*Spec {
	for _, s := range clusterSubs {
		s.Run = clusterCmd
	}
	return clusterSubs
}

// CLUSTER <subcommand> [args]
func clusterCmd(c *Ctx) {
	h := c.E.Hooks.Cluster
	if h == nil {
		c.Err(ErrNoCluster)
		return
	}
	c.Out = h.Cluster(c.Out, c.Proto, c.Args)
}

// ASKING
func askingCmd(c *Ctx) {
	if c.E.Hooks.Cluster == nil {
		c.Err(ErrNoCluster)
		return
	}
	c.Client.cluster.asking = true
	c.OK()
}

// READONLY
func readonlyCmd(c *Ctx) {
	if c.E.Hooks.Cluster == nil {
		c.Err(ErrNoCluster)
		return
	}
	c.Client.cluster.readonly = true
	c.OK()
}

// READWRITE
func readwriteCmd(c *Ctx) {
	if c.E.Hooks.Cluster == nil {
		c.Err(ErrNoCluster)
		return
	}
	c.Client.cluster.readonly = false
	c.OK()
}

// clusterRefusal is route's cluster-mode check, as Redis's getNodeByQuery: keys in different slots
// are CROSSSLOT, a slot this node does not serve is the hook's redirect; SELECT of another db and
// REPLICAOF are refused. ASKING lasts one command. The replication master client is never
// redirected.
func (e *Engine) clusterRefusal(cl *Client, spec *Spec, args [][]byte) string {
	h := e.Hooks.Cluster
	asking := cl.cluster.asking
	if spec.Name != "asking" {
		cl.cluster.asking = false
	}
	if cl.ID == e.repl.master.Load() { // the primary's stream is applied whatever the slots (as Redis)
		return ""
	}
	switch spec.Name {
	case "select":
		if n, err := strconv.Atoi(string(args[1])); err == nil && n != 0 {
			return ErrSelectCluster
		}
		return ""
	case "replicaof", "slaveof":
		return ErrReplicaOfCluster
	}
	if spec.Scope != ScopeKeys {
		return ""
	}
	pos := spec.keyIndexes(args, cl.keyPos[:0])
	cl.keyPos = pos
	if len(pos) == 0 {
		return ""
	}
	// As getNodeByQuery: an unserved first slot is reported before keys of other slots.
	slot := cluster.KeySlot(args[pos[0]])
	r := h.Redirect(slot, spec.Flags&Write != 0, asking, cl.cluster.readonly)
	if r == errSlotNotServed {
		return r
	}
	for _, i := range pos[1:] {
		if cluster.KeySlot(args[i]) != slot {
			return ErrCrossSlot
		}
	}
	return r
}

// infoCluster is INFO's cluster section: Redis 7.0 has one field.
func infoCluster(w *infoWriter, c *Ctx) {
	if c != nil && c.E.Hooks.Cluster != nil {
		w.int("cluster_enabled", 1)
		return
	}
	w.int("cluster_enabled", 0)
}
