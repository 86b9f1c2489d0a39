package server

// PSYNC replication, the primary side (issue 23 items 1-2): the stream pump that turns the
// write-effect feed into Redis's replication stream and backlog, and the replicas it serves.
// The replica side is repl_replica.go; INFO, ROLE and WAIT are repl_info.go.
//
// Ordering invariants:
//
//  1. One pump goroutine reads the feed (a reader attached holding every shard's token, at
//     feed sequence startSeq) and writes each entry, SELECT first where the database changes,
//     to the backlog and to every replica past its cut, in feed order, holding rs.mu. The
//     stream's offset is the backlog's (master_repl_offset = bytes written).
//  2. A full sync's snapshot instant S (Engine.WriteRDB's Instant, every entry <= S in the
//     image, none after) is matched to the stream by the pump: the replica's cut is the offset
//     after the last entry <= S and before the first entry > S. Its stream starts there, with a
//     SELECT (the encoder forgets its database at each cut, as Redis's slaveseldb = -1).
//  3. Bytes reach a replica only through its client's outbox (command.Client.PushRaw), written
//     by its connection's own goroutine: +FULLRESYNC/+CONTINUE, then the RDB, then the stream.
//     A replica's sender goroutine pushes while the outbox is under replOutboxHigh; the rest
//     waits in the replica's pending bytes, bounded by client-output-buffer-limit replica.
//  4. In the replica role the pump has no reader: the stream is the primary's bytes, written
//     by the master link (repl_replica.go) after it applied them, so sub-replicas and the
//     backlog carry the primary's offsets.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/pipeline/feed"
	"github.com/hotkv/hotkv/src/command"
	"github.com/hotkv/hotkv/src/repl"
	"github.com/hotkv/hotkv/src/repl/backlog"
)

// Replica states, as INFO's slaveN state shows them.
const (
	rsWaitBgsave = iota // waiting for the snapshot's instant (wait_bgsave)
	rsSendBulk          // the RDB is being sent (send_bulk)
	rsWaitAck           // diskless: RDB sent, commands after the first ACK (online in INFO as Redis 7.0 shows wait_bgsave_end... see stateName)
	rsOnline            // streaming (online)
)

// replOutboxHigh is how much a replica's outbox may hold before its sender waits.
const replOutboxHigh = 4 << 20

// replState is the server's replication.
type replState struct {
	s  *Server
	mu sync.Mutex

	bl       *backlog.Ring // nil until the first replica (repl_backlog_active 0)
	enc      *repl.Encoder
	rd       *feed.Reader // the pump's; nil in the replica role
	lastSeq  uint64       // the last feed entry written to the stream
	replicas []*replica
	pre      map[uint64]*replica // REPLCONF state of clients that did not PSYNC yet
	scratch  []byte

	replid2   string
	secondOff int64 // second_repl_offset, -1 when none
	lastPing  time.Time

	wake    chan struct{}
	started atomic.Bool // the pump runs; set under mu, read by poke without it

	fullSyncs, partialOK, partialErr atomic.Int64

	fo failoverState // FAILOVER (repl_failover.go)
	// mfPause is a cluster manual failover's write pause (cluster.go): no PING is written then,
	// and mfPauseOff is the offset it holds at.
	mfPause    atomic.Bool
	mfPauseOff atomic.Int64
	busOff     atomic.Int64 // the last offset busOffset read
	busAge     atomic.Int64 // the last data age busDataAge read

	link  *masterLink // the replica role (repl_replica.go); nil as a primary
	fresh bool        // the next link has no cached master: PSYNC ? -1 (replicaof at start-up)
	// applyMu is held by the master link while it applies a batch and writes its bytes to the
	// stream: a sub-replica's snapshot instant takes it to read a matching offset.
	applyMu  sync.Mutex
	lostFeed bool // the pump's feed reader failed: pump attaches a new one (reattach)
	// acks wakes WAIT when a replica's ACK arrives (instead of its polling every 5 ms).
	acks ackNotify
}

// ackNotify is a broadcast to the goroutines waiting for the next ACK: wait returns a channel
// that notify closes. A channel is made only when someone waits.
type ackNotify struct {
	mu sync.Mutex
	ch chan struct{}
}

