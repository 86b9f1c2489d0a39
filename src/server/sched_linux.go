package server

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Linux scheduling policies (sched(7)); SCHED_OTHER is the kernel's SCHED_NORMAL.
const (
	schedOther = unix.SCHED_NORMAL
	schedBatch = unix.SCHED_BATCH
)

// setSchedBatch moves every thread of the process to SCHED_BATCH (on) or back to SCHED_OTHER.
//
// Under SCHED_BATCH a thread woken by network input does not preempt the thread running on its
// core; it waits for that thread to block or for its slice to end. Two HotKV threads sharing a
// core (more threads than cores, or the Go runtime's own threads beside a poller) then stop
// interrupting each other's batches. A thread inherits its creator's policy, so the runtime's
// later threads follow; the walk repeats until a pass finds every thread already set, which
// catches a thread started mid-walk by one not yet moved.
func setSchedBatch(on bool) error {
	policy := schedOther
	if on {
		policy = schedBatch
	}
	for pass := 0; pass < 8; pass++ {
		tids, err := threadIDs()
		if err != nil {
			return err
		}
		changed := 0
		for _, tid := range tids {
			cur, err := schedPolicy(tid)
			if err != nil || cur == policy {
				continue // a thread that exited meanwhile answers ESRCH
			}
			if err := setSchedPolicy(tid, policy); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
			changed++
		}
		if changed == 0 {
			return nil
		}
	}
	return nil
}

// threadIDs lists the process's threads.
func threadIDs() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

func schedPolicy(tid int) (int, error) {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return 0, err
	}
	return int(attr.Policy), nil
}

// setSchedPolicy changes only the policy: sched_setattr sets everything its struct holds, so the
// thread's nice value and flags are read first and given back as they were.
func setSchedPolicy(tid, policy int) error {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return err
	}
	attr.Policy = uint32(policy)
	attr.Priority = 0 // the only priority of SCHED_OTHER and SCHED_BATCH
	return unix.SchedSetAttr(tid, attr, 0)
}
