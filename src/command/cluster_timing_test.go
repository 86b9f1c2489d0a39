package command

import (
	"fmt"
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

// clusterHotConn prepares the hot GET/SET batch: index keeps the per-slot key index (cluster
// mode's, kept on every insert and delete), check runs the slot check on every key.
func clusterHotConn(tb testing.TB, index, check bool) *hotConn {
	return clusterBatchConn(tb, index, check, clusterHotCmds)
}

// clusterChurnCmds insert and delete keys, so that the slot index changes with every command.
var clusterChurnCmds = func() [][]string {
	var cmds [][]string
	for i := range hotBatch / 2 {
		k := fmt.Sprintf("churn:%d", i)
		cmds = append(cmds, []string{"SET", k, "v"}, []string{"DEL", k})
	}
	return cmds
}()

func clusterBatchConn(tb testing.TB, index, check bool, cmds [][]string) *hotConn {
	tc := newTestConn(tb, newTestEngine())
	if index {
		tc.e.EnableSlotIndex()
	}
	if check {
		tc.e.Hooks.Cluster = newOwnAll()
	}
	tc.do("SET", "key:1", "v")
	h := &hotConn{tc: tc}
	for i := range hotBatch {
		h.req = append(h.req, encodeCommand(cmds[i%len(cmds)])...)
	}
	for range 3 {
		h.run(tb)
	}
	return h
}

// GET and SET in cluster mode (slot check on) allocate nothing, as in standalone mode.
func TestClusterHotPathAllocatesNothing(t *testing.T) {
	h := clusterHotConn(t, true, true)
	hotReplies(t, "cluster", h)
	checkNoAllocs(t, "cluster", h)
}

// BenchmarkClusterGetSet serves the same pipelined GET/SET batch in standalone mode, with only
// the per-slot key index, and in cluster mode (index and slot check): the differences are what
// each part of cluster mode costs per command.
func BenchmarkClusterGetSet(b *testing.B) {
	for _, m := range []struct {
		name         string
		index, check bool
	}{{"standalone", false, false}, {"slot-index", true, false}, {"cluster", true, true}} {
		b.Run("getset/"+m.name, func(b *testing.B) { benchHot(b, clusterHotConn(b, m.index, m.check)) })
		b.Run("setdel/"+m.name, func(b *testing.B) {
			benchHot(b, clusterBatchConn(b, m.index, m.check, clusterChurnCmds))
		})
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