func (a *ackNotify) wait() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ch == nil {
		a.ch = make(chan struct{})
	}
	return a.ch
}

func (a *ackNotify) notify() {
	a.mu.Lock()
	if a.ch != nil {
		close(a.ch)
		a.ch = nil
	}
	a.mu.Unlock()
}

// replica is one connected replica.
type replica struct {
	cl         *command.Client
	state      int
	cutSeq     uint64
	cutOff     int64
	cutDone    chan struct{}
	cutArmed   bool // cutSeq is set: the snapshot's instant is known
	cutFired   bool
	pending    []byte // stream bytes not pushed yet (rs.mu)
	sig        chan struct{}
	ackOff     atomic.Int64
	ackTime    atomic.Int64 // unix ns of the last ACK
	gotAck     chan struct{}
	ackOnce    sync.Once
	port       int
	ip         string
	capaEOF    bool
	capaPsync2 bool
	capaHotKV  bool
	rdbOnly    bool
	gone       atomic.Bool
}

func (s *Server) initRepl() {
	r := &s.repl
	r.s = s
	r.secondOff = -1
	r.replid2 = strings.Repeat("0", 40)
	r.pre = map[uint64]*replica{}
	r.wake = make(chan struct{}, 1)
	s.Engine.Hooks.Repl = (*replHooks)(r)
	prev := s.env.Durable
	s.env.Durable = func(cl any, final bool) bool {
		r.poke()
		return prev(cl, final)
	}
	prevBlock := s.env.MayBlock
	s.env.MayBlock = func(cl any, args [][]byte) bool {
		if len(args) > 0 && (strings.EqualFold(string(args[0]), "wait")) {
			return true
		}
		return prevBlock(cl, args)
	}
	s.cfg.OnChange("repl-backlog-size", func(string) {
		r.mu.Lock()
		if r.bl != nil {
			r.bl.Resize(int(s.cfg.Int("repl-backlog-size")))
		}
		r.mu.Unlock()
	})
	for _, name := range []string{"replica-read-only", "replica-serve-stale-data", "min-replicas-to-write", "min-replicas-max-lag"} {
		s.cfg.OnChange(name, func(string) { r.applyGates() })
	}
}

// poke wakes the pump (after a batch that may have written).
func (r *replState) poke() {
	if r.started.Load() {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// The lock order is every shard's token, then r.mu: INFO reads this state as a barrier holding
// every shard. So nothing waits for shard tokens while it holds r.mu: what attaches the feed
// reader (attachLocked) takes the shards first (lockAllThenMu).

// ensureBacklogLocked creates the backlog and the pump and, as a primary, attaches the pump's
// feed reader (invariant 1). The caller holds r.mu, and every shard too when the reader must be
// attached (needAttachLocked said so).
func (r *replState) ensureBacklogLocked() {
	if r.bl == nil {
		r.bl = backlog.New(int(r.s.cfg.Int("repl-backlog-size")), 0)
		r.enc = repl.NewEncoder()
	}
	if r.needAttachLocked() {
		r.attachLocked()
	}
	if !r.started.Load() {
		r.started.Store(true)
		go r.pump()
	}
}

// needAttachLocked reports whether the pump has no feed reader while it needs one (a primary).
func (r *replState) needAttachLocked() bool { return r.link == nil && r.rd == nil }

// lockAllThenMu takes every shard's token and then r.mu, in the lock order; unlockAll gives
// the shards back (r.mu stays held).
func (r *replState) lockAllThenMu() (unlockAll func()) {
	g := r.s.Engine.Group
	g.LockAll()
	r.mu.Lock()
	return g.UnlockAll
}

// attachLocked attaches the pump's feed reader at the feed's end. The caller holds every shard
// (no write appends meanwhile) and r.mu.
func (r *replState) attachLocked() {
	r.lastSeq = r.s.Engine.Feed.Seq()
	r.rd = r.s.Engine.Feed.Attach()
	r.enc.ForgetDB()
}

// reattach attaches the feed reader again after the pump lost the feed (pumpLocked).
func (r *replState) reattach() {
	unlockAll := r.lockAllThenMu()
	if r.lostFeed && r.needAttachLocked() && r.bl != nil {
		r.attachLocked()
	}
	r.lostFeed = false
	r.mu.Unlock()
	unlockAll()
}

// pump moves feed entries to the stream (invariant 1) and pings replicas.
func (r *replState) pump() {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.s.stopped:
			r.mu.Lock()
			if r.rd != nil {
				r.rd.Close()
				r.rd = nil
			}
			r.mu.Unlock()
			return
		case <-r.wake:
		case <-tick.C:
		}
		r.mu.Lock()
		r.pumpLocked()
		lost := r.lostFeed
		r.mu.Unlock()
		if lost {
			r.reattach()
		}
	}
}

