package command

// Replication commands (issue 23): REPLCONF, PSYNC, SYNC, REPLICAOF/SLAVEOF, ROLE and WAIT, over
// Hooks.Repl that src/server fills (repl*.go); without it they answer as a primary with no
// replicas. The replica gates (-READONLY, -MASTERDOWN, -NOREPLICAS) are route's (replGate).

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/strs"
	"github.com/hotkv/hotkv/src/command/meta"
)

// ReplHooks is the server's replication, which the commands call.
type ReplHooks interface {
	// Replconf answers REPLCONF (args without the command name); silent: no reply (ACK, GETACK).
	Replconf(cl *Client, args [][]byte) (reply []byte, silent bool)
	// Sync takes cl over as a replica: PSYNC replid offset (psync true) or SYNC. It writes its
	// own replies to cl's outbox; an error reply is returned instead.
	Sync(cl *Client, psync bool, replid string, offset int64) (errReply string)
	// ReplicaOf is REPLICAOF host port, or NO ONE when host is empty; the reply is returned.
	ReplicaOf(cl *Client, host string, port int) []byte
	// Role appends ROLE's reply.
	Role(dst []byte, proto int) []byte
	// Wait is WAIT numreplicas timeout-ms (0 = forever): the number of replicas that acknowledged
	// the writes made before it, or an error reply.
	Wait(cl *Client, n int64, timeoutMs int64) (acked int64, errReply string)
	// Info appends INFO's replication section's fields.
	Info(dst []byte) []byte
	// SyncStats are INFO stats' sync_full, sync_partial_ok and sync_partial_err.
	SyncStats() (full, ok, failed int64)
	// Failover is FAILOVER with its arguments parsed; the reply is returned.
	Failover(cl *Client, a FailoverArgs) []byte
	// PsyncFailover is the first step of PSYNC replid offset FAILOVER: a replica whose replid is
	// replid becomes a primary; otherwise the error reply is returned and the PSYNC ends.
	PsyncFailover(cl *Client, replid string) (errReply string)
}

var replCommands = []*Spec{
	{Name: "replconf", Arity: -1, Flags: Admin | NoScript | Loading | Stale | AllowBusy, Scope: ScopeConn, Run: replconfCmd},
	{Name: "psync", Arity: -3, Flags: Admin | NoMulti | NoScript | NoAsyncLoading, Scope: ScopeConn, Run: psyncCmd},
	{Name: "sync", Arity: 1, Flags: Admin | NoMulti | NoScript | NoAsyncLoading, Scope: ScopeConn, Run: syncCmd},
	{Name: "replicaof", Arity: 3, Flags: Admin | NoScript | Stale | NoAsyncLoading, Scope: ScopeConn, Run: replicaofCmd},
	{Name: "slaveof", Arity: 3, Flags: Admin | NoScript | Stale | NoAsyncLoading, Scope: ScopeConn, Run: replicaofCmd},
	{Name: "role", Arity: 1, Flags: NoScript | Loading | Stale | Fast, Scope: ScopeConn, Run: roleCmd},
	{Name: "wait", Arity: 3, Flags: NoScript, Scope: ScopeConn, Run: waitCmd},
	{Name: "failover", Arity: -1, Flags: Admin | NoScript | Stale, Scope: ScopeConn, Run: failoverCmd},
}

// Silence suppresses the reply of the running command (REPLCONF ACK, PSYNC: the server writes
// to the connection itself).
func (c *Ctx) Silence() {
	if c.slot != nil {
		c.slot.Silent = true
	}
}

// REPLCONF <option> <value> [<option> <value> ...]
func replconfCmd(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.Err(ErrSyntax)
		return
	}
	h := c.E.Hooks.Repl
	if h == nil {
		c.OK()
		return
	}
	reply, silent := h.Replconf(c.Client, c.Args[1:])
	if silent {
		c.Silence()
		return
	}
	c.Out = append(c.Out, reply...)
}

