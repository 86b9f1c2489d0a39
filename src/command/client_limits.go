package command

import (
	"cmp"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"
)

// Client limits, checked by the client cron (Engine.ClientsCron, hz times a second from the
// server's cron): client-output-buffer-limit for every class, and maxmemory-clients.
//
// A connection's output is what its transport has not handed to the kernel yet (Client.Pending)
// plus the pushes queued for it (push.go). Replies are produced a batch at a time and a batch is
// written, blocking, before the next one is parsed, so a client that stops reading stops being
// served: its output stays about one batch (pipeline's batchOutputTarget, 4 MB) and its input
// stays in the socket (std engine) or in the transport's stash (netpoll, bounded by what the
// peer sent). Redis instead keeps reading and replying, and its output buffer grows until a
// limit closes the client; the limits here close it by the same rules (hard at once, soft after
// its seconds), read from the cron since a blocked write adds no reply to check at.

// clientLimits is the cron's state and what it publishes; the atomics are read from any goroutine.
type clientLimits struct {
	mem          atomic.Int64 // every client's memory at the last cron (ClientMemory)
	normalMem    atomic.Int64 // of normal and pub/sub clients: what maxmemory-clients limits
	maxIn        atomic.Int64 // largest input buffer at the last cron (client_recent_max_input_buffer)
	maxOut       atomic.Int64 // largest output at the last cron (client_recent_max_output_buffer)
	evicted      atomic.Int64 // clients closed for maxmemory-clients (evicted_clients)
	scratch      []clientMem  // owned by the cron
	cronRunning  atomic.Bool
	lastCronTime atomic.Int64
}

// clientMem is one client's memory as the cron measured it.
type clientMem struct {
	cl  *Client
	tot int64
}

// ClientMemory returns the memory every connected client holds (buffers and fixed state), as
// measured by the last client cron, for used_memory and eviction (Redis counts clients' buffers
// in used_memory too). Cheap: one atomic load.
func (e *Engine) ClientMemory() int64 { return e.climits.mem.Load() }

// ClientBufferPeaks returns the largest input and output buffers of any client at the last client
// cron: INFO clients' client_recent_max_input_buffer and client_recent_max_output_buffer.
func (e *Engine) ClientBufferPeaks() (in, out int64) {
	return e.climits.maxIn.Load(), e.climits.maxOut.Load()
}

// EvictedClients returns how many clients maxmemory-clients closed (INFO evicted_clients).
func (e *Engine) EvictedClients() int64 { return e.climits.evicted.Load() }

// OutputLimitDisconnects returns how many clients were closed for client-output-buffer-limit
// (INFO client_output_buffer_limit_disconnections).
func (e *Engine) OutputLimitDisconnects() int64 { return e.stats.outputLimitDisconnects.Load() }

// buffers returns the client's input held beyond the command being run (a partial command, and
// netpoll's stash) and its output not yet taken by the kernel (with queued pushes).
func (cl *Client) buffers() (in, out int64) {
	in = cl.shown.qbuf.Load()
	out = cl.push.size.Load()
	if f := cl.pending.Load(); f != nil {
		pin, pout := (*f)()
		in += pin
		out += pout
	}
	return in, out
}

// SetPending gives the client its transport's Pending (bytes held in and not yet sent out).
func (cl *Client) SetPending(f func() (in, out int64)) { cl.pending.Store(&f) }

// memory approximates the client's total memory (CLIENT LIST tot-mem, Redis's
// getClientMemoryUsage): its fixed state, buffers, name, queued MULTI commands and the arguments
// of a blocked command.
func (cl *Client) memory() int64 {
	in, out := cl.buffers()
	tot := int64(clientBaseMem) + in + out + cl.tx.shownMem.Load()
	if w := cl.blockedOn.Load(); w != nil {
		tot += int64(w.argvMem)
	}
	return tot
}

// limitFor returns the output limit of the client's class.
func (e *Engine) limitFor(cl *Client) OutputLimit {
	st := e.Settings()
	switch clientKindOf(cl) {
	case kindPubSub:
		return st.PubSubOutputLimit
	case kindReplica:
		return st.ReplicaOutputLimit
	case kindMaster:
		return OutputLimit{}
	}
	return st.NormalOutputLimit
}

// overOutputLimit applies Redis's checkClientOutputBufferLimits to out bytes of pending output at
// now: over hard, or over soft for longer than its seconds. softSince is the client's own record.
func overOutputLimit(lim OutputLimit, out int64, softSince *atomic.Int64, now int64) bool {
	if lim.Hard > 0 && out >= lim.Hard {
		return true
	}
	if lim.Soft > 0 && out >= lim.Soft {
		since := softSince.Load()
		if since == 0 {
			softSince.Store(now)
			return false
		}
		return now-since > lim.SoftSeconds*int64(time.Second)
	}
	softSince.Store(0)
	return false
}

// ClientsCron checks every client's buffers against client-output-buffer-limit, measures the
// clients' memory (ClientMemory, INFO's buffer peaks) and, when maxmemory-clients is set and
// exceeded, closes the clients using the most memory first until the rest fit, as Redis's
// evictClients does (CLIENT NO-EVICT clients are never closed). The server calls it hz times a
// second; calls do not overlap.
func (e *Engine) ClientsCron(now int64) {
	cs := &e.climits
	if !cs.cronRunning.CompareAndSwap(false, true) {
		return
	}
	defer cs.cronRunning.Store(false)
	var total, limited, maxIn, maxOut int64
	list := cs.scratch[:0]
	e.clients.Range(func(_ uint64, cl *Client) bool {
		in, out := cl.buffers()
		maxIn, maxOut = max(maxIn, in), max(maxOut, out)
		if !cl.killed.Load() && overOutputLimit(e.limitFor(cl), out, &cl.obufSoftSince, now) {
			cl.closeForOutput()
			return true
		}
		m := cl.memory()
		total += m
		if kind := clientKindOf(cl); kind == kindNormal || kind == kindPubSub {
			limited += m
			if !cl.shown.noEvict.Load() && !cl.killed.Load() {
				list = append(list, clientMem{cl, m})
			}
		}
		return true
	})
	cs.mem.Store(total)
	cs.normalMem.Store(limited)
	cs.maxIn.Store(maxIn)
	cs.maxOut.Store(maxOut)
	if lim := e.Settings().MaxMemoryClients; lim > 0 && limited >= lim {
		e.evictClients(list, limited, lim)
	}
	clear(list)
	cs.scratch = list[:0]
	cs.lastCronTime.Store(now)
}

// evictClients closes the largest clients of list until the limited total is under lim.
func (e *Engine) evictClients(list []clientMem, total, lim int64) {
	slices.SortFunc(list, func(a, b clientMem) int { return cmp.Compare(b.tot, a.tot) })
	for _, m := range list {
		if total < lim {
			return
		}
		v := viewOf(m.cl, false, nil)
		line := appendClientLine(nil, &v, time.Now().UnixNano())
		slog.Debug("Evicting client: " + string(line[:len(line)-1]))
		e.climits.evicted.Add(1)
		m.cl.Kill()
		total -= m.tot
	}
}

// TimeoutExempt reports whether the idle timeout spares the client now: a pub/sub subscriber or a
// client blocked in a command (Redis's clientsCronHandleTimeout). Safe from any goroutine.
func (cl *Client) TimeoutExempt() bool { return cl.inPubSub() || cl.blockedOn.Load() != nil }