func (r *replState) pumpLocked() {
	if r.rd == nil {
		r.resolveCutsLocked(true)
		return
	}
	for {
		entries, err := r.rd.Next()
		if err != nil {
			r.s.log.Warn("Replication lost the write feed: replicas must resync", "err", err)
			r.rd.Close()
			r.rd = nil
			for _, rp := range r.replicas {
				rp.cl.Kill()
			}
			r.bl.Reset(r.bl.Offset())
			r.lostFeed = true // the pump attaches again, holding the shards first (lock order)
			return
		}
		if len(entries) == 0 {
			break
		}
		// The entries go out as one write (one backlog copy, one append and one wake-up per
		// replica), split only where a replica's snapshot cut falls: what precedes the cut must
		// be in the backlog when it fires, and what follows is encoded after (SELECT again).
		r.scratch = r.scratch[:0]
		for _, e := range entries {
			if r.cutDueLocked(e.Seq) {
				if len(r.scratch) > 0 {
					r.writeLocked(r.scratch)
					r.scratch = r.scratch[:0]
				}
				r.resolveCutsBeforeLocked(e.Seq)
			}
			r.scratch = r.enc.Append(r.scratch, e.DB, e.Cmd)
			r.lastSeq = e.Seq
		}
		if len(r.scratch) > 0 {
			r.writeLocked(r.scratch)
		}
	}
	r.resolveCutsLocked(false)
	// No PING while FAILOVER or a cluster manual failover waits for the offset.
	if len(r.replicas) > 0 && r.fo.state == foNone && !r.mfPause.Load() {
		if p := time.Duration(r.s.cfg.Int("repl-ping-replica-period")) * time.Second; time.Since(r.lastPing) >= p {
			r.lastPing = time.Now()
			r.writeLocked(pingCmd)
		}
	}
}

var (
	pingCmd   = []byte("*1\r\n$4\r\nPING\r\n")
	getackCmd = []byte("*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n")
)

// writeLocked appends p to the stream: the backlog and every replica past its cut.
func (r *replState) writeLocked(p []byte) {
	r.bl.Write(p)
	lim := r.s.Engine.Settings().ReplicaOutputLimit.Hard
	for _, rp := range r.replicas {
		if rp.state == rsWaitBgsave || rp.rdbOnly || rp.gone.Load() {
			continue
		}
		rp.pending = append(rp.pending, p...)
		if lim > 0 && int64(len(rp.pending)) > lim {
			r.s.log.Warn("Client " + rp.cl.Addr + " scheduled to be closed ASAP for overcoming of output buffer limits.")
			rp.gone.Store(true)
			rp.cl.Kill()
			continue
		}
		select {
		case rp.sig <- struct{}{}:
		default:
		}
	}
}

// cutDueLocked reports whether resolveCutsBeforeLocked(seq) would fire a cut.
func (r *replState) cutDueLocked(seq uint64) bool {
	for _, rp := range r.replicas {
		if rp.state == rsWaitBgsave && rp.cutArmed && !rp.cutFired && rp.cutSeq < seq {
			return true
		}
	}
	return false
}

// resolveCutsBeforeLocked fires the cuts of replicas whose instant is below seq, before the
// entry seq is written (invariant 2).
func (r *replState) resolveCutsBeforeLocked(seq uint64) {
	for _, rp := range r.replicas {
		if rp.state == rsWaitBgsave && rp.cutArmed && !rp.cutFired && rp.cutSeq < seq {
			r.fireCutLocked(rp)
		}
	}
}