// PSYNC replicationid offset
func psyncCmd(c *Ctx) {
	off, err := strconv.ParseInt(string(c.Args[2]), 10, 64)
	if err != nil {
		c.Err(ErrNotInt)
		return
	}
	if len(c.Args) > 3 && strs.EqualFold(c.Args[3], "failover") {
		if h := c.E.Hooks.Repl; h != nil && !c.Client.tx.on {
			if msg := h.PsyncFailover(c.Client, string(c.Args[1])); msg != "" {
				c.Err(msg)
				return
			}
		}
	}
	syncGeneric(c, true, string(c.Args[1]), off)
}

// SYNC
func syncCmd(c *Ctx) { syncGeneric(c, false, "", 0) }

func syncGeneric(c *Ctx, psync bool, replid string, off int64) {
	if c.Client.tx.on {
		c.Err("ERR Replica can't sync while in a MULTI") // not reached: NoMulti
		return
	}
	h := c.E.Hooks.Repl
	if h == nil {
		c.Err("ERR replication is not available")
		return
	}
	if msg := h.Sync(c.Client, psync, replid, off); msg != "" {
		c.Err(msg)
		return
	}
	c.Silence()
}

// REPLICAOF host port | NO ONE
func replicaofCmd(c *Ctx) {
	h := c.E.Hooks.Repl
	if h == nil {
		c.Err("ERR replication is not available")
		return
	}
	if strs.EqualFold(c.Args[1], "no") && strs.EqualFold(c.Args[2], "one") {
		c.Out = append(c.Out, h.ReplicaOf(c.Client, "", 0)...)
		return
	}
	port, err := strconv.ParseInt(string(c.Args[2]), 10, 64)
	if err != nil {
		c.Err(ErrNotInt)
		return
	}
	c.Out = append(c.Out, h.ReplicaOf(c.Client, string(c.Args[1]), int(port))...)
}

