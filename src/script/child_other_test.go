//go:build !linux

package script

import "os/exec"

func dieWithTest(*exec.Cmd) {}
