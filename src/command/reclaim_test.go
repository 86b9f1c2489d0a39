package command

import (
	"fmt"
	"runtime/metrics"
	"testing"
	"time"
)

func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Reclaim starts one collection once a mass deletion is over, and none for a small one or while
// keys are still being deleted.
func TestReclaimAfterMassDeletion(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	const n = 2 * reclaimMinKeys
	var req []byte
	for i := range n {
		req = append(req, encodeCommand([]string{"SET", fmt.Sprintf("k:%d", i), "v"})...)
	}
	if _, err := tc.send(req); err != nil {
		t.Fatal(err)
	}
	e.Reclaim()
	del := func(from, to int) {
		req = req[:0]
		for i := from; i < to; i++ {
			req = append(req, encodeCommand([]string{"DEL", fmt.Sprintf("k:%d", i)})...)
		}
		if _, err := tc.send(req); err != nil {
			t.Fatal(err)
		}
	}
	started := func() bool { return e.reclaim.peak != n }

	del(0, reclaimMinKeys/2) // under reclaimMinKeys
	e.Reclaim()
	e.Reclaim()
	if started() {
		t.Fatalf("a collection started after deleting %d of %d keys", reclaimMinKeys/2, n)
	}
	del(reclaimMinKeys/2, reclaimMinKeys*3/2)
	e.Reclaim() // the count is still falling
	if started() {
		t.Fatal("a collection started while keys were still being deleted")
	}
	before := gcCycles()
	e.Reclaim()
	if !started() || e.reclaim.peak != n-reclaimMinKeys*3/2 {
		t.Fatalf("no collection after deleting %d of %d keys (peak %d)", reclaimMinKeys*3/2, n, e.reclaim.peak)
	}
	for deadline := time.Now().Add(10 * time.Second); e.reclaim.running.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the collection did not finish")
		}
	}
	if gcCycles() == before {
		t.Fatal("Reclaim reported a collection that never ran")
	}
	e.Reclaim()
	if e.reclaim.running.Load() {
		t.Fatal("a second collection for the same deletion")
	}
}