// FailoverArgs are FAILOVER's parsed arguments.
type FailoverArgs struct {
	Abort     bool   // FAILOVER ABORT
	To        bool   // TO host port given; else any replica
	Host      string // TO's
	Port      int64  // TO's
	Force     bool   // FORCE
	TimeoutMs int64  // TIMEOUT; 0 = none
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], parsed as Redis 7.0.15 does: ABORT only
// alone, each option once, TO's port and TIMEOUT integers, TIMEOUT above 0; the state checks
// follow in the hook.
func failoverCmd(c *Ctx) {
	if c.E.Hooks.Cluster != nil {
		c.Err("ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.")
		return
	}
	h := c.E.Hooks.Repl
	if len(c.Args) == 2 && strs.EqualFold(c.Args[1], "abort") {
		if h == nil {
			c.Err("ERR No failover in progress.")
			return
		}
		c.Out = append(c.Out, h.Failover(c.Client, FailoverArgs{Abort: true})...)
		return
	}
	var a FailoverArgs
	for j := 1; j < len(c.Args); j++ {
		arg := c.Args[j]
		switch {
		case strs.EqualFold(arg, "timeout") && j+1 < len(c.Args) && a.TimeoutMs == 0:
			v, ok := ParseInt(c.Args[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v <= 0 {
				c.Err("ERR FAILOVER timeout must be greater than 0")
				return
			}
			a.TimeoutMs = v
			j++
		case strs.EqualFold(arg, "to") && j+2 < len(c.Args) && !a.To:
			v, ok := ParseInt(c.Args[j+2])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			a.To, a.Host, a.Port = true, string(c.Args[j+1]), v
			j += 2
		case strs.EqualFold(arg, "force") && !a.Force:
			a.Force = true
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if h == nil {
		c.Err("ERR FAILOVER requires connected replicas.")
		return
	}
	c.Out = append(c.Out, h.Failover(c.Client, a)...)
}

// ROLE
func roleCmd(c *Ctx) {
	if h := c.E.Hooks.Repl; h != nil {
		c.Out = h.Role(c.Out, c.Proto)
		return
	}
	c.ArrayLen(3)
	c.BulkString("master")
	c.Int(0)
	c.ArrayLen(0)
}

// WAIT numreplicas timeout
func waitCmd(c *Ctx) {
	n, err := strconv.ParseInt(string(c.Args[1]), 10, 64)
	if err != nil {
		c.Err(ErrNotInt)
		return
	}
	t, err := strconv.ParseInt(string(c.Args[2]), 10, 64)
	if err != nil {
		c.Err(ErrTimeout)
		return
	}
	if t < 0 {
		c.Err(ErrTimeoutNeg)
		return
	}
	h := c.E.Hooks.Repl
	if h == nil {
		c.Int(0)
		return
	}
	acked, msg := h.Wait(c.Client, n, t)
	if msg != "" {
		c.Err(msg)
		return
	}
	c.Int(acked)
}

// The replica gates' texts, as Redis 7.0.15's shared objects.
const (
	ErrReadOnlyReplica = "READONLY You can't write against a read only replica."
	ErrMasterDown      = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	ErrNoReplicas      = "NOREPLICAS Not enough good replicas to write."
)

// replGate is route's replication state: the gate bits (in persist.gate, so route pays nothing
// more while none is set) and the master link's client, which the gates let through.
type replGate struct {
	master atomic.Uint64 // the client applying the primary's stream
	role   atomic.Bool   // the replica role: no active expiry, expired keys kept for the primary's DEL
	nrep   atomic.Int32  // clients marked as replicas
	reps   sync.Map      // client ID -> struct{}: replicas (CLIENT LIST/KILL TYPE replica)
}

// SetReplicaRole enters (on) or leaves the replica role. In it, as in a Redis replica, keys are
// not expired by the server: the active expiry cycle does not run, and a key past its time is
// missing to every client but the master link's yet stays (DBSIZE counts it) until the
// primary's DEL arrives (Ctx.Find, FindIn, FindRead).
func (e *Engine) SetReplicaRole(on bool) { e.repl.role.Store(on) }

// replicaKeeps reports, in the replica role or while a pause holds the dataset still
// (datasetPaused, pause.go), whether key is missing to this client without being reclaimed:
// absent, or past its time and left for the primary's DEL (or for the end of the pause). The
// master link's lookups reclaim, as Redis's expireIfNeeded lets the master client through
// before it looks at the pause.
func (c *Ctx) replicaKeeps(ks *keyspace.Keyspace, key []byte) bool {
	return c.keepsExpired() && ks.Peek(key, c.Now) == nil
}

// keepsExpired reports whether this call must leave what has expired in place (expiryHeld), as
// every client but the master link must.
func (c *Ctx) keepsExpired() bool {
	return c.E.expiryHeld() && (c.Client == nil || c.Client.ID != c.E.repl.master.Load())
}

// expiryHeld reports whether the server deletes no expired key of its own accord: in the
// replica role, which waits for the primary's DELs, and while paused (datasetPaused).
func (e *Engine) expiryHeld() bool { return e.repl.role.Load() || e.datasetPaused() }

// SetReplicaClient marks cl as a replica (on) or not, for CLIENT KILL TYPE and the output class.
func (e *Engine) SetReplicaClient(cl *Client, on bool) {
	if on {
		if _, loaded := e.repl.reps.LoadOrStore(cl.ID, struct{}{}); !loaded {
			e.repl.nrep.Add(1)
		}
	} else if _, ok := e.repl.reps.LoadAndDelete(cl.ID); ok {
		e.repl.nrep.Add(-1)
	}
}

// replKind is cl's kind when it is a replication link: the master client or a replica.
func (cl *Client) replKind() (clientKind, bool) {
	e := cl.e
	if e == nil {
		return 0, false
	}
	if m := e.repl.master.Load(); m != 0 && m == cl.ID {
		return kindMaster, true
	}
	if e.repl.nrep.Load() > 0 {
		if _, ok := e.repl.reps.Load(cl.ID); ok {
			return kindReplica, true
		}
	}
	return 0, false
}

const (
	gateReadOnly   uint32 = 1 << 8  // a replica with replica-read-only yes
	gateStale      uint32 = 1 << 9  // a replica whose link is down, replica-serve-stale-data no
	gateNoReplicas uint32 = 1 << 10 // min-replicas-to-write not met
	gateRedisRepl  uint32 = 1 << 11 // a replica without capa hotkv is attached
)

// redis70 reports whether Redis 7.0 has the command (its metadata lists it): a replica without
// capa hotkv can apply only those.
func redis70(spec *Spec) bool {
	redis70Once.Do(func() {
		redis70Set = map[*Spec]bool{}
		for name, s := range table {
			redis70Set[s] = meta.Lookup(name) != nil || redisForms[name]
			for _, sub := range s.Subs {
				redis70Set[sub] = meta.Lookup(sub.Name) != nil
			}
		}
	})
	return redis70Set[spec]
}

var (
	// redisForms are HotKV's writes that replicate in Redis 7.0's forms only (NEXPIRE and
	// NEXPIREAT as PEXPIREAT, expire.go's propagateExpire): a Redis replica applies them.
	redisForms  = map[string]bool{"nexpire": true, "nexpireat": true}
	redis70Once sync.Once
	redis70Set  map[*Spec]bool
)

// ErrRedisReplicaFmt refuses a HotKV-only write while a Redis replica is attached.
const ErrRedisReplicaFmt = "ERR '%s' cannot be replicated: a replica without capa hotkv (a Redis server) is attached and would diverge"

// SetReplGates sets the replica gates: readOnly refuses writes (-READONLY), stale refuses
// commands without the Stale flag (-MASTERDOWN), noReplicas refuses writes (-NOREPLICAS),
// redisReplica refuses writes of commands Redis 7.0 does not have (hash-field TTLs, TAG.*,
// VSIM.*, V*, …): a Redis replica never diverges silently.
func (e *Engine) SetReplGates(readOnly, stale, noReplicas, redisReplica bool) {
	e.persist.set(gateReadOnly, readOnly)
	e.persist.set(gateStale, stale)
	e.persist.set(gateNoReplicas, noReplicas)
	e.persist.set(gateRedisRepl, redisReplica)
}

// SetMasterClient marks cl as the client applying the primary's stream (nil: none).
func (e *Engine) SetMasterClient(cl *Client) {
	if cl == nil {
		e.repl.master.Store(0)
		return
	}
	e.repl.master.Store(cl.ID)
}

// replRefusal is the replica gates' reply for spec, or "", in processCommand's order.
func (e *Engine) replRefusal(cl *Client, spec *Spec, g uint32) string {
	if g&(gateReadOnly|gateStale|gateNoReplicas|gateRedisRepl) == 0 || cl.ID == e.repl.master.Load() {
		return ""
	}
	write := spec.Flags&Write != 0 || spec.Name == "exec" && txWrites(cl)
	if g&gateNoReplicas != 0 && write {
		return ErrNoReplicas
	}
	if g&gateRedisRepl != 0 && spec.Flags&Write != 0 && !redis70(spec) {
		return fmt.Sprintf(ErrRedisReplicaFmt, spec.Name)
	}
	if g&gateReadOnly != 0 && write {
		return ErrReadOnlyReplica
	}
	if g&gateStale != 0 && spec.Flags&Stale == 0 {
		return ErrMasterDown
	}
	return ""
}

// ReplIDs returns the run id and the replication id (INFO's run_id and master_replid).
func (e *Engine) ReplIDs() (runID, replID string) { return e.info.ids() }

// SetReplID replaces the replication id (a replica takes its primary's; a promotion a new one).
func (e *Engine) SetReplID(id string) {
	e.info.ids()
	e.info.mu.Lock()
	e.info.replID = id
	e.info.mu.Unlock()
}

// NewReplID returns a fresh random replication id.
func NewReplID() string { return randomHexID(20) }

// PushRaw queues p on cl's outbox, as it is, and wakes its connection (the primary's stream to
// a replica). It returns the outbox's size after, for the caller's own backpressure; false when
// the client is closing.
func (cl *Client) PushRaw(p []byte) (int64, bool) {
	b := &cl.push
	b.mu.Lock()
	if b.closed || cl.killed.Load() {
		b.mu.Unlock()
		return 0, false
	}
	b.buf = append(b.buf, p...)
	n := int64(len(b.buf))
	b.size.Store(n)
	b.mu.Unlock()
	cl.wake()
	return n, true
}

// Outbox returns the bytes waiting in cl's outbox and what its transport has not sent yet.
func (cl *Client) Outbox() int64 {
	n := cl.push.size.Load()
	if f := cl.pending.Load(); f != nil {
		_, out := (*f)()
		n += out
	}
	return n
}

// Killed reports whether cl was killed or is closing.
func (cl *Client) Killed() bool { return cl.killed.Load() }
