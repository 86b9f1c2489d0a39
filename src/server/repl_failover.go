package server

// FAILOVER, Redis 6.2+'s coordinated failover, as redis-server 7.0.15 runs it (issue 23 item 4):
//
//  1. FAILOVER [TO host port [FORCE]] [TIMEOUT ms] pauses writes (FAILOVER's own pause, which
//     CLIENT UNPAUSE does not end) and waits, in waiting-for-sync, for the target replica (or,
//     without TO, any replica) to acknowledge the whole stream (its ACK offset equal to
//     master_repl_offset; no PING is written meanwhile, so the offset stays put).
//  2. Then, or at TIMEOUT with FORCE, the primary becomes a replica of the target
//     (failover-in-progress): its replicas are disconnected and its link sends
//     PSYNC <replid> <offset+1> FAILOVER, on which the target, when the replid is its own,
//     becomes a primary (REPLICAOF NO ONE: new replid, the old one as replid2) and answers
//     +CONTINUE. The answer ends the failover and the pause; any other answer aborts it (the old
//     primary is a primary again, with a new replid, as Redis's replicationUnsetMaster).
//  3. TIMEOUT without FORCE aborts in waiting-for-sync; FAILOVER ABORT aborts in either state.
//
// The state is rs.mu's; INFO shows it as master_failover_state.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hotkv/hotkv/src/command"
)

// Failover states, as INFO's master_failover_state names them.
const (
	foNone = iota
	foWaitSync
	foInProgress
)

var failoverStateNames = [...]string{"no-failover", "waiting-for-sync", "failover-in-progress"}

// failoverState is the failover under way (replState.fo).
type failoverState struct {
	state int
	host  string // the target; "" until one is chosen when FAILOVER named none
	port  int
	end   time.Time // TIMEOUT's deadline; zero without one
	force bool
}

func errLine(msg string) []byte { return []byte("-" + msg + "\r\n") }

