package resp

import (
	"os/exec"
	"syscall"
)

// configureChild has the kernel kill the test's redis-server if the test binary dies without running
// TestMain's cleanup (a panic, a -timeout).
func configureChild(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
