package command

// Cluster mode (issue 23 item 5): CLUSTER, ASKING, READONLY, READWRITE, and the redirection check
// route makes (clusterRefusal) when Hooks.Cluster is set, that is when cluster-enabled is yes. The
// cluster itself (nodes, slots, the bus) is src/cluster; src/server fills the hook. In standalone
// mode route pays one nil check and CLUSTER answers ErrNoCluster, as Redis.

import (
	"bytes"
	"strconv"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/pipeline"

	"github.com/hotkv/hotkv/src/cluster"
	"github.com/hotkv/hotkv/src/pubsub"
)

// ClusterHooks is the server's cluster mode.
type ClusterHooks interface {
	// Cluster appends the reply to CLUSTER args (args[1] is the subcommand) in protocol proto.
	// keys holds the key counts its checks need (SETSLOT NODE, RESET, REPLICATE), taken before
	// the call: the hook must not take shard tokens under its own lock.
	Cluster(dst []byte, proto int, args [][]byte, keys KeyCounts) []byte
	// Redirect is "" when this node serves slot for a command of a client with the given ASKING
	// and READONLY state, else the error reply (MOVED, CLUSTERDOWN …) without its '-'. When it
	// is "" and the slot is open (being migrated from or, for an ASKING client, imported to this
	// node), open says so and askTo is the migration target's "ip:port": the command's keys then
	// decide, holding their shards (openSlotRefusal).
	Redirect(slot int, write, asking, readonly bool) (msg string, open SlotOpen, askTo string)
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

// SlotOpen and KeyCounts are src/cluster's (the hook's package names them too).
type (
	SlotOpen  = cluster.SlotOpen
	KeyCounts = cluster.KeyCounts
)

const (
	SlotStable    = cluster.SlotStable
	SlotMigrating = cluster.SlotMigrating
	SlotImporting = cluster.SlotImporting
)

// errSlotNotServed is the redirect of a slot no node serves (ClusterHooks.Redirect's text).
const errSlotNotServed = "CLUSTERDOWN Hash slot not served"

// clusterClient is a connection's cluster-mode state.
type clusterClient struct {
	asking   bool // ASKING: the next command may use an importing slot
	readonly bool // READONLY: reads may be served by a replica of the slot's master
	// The routed command's open slot (set by clusterRefusal, consumed by openSlotRefusal in
	// the barrier that runs it right after): its state, its slot, the migration target, and
	// whether it names several distinct keys.
	open  SlotOpen
	multi bool
	slot  int
	askTo string
}

var clusterSubs = []*Spec{
	{Name: "cluster|addslots", Arity: -3, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|addslotsrange", Arity: -4, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|bumpepoch", Arity: 2, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|count-failure-reports", Arity: 3, Flags: Admin | Stale},
	{Name: "cluster|countkeysinslot", Arity: 3, Flags: Stale, Scope: ScopeAll, Run: countKeysInSlotCmd},
	{Name: "cluster|delslots", Arity: -3, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|delslotsrange", Arity: -4, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|failover", Arity: -2, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|flushslots", Arity: 2, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|forget", Arity: 3, Flags: Admin | Stale | NoAsyncLoading},
	{Name: "cluster|getkeysinslot", Arity: 4, Flags: Stale, Scope: ScopeAll, Run: getKeysInSlotCmd},
	{Name: "cluster|help", Arity: 2, Flags: Loading | Stale, Run: clusterHelp},
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
	{Name: "cluster|slaves", Arity: 3, Flags: Admin | Stale},
	{Name: "cluster|slots", Arity: 2, Flags: Stale},
}

var clusterCommands = []*Spec{
	(&Spec{Name: "cluster", Arity: -2, Scope: ScopeConn}).sub(clusterSubsWithRun()...),
	{Name: "asking", Arity: 1, Flags: Fast, Scope: ScopeConn, Run: askingCmd},
	restoreAsking,
	{Name: "readonly", Arity: 1, Flags: Loading | Stale | Fast, Scope: ScopeConn, Run: readonlyCmd},
	{Name: "readwrite", Arity: 1, Flags: Loading | Stale | Fast, Scope: ScopeConn, Run: readwriteCmd},
}

// restoreAsking is RESTORE that an importing slot serves without ASKING (MIGRATE sends it). Redis
// flags it "asking"; route knows it by its Spec (one pointer compare).
var restoreAsking = &Spec{Name: "restore-asking", Arity: -4, Flags: Write | DenyOOM | Asking, FirstKey: 1, LastKey: 1,
	Step: 1, Run: restoreCmd}

func clusterSubsWithRun() []*Spec {
	for _, s := range clusterSubs {
		if s.Run == nil {
			s.Run = clusterCmd
		}
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
	c.Out = h.Cluster(c.Out, c.Proto, c.Args, c.E.clusterKeyCounts(c))
}

// CLUSTER HELP
func clusterHelp(c *Ctx) {
	if c.E.Hooks.Cluster == nil {
		c.Err(ErrNoCluster)
		return
	}
	replyHelpLines(c, clusterHelpLines)
}

// clusterHelpLines is redis-server 7.0.15's CLUSTER HELP text (LINKS included, though HotKV does
// not answer it yet), kept identical for clients that show it.
var clusterHelpLines = []string{
	"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ADDSLOTS <slot> [<slot> ...]",
	"    Assign slots to current node.",
	"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Assign slots which are between <start-slot> and <end-slot> to current node.",
	"BUMPEPOCH",
	"    Advance the cluster config epoch.",
	"COUNT-FAILURE-REPORTS <node-id>",
	"    Return number of failure reports for <node-id>.",
	"COUNTKEYSINSLOT <slot>",
	"    Return the number of keys in <slot>.",
	"DELSLOTS <slot> [<slot> ...]",
	"    Delete slots information from current node.",
	"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Delete slots information which are between <start-slot> and <end-slot> from current node.",
	"FAILOVER [FORCE|TAKEOVER]",
	"    Promote current replica node to being a master.",
	"FORGET <node-id>",
	"    Remove a node from the cluster.",
	"GETKEYSINSLOT <slot> <count>",
	"    Return key names stored by current node in a slot.",
	"FLUSHSLOTS",
	"    Delete current node own slots information.",
	"INFO",
	"    Return information about the cluster.",
	"KEYSLOT <key>",
	"    Return the hash slot for <key>.",
	"MEET <ip> <port> [<bus-port>]",
	"    Connect nodes into a working cluster.",
	"MYID",
	"    Return the node id.",
	"NODES",
	"    Return cluster configuration seen by node. Output format:",
	"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
	"REPLICATE <node-id>",
	"    Configure current node as replica to <node-id>.",
	"RESET [HARD|SOFT]",
	"    Reset current node (default: soft).",
	"SET-CONFIG-EPOCH <epoch>",
	"    Set config epoch of current node.",
	"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
	"    Set slot state.",
	"REPLICAS <node-id>",
	"    Return <node-id> replicas.",
	"SAVECONFIG",
	"    Force saving cluster configuration on disk.",
	"SLOTS",
	"    Return information about slots range mappings. Each range is made of:",
	"    start, end, master and replicas IP addresses, ports and ids",
	"SHARDS",
	"    Return information about slot range mappings and the nodes associated with them.",
	"LINKS",
	"    Return information about all network links between this node and its peers.",
	"    Output format is an array where each array element is a map containing attributes of a link",
	"HELP",
	"    Prints this help.",
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
	cl.cluster.open = SlotStable
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
	case "exec":
		if cl.tx.on && !cl.tx.dirtyExec {
			return e.clusterExecRefusal(cl, h, asking)
		}
		return ""
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
	r, open, askTo := h.Redirect(slot, spec.Flags&Write != 0, asking || spec == restoreAsking,
		cl.cluster.readonly)
	if r == errSlotNotServed {
		return r
	}
	multi := false
	for _, i := range pos[1:] {
		if cluster.KeySlot(args[i]) != slot {
			return ErrCrossSlot
		}
		multi = multi || !bytes.Equal(args[i], args[pos[0]])
	}
	if r == "" && open != SlotStable && spec.Name != "migrate" { // MIGRATE works in an open slot
		cl.cluster.open, cl.cluster.slot, cl.cluster.askTo, cl.cluster.multi = open, slot, askTo, multi
	}
	return r
}

// clusterExecRefusal is getNodeByQuery for an EXEC: the keys of every queued command count as one
// command's (Redis 7.0.15), so a transaction over two slots is CROSSSLOT and one whose slot this
// node no longer serves is MOVED (or CLUSTERDOWN) at EXEC, although each command passed when it
// was queued; route answers the EXEC with that error and discards the transaction. An open slot
// (resharding) is not tested key by key here: the queued commands' own test stands.
func (e *Engine) clusterExecRefusal(cl *Client, h ClusterHooks, asking bool) string {
	tx := &cl.tx
	slot, write := -1, false
	defer func() { cl.keyPos = cl.keyPos[:0] }()
	for i := range tx.cmds {
		cmd := &tx.cmds[i]
		if cmd.spec.Scope != ScopeKeys {
			continue
		}
		write = write || cmd.spec.Flags&Write != 0
		args := tx.args(cmd)
		pos := cmd.spec.keyIndexes(args, cl.keyPos[:0])
		cl.keyPos = pos
		for _, p := range pos {
			s := cluster.KeySlot(args[p])
			switch {
			case slot < 0:
				slot = s
				// As getNodeByQuery: an unserved first slot is reported before another slot.
				if r, _, _ := h.Redirect(slot, false, asking, cl.cluster.readonly); r == errSlotNotServed {
					return r
				}
			case s != slot:
				return ErrCrossSlot
			}
		}
	}
	if slot < 0 {
		return ""
	}
	r, _, _ := h.Redirect(slot, write, asking, cl.cluster.readonly)
	return r
}

// openSlotRefusal is getNodeByQuery's key test for a command in an open slot, made in the barrier
// that runs it, holding its keys' shards, so no MIGRATE moves a key between the test and the
// command. In a migrating slot a command missing all its keys is -ASK to the target, one missing
// some is -TRYAGAIN; an ASKING client's command in an importing slot is -TRYAGAIN when it names
// several keys and some are missing (Redis 7.0.15's rules).
func (e *Engine) openSlotRefusal(cl *Client, s *pipeline.Slot, now int64) string {
	cc := &cl.cluster
	open := cc.open
	cc.open = SlotStable
	missing, present := false, false
	for _, i := range cl.keyPos {
		key := s.Args[i]
		if e.data(e.shardOf(key)).dbs[s.DB].Peek(key, now) == nil {
			missing = true
		} else {
			present = true
		}
	}
	switch {
	case !missing:
		return ""
	case open == SlotMigrating && !present:
		return "ASK " + strconv.Itoa(cc.slot) + " " + cc.askTo
	case open == SlotMigrating || cc.multi:
		return ErrTryAgain
	}
	return ""
}

// clusterKeyCounts takes the key counts the CLUSTER hook's checks may need, one shard at a time
// (as Redis, which is single-threaded, counts them without a lock; a key written meanwhile is the
// same race a client's write after the reply would be).
func (e *Engine) clusterKeyCounts(c *Ctx) KeyCounts {
	k := KeyCounts{Slot: -1}
	sub := c.Args[1]
	needSlot := strs.EqualFold(sub, "setslot") && len(c.Args) > 2
	if !needSlot && !strs.EqualFold(sub, "reset") && !strs.EqualFold(sub, "replicate") {
		return k
	}
	if needSlot {
		if n, err := strconv.Atoi(string(c.Args[2])); err == nil && n >= 0 && n < cluster.Slots {
			k.Slot = n
		}
	}
	for id := range e.Group.Shards {
		e.runInShard(c, id, func(*pipeline.Shard) {
			ks := e.data(int32(id)).dbs[0]
			k.Total += ks.Len()
			if x := ks.Slots; x != nil && k.Slot >= 0 {
				k.InSlot += x.Count(k.Slot)
			}
		})
	}
	return k
}

// EnableSlotIndex makes every shard's database 0 keep its keys by hash slot (cluster mode), adding
// the keys it holds already. The server calls it before cluster mode serves.
func (e *Engine) EnableSlotIndex() {
	e.Group.LockAll()
	defer e.Group.UnlockAll()
	for id := range e.Group.Shards {
		e.data(int32(id)).dbs[0].Reindex(keyspace.NewSlotIndex(cluster.Slots, cluster.KeySlotString))
	}
}

// CLUSTER COUNTKEYSINSLOT slot
func countKeysInSlotCmd(c *Ctx) {
	if c.E.Hooks.Cluster == nil {
		c.Err(ErrNoCluster)
		return
	}
	slot, ok := ParseInt(c.Args[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if slot < 0 || slot >= cluster.Slots {
		c.Err("ERR Invalid slot")
		return
	}
	n := 0
	for id := range c.E.Group.Shards {
		if x := c.E.data(int32(id)).dbs[0].Slots; x != nil {
			n += x.Count(int(slot))
		}
	}
	c.Int(int64(n))
}

// CLUSTER GETKEYSINSLOT slot count
func getKeysInSlotCmd(c *Ctx) {
	if c.E.Hooks.Cluster == nil {
		c.Err(ErrNoCluster)
		return
	}
	slot, ok := ParseInt(c.Args[2])
	max, ok2 := ParseInt(c.Args[3])
	if !ok || !ok2 {
		c.Err(ErrNotInt)
		return
	}
	if slot < 0 || slot >= cluster.Slots || max < 0 {
		c.Err("ERR Invalid slot or number of keys")
		return
	}
	var keys []string
	for id := range c.E.Group.Shards {
		x := c.E.data(int32(id)).dbs[0].Slots
		if x == nil || int64(len(keys)) >= max {
			continue
		}
		x.Keys(int(slot), int(max-int64(len(keys))), func(en *keyspace.Entry) { keys = append(keys, en.Key()) })
	}
	c.Out = resp.AppendArrayLen(c.Out, len(keys))
	for _, k := range keys {
		c.Out = resp.AppendBulkString(c.Out, k)
	}
}

// infoCluster is INFO's cluster section: Redis 7.0 has one field.
func infoCluster(w *infoWriter, c *Ctx) {
	if c != nil && c.E.Hooks.Cluster != nil {
		w.int("cluster_enabled", 1)
		return
	}
	w.int("cluster_enabled", 0)
}
