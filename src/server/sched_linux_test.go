package server

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// A thread's nice value survives the move to SCHED_BATCH and back: sched_setattr sets every field
// it is given, so setSchedPolicy gives back the ones it read.
func TestSchedKeepsNice(t *testing.T) {
	defer setSchedBatch(false)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		errc <- niceAcrossPolicies(unix.Gettid(), 7)
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func niceAcrossPolicies(tid, nice int) error {
	if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil {
		return err
	}
	for _, on := range []bool{true, false} {
		if err := setSchedBatch(on); err != nil {
			return err
		}
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			return err
		}
		want := map[bool]uint32{true: schedBatch, false: schedOther}[on]
		if attr.Nice != int32(nice) || attr.Policy != want {
			return fmt.Errorf("sched-batch %v: policy %d nice %d, want %d and %d", on, attr.Policy,
				attr.Nice, want, nice)
		}
	}
	return nil
}
