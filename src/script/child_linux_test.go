//go:build linux

package script

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the reference redis-server die with the test binary, even when the binary
// is killed before TestMain can stop it.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
