package server

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// Linux scheduling policies (sched(7)).
const (
	schedOther = 0
	schedBatch = 3
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
			if err := setSchedPolicy(tid, policy); err != nil && err != syscall.ESRCH {
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
	r, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

func setSchedPolicy(tid, policy int) error {
	var param struct{ priority int32 } // 0: the only priority of SCHED_OTHER and SCHED_BATCH
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(policy),
		uintptr(unsafe.Pointer(&param)))
	if errno != 0 {
		return errno
	}
	return nil
}