// resolveCutsLocked fires the cuts the stream has reached; all of them in the replica role,
// where the link's applyMu (held by the caller) already fixed the offset.
func (r *replState) resolveCutsLocked(all bool) {
	for _, rp := range r.replicas {
		if rp.state == rsWaitBgsave && rp.cutArmed && !rp.cutFired && (all || rp.cutSeq <= r.lastSeq) {
			r.fireCutLocked(rp)
		}
	}
}

func (r *replState) fireCutLocked(rp *replica) {
	rp.cutFired = true
	rp.cutOff = r.bl.Offset()
	rp.state = rsSendBulk
	if r.enc != nil {
		r.enc.ForgetDB()
	}
	close(rp.cutDone)
}

// replHooks is command.ReplHooks over the server's replication.
type replHooks replState

func (h *replHooks) r() *replState { return (*replState)(h) }

func (h *replHooks) Replconf(cl *command.Client, args [][]byte) ([]byte, bool) {
	r := h.r()
	r.mu.Lock()
	defer r.mu.Unlock()
	rp := r.findLocked(cl)
	for i := 0; i+1 < len(args); i += 2 {
		opt, val := strings.ToLower(string(args[i])), string(args[i+1])
		switch opt {
		case "listening-port":
			p, err := strconv.Atoi(val)
			if err != nil {
				return []byte("-ERR value is not an integer or out of range\r\n"), false
			}
			rp.port = p
		case "ip-address":
			rp.ip = val
		case "capa":
			switch strings.ToLower(val) {
			case "eof":
				rp.capaEOF = true
			case "psync2":
				rp.capaPsync2 = true
			case "hotkv":
				rp.capaHotKV = true
			}
		case "ack":
			off, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, true
			}
			if rp.ackOff.Load() < off {
				rp.ackOff.Store(off)
			}
			rp.ackTime.Store(time.Now().UnixNano())
			r.acks.notify()
			if rp.gotAck != nil {
				rp.ackOnce.Do(func() { close(rp.gotAck) })
			}
			return nil, true
		case "getack":
			if l := r.link; l != nil {
				l.ackNow()
			}
			return nil, true
		case "rdb-only":
			rp.rdbOnly = val == "1"
		case "rdb-filter-only":
			// Filters only restrict what the RDB holds (functions); HotKV sends keys as asked.
		default:
			return []byte("-ERR Unrecognized REPLCONF option: " + string(args[i]) + "\r\n"), false
		}
	}
	return []byte("+OK\r\n"), false
}

// findLocked returns cl's replica, attached or not yet.
func (r *replState) findLocked(cl *command.Client) *replica {
	for _, rp := range r.replicas {
		if rp.cl == cl {
			return rp
		}
	}
	rp := r.pre[cl.ID]
	if rp == nil {
		if len(r.pre) > 1024 {
			clear(r.pre)
		}
		rp = &replica{cl: cl, sig: make(chan struct{}, 1)}
		rp.ip, _, _ = strings.Cut(cl.Addr, ":")
		if h, _, ok := strings.Cut(cl.Addr, "]"); ok && strings.HasPrefix(h, "[") {
			rp.ip = h[1:]
		}
		r.pre[cl.ID] = rp
	}
	return rp
}

