package command

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/pipeline"
)

// Transactions (MULTI, EXEC, DISCARD), as Redis 7.0's multi.c:
//
//  1. MULTI only flags the client. While it is flagged, route (route.go) checks every command
//     as it would run it (unknown command, arity, authentication, no_multi) and, instead of
//     running it, copies its arguments out of the read buffer into the client's own buffer
//     (DESIGN invariant 7) and replies +QUEUED. A command refused while queuing replies its
//     error and marks the transaction, so that EXEC replies EXECABORT. EXEC, DISCARD, MULTI,
//     WATCH, QUIT and RESET are not queued.
//  2. EXEC is a barrier (ScopeSelf): it takes the tokens of every shard its queued commands and
//     its watched keys touch, in ascending order (every shard when a queued command needs them
//     all or names no key), checks the watches under them, and runs each queued command through
//     call, in order, replying an array of their replies. Blocking commands do not block
//     (Ctx.noBlock). Commands that lock for themselves (SORT, SCAN) see Ctx.tx set and use the
//     tokens EXEC holds.
//  3. What the queued commands changed is replicated as one feed entry: the commands' own
//     replicated forms (expired keys' DELs included) in order, wrapped in MULTI … EXEC when
//     there are two or more, a SELECT where the database changes, as Redis 7.0.15's AOF shows;
//     a transaction that wrote nothing propagates nothing. Their keyspace events are published
//     with EXEC's slot, in order, and blocked clients are served after the last command.

var multiCommands = []*Spec{
	{Name: "multi", Arity: 1, Flags: NoScript | Loading | Stale | Fast | AllowBusy, Scope: ScopeConn, Run: multiCmd},
	{Name: "exec", Arity: 1, Flags: NoScript | Loading | Stale | SkipSlowlog, Scope: ScopeSelf, Run: execCmd},
	{Name: "discard", Arity: 1, Flags: NoScript | Loading | Stale | Fast | AllowBusy, Scope: ScopeSelf, Run: discardCmd},
	{Name: "watch", Arity: -2, Flags: NoScript | Loading | Stale | Fast | AllowBusy, FirstKey: 1, LastKey: -1,
		Step: 1, Scope: ScopeSelf, Run: watchCmd},
	{Name: "unwatch", Arity: 1, Flags: NoScript | Loading | Stale | Fast | AllowBusy, Scope: ScopeSelf, Run: unwatchCmd},
}

// txState is a client's transaction: owner-only but for dirtyCAS (set by whichever executor
// changes a watched key, under that key's token) and shown (read by CLIENT LIST elsewhere).
type txState struct {
	on        bool // between MULTI and EXEC/DISCARD
	dirtyExec bool // a command was refused while queuing: EXEC aborts
	mayWait   bool // a queued command may sleep (DEBUG) or wait on the network (MIGRATE): EXEC must not run on a poller
	dirtyCAS  atomic.Bool
	// shown is the number of queued commands plus one while in MULTI, 0 outside (CLIENT LIST
	// multi= shows shown-1).
	shown    atomic.Int32
	shownMem atomic.Int64 // queuedBytes, for CLIENT LIST multi-mem

	cmds []txCmd
	offs []int32 // start and end in buf of every queued argument, in pairs
	buf  []byte  // the queued arguments' bytes, reused from one transaction to the next

	watched []watchRef
	wshards []int32 // scratch for the shards of the watched keys

	// What EXEC uses while it runs the queued commands.
	ctx    Ctx
	slot   pipeline.Slot
	argv   [][]byte
	keyPos []int
	shards []int32
	ops    []byte // the replicated form collected from the queued commands
	wrap   []byte // ops inside MULTI … EXEC
	nops   int
	opsDB  int // the database of the first op (the feed entry's)
	lastDB int
	after  []byte // the client's own tracking invalidations, sent after EXEC's reply
	// keepPre makes collect also keep the DELs of keys found expired in pres (uvarint database,
	// then the command): a script run's undo log puts them back after cutting its writes out.
	keepPre bool
	pres    []byte
	runs    uint32 // EXECs run, for sampling their commands' durations (timeSample)

	// held and heldAll are the shards EXEC holds while it runs the queued commands, for the
	// scripts among them (scripting.go).
	held    []int32
	heldAll bool
	// stopped is set when the server's stop ended a script run inside EXEC: as Redis, which
	// exits inside the script, the transaction replicates nothing (scriptRun.finish).
	stopped bool

	// ofRun marks a script run's own collection (not EXEC's). What a run shows others waits in
	// it until the run ends, so that a run undone to run again under every shard shows only
	// the rerun's, as Redis, which runs a script once, shows it once: mon, its MONITOR lines;
	// touched, the keys it changed that someone watches (uvarint database, 1 if deleted by its
	// expiry, uvarint length, key), told to the watchers before the run lets its shards go;
	// inval, the keys it changed while clients track keys (touched's form), invalidated then.
	ofRun   bool
	mon     []byte
	touched []byte
	inval   []byte
}

