package server

// INFO replication, ROLE and WAIT (issue 23 item 4), field for field as Redis 7.0.15's
// genRedisInfoString, roleCommand and waitCommand.

import (
	"strconv"
	"time"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/src/command"
)

func stateName(st int) string {
	switch st {
	case rsWaitBgsave:
		return "wait_bgsave"
	case rsSendBulk:
		return "send_bulk"
	}
	return "online"
}

// Info appends the replication section's fields.
func (h *replHooks) Info(dst []byte) []byte {
	r := h.r()
	w := infoLines{b: dst}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now().UnixNano()
	if l := r.link; l != nil {
		w.str("role", "slave")
		w.str("master_host", l.host)
		w.int("master_port", int64(l.port))
		up := l.up.Load()
		if up {
			w.str("master_link_status", "up")
		} else {
			w.str("master_link_status", "down")
		}
		if io := l.lastIO.Load(); io > 0 && up {
			w.int("master_last_io_seconds_ago", (now-io)/int64(time.Second))
		} else {
			w.int("master_last_io_seconds_ago", -1)
		}
		syncing := l.state.Load() == lsSync
		w.flag("master_sync_in_progress", syncing)
		w.int("slave_read_repl_offset", l.readOff.Load())
		w.int("slave_repl_offset", l.off.Load())
		if syncing {
			total, read := l.syncTotal.Load(), l.syncRead.Load()
			w.int("master_sync_total_bytes", total)
			w.int("master_sync_read_bytes", read)
			w.int("master_sync_left_bytes", total-read)
			perc := 0.0
			if total > 0 {
				perc = float64(read) * 100 / float64(total)
			}
			w.str("master_sync_perc", strconv.FormatFloat(perc, 'f', 2, 64))
			w.int("master_sync_last_io_seconds_ago", (now-l.lastIO.Load())/int64(time.Second))
		}
		if !up {
			if d := l.downSince.Load(); d > 0 {
				w.int("master_link_down_since_seconds", (now-d)/int64(time.Second))
			} else {
				w.int("master_link_down_since_seconds", -1)
			}
		}
		w.int("slave_priority", r.s.cfg.Int("replica-priority"))
		w.flag("slave_read_only", r.s.cfg.Bool("replica-read-only"))
		w.flag("replica_announced", r.s.cfg.Bool("replica-announced"))
	} else {
		w.str("role", "master")
	}
	w.int("connected_slaves", int64(len(r.replicas)))
	if r.s.cfg.Int("min-replicas-to-write") > 0 && r.s.cfg.Int("min-replicas-max-lag") > 0 {
		w.int("min_slaves_good_slaves", int64(r.goodReplicasLocked()))
	}
	for i, rp := range r.replicas {
		lag := (now - rp.ackTime.Load()) / int64(time.Second)
		w.str("slave"+strconv.Itoa(i), "ip="+rp.ip+",port="+strconv.Itoa(rp.port)+",state="+stateName(rp.state)+
			",offset="+strconv.FormatInt(rp.ackOff.Load(), 10)+",lag="+strconv.FormatInt(lag, 10))
	}
	w.str("master_failover_state", failoverStateNames[r.fo.state])
	_, id := r.s.Engine.ReplIDs()
	w.str("master_replid", id)
	w.str("master_replid2", r.replid2)
	var off int64
	if r.bl != nil {
		off = r.bl.Offset()
	}
	w.int("master_repl_offset", off)
	w.int("second_repl_offset", r.secondOff)
	if r.bl != nil {
		w.int("repl_backlog_active", 1)
		w.int("repl_backlog_size", int64(r.bl.Size()))
		w.int("repl_backlog_first_byte_offset", r.bl.First())
		w.int("repl_backlog_histlen", r.bl.Histlen())
	} else {
		w.int("repl_backlog_active", 0)
		w.int("repl_backlog_size", r.s.cfg.Int("repl-backlog-size"))
		w.int("repl_backlog_first_byte_offset", 0)
		w.int("repl_backlog_histlen", 0)
	}
	return w.b
}

