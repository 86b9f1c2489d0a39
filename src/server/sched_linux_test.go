package server

import (
	"testing"
	"time"
)

// threadPolicies counts the process's threads by scheduling policy.
func threadPolicies(t *testing.T) map[int]int {
	t.Helper()
	tids, err := threadIDs()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, tid := range tids {
		if p, err := schedPolicy(tid); err == nil {
			out[p]++
		}
	}
	return out
}

// With sched-batch on (the default) every thread, including those the runtime starts after
// Start, runs under SCHED_BATCH; CONFIG SET sched-batch no moves them all back.
func TestSchedBatch(t *testing.T) {
	s := startTestServer(t)
	defer setSchedBatch(false)
	// Busy goroutines make the runtime start more threads after the walk.
	done := make(chan struct{})
	for i := 0; i < 8; i++ {
		go func() {
			for {
				select {
				case <-done:
					return
				default:
					time.Sleep(time.Microsecond)
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(done)
	if p := threadPolicies(t); len(p) != 1 || p[schedBatch] == 0 {
		t.Fatalf("threads by policy after start: %v, want all SCHED_BATCH (%d)", p, schedBatch)
	}
	c := dialTestServer(t, s)
	c.send("CONFIG SET sched-batch no", "CONFIG GET sched-batch")
	want := []string{"+OK\r\n", "*2\r\n", "$11\r\n", "sched-batch\r\n", "$2\r\n", "no\r\n"}
	for _, w := range want {
		if line := c.line(); line != w {
			t.Fatalf("reply line %q, want %q", line, w)
		}
	}
	if p := threadPolicies(t); len(p) != 1 || p[schedOther] == 0 {
		t.Fatalf("threads by policy after CONFIG SET sched-batch no: %v, want all SCHED_OTHER", p)
	}
}