// Failover is FAILOVER, its state checks in Redis 7.0.15's order.
func (h *replHooks) Failover(cl *command.Client, a command.FailoverArgs) []byte {
	r := h.r()
	if a.Abort {
		r.mu.Lock()
		st := r.fo.state
		r.mu.Unlock()
		if st == foNone {
			return errLine("ERR No failover in progress.")
		}
		r.abortFailover("Failover manually aborted")
		return []byte("+OK\r\n")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.fo.state != foNone:
		return errLine("ERR FAILOVER already in progress.")
	case r.link != nil:
		return errLine("ERR FAILOVER is not valid when server is a replica.")
	case len(r.replicas) == 0:
		return errLine("ERR FAILOVER requires connected replicas.")
	case a.Force && (a.TimeoutMs == 0 || !a.To):
		return errLine("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
	}
	fo := failoverState{state: foWaitSync, force: a.Force}
	if a.To {
		rp := r.findReplicaLocked(a.Host, a.Port)
		if rp == nil {
			return errLine("ERR FAILOVER target HOST and PORT is not a replica.")
		}
		if rp.state != rsOnline {
			return errLine("ERR FAILOVER target replica is not online.")
		}
		fo.host, fo.port = a.Host, int(a.Port)
		r.s.log.Info(fmt.Sprintf("FAILOVER requested to %s:%d.", a.Host, a.Port))
	} else {
		r.s.log.Info("FAILOVER requested to any replica.")
	}
	if a.TimeoutMs > 0 {
		fo.end = time.Now().Add(time.Duration(a.TimeoutMs) * time.Millisecond)
	}
	r.fo = fo
	r.s.Engine.SetFailoverPause(true)
	go r.failoverWait()
	return []byte("+OK\r\n")
}

// findReplicaLocked is the replica announced as host:port (its ip-address, else its peer's).
func (r *replState) findReplicaLocked(host string, port int64) *replica {
	for _, rp := range r.replicas {
		if strings.EqualFold(rp.ip, host) && int64(rp.port) == port {
			return rp
		}
	}
	return nil
}

// failoverWait runs waiting-for-sync (step 1) until the failover moves on or ends.
func (r *replState) failoverWait() {
	// A write that passed the pause before it began finishes, and reaches the feed, before
	// the offset is compared: every shard's token is taken once.
	g := r.s.Engine.Group
	g.LockAll()
	g.UnlockAll()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for r.failoverStep() {
		select {
		case <-r.s.stopped:
			return
		case <-t.C:
		}
	}
}

// failoverStep checks the target's offset and the deadline; false once no longer waiting.
func (r *replState) failoverStep() bool {
	r.mu.Lock()
	fo := &r.fo
	if fo.state != foWaitSync {
		r.mu.Unlock()
		return false
	}
	if !fo.end.IsZero() && !time.Now().Before(fo.end) {
		if !fo.force {
			r.mu.Unlock()
			r.abortFailover("Replica never caught up before timeout")
			return false
		}
		r.s.log.Info(fmt.Sprintf("FAILOVER to %s:%d time out exceeded, failing over.", fo.host, fo.port))
		fo.state = foInProgress
		host, port := fo.host, fo.port
		r.mu.Unlock()
		r.failoverDemote(host, port)
		return false
	}
	r.pumpLocked() // the feed's last entries are in the offset
	off := r.bl.Offset()
	var target *replica
	if fo.host != "" {
		target = r.findReplicaLocked(fo.host, int64(fo.port))
	} else {
		for _, rp := range r.replicas {
			if rp.ackOff.Load() == off {
				target = rp
				fo.host, fo.port = rp.ip, rp.port
				break
			}
		}
	}
	if target == nil || target.ackOff.Load() != off {
		r.mu.Unlock()
		return true
	}
	fo.state = foInProgress
	host, port := fo.host, fo.port
	r.mu.Unlock()
	r.s.log.Info(fmt.Sprintf("Failover target %s:%d is synced, failing over.", host, port))
	r.failoverDemote(host, port)
	return false
}

// failoverDemote is step 2's first half: this primary becomes the target's replica; its link
// sends PSYNC … FAILOVER (masterLink.session) and ends the failover on the answer.
func (r *replState) failoverDemote(host string, port int) {
	r.mu.Lock()
	subs := append([]*replica(nil), r.replicas...)
	r.mu.Unlock()
	for _, rp := range subs { // Redis's replicationSetMaster disconnects every replica
		rp.cl.Kill()
	}
	r.setMaster(host, port)
	r.setReplicaofConfig(host + " " + strconv.Itoa(port))
}

// failoverPsyncLocked reports whether the link adds FAILOVER to its PSYNC: one is in
// progress. The caller holds r.mu.
func (r *replState) failoverPsyncLocked() bool { return r.fo.state == foInProgress }

// failoverAnswered ends an in-progress failover on the target's answer to PSYNC … FAILOVER:
// +CONTINUE or +FULLRESYNC complete it, anything else aborts it.
func (r *replState) failoverAnswered(accepted bool) {
	r.mu.Lock()
	inProgress := r.fo.state == foInProgress
	if inProgress && accepted {
		r.fo = failoverState{}
	}
	r.mu.Unlock()
	switch {
	case !inProgress:
	case accepted:
		r.s.Engine.SetFailoverPause(false)
	default:
		go r.abortFailover("Failover target rejected psync request") // it halts the link
	}
}

// abortFailover ends the failover: in failover-in-progress this server is a primary again.
func (r *replState) abortFailover(why string) {
	r.mu.Lock()
	fo := r.fo
	r.fo = failoverState{}
	r.mu.Unlock()
	if fo.state == foNone {
		return
	}
	if fo.host != "" {
		r.s.log.Info(fmt.Sprintf("FAILOVER to %s:%d aborted: %s", fo.host, fo.port, why))
	} else {
		r.s.log.Info("FAILOVER to any replica aborted: " + why)
	}
	if fo.state == foInProgress && r.currentLink() != nil {
		r.promote()
		r.setReplicaofConfig("no one")
	}
	r.s.Engine.SetFailoverPause(false)
}

// PsyncFailover is PSYNC replid offset FAILOVER's first step: a replica whose replid matches
// becomes a primary before the PSYNC is served.
func (h *replHooks) PsyncFailover(cl *command.Client, replid string) string {
	r := h.r()
	if _, id := r.s.Engine.ReplIDs(); !strings.EqualFold(replid, id) {
		return "ERR PSYNC FAILOVER replid must match my replid."
	}
	if r.currentLink() == nil {
		return ""
	}
	r.promote()
	r.setReplicaofConfig("no one")
	r.s.log.Info("MASTER MODE enabled (failover request from '" + cl.Addr + "')")
	return ""
}
