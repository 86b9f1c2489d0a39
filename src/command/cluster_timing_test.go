package command

import (
	"sync/atomic"
	"testing"
)

// ownAll is a ClusterHooks that serves every slot, reading an atomically published table as
// src/cluster/mode's Redirect does, so the check costs what it costs in a real cluster node.
type ownAll struct{ table atomic.Pointer[[16384]int16] }

func newOwnAll() *ownAll {
	h := &ownAll{}
	h.table.Store(new([16384]int16))
	return h
}

func (h *ownAll) Cluster(dst []byte, _ int, _ [][]byte, _ KeyCounts) []byte { return dst }
func (h *ownAll) Publish(bool, []byte, []byte)                              {}
func (h *ownAll) Redirect(slot int, _, _, _ bool) (string, SlotOpen, string) {
	if h.table.Load()[slot] != 0 {
		return "MOVED ", SlotStable, "" // never: every slot is ours
	}
	return "", SlotStable, ""
}

var clusterHotCmds = [][]string{{"GET", "key:1"}, {"SET", "key:2", "v"}, {"GET", "key:{3}"}}

func clusterHotConn(tb testing.TB, on bool) *hotConn {
	tc := newTestConn(tb, newTestEngine())
	if on {
		tc.e.EnableSlotIndex()
		tc.e.Hooks.Cluster = newOwnAll()
	}
	tc.do("SET", "key:1", "v")
	h := &hotConn{tc: tc}
	for i := range hotBatch {
		h.req = append(h.req, encodeCommand(clusterHotCmds[i%len(clusterHotCmds)])...)
	}
	for range 3 {
		h.run(tb)
	}
	return h
}

// GET and SET in cluster mode (slot check on) allocate nothing, as in standalone mode.
func TestClusterHotPathAllocatesNothing(t *testing.T) {
	h := clusterHotConn(t, true)
	hotReplies(t, "cluster", h)
	checkNoAllocs(t, "cluster", h)
}

// BenchmarkClusterGetSet serves the same pipelined GET/SET batch in standalone mode and with the
// cluster slot check on: the difference is what cluster mode costs per command.
func BenchmarkClusterGetSet(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "standalone"
		if on {
			name = "cluster"
		}
		b.Run(name, func(b *testing.B) { benchHot(b, clusterHotConn(b, on)) })
	}
}

// BenchmarkClusterRefusal is the check alone for GET key (CRC16 of the key, the table, no redirect).
func BenchmarkClusterRefusal(b *testing.B) {
	e := newTestEngine()
	e.Hooks.Cluster = newOwnAll()
	tc := newTestConn(b, e)
	args := [][]byte{[]byte("GET"), []byte("user:1000:profile")}
	spec := table["get"]
	b.ReportAllocs()
	for b.Loop() {
		if e.clusterRefusal(tc.client, spec, args) != "" {
			b.Fatal("refused")
		}
	}
}