func (h *replHooks) Sync(cl *command.Client, psync bool, replid string, off int64) string {
	r := h.r()
	r.mu.Lock()
	failingOver := r.fo.state != foNone
	r.mu.Unlock()
	if failingOver {
		return "NOMASTERLINK Can't SYNC while failing over"
	}
	if l := r.currentLink(); l != nil && !l.up.Load() {
		return "NOMASTERLINK Can't SYNC while not connected with my master"
	}
	if rp := r.lookup(cl); rp != nil && rp.state != rsWaitBgsave {
		return "" // Redis ignores SYNC/PSYNC from a client that is a replica already
	}
	r.mu.Lock()
	if r.needAttachLocked() { // the first replica of a primary: the shards first (lock order)
		r.mu.Unlock()
		unlockAll := r.lockAllThenMu()
		r.ensureBacklogLocked()
		unlockAll()
	} else {
		r.ensureBacklogLocked()
	}
	rp := r.findLocked(cl)
	delete(r.pre, cl.ID)
	_, myID := r.s.Engine.ReplIDs()
	if psync {
		ok := (strings.EqualFold(replid, myID) || strings.EqualFold(replid, r.replid2) && off <= r.secondOff) &&
			r.bl.Histlen() > 0 && r.bl.Covers(off-1) || strings.EqualFold(replid, myID) && off == r.bl.Offset()+1
		if ok {
			reply := "+CONTINUE\r\n"
			if rp.capaPsync2 {
				reply = "+CONTINUE " + myID + "\r\n"
			}
			r.s.Engine.SetReplicaClient(cl, true)
			rp.state = rsOnline
			rp.ackTime.Store(time.Now().UnixNano())
			rp.pending, _ = r.bl.ReadFrom(append(rp.pending[:0], reply...), off-1, 1<<62)
			r.replicas = append(r.replicas, rp)
			r.partialOK.Add(1)
			sent := r.bl.Offset() - off + 1
			r.mu.Unlock()
			r.s.log.Info(fmt.Sprintf("Partial resynchronization request from %s accepted. Sending %d bytes of backlog starting from offset %d.",
				cl.Addr, sent, off))
			r.applyGates()
			go r.send(rp)
			return ""
		}
		if replid != "?" {
			r.partialErr.Add(1)
		}
	}
	r.s.Engine.SetReplicaClient(cl, true)
	rp.state = rsWaitBgsave
	rp.cutDone = make(chan struct{})
	rp.gotAck = make(chan struct{})
	rp.ackTime.Store(time.Now().UnixNano())
	r.replicas = append(r.replicas, rp)
	r.fullSyncs.Add(1)
	r.mu.Unlock()
	r.applyGates()
	r.s.log.Info("Full resync requested by replica "+cl.Addr, "listening-port", rp.port, "psync", psync, "replid", replid, "offset", off)
	go r.fullSync(rp, psync)
	return ""
}

func (r *replState) lookup(cl *command.Client) *replica {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rp := range r.replicas {
		if rp.cl == cl {
			return rp
		}
	}
	return nil
}

