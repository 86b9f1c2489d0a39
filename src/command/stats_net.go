package command

import (
	"sync"
	"sync/atomic"
)

// Network byte counters: INFO's total_net_input_bytes, total_net_output_bytes and the
// instantaneous_*_kbps rates (info_metrics.go samples them). Each connection counts its own
// bytes (pipeline.Env.NetBytes, once a Serve: the bytes of the commands parsed and the bytes
// written, what Redis's readQueryFromClient and writeToClient add), so no counter is shared
// by the connections; a reader sums the connected clients' counters and what closed ones left.
// A client without a socket (AOF loading's, a script's) counts nothing, as in Redis.

// netCounters is one client's bytes; only the connection serving it writes them.
type netCounters struct {
	in, out atomic.Int64
}

// netState is what closed clients counted; mu orders their handing over against a sum, so a
// closing client is counted once, never twice or not at all.
type netState struct {
	mu                sync.Mutex
	closedIn, closedO int64
}

// noteNetBytes is pipeline.Env.NetBytes.
func (e *Engine) noteNetBytes(cl *Client, in, out int) {
	if cl.shown.fdPlus1.Load() == 0 {
		return
	}
	n := &cl.net
	n.in.Store(n.in.Load() + int64(in)) // one writer: no read-modify-write needed
	n.out.Store(n.out.Load() + int64(out))
}

// netClosed hands a closing client's bytes to the totals, as it leaves the registry (remove).
func (e *Engine) netClosed(cl *Client, remove func()) {
	ns := &e.net
	ns.mu.Lock()
	defer ns.mu.Unlock()
	ns.closedIn += cl.net.in.Load()
	ns.closedO += cl.net.out.Load()
	remove()
}

// NetBytes returns total_net_input_bytes and total_net_output_bytes: O(clients).
func (e *Engine) NetBytes() (in, out int64) {
	ns := &e.net
	ns.mu.Lock()
	defer ns.mu.Unlock()
	in, out = ns.closedIn, ns.closedO
	e.clients.Range(func(_ uint64, cl *Client) bool {
		in += cl.net.in.Load()
		out += cl.net.out.Load()
		return true
	})
	return in, out
}
