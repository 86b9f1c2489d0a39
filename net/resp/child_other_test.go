//go:build !linux

package resp

import "os/exec"

// configureChild: only Linux can tie the child's life to ours; elsewhere TestMain's cleanup must do.
func configureChild(*exec.Cmd) {}
