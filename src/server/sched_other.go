//go:build !linux

package server

// setSchedBatch does nothing where SCHED_BATCH does not exist.
func setSchedBatch(bool) error { return nil }