// drop removes a replica that left.
func (r *replState) drop(rp *replica) {
	rp.gone.Store(true)
	r.s.Engine.SetReplicaClient(rp.cl, false)
	r.mu.Lock()
	for i, x := range r.replicas {
		if x == rp {
			r.replicas = append(r.replicas[:i], r.replicas[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	r.applyGates()
	r.s.log.Info("Connection with replica " + rp.cl.Addr + " lost.")
}

// alive reports whether the replica's connection is still open.
func (rp *replica) alive() bool {
	if rp.gone.Load() || rp.cl.Killed() {
		return false
	}
	return rp.cl.Alive == nil || rp.cl.Alive()
}

// push queues p on the replica's outbox, waiting while the outbox is full; false once the
// replica is gone.
func (r *replState) push(rp *replica, p []byte) bool {
	for len(p) > 0 {
		for rp.cl.Outbox() > replOutboxHigh {
			if !rp.alive() {
				return false
			}
			select {
			case <-r.s.stopped:
				return false
			case <-time.After(time.Millisecond):
			}
		}
		n := min(len(p), 1<<20)
		if _, ok := rp.cl.PushRaw(p[:n]); !ok {
			return false
		}
		p = p[n:]
	}
	return rp.alive()
}

// errReplicaGone stops a snapshot whose replica left.
var errReplicaGone = errors.New("replica gone")

// fullSync sends the snapshot (invariant 2) and then starts the stream.
func (r *replState) fullSync(rp *replica, psync bool) {
	defer func() {
		if !rp.alive() {
			r.drop(rp)
		}
	}()
	diskless := r.s.cfg.Bool("repl-diskless-sync") && rp.capaEOF
	if d := r.s.cfg.Int("repl-diskless-sync-delay"); diskless && d > 0 {
		select {
		case <-time.After(time.Duration(d) * time.Second):
		case <-r.s.stopped:
			return
		}
	}
	var mark [40]byte
	hex.Encode(mark[:], randomBytes(20))
	head := func(off int64) string {
		_, id := r.s.Engine.ReplIDs()
		if psync {
			return "+FULLRESYNC " + id + " " + strconv.FormatInt(off, 10) + "\r\n"
		}
		return ""
	}
	instant := func(seq uint64) error {
		if r.currentLink() != nil {
			// The replica role: the stream is the primary's; the instant's offset is the link's,
			// fixed while applyMu is held (WriteRDB's StartSnapshot ran inside it).
			r.mu.Lock()
			rp.cutSeq, rp.cutArmed = seq, true
			r.resolveCutsLocked(true)
			r.mu.Unlock()
			r.applyMu.Unlock()
		} else {
			r.mu.Lock()
			rp.cutSeq, rp.cutArmed = seq, true
			r.mu.Unlock()
			r.poke()
		}
		select {
		case <-rp.cutDone:
		case <-r.s.stopped:
			return errReplicaGone
		}
		h := head(rp.cutOff)
		if diskless {
			h += "$EOF:" + string(mark[:]) + "\r\n"
		}
		if !r.push(rp, []byte(h)) {
			return errReplicaGone
		}
		return nil
	}
	for {
		var err error
		if diskless {
			err = r.snapshot(&replicaWriter{r: r, rp: rp}, rp, instant)
		} else {
			err = r.diskSync(rp, instant)
		}
		if err == nil {
			break
		}
		if errors.Is(err, command.ErrSnapshotRunning) && rp.alive() {
			time.Sleep(50 * time.Millisecond) // a BGSAVE or another replica's snapshot runs
			continue
		}
		if !errors.Is(err, errReplicaGone) {
			r.s.log.Warn("Replica full sync failed", "replica", rp.cl.Addr, "err", err)
		}
		rp.cl.Kill()
		return
	}
	if diskless {
		if !r.push(rp, mark[:]) {
			return
		}
		if rp.rdbOnly { // redis-cli --rdb: the RDB and nothing more
			r.drop(rp)
			return
		}
		r.s.log.Info("Diskless sync of replica " + rp.cl.Addr + " ended; streaming after its first ACK")
		// Redis puts a diskless replica online at its first ACK (repl_put_online_on_ack).
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
	wait:
		for {
			select {
			case <-rp.gotAck:
				break wait
			case <-t.C:
				if !rp.alive() {
					return
				}
			case <-r.s.stopped:
				return
			}
		}
	}
	if rp.rdbOnly {
		r.drop(rp)
		return
	}
	r.mu.Lock()
	rp.state = rsOnline
	r.mu.Unlock()
	r.s.log.Info("Synchronization with replica " + rp.cl.Addr + " succeeded")
	r.applyGates()
	r.send(rp)
}

// snapshot writes the RDB to w with instant at its cut; in the replica role the instant is
// taken holding the link's applyMu. The RDB carries repl-stream-db, repl-id and repl-offset of
// the cut, as Redis's rdbPopulateSaveInfo: a replica's stream after the cut is its primary's
// bytes verbatim, which select a database only where the primary's changes, so the sub-replica
// must start in the master client's database at the cut, not in db 0.
func (r *replState) snapshot(w io.Writer, rp *replica, instant func(uint64) error) error {
	o := r.s.rdbOptions()
	info := &command.ReplInfo{}
	o.repl = info
	o.redis70 = !rp.capaHotKV
	o.instant = func(seq uint64) error {
		if err := instant(seq); err != nil {
			return err
		}
		_, info.ID = r.s.Engine.ReplIDs()
		info.Offset = rp.cutOff
		return nil
	}
	if l := r.currentLink(); l != nil {
		r.applyMu.Lock()
		info.StreamDB = int(l.streamDB.Load())
		locked := true
		inner := o.instant
		o.instant = func(seq uint64) error { locked = false; return inner(seq) }
		st, err := r.s.writeRDB(w, o, &rdbState{})
		if locked {
			r.applyMu.Unlock()
		}
		r.logSkipped(rp, st)
		return err
	}
	st, err := r.s.writeRDB(w, o, &rdbState{})
	r.logSkipped(rp, st)
	return err
}

// logSkipped warns of the keys a replica without capa hotkv was not sent.
func (r *replState) logSkipped(rp *replica, st rdbStats) {
	if st.skipped > 0 {
		r.s.log.Warn(fmt.Sprintf("Full sync of replica %s (no capa hotkv): %d keys of HotKV's own types (vector sets, IP sets, ...) left out of the RDB, which Redis cannot load",
			rp.cl.Addr, st.skipped))
	}
}

// diskSync writes the RDB to a file under dir (keeping the replica alive with newlines), then
// sends it as $<len>\r\n<rdb>.
func (r *replState) diskSync(rp *replica, instant func(uint64) error) error {
	// Unique in the directory: client IDs repeat across the servers of one process (tests).
	f, err := os.CreateTemp(r.s.dataDir, "temp-repl-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(rp.cl.ID, 10)+"-*.rdb")
	if err != nil {
		return err
	}
	path := f.Name()
	defer os.Remove(path)
	defer f.Close()
	done := make(chan struct{})
	started := make(chan struct{})
	var keep sync.WaitGroup
	keep.Add(1)
	go func() { // the newlines Redis's replicationCron sends while the file is written
		defer keep.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				select {
				case <-started:
					rp.cl.PushRaw([]byte("\n"))
				default:
				}
			}
		}
	}()
	err = r.snapshot(f, rp, func(seq uint64) error {
		err := instant(seq)
		close(started)
		return err
	})
	close(done)
	keep.Wait() // no newline may follow the $<len> header
	if err != nil {
		return err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if !r.push(rp, []byte("$"+strconv.FormatInt(size, 10)+"\r\n")) {
		return errReplicaGone
	}
	buf := make([]byte, 256<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 && !r.push(rp, buf[:n]) {
			return errReplicaGone
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// replicaWriter streams a diskless RDB to the replica's outbox.
type replicaWriter struct {
	r  *replState
	rp *replica
}

func (w *replicaWriter) Write(p []byte) (int, error) {
	if !w.r.push(w.rp, p) {
		return 0, errReplicaGone
	}
	return len(p), nil
}

// send streams the replica's pending bytes until it leaves.
func (r *replState) send(rp *replica) {
	defer r.drop(rp)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var buf []byte
	for {
		select {
		case <-rp.sig:
		case <-t.C:
		case <-r.s.stopped:
			return
		}
		if !rp.alive() {
			return
		}
		r.mu.Lock()
		buf, rp.pending = rp.pending, buf[:0]
		r.mu.Unlock()
		if len(buf) > 0 && !r.push(rp, buf) {
			return
		}
		if cap(buf) > 1<<20 {
			buf = nil
		}
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// applyGates sets route's replica gates from the role, the link and min-replicas-*.
func (r *replState) applyGates() {
	cfg := r.s.cfg
	r.mu.Lock()
	link := r.link
	good := r.goodReplicasLocked()
	redisReplica := false
	for _, rp := range r.replicas {
		redisReplica = redisReplica || !rp.capaHotKV && !rp.gone.Load()
	}
	r.mu.Unlock()
	readOnly := link != nil && cfg.Bool("replica-read-only")
	stale := link != nil && !cfg.Bool("replica-serve-stale-data") && !link.up.Load()
	need := cfg.Int("min-replicas-to-write")
	noRep := link == nil && need > 0 && cfg.Int("min-replicas-max-lag") > 0 && int64(good) < need
	r.s.Engine.SetReplGates(readOnly, stale, noRep, redisReplica)
}

// goodReplicasLocked counts online replicas whose last ACK is within min-replicas-max-lag.
func (r *replState) goodReplicasLocked() int {
	lag := r.s.cfg.Int("min-replicas-max-lag")
	now := time.Now().UnixNano()
	n := 0
	for _, rp := range r.replicas {
		if rp.state == rsOnline && (now-rp.ackTime.Load())/int64(time.Second) <= lag {
			n++
		}
	}
	return n
}

// replCron runs once a second: min-replicas-* and the replicas' timeouts.
func (r *replState) cron() {
	timeout := time.Duration(r.s.cfg.Int("repl-timeout")) * time.Second
	r.mu.Lock()
	var late []*replica
	for _, rp := range r.replicas {
		if rp.state == rsOnline && time.Since(time.Unix(0, rp.ackTime.Load())) > timeout {
			late = append(late, rp)
		}
	}
	r.mu.Unlock()
	for _, rp := range late {
		r.s.log.Warn("Disconnecting timedout replica (streaming sync): " + rp.cl.Addr)
		rp.cl.Kill()
	}
	r.applyGates()
	if l := r.currentLink(); l != nil {
		l.cron()
	}
}