// txCmd is one queued command: its spec and the range of its arguments in offs (pairs).
type txCmd struct {
	spec     *Spec
	from, to int32
}

// txQueueMax bounds what a finished transaction keeps for the next one.
const txQueueMax = 1 << 20

// isTxControl reports whether spec runs at once inside MULTI instead of being queued.
func isTxControl(spec *Spec) bool {
	switch spec.Name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// queue adds the routed command in s to cl's transaction and answers +QUEUED.
func (e *Engine) queue(cl *Client, spec *Spec, s *pipeline.Slot) {
	tx := &cl.tx
	s.Target = pipeline.TargetNone
	s.Reply = append(s.Reply[:0], "+QUEUED\r\n"...)
	if tx.dirtyExec {
		return // EXEC will abort: nothing needs keeping (Redis's queueMultiCommand)
	}
	from := int32(len(tx.offs))
	for _, a := range s.Args {
		start := len(tx.buf)
		tx.buf = append(tx.buf, a...)
		tx.offs = append(tx.offs, int32(start), int32(len(tx.buf)))
	}
	tx.cmds = append(tx.cmds, txCmd{spec: spec, from: from, to: int32(len(tx.offs))})
	tx.mayWait = tx.mayWait || spec.Name == "debug" || spec.Name == "migrate" || runsScript(spec)
	tx.shown.Store(int32(len(tx.cmds)) + 1)
	tx.shownMem.Store(int64(tx.queuedBytes()))
}

// queuedBytes is the memory the queued arguments hold (CLIENT LIST multi-mem).
func (tx *txState) queuedBytes() int { return len(tx.buf) + 4*len(tx.offs) }

// args returns cmd's arguments, slices of tx.buf valid until the transaction ends.
func (tx *txState) args(cmd *txCmd) [][]byte {
	tx.argv = tx.argv[:0]
	for i := cmd.from; i < cmd.to; i += 2 {
		tx.argv = append(tx.argv, tx.buf[tx.offs[i]:tx.offs[i+1]:tx.offs[i+1]])
	}
	return tx.argv
}

// end leaves MULTI and drops the queue, keeping its storage unless it grew large.
func (tx *txState) end() {
	tx.on, tx.dirtyExec, tx.mayWait = false, false, false
	tx.shown.Store(0)
	tx.shownMem.Store(0)
	clear(tx.cmds)
	tx.cmds, tx.offs, tx.buf = tx.cmds[:0], tx.offs[:0], tx.buf[:0]
	if cap(tx.buf) > txQueueMax {
		tx.buf, tx.offs, tx.cmds = nil, nil, nil
	}
	clear(tx.argv)
	tx.slot.Args = nil
}

// MULTI
func multiCmd(c *Ctx) {
	tx := &c.Client.tx
	if tx.on {
		c.Err(ErrMultiNested)
		return
	}
	tx.on = true
	tx.shown.Store(1)
	c.OK()
}

// DISCARD
func discardCmd(c *Ctx) {
	cl := c.Client
	if !cl.tx.on {
		c.Err(ErrDiscardNoMulti)
		return
	}
	c.E.discardTx(cl)
	c.OK()
}

// discardTx ends cl's transaction and drops its watches (Redis's discardTransaction).
func (e *Engine) discardTx(cl *Client) {
	cl.tx.end()
	e.unwatchAll(cl)
}

// EXEC
func execCmd(c *Ctx) {
	cl, e := c.Client, c.E
	tx := &cl.tx
	switch {
	case !tx.on:
		c.Err(ErrExecNoMulti)
		return
	case tx.dirtyExec:
		c.Err(ErrExecAbort)
		e.discardTx(cl)
		return
	}
	defer tx.end()
	shards, all := e.txShards(cl)
	switch {
	case c.slot != nil && c.slot.Target >= 0: // the shard's work: its executor holds the one token (multi_place.go)
		defer func() { e.data(shards[0]).running = c }() // for the work's later slots
	case all:
		e.Group.LockAll()
		defer e.Group.UnlockAll()
	default:
		e.Group.Lock(shards)
		defer e.Group.Unlock(shards)
	}
	if msg := e.busyHeld(cl, c.Spec, shards, all, c.Now); msg != "" { // it waited for a busy script (scripting_busy.go)
		e.unwatchLocked(cl)
		c.Err(execAbortText(msg))
		return
	}
	if tx.dirtyCAS.Load() || e.watchedExpiredLocked(cl, c.Now) {
		e.unwatchLocked(cl)
		c.NullArray()
		return
	}
	e.unwatchLocked(cl) // as soon as possible: nothing the commands do can abort them now
	e.runTxLocked(c, shards, all)
}

// txShards returns the shards EXEC must hold, sorted, or all when it needs every shard: those
// of the queued commands' keys and of the watched keys.
func (e *Engine) txShards(cl *Client) (shards []int32, all bool) {
	tx := &cl.tx
	shards = cl.watchShards(tx.shards[:0])
	for i := range tx.cmds {
		cmd := &tx.cmds[i]
		scope := cmd.spec.Scope
		if runsScript(cmd.spec) { // EVAL, FCALL: their declared keys' shards (scripting.go)
			scope = ScopeKeys
			if e.scriptWide(tx.args(cmd)) {
				scope = ScopeAll
			}
		}
		switch scope {
		case ScopeConn:
			if cmd.spec.Name != "config|resetstat" { // which sums and clears every shard's counters
				continue
			}
		case ScopeKeys:
			args := tx.args(cmd)
			tx.keyPos = cmd.spec.keyIndexes(args, tx.keyPos[:0])
			if len(tx.keyPos) > 0 {
				for _, p := range tx.keyPos {
					shards = append(shards, e.shardOf(args[p]))
				}
				continue
			}
		}
		return shards[:0], true // every shard, or a command that picks its own (SORT, SCAN)
	}
	slices.Sort(shards)
	shards = slices.Compact(shards)
	tx.shards = shards
	return shards, false
}

// runTxLocked runs the queued commands with their shards held, appending EXEC's reply to c.
func (e *Engine) runTxLocked(c *Ctx, shards []int32, all bool) {
	cl := c.Client
	tx := &cl.tx
	tc := &tx.ctx
	tc.E, tc.Client, tc.noBlock, tc.tx = e, cl, true, tx
	// The commands count in the first held shard's counters, as its actor's would (no atomics);
	// a transaction of connection commands only holds none and counts in the Specs'.
	tc.stats = nil
	switch {
	case all:
		tc.stats = &e.data(0).stats
	case len(shards) > 0:
		tc.stats = &e.data(shards[0]).stats
	}
	tx.held, tx.heldAll = shards, all
	tx.ops, tx.nops, tx.after, tx.stopped = tx.ops[:0], 0, tx.after[:0], false
	e.enter(shards, all, tc)
	defer e.leave(shards, all, tc)
	base := len(c.Out)
	c.ArrayLen(len(tx.cmds))
	// CLIENT REPLY inside the transaction, as Redis: a reply is sent when replies are on as it is
	// made; EXEC's own header is not when they were off, and nothing is under a SKIP of EXEC.
	skipped := c.slot.Silent && cl.replyMode != replyOff
	if c.slot.Silent {
		c.Out = c.Out[:base]
	}
	s := &tx.slot
	s.Client = cl
	// As for work items, one EXEC in timeSample measures its commands' durations and charges
	// them timeSample times over.
	tx.runs++
	timed := tx.runs%timeSample == 0 && !e.exactTimes()
	for i := range tx.cmds {
		cmd := &tx.cmds[i]
		s.Args, s.Cmd = tx.args(cmd), cmd.spec
		s.DB, s.Proto = int32(cl.DB), int8(cl.Proto) // SELECT and HELLO inside apply to what follows
		s.Reply, s.Effects = s.Reply[:0], s.Effects[:0]
		if cl.track.flags.Load() != 0 && cmd.spec.Scope != ScopeConn && cl.trackRead(cmd.spec) {
			tx.keyPos = cmd.spec.keyIndexes(s.Args, tx.keyPos[:0])
			e.rememberKeys(cl, s.Args, tx.keyPos)
		}
		if msg := e.aclExecRefusal(cl, cmd.spec, s.Args); msg != "" { // ACL changed since queued (acl_check.go)
			s.Reply = aclAppendError(s.Reply, msg)
		} else if timed {
			start := time.Now()
			e.call(tc, s, c.Now)
			if d := int64(time.Since(start)) * timeSample; tc.stats != nil {
				tc.stats.cmds[cmd.spec.id].nsec += d
			} else {
				cmd.spec.stats.nsec.Add(d)
			}
		} else {
			e.call(tc, s, c.Now)
		}
		if !skipped && cl.replyMode != replyOff {
			c.Out = append(c.Out, s.Reply...)
			c.slot.Silent = false
		}
		cl.forceReply = false
		if len(s.Effects) > 0 {
			c.slot.Effects = append(c.slot.Effects, s.Effects...)
		}
	}
	if tc.stats != nil {
		tc.stats.done.Add(int64(len(tx.cmds))) // total_commands_processed
	}
	if tx.nops > 0 && tc.fx.ring >= 0 && !tx.stopped {
		e.Feed.Append(int(tc.fx.ring), tx.opsDB, tx.wrapped())
	}
	c.Out = append(c.Out, tx.after...)
	if all {
		e.serveReadyAll(c.Now, c.slot)
	} else {
		e.serveReadyIn(shards, c.Now, c.slot)
	}
}

// collect adds the replicated form of the queued command c just ran (the DELs of keys it found
// expired, then its own, fx.ops) to its transaction's; propagateLocked calls it instead of
// appending to the feed.
func (tx *txState) collect(c *Ctx) {
	fx := &c.fx
	for b := fx.pre; len(b) > 0; {
		v, k := binary.Uvarint(b)
		b = b[k:]
		end := commandLen(b)
		tx.addOp(int(v), b[:end])
		if tx.keepPre {
			tx.pres = binary.AppendUvarint(tx.pres, v)
			tx.pres = append(tx.pres, b[:end]...)
		}
		b = b[end:]
	}
	for b := fx.ops; len(b) > 0; {
		end := commandLen(b)
		tx.addOp(c.DB, b[:end])
		b = b[end:]
	}
}

// addPres adds the commands of pres (collect's keepPre form) to the collected form.
func (tx *txState) addPres(pres []byte) {
	for b := pres; len(b) > 0; {
		v, k := binary.Uvarint(b)
		b = b[k:]
		end := commandLen(b)
		tx.addOp(int(v), b[:end])
		b = b[end:]
	}
}

// addOp appends one replicated command (RESP) in database db.
func (tx *txState) addOp(db int, cmd []byte) {
	switch {
	case tx.nops == 0:
		tx.opsDB, tx.lastDB = db, db
	case db != tx.lastDB:
		tx.ops = appendSelect(tx.ops, db)
		tx.lastDB = db
	}
	tx.ops = append(tx.ops, cmd...)
	tx.nops++
}

// wrapped returns the collected form as one feed entry: MULTI … EXEC around two or more
// commands. A SELECT back to the entry's database ends it when the commands changed database,
// since the feed's readers take each entry to leave the database it names selected.
func (tx *txState) wrapped() []byte {
	if tx.lastDB != tx.opsDB {
		tx.ops = appendSelect(tx.ops, tx.opsDB)
	}
	if tx.nops == 1 {
		return tx.ops
	}
	out := append(tx.wrap[:0], "*1\r\n$5\r\nMULTI\r\n"...)
	out = append(out, tx.ops...)
	tx.wrap = append(out, "*1\r\n$4\r\nEXEC\r\n"...)
	return tx.wrap
}

func appendSelect(dst []byte, db int) []byte {
	var num [20]byte
	return appendCommand(dst, [][]byte{[]byte("SELECT"), strconv.AppendInt(num[:0], int64(db), 10)})
}

// execRefused ends cl's transaction for an EXEC refused before it ran and returns its error as
// Redis's execCommandAbort words it: the reason without its "ERR " code.
func (e *Engine) execRefused(cl *Client, msg string) string {
	e.discardTx(cl)
	return execAbortText(msg)
}

// execAbortText is Redis's EXECABORT for an EXEC refused with msg.
func execAbortText(msg string) string {
	return "EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR ")
}