// SyncStats are INFO stats' sync_full, sync_partial_ok and sync_partial_err.
func (h *replHooks) SyncStats() (full, ok, failed int64) {
	r := h.r()
	return r.fullSyncs.Load(), r.partialOK.Load(), r.partialErr.Load()
}

// Role appends ROLE's reply.
func (h *replHooks) Role(dst []byte, proto int) []byte {
	r := h.r()
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.link; l != nil {
		dst = resp.AppendArrayLen(dst, 5)
		dst = resp.AppendBulkString(dst, "slave")
		dst = resp.AppendBulkString(dst, l.host)
		dst = resp.AppendInt(dst, int64(l.port))
		dst = resp.AppendBulkString(dst, linkStateNames[l.state.Load()])
		off := int64(-1)
		if l.mc != nil {
			off = l.off.Load()
		}
		return resp.AppendInt(dst, off)
	}
	var off int64
	if r.bl != nil {
		off = r.bl.Offset()
	}
	dst = resp.AppendArrayLen(dst, 3)
	dst = resp.AppendBulkString(dst, "master")
	dst = resp.AppendInt(dst, off)
	n := 0
	for _, rp := range r.replicas {
		if rp.state == rsOnline {
			n++
		}
	}
	dst = resp.AppendArrayLen(dst, n)
	for _, rp := range r.replicas {
		if rp.state != rsOnline {
			continue
		}
		dst = resp.AppendArrayLen(dst, 3)
		dst = resp.AppendBulkString(dst, rp.ip)
		dst = resp.AppendBulkString(dst, strconv.Itoa(rp.port))
		dst = resp.AppendBulkString(dst, strconv.FormatInt(rp.ackOff.Load(), 10))
	}
	return dst
}

const errWaitReplica = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated."

// Wait is WAIT: the writes made before it are those up to the feed's current number; once the
// pump has put them in the stream, replicas whose ACK reaches that offset count. A GETACK is
// sent when too few have.
func (h *replHooks) Wait(cl *command.Client, n int64, timeoutMs int64) (int64, string) {
	r := h.r()
	if r.currentLink() != nil {
		return 0, errWaitReplica
	}
	var deadline time.Time
	if timeoutMs > 0 {
		deadline = time.Now().Add(time.Duration(timeoutMs) * time.Millisecond)
	}
	target := r.s.Engine.Feed.Seq()
	var off int64
	for {
		r.mu.Lock()
		if r.bl != nil && r.rd != nil && r.lastSeq < target {
			r.pumpLocked() // the writes before WAIT into the stream now, not at the pump's tick
		}
		if r.bl == nil || r.rd == nil || r.lastSeq >= target {
			if r.bl != nil {
				off = r.bl.Offset()
			}
			r.mu.Unlock()
			break
		}
		r.mu.Unlock()
		time.Sleep(100 * time.Microsecond) // an entry before target is not ready in the feed yet
	}
	count := func() int64 {
		r.mu.Lock()
		defer r.mu.Unlock()
		var k int64
		for _, rp := range r.replicas {
			if rp.state == rsOnline && rp.ackOff.Load() >= off {
				k++
			}
		}
		return k
	}
	got := count()
	if got >= n {
		return got, ""
	}
	r.mu.Lock()
	if r.bl != nil && len(r.replicas) > 0 {
		r.writeLocked(getackCmd)
	}
	r.mu.Unlock()
	for {
		acked := r.acks.wait() // taken before the count: an ACK after it wakes this loop
		if got = count(); got >= n {
			return got, ""
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return got, ""
		}
		select {
		case <-r.s.stopped:
			return got, ""
		case <-acked:
		case <-time.After(5 * time.Millisecond): // the deadline and a killed client
		}
		if cl.Killed() || (cl.Alive != nil && !cl.Alive()) {
			return got, ""
		}
	}
}
